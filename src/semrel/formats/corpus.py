"""corpus.jsonl (BEIR lines plus doc_id/start/end, and meta where a chunk has any) and golden.jsonl."""

from __future__ import annotations

import hashlib
import json
import os
from operator import attrgetter
from typing import Any, Callable, Iterable, Iterator, Mapping, Sized, TypeVar

from ..errors import FormatError, SemrelError, ValidationError
from ..records import Chunk, GoldenItem, Qrels, is_id, is_whole
from ..terminal import quantity
from .files import check_id, display_name, id_form, line_id
from .given import records_given
from .jsonl import optional_text, read_jsonl, require, write_jsonl
from .kinds import CORPUS, GOLDEN, expecting


def shown_json(value: object, limit: int = 40) -> str:
    """A JSON value as an error message quotes it (null, "abc", Infinity), cut at `limit` characters."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


Records = TypeVar("Records", bound=Sized)


def _nonempty(records: Records, what: str, path: str | os.PathLike) -> Records:
    if not records:
        raise FormatError(display_name(path), f"no {what} (the file is empty)")
    return records


def iter_corpus(path: str | os.PathLike) -> Iterator[tuple[int, Chunk]]:
    """(line number, Chunk) of a corpus.jsonl, read one line at a time (no check for repeated ids)."""
    with expecting(path, CORPUS):
        for line, obj in read_jsonl(path):
            yield line, chunk_of(obj, path, line)


def chunk_of(obj: dict, path: str | os.PathLike, line: int) -> Chunk:
    """The Chunk of one parsed corpus.jsonl line."""
    chunk_id = line_id(str(require(obj, "_id", path, line, (str, int))), "chunk id", path, line)
    text = require(obj, "text", path, line)
    meta = obj.get("meta") or {}
    if not isinstance(meta, dict):
        raise FormatError(display_name(path), "meta should be an object", line=line)
    doc_id = obj.get("doc_id", chunk_id)
    if not is_id(doc_id):
        raise FormatError(display_name(path), f"doc_id should be a string (the chunk's document id), found {shown_json(doc_id)}; "
                          "leave it out to make the chunk its own document", line=line)
    start, end = obj.get("start", 0), obj.get("end", len(text))
    for name, value in (("start", start), ("end", end)):
        if not is_whole(value) or value < 0:
            raise FormatError(display_name(path), f"{name} should be a whole number (a character offset into the document, "
                              f"0 or more), found {shown_json(value)}; leave it out when not known", line=line)
    return Chunk(
        id=chunk_id, text=text, title=optional_text(obj, "title", path, line), doc_id=str(doc_id), start=int(start), end=int(end),
        meta=meta,
    )


def repeated_id(path: str | os.PathLike, chunk_id: str, first: int, line: int) -> FormatError:
    return FormatError(display_name(path), f"chunk id {chunk_id!r} already used on line {first}", line=line)


def read_corpus(path: str | os.PathLike) -> list[Chunk]:
    """Chunks of a corpus.jsonl; a repeated `_id` is an error naming its line."""
    return list(unique_chunks(path))


def unique_chunks(path: str | os.PathLike) -> Iterator[Chunk]:
    """The chunks of read_corpus one at a time, for a reader that keeps less than all of them (`golden validate`
    keeps their ids, `golden stats` their lengths); a repeated `_id` or an empty file is an error as there."""
    seen: dict[str, int] = {}
    for line, chunk in iter_corpus(path):
        if chunk.id in seen:
            raise repeated_id(path, chunk.id, seen[chunk.id], line)
        seen[chunk.id] = line
        yield chunk
    _nonempty(seen, "chunks", path)


def write_corpus(chunks: Iterable[Chunk], path: str | os.PathLike) -> int:
    """BEIR's `_id`, `title`, `text`, then `doc_id`, `start`, `end` and, for chunks that have any, `meta`
    (BEIR readers ignore the extra keys)."""

    def rows():
        for c in chunks:
            check_id(c.id, "chunk id")
            row = {"_id": c.id, "title": c.title, "text": c.text, "doc_id": c.doc_id, "start": c.start, "end": c.end}
            if c.meta:
                row["meta"] = dict(c.meta)
            yield row

    return write_jsonl(rows(), path)


GOLDEN_KEYS = ("query_id", "query", "reference_answer", "gold_chunk_ids", "meta")


def check_grades(meta: dict, path: str | os.PathLike, line: int) -> None:
    """meta.grades, where there is one, maps chunk ids (single tokens) to whole numbers; else a FormatError naming the line."""
    grades = meta.get("grades")
    if grades is not None and not (isinstance(grades, dict) and all(type(g) is int and abs(g) < 2**31 for g in grades.values())):
        raise FormatError(display_name(path), 'meta.grades should map chunk ids to whole-number grades, e.g. {"doc#0": 2}',
                          line=line)
    for chunk in grades or ():
        line_id(chunk, "chunk id", path, line)


def golden_item(obj: dict, path: str | os.PathLike, line: int) -> GoldenItem:
    """One golden.jsonl line: `{"query_id", "query", "reference_answer", "gold_chunk_ids", "meta"}`.

    `reference_answer` may be a string or a list of strings (several acceptable answers). Other
    keys are the user's own: kept in `extra` and written back by write_golden (split, dedup, pick).
    """
    query_id = line_id(str(require(obj, "query_id", path, line, (str, int))), "query id", path, line)
    answer = obj.get("reference_answer", "")
    answers = tuple(answer) if isinstance(answer, list) else (answer,)
    if not all(isinstance(a, str) for a in answers):
        raise FormatError(display_name(path), "reference_answer should be a string or a list of strings", line=line)
    gold = obj.get("gold_chunk_ids")
    gold = [] if gold is None else gold  # null is none; `true` passed as an int and became the chunk 'True', `{}` and "" no gold
    if not isinstance(gold, list) or not all(is_id(g) for g in gold):
        raise FormatError(display_name(path), "gold_chunk_ids should be a list of chunk ids", line=line)
    meta = obj.get("meta")
    meta = {} if meta is None else meta
    if not isinstance(meta, dict):
        raise FormatError(display_name(path), "meta should be an object", line=line)
    check_grades(meta, path, line)
    return GoldenItem(
        query_id=query_id, query=str(require(obj, "query", path, line)),
        reference_answers=tuple(a for a in answers), gold_chunk_ids=tuple(line_id(str(g), "gold chunk id", path, line) for g in gold),
        meta=meta, extra={k: v for k, v in obj.items() if k not in GOLDEN_KEYS},
    )


def empty_query(item: GoldenItem) -> str | None:
    """What `golden validate` calls a query without text (GoldenItem.blank); None for one with text."""
    return f"query {item.query_id!r} is empty" if item.blank else None


def read_golden(path: str | os.PathLike, require_text: bool = False) -> list[GoldenItem]:
    """The items of a golden.jsonl (see golden_item); a repeated query id is an error naming its line, and with
    `require_text` an empty query too (split and dedup, which group queries by their text: every empty query is a
    near-duplicate of every other)."""
    items: list[GoldenItem] = []
    seen: dict[str, int] = {}
    with expecting(path, GOLDEN):
        for line, obj in read_jsonl(path):
            item = golden_item(obj, path, line)
            if item.query_id in seen:
                raise FormatError(
                    display_name(path), f"query id {item.query_id!r} already used on line {seen[item.query_id]}", line=line
                )
            if require_text and (empty := empty_query(item)):
                raise FormatError(display_name(path), f"{empty}: give it its text, or drop the line (`semrel golden validate "
                                  f"{display_name(path)}` lists every problem)", line=line)
            seen[item.query_id] = line
            items.append(item)
    return _nonempty(items, "queries", path)


def queries_sha256(items: Iterable[GoldenItem]) -> str:
    """A digest of a golden set's query ids and texts, in order: all `semrel retrieve` reads of it (a sample is drawn from
    them too), so that a run counts as made from the set while only its answers or gold change (`semrel run`, `semrel verify`)."""
    digest = hashlib.sha256()
    for item in items:
        digest.update(json.dumps([item.query_id, item.query], ensure_ascii=False).encode() + b"\n")
    return f"queries:{digest.hexdigest()}"


def golden_queries_sha256(path: str | os.PathLike) -> str | None:
    """queries_sha256 of the golden set at `path`; None where it cannot be read (`semrel run` then goes by its bytes,
    `semrel verify` counts it as changed)."""
    try:
        return queries_sha256(read_golden(path))
    except (SemrelError, OSError):
        return None


def _id_problem(value: Any, kind: str) -> str | None:
    """What keeps `value` from being an id in a record (a line's id is read as text, a record's must be text)."""
    if not isinstance(value, str):
        return f"{kind} should be a string, found {type(value).__name__} {value!r:.40}"
    try:
        check_id(value, kind)
    except SemrelError as exc:
        return str(exc)
    return None


def _texts_problem(values: Any, what: str, each: Callable[[Any], str | None]) -> str | None:
    """What is wrong with a record's tuple of texts (a str would be taken letter by letter), if anything."""
    if not isinstance(values, (tuple, list)):
        return f"{what} should be a tuple of strings, found {type(values).__name__} {values!r:.40}"
    return next((problem for problem in map(each, values) if problem), None)


def chunk_problem(chunk: Chunk) -> str | None:
    """What a corpus.jsonl line would be refused for, in a Chunk given as a record."""
    return (_id_problem(chunk.id, "chunk id") or _id_problem(chunk.doc_id, "doc_id")
            or (None if isinstance(chunk.text, str) else f"text should be a string, found {type(chunk.text).__name__}")
            or next((f"{name} should be a whole number, 0 or more, found {value!r}" for name, value in
                     (("start", chunk.start), ("end", chunk.end)) if not is_whole(value) or value < 0), None))


def golden_problem(item: GoldenItem) -> str | None:
    """What a golden.jsonl line would be refused for, in a GoldenItem given as a record."""
    return (_id_problem(item.query_id, "query id")
            or (None if isinstance(item.query, str) else f"query should be a string, found {type(item.query).__name__}")
            or _texts_problem(item.reference_answers, "reference_answers",
                              lambda a: None if isinstance(a, str) else f"reference_answers should hold strings, found {a!r:.40}")
            or _texts_problem(item.gold_chunk_ids, "gold_chunk_ids", lambda c: _id_problem(c, "gold chunk id")))


def corpus_records(chunks: Iterable[Chunk]) -> list[Chunk]:
    """Chunks given for `corpus` in place of a corpus.jsonl, checked as its lines are (no id twice)."""
    return records_given(chunks, "corpus", Chunk, attrgetter("id"), "id", problem=chunk_problem)


def golden_records(items: Iterable[GoldenItem], require_text: bool = False) -> list[GoldenItem]:
    """GoldenItems given for `golden` in place of a golden.jsonl, checked as its lines are (no query id twice; with
    `require_text`, no empty query, as read_golden)."""
    def problem(item: GoldenItem) -> str | None:
        found = golden_problem(item)  # first: a query that is no string has no text to look at
        if found or not require_text:
            return found
        empty = empty_query(item)
        return empty and f"{empty}: give it its text, or leave it out"

    return records_given(items, "golden", GoldenItem, attrgetter("query_id"), "query_id", problem=problem)


def given_golden(golden: str | os.PathLike | Iterable[GoldenItem],
                 require_text: bool = False) -> tuple[list[GoldenItem], str | os.PathLike | None]:
    """(the items, the file they came from) for the Python API: a golden.jsonl read, or golden_records."""
    if isinstance(golden, (str, os.PathLike)):
        return read_golden(golden, require_text), golden
    return golden_records(golden, require_text), None


def golden_row(item: GoldenItem) -> dict[str, Any]:
    """The golden.jsonl line of an item (golden_item reads it back)."""
    answer = item.reference_answers[0] if len(item.reference_answers) == 1 else list(item.reference_answers)
    return {
        "query_id": item.query_id, "query": item.query, "reference_answer": answer,
        "gold_chunk_ids": list(item.gold_chunk_ids), "meta": dict(item.meta),
        **{k: v for k, v in item.extra.items() if k not in GOLDEN_KEYS},
    }


def write_golden(items: Iterable[GoldenItem], path: str | os.PathLike) -> int:
    def rows():
        for item in items:
            check_id(item.query_id, "query id")
            yield golden_row(item)

    return write_jsonl(rows(), path)


def spelled_otherwise(chunk_id: str, chunk_ids: Iterable[str]) -> str:
    """'; the corpus has ...' where one of `chunk_ids` is `chunk_id` in another Unicode form (id_form), else '': the two
    print alike, and the error said only that the id is not in the corpus. Runs and qrels compare ids as they are, so
    the gold must be written as the corpus spells it, which `golden import --corpus` does."""
    form = id_form(chunk_id)
    spelled = next((c for c in chunk_ids if c != chunk_id and id_form(c) == form), None)
    if spelled is None:
        return ""
    return (f"; the corpus has {spelled!r}, the same id in another Unicode form ({ascii(spelled)}, not {ascii(chunk_id)}: an "
            "accent typed apart, as macOS names files): import the golden set's source again with `semrel golden import SOURCE "
            "--corpus CORPUS`, which writes gold ids as the corpus spells them")


def unknown_chunks(items: Iterable[GoldenItem], chunk_ids: set[str]) -> list[tuple[str, str]]:
    """(query id, chunk id) for every gold chunk id that is not in the corpus."""
    return [(i.query_id, c) for i in items for c in i.gold_chunk_ids if c not in chunk_ids]


def require_known_chunks(items: Iterable[GoldenItem], chunk_ids: set[str], golden_path: str,
                         near: Callable[[str], str] | None = None) -> None:
    """Every gold id of `items` names a chunk of `chunk_ids`, or the first that does not is the error; `near(id)` may add
    what it was likely meant to be, and spelled_otherwise names the corpus's id where it is the same but for its Unicode
    form (no other corpus, then). `golden validate` lists them all, for a golden.jsonl (it reads no other format)."""
    missing = unknown_chunks(items, chunk_ids)
    if missing:
        q, c = missing[0]
        meant = near(c) if near is not None else ""
        listed = (" `semrel golden validate GOLDEN --corpus CORPUS` lists them all" if str(golden_path).endswith(".jsonl") else "")
        spelled = "" if meant else spelled_otherwise(c, chunk_ids)
        head = f"{golden_path}: {quantity(len(missing), 'gold chunk id', 'are')} not in the corpus (first: {c!r} of query {q!r}"
        if spelled:
            raise ValidationError(f"{head}){spelled};{listed}")
        raise ValidationError(f"{head}{meant}), neither as chunk ids nor as document ids: is it the corpus they were made for (the "
                              f"same documents, chunked with the same --size and --overlap)?{listed}")


def misplaced_gold(items: Iterable[GoldenItem], places: Mapping[str, tuple[str, int, int]]) -> tuple[list[tuple[str, str]], int]:
    """(query id, chunk id) of each gold chunk that does not hold its query's answer, and how many gold chunks could be
    checked: those of items whose meta gives the answer's `doc_id` and character `answer_spans` in it (the SQuAD-style
    importers record them; not items `golden dedup` merged others into), whose chunk `places` gives (doc_id, start, end).
    A golden set made for another chunking of the same documents names chunk ids this corpus has too ('630#2'), but they
    sit elsewhere in the document."""
    misplaced, checked = [], 0
    for item in items:
        doc, spans = item.meta.get("doc_id"), item.meta.get("answer_spans")
        if not isinstance(doc, str) or not isinstance(spans, list) or "duplicates_removed" in item.meta:
            continue  # no spans; or gold merged in from near-duplicates (`golden dedup`), whose spans these are not
        spans = [s for s in spans if isinstance(s, list) and len(s) == 2 and all(is_whole(v) for v in s)]
        for chunk_id in item.gold_chunk_ids:
            if not spans or chunk_id not in places:
                continue
            checked += 1
            in_doc, start, end = places[chunk_id]
            if in_doc != doc or not any(a < end and b > start for a, b in spans):
                misplaced.append((item.query_id, chunk_id))
    return misplaced, checked


def judged_grades(item: GoldenItem) -> dict[str, int]:
    """An item's judged chunk ids and grades: meta["grades"] where it records them, and each gold chunk at grade 1 at
    least. Gold says relevant: a chunk picked by hand (`golden pick`) or added after the import has no grade, and
    qrels of the grades alone left it out, so the run that found it scored as missing it."""
    grades = item.meta.get("grades")
    judged = {str(c): int(g) for c, g in grades.items()} if isinstance(grades, dict) else {}
    for chunk in item.gold_chunk_ids:
        if judged.get(chunk, 0) <= 0:
            judged[chunk] = 1
    return judged


def golden_qrels(items: Iterable[GoldenItem]) -> Qrels:
    """The golden set as qrels: each item's judged_grades."""
    return Qrels.from_dict({item.query_id: judged for item in items if (judged := judged_grades(item))})
