"""Readers and writers of the files semrel reads and writes."""

from __future__ import annotations

import os

from ..errors import UsageError
from ..records import Qrels
from .beir import read_beir_qrels
from .corpus import golden_qrels, read_golden
from .files import STDIO, read_bytes, read_head
from .kinds import GOLDEN, QRELS, expecting
from .trec import is_nested_json, read_run, read_trec_qrels, write_qrels, write_run


def read_qrels(path: str | os.PathLike) -> Qrels:
    """Qrels from a TREC qrels file (or a ranx Qrels saved as Parquet or JSON: read_trec_qrels), a BEIR qrels .tsv (recognised by
    its header) or a golden.jsonl (recognised by its leading '{'; see golden_qrels)."""
    if str(path) == STDIO:  # stdin can be read once: parse the bytes already read
        data = read_bytes(path)
        if data.lstrip().startswith(b"{"):
            raise UsageError("a golden set cannot be read from stdin: give its file")
        return read_beir_qrels(path, data) if data.startswith(b"query-id") else read_trec_qrels(path, data)
    if is_nested_json(path):  # {qid: {docid: grade}} also opens with '{'
        return read_trec_qrels(path)
    head = read_head(path)
    if head.lstrip().startswith(b"{"):
        with expecting(path, QRELS, GOLDEN):
            return golden_qrels(read_golden(path))
    if head.startswith(b"query-id"):
        return read_beir_qrels(path)
    return read_trec_qrels(path)


__all__ = ["read_qrels", "read_run", "write_qrels", "write_run"]
