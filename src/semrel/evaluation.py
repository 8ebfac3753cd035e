"""Evaluating run files on a qrels file: the library call behind `semrel eval`."""

from __future__ import annotations

import os
from typing import Callable, Sequence

from .formats import read_qrels, read_run
from .measures import Measure, parse_measures
from .metrics import Evaluation, evaluate


def evaluate_files(
    qrels_path: str | os.PathLike,
    run_paths: Sequence[str | os.PathLike],
    measures: Sequence[str | Measure] | None = None,
    rel_level: int = 1,
    warn: Callable[[str], None] | None = None,
) -> list[Evaluation]:
    """Read the qrels once and each run in turn; warn about queries missing on either side."""
    parsed = [m if isinstance(m, Measure) else None for m in measures or ()]
    chosen = parsed if measures and all(parsed) else parse_measures([str(m) for m in measures] if measures else None)
    qrels = read_qrels(qrels_path)
    results = []
    for path in run_paths:
        (result,) = evaluate(qrels, read_run(path), chosen, rel_level)
        if warn and result.missing_queries:
            warn(
                f"{len(result.missing_queries)} of {len(result.query_ids)} queries in {qrels_path} have no results "
                f"in {path}; they score 0 (e.g. {result.missing_queries[0]!r})"
            )
        if warn and result.ignored_queries:
            warn(
                f"{len(result.ignored_queries)} queries in {path} are not in {qrels_path} and are ignored "
                f"(e.g. {result.ignored_queries[0]!r})"
            )
        results.append(result)
    return results
