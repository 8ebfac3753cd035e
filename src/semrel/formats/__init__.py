"""Readers and writers of the files semrel reads and writes."""

from __future__ import annotations

import os

from ..records import Qrels
from .beir import read_beir_qrels
from .corpus import golden_qrels, read_golden
from .files import read_bytes
from .trec import read_run, read_trec_qrels, write_qrels, write_run


def read_qrels(path: str | os.PathLike) -> Qrels:
    """Qrels from a TREC qrels file, a BEIR qrels .tsv (recognised by its header) or a
    golden.jsonl (recognised by its leading '{'; see golden_qrels)."""
    data = read_bytes(path)
    if data.lstrip().startswith(b"{"):
        return golden_qrels(read_golden(path))
    if data.startswith(b"query-id"):
        return read_beir_qrels(path, data)
    return read_trec_qrels(path, data)


__all__ = ["read_qrels", "read_run", "write_qrels", "write_run"]
