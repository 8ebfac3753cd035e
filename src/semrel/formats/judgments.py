"""judgments.jsonl: `{"query_id", "chunk_id", "P", "R", "F", "source"}`, one judged pair a line."""

from __future__ import annotations

import math
import os

from ..errors import FormatError
from ..records import Judgment
from .files import display_name
from .jsonl import read_jsonl, require

COMPONENTS = ("P", "R", "F")


def read_judgments(path: str | os.PathLike) -> list[Judgment]:
    """The judged pairs of a judgments.jsonl; a repeated pair or a score that is not a finite
    number is an error naming its line."""
    judgments: list[Judgment] = []
    seen: dict[tuple[str, str], int] = {}
    for line, obj in read_jsonl(path):
        query_id = str(require(obj, "query_id", path, line, (str, int)))
        chunk_id = str(require(obj, "chunk_id", path, line, (str, int)))
        if (query_id, chunk_id) in seen:
            raise FormatError(
                display_name(path), f"pair ({query_id!r}, {chunk_id!r}) already judged on line {seen[query_id, chunk_id]}",
                line=line,
            )
        seen[query_id, chunk_id] = line
        scores = [float(require(obj, name, path, line, (int, float))) for name in COMPONENTS]
        if not all(math.isfinite(s) for s in scores):
            raise FormatError(display_name(path), "P, R and F must be finite numbers", line=line)
        source = obj.get("source") or ""
        judgments.append(Judgment(query_id, chunk_id, *scores, source=str(source)))
    return judgments
