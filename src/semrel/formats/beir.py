"""BEIR folders: corpus.jsonl (read by formats.corpus), queries.jsonl and qrels/<split>.tsv."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pyarrow as pa

from ..errors import FormatError, SemrelError
from ..records import Qrels
from .columns import read_columns, whole_number
from .files import display_name, note_input, read_bytes

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
        {2: ("an integer relevance grade", whole_number)}, "query-id corpus-id score",
    )
    return Qrels(
        table.column("query_id").combine_chunks(), table.column("doc_id").combine_chunks(),
        table.column("relevance").to_numpy().astype(np.int64), source=path,
    )


def beir_paths(folder: str | os.PathLike, split: str = "test") -> tuple[Path, Path, Path]:
    """corpus.jsonl, queries.jsonl and qrels/<split>.tsv of a BEIR folder, which must exist."""
    root = Path(folder)
    paths = (root / "corpus.jsonl", root / "queries.jsonl", root / "qrels" / f"{split}.tsv")
    for p in paths:
        if not p.exists():
            raise SemrelError(f"{root}: not a BEIR folder, {p.relative_to(root)} is missing")
        note_input(p)  # the folder is the input, its corpus.jsonl too, although an import reads only the others
    return paths
