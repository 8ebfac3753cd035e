"""Judgments to qrels: one threshold gives binary labels, several give grades; no model is loaded.

A pair's grade is the number of thresholds its score reaches (score >= threshold), so a pair
below every threshold is written as judged non-relevant (0) rather than left out, and
Judged@k stays meaningful.

The defaults (recall; threshold 0.70; grades 0.60,0.70,0.80 on raw all-MiniLM-L6-v2 scores) come
from bench/labels.py (docs/judge.md, "Label quality"): on COVID-QA (short answers, 150-word
chunks) recall separates gold chunks far better (AUC 0.963) than F (0.786) or P (0.715) and its
kappa against gold peaks at 0.707; on PubMedQA (long answers) R is within 0.011 of the best
component but peaks at 0.53, so long answers call for `semrel calibrate`.
"""

from __future__ import annotations

import math
import os
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ..errors import UsageError
from ..formats.judgments import COMPONENTS, read_judgments
from ..formats.manifest import read_params, write_manifest
from ..formats.trec import write_qrels
from ..records import Judgment, Qrels

DEFAULT_COMPONENT = "R"
DEFAULT_THRESHOLD = 0.70
DEFAULT_GRADES = (0.60, 0.70, 0.80)


def parse_thresholds(text: str) -> tuple[float, ...]:
    """'0.4,0.5,0.6' -> (0.4, 0.5, 0.6), checked by check_thresholds."""
    try:
        values = tuple(float(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise UsageError(f"--grades {text!r}: give comma-separated numbers, e.g. 0.6,0.7,0.8") from None
    return check_thresholds(values)


def check_thresholds(thresholds: Sequence[float]) -> tuple[float, ...]:
    values = tuple(float(t) for t in thresholds)
    if not values:
        raise UsageError("give at least one threshold")
    if not all(math.isfinite(v) for v in values):
        raise UsageError(f"thresholds must be finite numbers, got {', '.join(map(str, values))}")
    if any(b <= a for a, b in zip(values, values[1:])):
        raise UsageError(f"thresholds must be strictly increasing, got {','.join(map(str, values))}")
    return values


def reached(scores: np.ndarray, thresholds: Sequence[float]) -> np.ndarray:
    """Number of thresholds each score reaches (0 .. len(thresholds))."""
    return np.searchsorted(np.asarray(thresholds, dtype=np.float64), scores, side="right")


def label_judgments(judgments: Sequence[Judgment], on: str, thresholds: Sequence[float]) -> Qrels:
    """Qrels with one row per judged pair, graded by how many thresholds `on` (P, R or F) reaches."""
    if on not in COMPONENTS:
        raise UsageError(f"--on {on!r}: choose one of P, R, F")
    values = check_thresholds(thresholds)
    scores = np.array([getattr(j, on) for j in judgments], dtype=np.float64)
    return Qrels.from_columns([j.query_id for j in judgments], [j.chunk_id for j in judgments], reached(scores, values))


def label(
    judgments: str | os.PathLike | Iterable[Judgment],
    output: str | os.PathLike | None = None,
    *,
    on: str = DEFAULT_COMPONENT,
    threshold: float | None = None,
    grades: Sequence[float] | None = None,
) -> Qrels:
    """Binary (`threshold`) or graded (`grades`) qrels from judgments (the Python side of `semrel label`).

    With neither, the default threshold applies. With `output`, the qrels are written atomically
    with a manifest recording the component, the thresholds and the judge's own settings.
    """
    if threshold is not None and grades is not None:
        raise UsageError("give either --threshold (binary labels) or --grades (graded), not both")
    thresholds = check_thresholds(grades if grades is not None else (DEFAULT_THRESHOLD if threshold is None else threshold,))
    source = str(judgments) if isinstance(judgments, (str, os.PathLike)) else None
    rows: list[Judgment] = read_judgments(source) if source is not None else list(judgments)  # type: ignore[arg-type]
    qrels = label_judgments(rows, on, thresholds)
    if output is not None:
        write_qrels(qrels, output)
        counts = np.bincount(qrels.relevance, minlength=len(thresholds) + 1)
        write_manifest(output, inputs=[source] if source else [], rows=len(qrels), params={
            "on": on, "thresholds": list(thresholds), "labels": "graded" if len(thresholds) > 1 else "binary",
            "rule": "grade = number of thresholds reached (score >= threshold)",
            "grade_counts": {str(g): int(n) for g, n in enumerate(counts)},
            "judge": read_params(source) if source else None,
        })
    return qrels


def label_as(rule: Mapping[str, Any], judgments: str | os.PathLike | Iterable[Judgment]) -> Qrels:
    """Label judgments with the rule a qrels manifest records (its `params`: today the component `on` and
    the `thresholds`), so that judgments added later (semrel fill) get exactly the labels the qrels'
    own pairs got. The one place the recorded rule is applied: a new kind of rule is read here."""
    on = rule.get("on", DEFAULT_COMPONENT)
    thresholds = list(rule.get("thresholds") or [DEFAULT_THRESHOLD])
    if len(thresholds) > 1:
        return label(judgments, on=on, grades=thresholds)
    return label(judgments, on=on, threshold=thresholds[0])
