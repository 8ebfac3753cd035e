"""TREC qrels (`qid 0 docid rel`) and runs (`qid Q0 docid rank score tag`)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import FormatError
from ..records import Qrels, Run
from .columns import finite_float, first_nonfinite, line_number, read_columns
from .files import atomic_writer, check_id, display_name, read_bytes

RUN_COLUMNS = ("query_id", "q0", "doc_id", "rank", "score", "tag")
QRELS_COLUMNS = ("query_id", "iteration", "doc_id", "relevance")


def run_name(path: str | os.PathLike) -> str:
    """A run is named by its file's stem ('bm25' for runs/bm25.run.gz)."""
    name = Path(str(path)).name
    for suffix in (".gz", ".run", ".trec", ".txt", ".tsv"):
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return "stdin" if str(path) == "-" else name


def pair_keys(query_ids: pa.Array, doc_ids: pa.Array) -> np.ndarray:
    """One int64 per (query, doc) pair, equal exactly when both ids are equal."""
    q = pc.dictionary_encode(query_ids)
    d = pc.dictionary_encode(doc_ids)
    return q.indices.to_numpy().astype(np.int64) * len(d.dictionary) + d.indices.to_numpy()


def first_duplicate(keys: np.ndarray) -> int | None:
    """Row index of the first repeat of an earlier key, or None."""
    if len(keys) < 2:
        return None
    order = np.argsort(keys, kind="stable")
    repeats = np.flatnonzero(keys[order[1:]] == keys[order[:-1]])
    return int(order[repeats + 1].min()) if len(repeats) else None


def _refuse_duplicates(data: bytes, path: str, query_ids: pa.Array, doc_ids: pa.Array, what: str) -> None:
    row = first_duplicate(pair_keys(query_ids, doc_ids))
    if row is not None:
        raise FormatError(
            display_name(path),
            f"duplicate {what} for query {query_ids[row].as_py()!r} and doc {doc_ids[row].as_py()!r}",
            line=line_number(data, row),
            hint="each document may appear once per query",
        )


def read_run(path: str | os.PathLike, name: str | None = None) -> Run:
    """Read a TREC run; the rank column is ignored (order comes from the scores, as in trec_eval)."""
    path = str(path)
    data = read_bytes(path)
    table = read_columns(
        data, path, RUN_COLUMNS, {"query_id": pa.string(), "doc_id": pa.string(), "score": pa.float64()},
        {4: ("a number (the score)", finite_float)}, "qid Q0 docid rank score tag",
    )
    scores = table.column("score").to_numpy()
    bad = first_nonfinite(scores)
    if bad is not None:
        raise FormatError(display_name(path), f"score {scores[bad]} is not a finite number", line=line_number(data, bad))
    query_ids = table.column("query_id").combine_chunks()
    doc_ids = table.column("doc_id").combine_chunks()
    _refuse_duplicates(data, path, query_ids, doc_ids, "document in run")
    return Run(query_ids, doc_ids, scores, name or run_name(path))


def read_trec_qrels(path: str | os.PathLike, data: bytes | None = None) -> Qrels:
    """TREC qrels from `path` (or from its already-read bytes)."""
    path = str(path)
    data = read_bytes(path) if data is None else data
    table = read_columns(
        data, path, QRELS_COLUMNS, {"query_id": pa.string(), "doc_id": pa.string(), "relevance": pa.int64()},
        {3: ("an integer relevance grade", int)}, "qid 0 docid rel",
    )
    query_ids = table.column("query_id").combine_chunks()
    doc_ids = table.column("doc_id").combine_chunks()
    _refuse_duplicates(data, path, query_ids, doc_ids, "judgment")
    return Qrels(query_ids, doc_ids, table.column("relevance").to_numpy())


def _check_ids(query_ids: list[str], doc_ids: list[str]) -> None:
    for q in set(query_ids):
        check_id(q, "query id")
    for d in set(doc_ids):
        check_id(d, "doc id")


def write_qrels(qrels: Qrels, path: str | os.PathLike) -> None:
    queries, docs = qrels.query_ids.to_pylist(), qrels.doc_ids.to_pylist()
    _check_ids(queries, docs)
    with atomic_writer(path) as out:
        out.writelines(f"{q} 0 {d} {r}\n" for q, d, r in zip(queries, docs, qrels.relevance.tolist()))


def ranked(run: Run) -> Run:
    """The run's rows in evaluation order: query, then score descending, then doc id descending."""
    queries = pc.dictionary_encode(run.query_ids)
    doc_rank = pc.rank(run.doc_ids, sort_keys="descending", tiebreaker="first").to_numpy()
    order = np.lexsort((doc_rank, -run.scores, queries.indices.to_numpy()))
    return Run(run.query_ids.take(order), run.doc_ids.take(order), run.scores[order], run.name)


def write_run(run: Run, path: str | os.PathLike, tag: str | None = None) -> None:
    """Write a TREC run ranked as trec_eval reads it, ranks numbered from 1 per query."""
    tag = check_id(tag or run.name, "run tag")
    ordered = ranked(run)
    queries, docs = ordered.query_ids.to_pylist(), ordered.doc_ids.to_pylist()
    _check_ids(queries, docs)
    with atomic_writer(path) as out:
        previous, rank = None, 0
        for q, d, s in zip(queries, docs, ordered.scores.tolist()):
            rank = rank + 1 if q == previous else 1
            previous = q
            out.write(f"{q} Q0 {d} {rank} {s!r} {tag}\n")
