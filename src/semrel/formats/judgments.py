"""judgments.jsonl: one `{"query_id", "chunk_id", "P", "R", "F", "source"}` object per scored pair."""

from __future__ import annotations

import math
import os
from typing import Iterable

from ..errors import FormatError
from ..records import Judgment
from .files import display_name
from .jsonl import read_jsonl, require, write_jsonl

COMPONENTS = ("P", "R", "F")


def judgment_row(j: Judgment) -> dict:
    return {"query_id": j.query_id, "chunk_id": j.chunk_id, "P": j.P, "R": j.R, "F": j.F, "source": j.source}


def read_judgments(path: str | os.PathLike) -> list[Judgment]:
    """Judgments in file order; a repeated pair or a score that is not a finite number names its line."""
    judgments: list[Judgment] = []
    seen: dict[tuple[str, str], int] = {}
    for line, obj in read_jsonl(path):
        query_id = str(require(obj, "query_id", path, line, (str, int)))
        chunk_id = str(require(obj, "chunk_id", path, line, (str, int)))
        if (query_id, chunk_id) in seen:
            raise FormatError(display_name(path), f"pair ({query_id!r}, {chunk_id!r}) already judged on line "
                              f"{seen[query_id, chunk_id]}", line=line)
        seen[query_id, chunk_id] = line
        scores = [float(require(obj, key, path, line, (int, float))) for key in COMPONENTS]
        if not all(math.isfinite(s) for s in scores):
            raise FormatError(display_name(path), "P, R and F must be finite numbers", line=line)
        precision, recall, f1 = scores
        judgments.append(Judgment(query_id, chunk_id, precision, recall, f1, source=str(obj.get("source") or "")))
    return judgments


def write_judgments(judgments: Iterable[Judgment], path: str | os.PathLike) -> int:
    return write_jsonl((judgment_row(j) for j in judgments), path)
