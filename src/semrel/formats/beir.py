"""BEIR folders: corpus.jsonl, queries.jsonl and qrels/<split>.tsv (with a header row)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pyarrow as pa

from ..errors import FormatError, SemrelError
from ..records import Chunk, Qrels
from .columns import read_columns
from .files import display_name, read_bytes
from .jsonl import read_jsonl, require
from .trec import _refuse_duplicates

BEIR_QRELS_HEADER = ("query-id", "corpus-id", "score")


def read_beir_qrels(path: str | os.PathLike, data: bytes | None = None) -> Qrels:
    """qrels/<split>.tsv: a header row, then `query-id corpus-id score` per line."""
    path = str(path)
    data = read_bytes(path) if data is None else data
    head, _, body = data.partition(b"\n")
    if tuple(head.decode("utf-8", "replace").split()) != BEIR_QRELS_HEADER:
        raise FormatError(display_name(path), "first line should be the header 'query-id corpus-id score'", line=1)
    table = read_columns(
        b"\n" + body, path, ("query_id", "doc_id", "relevance"),
        {"query_id": pa.string(), "doc_id": pa.string(), "relevance": pa.int64()},
        {2: ("an integer relevance grade", int)}, "query-id corpus-id score",
    )
    query_ids = table.column("query_id").combine_chunks()
    doc_ids = table.column("doc_id").combine_chunks()
    _refuse_duplicates(b"\n" + body, path, query_ids, doc_ids, "judgment")
    return Qrels(query_ids, doc_ids, table.column("relevance").to_numpy().astype(np.int64))


def read_beir_corpus(path: str | os.PathLike) -> list[Chunk]:
    """corpus.jsonl lines `{"_id", "title", "text"}`; semrel's own corpus adds doc_id/start/end."""
    chunks = []
    for line, obj in read_jsonl(path):
        chunk_id = str(require(obj, "_id", path, line, (str, int)))
        text = require(obj, "text", path, line)
        chunks.append(
            Chunk(
                id=chunk_id, text=text, title=str(obj.get("title") or ""),
                doc_id=str(obj.get("doc_id", chunk_id)), start=int(obj.get("start", 0)),
                end=int(obj.get("end", len(text))),
            )
        )
    return chunks


def read_beir_queries(path: str | os.PathLike) -> dict[str, str]:
    """queries.jsonl lines `{"_id", "text"}` as {id: text}."""
    return {str(require(obj, "_id", path, line, (str, int))): require(obj, "text", path, line) for line, obj in read_jsonl(path)}


def beir_paths(folder: str | os.PathLike, split: str = "test") -> tuple[Path, Path, Path]:
    """corpus.jsonl, queries.jsonl and qrels/<split>.tsv of a BEIR folder, which must exist."""
    root = Path(folder)
    paths = (root / "corpus.jsonl", root / "queries.jsonl", root / "qrels" / f"{split}.tsv")
    for p in paths:
        if not p.exists():
            raise SemrelError(f"{root}: not a BEIR folder, {p.relative_to(root)} is missing")
    return paths
