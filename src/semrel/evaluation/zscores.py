"""Standardised scores (trec_eval -Z): each query's value as (value - mean) / standard deviation.

The file gives, per query and measure (trec_eval's name), the mean and standard deviation of some
reference population of runs: `qid measure mean stddev` lines. A value without a line there, or with
a standard deviation of 0, becomes 0; text measures (runid, relstring) and num_q are left as they are.
The 'all' row then aggregates the standardised values as the measure does (sums for counts).
"""

from __future__ import annotations

import dataclasses
import os

import numpy as np

from ..errors import FormatError
from ..formats.files import display_name, read_lines
from .measures import Kind
from .metrics import Evaluation

ZScores = dict[tuple[str, str], tuple[float, float]]


def read_zscores(path: str | os.PathLike) -> ZScores:
    """{(query id, trec_eval measure name): (mean, standard deviation)}."""
    found: ZScores = {}
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
            found[(fields[0], fields[1])] = (mean, stddev)
        except ValueError:
            raise FormatError(display_name(str(path)), f"expected 'qid measure mean stddev' (finite numbers), found {raw.strip()!r}",
                              line=number) from None
    return found


def standardise(result: Evaluation, zscores: ZScores) -> Evaluation:
    """The evaluation with each numeric per-query value standardised (see the module docstring)."""
    values = {}
    for m, column in result.values.items():
        if m.kind is Kind.TEXT or m.family == "NumQ":
            values[m] = column
            continue
        name = m.trec_name
        stats = np.array([zscores.get((q, name), (0.0, 0.0)) for q in result.query_ids], dtype=np.float64).reshape(-1, 2)
        mean, std = stats[:, 0], stats[:, 1]
        values[m] = np.divide(column - mean, std, out=np.zeros(len(column)), where=std != 0)
    return dataclasses.replace(result, values=values, zscored=True)
