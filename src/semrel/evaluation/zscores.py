"""Standardised scores (trec_eval -Z): each query's value as (value - mean) / standard deviation.

The file gives, per query and measure (trec_eval's name), the mean and standard deviation of some
reference population of runs: `qid measure mean stddev` lines. As trec_eval (convert_zscores.c), a
value without a line there, or with a standard deviation of 0 and a value other than the mean, becomes
MISSING (-1000000), so that an 'all' row over it shows it; one equal to a mean of deviation 0 becomes 0.
A query the run does not hold, scored as an empty ranking (trec_eval -c), becomes 0: trec_eval standardises
only the queries a run holds and averages -c's others in as 0. Text measures (runid, relstring) and num_q
are left as they are. The 'all' row then aggregates the standardised values as the measure does (sums
for counts).
"""

from __future__ import annotations

import dataclasses
import os
from typing import Callable

import numpy as np

from ..errors import FormatError
from ..formats.files import display_name, read_lines
from ..terminal import quantity
from .measures import Kind
from .metrics import Evaluation

ZScores = dict[tuple[str, str], tuple[float, float]]
MISSING = -1000000.0  # trec_eval's MISSING_ZSCORE_VALUE


def read_zscores(path: str | os.PathLike) -> ZScores:
    """{(query id, trec_eval measure name): (mean, standard deviation)}."""
    found: ZScores = {}
    first: dict[tuple[str, str], int] = {}
    for number, raw in read_lines(path):
        fields = raw.split()
        if not fields or fields[0].startswith("#"):
            continue
        try:
            if len(fields) != 4:
                raise ValueError
            mean, stddev = float(fields[2]), float(fields[3])
            if not (np.isfinite(mean) and np.isfinite(stddev)):  # every standardised value would be nan
                raise ValueError
        except ValueError:
            raise FormatError(display_name(str(path)), f"expected 'qid measure mean stddev' (finite numbers), found {raw.strip()!r}",
                              line=number) from None
        key = (fields[0], fields[1])
        if key in first:  # which of the two trec_eval takes depends on its sort; semrel took the last, unsaid
            raise FormatError(display_name(str(path)), f"a second line for query {key[0]!r} and measure {key[1]!r} "
                              f"(the first is line {first[key]}); give each query and measure one line", line=number)
        first[key] = number
        found[key] = (mean, stddev)
    return found


def standardise(result: Evaluation, zscores: ZScores, warn: Callable[[str], None] | None = None) -> Evaluation:
    """The evaluation with each numeric per-query value standardised (see the module docstring); `warn` hears how many
    values could not be (before 2026-12-06 they became 0, which hid them in the 'all' row)."""
    values, missing, example = {}, 0, ""
    held = result.held
    for m, column in result.values.items():
        if m.kind is Kind.TEXT or m.family == "NumQ":
            values[m] = column
            continue
        name = m.trec_name
        stats = np.array([zscores.get((q, name), (np.nan, 0.0)) for q in result.query_ids], dtype=np.float64).reshape(-1, 2)
        mean, std = stats[:, 0], stats[:, 1]
        lacking = held & (std == 0) & (column != mean)  # a missing line's nan mean equals nothing
        values[m] = np.where(lacking, MISSING, np.divide(column - mean, std, out=np.zeros(len(column)), where=held & (std != 0)))
        if lacking.any():
            example = example or f"{result.query_ids[int(np.argmax(lacking))]} {name}"
            missing += int(lacking.sum())
    if missing and warn:
        warn(f"{result.run_name}: {quantity(missing, 'value')} with no 'qid measure mean stddev' line (e.g. {example}), "
             f"or with a deviation of 0 and a value other than the mean, set to {MISSING:.0f} as trec_eval sets them")
    return dataclasses.replace(result, values=values, zscored=True)
