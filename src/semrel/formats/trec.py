"""TREC qrels (`qid 0 docid rel`) and runs (`qid Q0 docid rank score tag`), and both as ranx saves them (Parquet, or JSON
of {qid: {docid: score}}, which is also how pytrec_eval and BEIR hold them).

Readers check syntax; a document repeated for one query is found where the ids are encoded
anyway (semrel.evaluation.metrics), and reported through `columns.duplicate_error` with its line.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import FormatError, SemrelError
from ..records import Preferences, Qrels, Run, dictionary_codes, is_number, one_array
from .columns import duplicate_error, finite_float, read_columns, read_plain_file, require_finite, whole_number
from .corpus import shown_json
from .files import STDIO, atomic_writer, check_id, display_name, read_bytes, read_head, read_tail
from .jsonl import load_json
from .kinds import QRELS, RUN, expecting
from .manifest import recorded_holds
from .parquet import MOST_GRADE, is_parquet, ranx_columns

RUN_COLUMNS = ("query_id", "q0", "doc_id", "rank", "score", "tag")
QRELS_COLUMNS = ("query_id", "iteration", "doc_id", "relevance")
PREFS_COLUMNS = ("query_id", "group", "subgroup", "doc_id", "value")
# a run given where qrels go, or the reverse: the commonest cause of the wrong count (semrel's commands, as
# trec_eval, take the qrels before the runs)


def run_name(path: str | os.PathLike) -> str:
    """A run is named by its file's stem ('bm25' for runs/bm25.run.gz)."""
    name = Path(str(path)).name
    for suffix in (".gz", ".run", ".trec", ".txt", ".tsv", ".parquet", ".parq", ".json"):
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return "stdin" if str(path) == STDIO else name


def read_run(path: str | os.PathLike, name: str | None = None) -> Run:
    """Read a TREC run as trec_eval does: the rank column is ignored (order comes from the scores),
    fields after the sixth are ignored, lines starting with `#` are comments, and the tag of the
    last line is the run's tag (trec_eval's runid)."""
    path = str(path)
    if (saved := ranx_saved(path, "a run")) is not None:
        return Run(*saved, name or run_name(path), source=path)
    types = {"query_id": pa.string(), "doc_id": pa.string(), "score": pa.float64()}
    table = read_plain_file(path, RUN_COLUMNS, types)
    data = read_bytes(path) if path == STDIO else None  # stdin is read once: its bytes, kept; a file is read again
    if data is not None and data.lstrip().startswith(b"{"):  # told by name, as ranx tells it: stdin has none
        raise FormatError(display_name(path), "holds JSON, which semrel reads as a run from a file named .json only",
                          hint="write it to run.json and give that file")
    if table is None:
        with expecting(path, RUN):
            table = read_columns(path if data is None else data, path, RUN_COLUMNS, types,
                                 {4: ("a number (the score)", finite_float)}, "qid Q0 docid rank score tag", extra_fields=True)
    scores = table.column("score").to_numpy()
    require_finite(scores, path, 4, "score", path if data is None else data)
    # Ids stay in Arrow's chunks: joining ten million strings into one buffer is a copy nobody needs.
    return Run(table.column("query_id"), table.column("doc_id"), scores, name or run_name(path), source=path,
               tag=_last_tag(path, data))


def ranx_saved(path: str, what: str, grades: bool = False) -> tuple[Any, Any, np.ndarray] | None:
    """The columns of a run or qrels as ranx saves them (Parquet, or JSON by name), else None: a TREC file."""
    if not is_parquet(path) and not is_nested_json(path):
        return None
    holds = recorded_holds(path)  # whole grades are valid scores: `eval gold.json derived.json` scored the qrels as a run
    if holds == ("run" if grades else "qrels"):
        raise FormatError(display_name(path), f"holds {'a run' if grades else 'qrels'}, not {what}, its manifest says",
                          hint="commands that take runs take the qrels first" + ("; `semrel agree REF TEST` compares two qrels"
                                                                                 if not grades else ""))
    return ranx_columns(path, what, grades) if is_parquet(path) else nested_columns(path, what, grades)


def is_nested_json(path: str | os.PathLike) -> bool:
    """A run or qrels named .json (or .json.gz): one JSON object, {qid: {docid: score}}, as ranx saves them and as
    pytrec_eval and BEIR's scripts hold them (a golden set is JSON Lines, .jsonl)."""
    return str(path).lower().removesuffix(".gz").endswith(".json")


def nested_columns(path: str, what: str, grades: bool = False) -> tuple[pa.Array, pa.Array, np.ndarray]:
    """The query ids, doc ids and scores (finite; with `grades`, whole) of a run or qrels saved as {qid: {docid: score}};
    `what` names the file's role in errors. Ids are single tokens, as in a TREC file, so that every output can hold them;
    a key given twice is an error naming its line (JSON keeps the last)."""
    value = "grade" if grades else "score"
    hint = (f"{what} in JSON is one object, {{query_id: {{doc_id: {value}}}}}, as ranx saves it (a golden set is JSON Lines, .jsonl; "
            "TREC text is read from a file not named .json)")
    try:
        data = load_json(path)
    except FormatError as exc:  # a golden set or TREC text so named is no JSON document: say what the name is read as
        if exc.hint:
            raise
        raise FormatError(exc.path, exc.message, line=exc.line, hint=hint) from None
    if not isinstance(data, dict):
        raise FormatError(display_name(path), f"holds {shown_json(data)}, not an object of queries", hint=hint)
    query_ids, doc_ids, numbers = [], [], []
    for query, docs in data.items():
        if not isinstance(docs, dict):
            raise FormatError(display_name(path), f"query {query!r} maps to {shown_json(docs)}, not an object of documents",
                              hint=hint)
        try:
            check_id(query, "query id")
            for doc in docs:
                check_id(doc, "doc id")
        except SemrelError as exc:
            raise FormatError(display_name(path), str(exc)) from None
        for doc, number in docs.items():
            if not _fits(number, grades):
                should = "a whole number (a relevance grade)" if grades else "a finite number"
                swapped = is_number(number) and grades  # a run's score where a grade goes: JSON cannot tell the two files apart
                raise FormatError(display_name(path), f"query {query!r}, doc {doc!r}: {value} {shown_json(number)} is not {should}",
                                  hint="is it a run? commands that take runs take the qrels first" if swapped else hint)
            query_ids.append(query)
            doc_ids.append(doc)
            numbers.append(number)
    return pa.array(query_ids, pa.string()), pa.array(doc_ids, pa.string()), np.array(numbers, dtype=np.int64 if grades else np.float64)


def _fits(value: Any, grades: bool) -> bool:
    """A finite JSON number; for `grades`, a whole one: an integer within 64 bits, kept exact as a TREC qrels line's grade
    is (through a float, 2**53 + 1 read as 2**53), or a whole float within MOST_GRADE."""
    if not is_number(value):  # text, true, null
        return False
    if grades and isinstance(value, int):
        return -(2**63) <= value < 2**63
    try:
        as_float = float(value)
    except OverflowError:  # an integer past a float's range
        return False
    return math.isfinite(as_float) and (not grades or as_float == round(as_float) and abs(as_float) <= MOST_GRADE)


def _text_only(path: str, what: str) -> None:
    """-R qrels_jg and the preference relations read TREC text; ranx's Parquet and JSON hold plain qrels (a file named
    .json that holds such text, as `review export --by-reviewer` wrote before, is read as text)."""
    if is_parquet(path) or is_nested_json(path) and read_head(path).lstrip().startswith(b"{"):
        kind = "Parquet holds plain qrels (ranx's q_id, doc_id, score)" if is_parquet(path) else \
            "JSON holds plain qrels ({query_id: {doc_id: grade}})"
        raise FormatError(display_name(path), f"{kind}, not {what}", hint="give a TREC text file, or leave -R out")


def _last_tag(path: str, data: bytes | None) -> str | None:
    """The sixth field of the last line that has one (not a comment): trec_eval's runid."""
    for raw in reversed((read_tail(path, 65536) if data is None else data).rstrip().split(b"\n")[-1000:]):
        fields = raw.split()
        if len(fields) >= 6 and not raw.lstrip().startswith(b"#"):
            return fields[5].decode("utf-8", "replace")
    return None


def read_trec_qrels(path: str | os.PathLike, data: bytes | None = None) -> Qrels:
    """TREC qrels from `path` (or from its already-read bytes), or a ranx Qrels saved as Parquet or JSON."""
    path = str(path)
    if (saved := ranx_saved(path, "qrels", grades=True)) is not None:
        query_ids, doc_ids, grades = saved
        return Qrels(one_array(query_ids), one_array(doc_ids), grades.astype(np.int64), source=path)
    types = {"query_id": pa.string(), "doc_id": pa.string(), "relevance": pa.int64()}
    table = read_plain_file(path, QRELS_COLUMNS, types) if data is None else None
    if table is None:
        with expecting(path, QRELS):
            table = read_columns(path if data is None else data, path, QRELS_COLUMNS, types,
                                 {3: ("an integer relevance grade", whole_number)}, "qid 0 docid rel")
    return Qrels(
        table.column("query_id").combine_chunks(), table.column("doc_id").combine_chunks(),
        table.column("relevance").to_numpy(), source=path,
    )


def read_judgment_groups(path: str | os.PathLike) -> list[tuple[str, Qrels]]:
    """trec_eval's qrels_jg: TREC qrels whose second column names a judgment group (one assessor's
    judgments), as [(group, its qrels)], groups in order of first appearance."""
    path = str(path)
    _text_only(path, "judgment groups (qid group docid rel lines)")
    types = {"query_id": pa.string(), "iteration": pa.string(), "doc_id": pa.string(), "relevance": pa.int64()}
    table = read_plain_file(path, QRELS_COLUMNS, types)
    if table is None:
        table = read_columns(path, path, QRELS_COLUMNS, types, {3: ("an integer relevance grade", whole_number)},
                             "qid group docid rel")
    _refuse_repeats_in_groups(table, path)
    groups, codes = dictionary_codes(table.column("iteration"))
    found = []
    for code, group in enumerate(groups.to_pylist()):
        rows = pa.array(np.flatnonzero(codes == code))
        found.append((group, Qrels(table.column("query_id").take(rows).combine_chunks(),
                                   table.column("doc_id").take(rows).combine_chunks(),
                                   table.column("relevance").to_numpy()[rows.to_numpy()], source=None)))
    return found


def _refuse_repeats_in_groups(table: pa.Table, path: str) -> None:
    """A document one group judges twice for a query, named by its line: each group's qrels, split off from the file,
    no longer know their lines (the error said 'row 2' of the group, and no file)."""
    codes = [dictionary_codes(table.column(name))[1] for name in ("query_id", "iteration", "doc_id")]
    order = np.lexsort(codes[::-1])  # stable: a repeat comes after the row it repeats
    same = np.ones(max(len(order) - 1, 0), dtype=bool)
    for column in codes:
        same &= column[order[1:]] == column[order[:-1]]
    if same.any():
        row = int(order[1:][same].min())
        raise duplicate_error(path, row, table.column("query_id")[row].as_py(), table.column("doc_id")[row].as_py(),
                              "judgment within one group")


def read_preferences(path: str | os.PathLike, from_qrels: bool = False) -> Preferences:
    """trec_eval's preference judgments, `qid jg jsg docno value` lines (its -R prefs); `from_qrels`:
    TREC qrels read as preferences (its -R qrels_prefs), the second column naming the judgment group,
    each group one subgroup ("0"), the grade the value. Values are numbers, as trec_eval's atof reads them."""
    path = str(path)
    _text_only(path, "qrels read as preferences" if from_qrels else "preferences (qid jg jsg docno value lines)")
    names = QRELS_COLUMNS if from_qrels else PREFS_COLUMNS
    types = {name: pa.string() for name in names} | {names[-1]: pa.float64()}
    table = read_plain_file(path, names, types)
    data = read_bytes(path) if path == STDIO else None  # stdin is read once: its bytes, kept; a file is read again
    if table is None:
        table = read_columns(path if data is None else data, path, names, types, {len(names) - 1: ("a number", finite_float)},
                             "qid group docid rel" if from_qrels else "qid jg jsg docno value")
    values = table.column(names[-1]).to_numpy()
    require_finite(values, path, len(names) - 1, "value", path if data is None else data)
    groups = table.column(names[1]).to_pylist()
    subgroups = ["0"] * len(groups) if from_qrels else table.column("subgroup").to_pylist()
    return Preferences(table.column("query_id").to_pylist(), groups, subgroups, table.column("doc_id").to_pylist(),
                       values, source=path)


WRITE_ROWS = 1 << 15  # rows made Python values at a time when written: a fused run's 25M ids as two lists took 7 GB


def _check_ids(ids: list[str], kind: str) -> None:
    """check_id over a block of ids at C speed: joined with spaces and split again they come back as they were exactly when
    none is empty or holds whitespace (str.split splits where str.isspace is true); otherwise check_id names the first."""
    if " ".join(ids).split() != ids or (kind == "query id" and any(value.startswith("#") for value in set(ids))):
        for value in ids:
            check_id(value, kind)


def _blocks(query_ids: pa.Array | pa.ChunkedArray, doc_ids: pa.Array | pa.ChunkedArray, *columns: np.ndarray) -> Iterator[tuple[list, ...]]:
    """(query ids, doc ids, *columns) as Python lists, WRITE_ROWS rows at a time, the ids checked as they come."""
    for start in range(0, len(query_ids), WRITE_ROWS):
        stop = start + WRITE_ROWS
        queries, docs = query_ids[start:stop].to_pylist(), doc_ids[start:stop].to_pylist()
        _check_ids(queries, "query id")
        _check_ids(docs, "doc id")
        yield (queries, docs, *(column[start:stop].tolist() for column in columns))


def _rows(query_ids: pa.Array | pa.ChunkedArray, doc_ids: pa.Array | pa.ChunkedArray, values: np.ndarray) -> Iterator[tuple]:
    """(query id, doc id, value) of each row, the ids checked as they come."""
    for block in _blocks(query_ids, doc_ids, values):
        yield from zip(*block)


def write_qrels(qrels: Qrels, path: str | os.PathLike) -> None:
    """TREC qrels, or to a file named .json ranx's JSON, which read_trec_qrels reads back."""
    if is_nested_json(path):  # a query's judgments together, in the order its first one came
        _, codes = dictionary_codes(qrels.query_ids)
        order = np.argsort(codes, kind="stable")
        _write_nested(path, _rows(qrels.query_ids.take(order), qrels.doc_ids.take(order), qrels.relevance[order]))
        return
    with atomic_writer(path) as out:  # a bad id met on the way leaves no output (nor replaces the one there)
        for queries, docs, grades in _blocks(qrels.query_ids, qrels.doc_ids, qrels.relevance):
            out.write("".join([f"{q} 0 {d} {r}\n" for q, d, r in zip(queries, docs, grades)]))


def _write_nested(path: str | os.PathLike, rows: Iterator[tuple]) -> None:
    """{qid: {docid: value}} from rows grouped by query, a line a query: the JSON ranx saves (nested_columns reads it)."""
    with atomic_writer(path) as out:
        out.write("{")
        previous = None
        for q, d, value in rows:
            if q != previous:
                out.write(("}," if previous is not None else "") + f"\n  {json.dumps(q)}: {{")
            else:
                out.write(", ")
            out.write(f"{json.dumps(d)}: {value!r}")
            previous = q
        out.write("}\n}\n" if previous is not None else "}\n")


def write_judgment_groups(groups: Sequence[tuple[str, Qrels]], path: str | os.PathLike) -> None:
    """trec_eval's qrels_jg (read_judgment_groups): each group's qrels with the group in the second column. A file named
    .json is refused: it would be TREC text that every other reader takes for ranx's JSON."""
    if is_nested_json(path):
        raise FormatError(display_name(str(path)), "judgment groups are TREC text (qid group docid rel), and a file named .json "
                          "is read as ranx's JSON", hint="name it .txt or .qrels")
    for group, _ in groups:
        check_id(group, "judgment group")
    with atomic_writer(path) as out:  # a bad id met on the way leaves no output (nor replaces the one there)
        for group, qrels in groups:
            out.writelines(f"{q} {group} {d} {r}\n" for q, d, r in _rows(qrels.query_ids, qrels.doc_ids, qrels.relevance))


def ranked(run: Run) -> Run:
    """The run's rows in evaluation order: query (in order of first appearance), then score descending, then doc id
    descending in byte order; one multi-key sort in Arrow (a rank of the doc ids and numpy's lexsort took 20x as long)."""
    _, queries = dictionary_codes(run.query_ids)
    keys = pa.table({"query": queries, "score": run.scores, "doc": run.doc_ids})
    order = pc.sort_indices(keys, sort_keys=[("query", "ascending"), ("score", "descending"), ("doc", "descending")])
    return Run(run.query_ids.take(order), run.doc_ids.take(order), run.scores[order.to_numpy()], run.name)


def write_run(run: Run, path: str | os.PathLike, tag: str | None = None) -> None:
    """Write a TREC run ranked as trec_eval reads it, ranks numbered from 1 per query; to a file named .json, ranx's JSON
    in the same order (it holds no tag)."""
    tag = check_id(tag or run.name, "run tag")
    ordered = ranked(run)
    if is_nested_json(path):
        _write_nested(path, _rows(ordered.query_ids, ordered.doc_ids, ordered.scores))
        return
    with atomic_writer(path) as out:
        previous, rank = None, 0
        for queries, docs, scores in _blocks(ordered.query_ids, ordered.doc_ids, ordered.scores):
            ranks = []  # from 1 in each query, on across blocks
            for q in queries:
                rank = rank + 1 if q == previous else 1
                previous = q
                ranks.append(rank)
            out.write("".join([f"{q} Q0 {d} {k} {s!r} {tag}\n" for q, d, k, s in zip(queries, docs, ranks, scores)]))


def graded_pairs(qrels: Qrels) -> dict[str, dict[str, int]]:
    """{query: {doc: grade}}; a pair listed twice is refused as `semrel eval` refuses it, naming its line, rather than
    the last grade kept (as Qrels.to_dict keeps it): labels compared to others must be the file's, not one of two."""
    grades: dict[str, dict[str, int]] = {}
    for row, (query, doc, grade) in enumerate(zip(qrels.query_ids.to_pylist(), qrels.doc_ids.to_pylist(), qrels.relevance.tolist())):
        listed = grades.setdefault(query, {})
        if doc in listed:
            raise duplicate_error(qrels.source, row, query, doc, "judgment")
        listed[doc] = grade
    return grades
