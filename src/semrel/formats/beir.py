"""BEIR folders: the corpus (read by golden.documents), the queries and qrels/<split>.tsv."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np
import pyarrow as pa

from ..errors import FormatError, SemrelError
from ..records import Qrels
from .columns import read_columns, whole_number
from .files import display_name, note_input, path_order, read_bytes
from .parquet import is_parquet, read_records

BEIR_QRELS_HEADER = ("query-id", "corpus-id", "score")
BEIR_SPLIT = "test"  # the qrels split read where none is given, as BEIR's own loader


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


@dataclass(frozen=True)
class BeirFolder:
    """The files of a BEIR folder. The corpus and the queries are each one JSON Lines file (gzipped or not, as BEIR's
    zips and the hub's first uploads hold them) or Parquet (one file, or the shards of a folder, as the hub serves them
    since its conversion); the qrels are qrels/<split>.tsv."""

    root: Path
    corpus: tuple[Path, ...]
    queries: tuple[Path, ...]
    qrels: Path

    def name(self, part: str) -> str:
        """How messages name the corpus or the queries within the folder: the file, or the folder of shards."""
        paths = self.corpus if part == "corpus" else self.queries
        return paths[0].name if paths[0].parent == self.root else f"{part}/"


def beir_part(root: Path, part: str) -> tuple[Path, ...]:
    """The file(s) of the corpus or the queries of a BEIR folder, () where it has none."""
    for name in (f"{part}.jsonl", f"{part}.jsonl.gz", f"{part}.parquet"):
        if (root / name).is_file():
            return (root / name,)
    shards = root / part
    if shards.is_dir():
        return tuple(path_order(p for p in shards.iterdir() if is_parquet(p) and p.is_file() and not p.name.startswith(".")))
    return ()


def is_beir_folder(root: str | os.PathLike) -> bool:
    return bool(beir_part(Path(root), "queries"))


def beir_folder(folder: str | os.PathLike, split: str = BEIR_SPLIT) -> BeirFolder:
    """The files of a BEIR folder, each of which must exist."""
    root = Path(folder)
    parts = {part: beir_part(root, part) for part in ("corpus", "queries")}
    for part, paths in parts.items():
        if not paths:
            raise SemrelError(f"{root}: not a BEIR folder, it has no {part} ({part}.jsonl, {part}.jsonl.gz, {part}.parquet or "
                              f"{part}/ holding Parquet files)")
    qrels = root / "qrels" / f"{split}.tsv"
    if not qrels.exists():
        raise SemrelError(f"{root}: not a BEIR folder, {qrels.relative_to(root)} is missing")
    for p in (*parts["corpus"], *parts["queries"], qrels):
        note_input(p)  # the folder is the input, its corpus too, although an import reads only the others
    return BeirFolder(root, parts["corpus"], parts["queries"], qrels)


def beir_records(paths: Iterable[Path]) -> Iterator[tuple[Path, int, dict[str, Any]]]:
    """(file, line or row, record) of a BEIR corpus or queries, file after file."""
    for path in paths:
        for line, record in read_records(path):
            yield path, line, record
