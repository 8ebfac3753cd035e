"""judgments.jsonl: one `{"query_id", "chunk_id", "P", "R", "F", "source"}` object per scored pair, with
`p` (the judge's probability of relevance) and `features` (what p was computed from) where the judge
wrote them; judgments without them (older semrel) still read."""

from __future__ import annotations

import math
import os
from typing import Any, Iterable, Mapping

from ..errors import FormatError
from ..records import Judgment
from .files import display_name, line_id
from .given import records_given
from .jsonl import read_jsonl, require, write_jsonl
from .kinds import JUDGMENTS, expecting

COMPONENTS = ("P", "R", "F")
PROBABILITY = "p"
SCORES = (PROBABILITY, *COMPONENTS)  # what a label rule can threshold


def judgment_row(j: Judgment) -> dict:
    row = {"query_id": j.query_id, "chunk_id": j.chunk_id, "P": j.P, "R": j.R, "F": j.F, "source": j.source}
    if j.p is not None:
        row["p"] = j.p
    if j.features is not None:
        row["features"] = dict(j.features)
    return row


def _probability(obj: dict, path: str | os.PathLike, line: int) -> tuple[float | None, dict[str, float] | None]:
    """The optional p (a number in [0, 1]) and features (an object of finite numbers) of a row."""
    p = features = None
    if obj.get("p") is not None:
        p = float(require(obj, "p", path, line, (int, float)))
    if obj.get("features") is not None:
        raw = require(obj, "features", path, line, dict)
        problem = features_problem(raw)  # before float(): "0.5", a feature quoted as text, is no number the judge wrote
        if problem:
            raise FormatError(display_name(path), problem, line=line)
        features = {str(k): float(v) for k, v in raw.items()}
    return p, features


def read_judgments(path: str | os.PathLike) -> list[Judgment]:
    """Judgments in file order; a repeated pair or a score that is not a finite number names its line."""
    judgments: list[Judgment] = []
    seen: dict[tuple[str, str], int] = {}
    with expecting(path, JUDGMENTS):
        for line, obj in read_jsonl(path):
            query_id = line_id(str(require(obj, "query_id", path, line, (str, int))), "query id", path, line)
            chunk_id = line_id(str(require(obj, "chunk_id", path, line, (str, int))), "chunk id", path, line)
            if (query_id, chunk_id) in seen:
                raise FormatError(display_name(path), f"pair ({query_id!r}, {chunk_id!r}) already judged on line "
                                  f"{seen[query_id, chunk_id]}", line=line)
            seen[query_id, chunk_id] = line
            precision, recall, f1 = [float(require(obj, key, path, line, (int, float))) for key in COMPONENTS]
            p, features = _probability(obj, path, line)
            judgment = Judgment(query_id, chunk_id, precision, recall, f1, source=str(obj.get("source") or ""), p=p, features=features)
            problem = judgment_problem(judgment)
            if problem:
                raise FormatError(display_name(path), problem, line=line)
            judgments.append(judgment)
    return judgments


def judgment_problem(j: Judgment) -> str | None:
    """What is wrong with a judgment's numbers, if anything: P, R and F finite, p a probability, its
    features finite numbers (a NaN feature would give a refit's p, and the pair, the top grade)."""
    if not all(math.isfinite(s) for s in (j.P, j.R, j.F)):
        return "P, R and F must be finite numbers"
    if max(j.P, j.R, j.F) > 1 + 1e-6:  # means of cosines (rescaled or not) never pass 1: a file edited or made elsewhere
        return f"P, R and F are BERTScores, at most 1; found {max(j.P, j.R, j.F)!r}"
    if j.p is not None and not 0.0 <= j.p <= 1.0:  # NaN too
        return f"p must be a probability between 0 and 1, found {j.p!r}"
    return features_problem(j.features or {})


def features_problem(features: Mapping[str, Any]) -> str | None:
    """The first feature that is not a finite number (a bool, text or null is none), named with its value; else None."""
    bad = next((k for k, v in features.items() if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)), None)
    return f"features must map names to finite numbers, found {bad!r}: {features[bad]!r}" if bad is not None else None


def write_judgments(judgments: Iterable[Judgment], path: str | os.PathLike) -> int:
    return write_jsonl((judgment_row(j) for j in judgments), path)


def given_judgments(judgments: str | os.PathLike | Iterable[Judgment] | Any, empty_ok: bool = True) -> tuple[list[Judgment], str | None]:
    """(the judgments, the file they came from) for the Python API: a judgments.jsonl read, or Judgment
    records given the checks read_judgments makes of a file's lines (finite scores, no pair twice)."""
    if isinstance(judgments, (str, os.PathLike)):
        return read_judgments(judgments), str(judgments)
    return records_given(judgments, "judgments", Judgment, lambda j: (j.query_id, j.chunk_id), "pair", problem=judgment_problem,
                         empty_ok=empty_ok), None
