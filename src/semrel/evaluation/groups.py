"""Scores averaged over judgment groups (trec_eval -R qrels_jg).

qrels_jg qrels hold several sets of judgments, one per judgment group (an assessor), named in the
column TREC qrels leave for the iteration. Each group's judgments are scored as qrels of their own
with the base measure (AP for map_avgjg, P@k for P_avgjg@k, Rprec_mult for Rprec_mult_avgjg), and a
query's value is the mean over the groups that judge it.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..records import Qrels, Run, dictionary_codes
from .measures import Measure
from .metrics import Evaluation, Options, evaluate_gradings, own_evaluation, own_measures


def evaluate_groups(groups: Sequence[tuple[str, Qrels]], run: Run, measures, options: Options = Options()) -> Evaluation:
    """The run scored on each group's judgments, averaged per query over the groups that judge it."""
    chosen = own_measures(measures, lambda m: m.entry.per_group, "judgment groups (relation='qrels_jg')",
                          "map_avgjg, P_avgjg@k, Rprec_mult_avgjg@x")
    grouped = [m for m in chosen if m.entry.per_group]
    queries = sorted({q for _, qrels in groups for q in qrels.query_ids.to_pylist()}, key=lambda q: q.encode())
    position = {q: i for i, q in enumerate(queries)}
    sums = {m: np.zeros(len(queries)) for m in grouped}
    judged_by = np.zeros(len(queries))
    present: set[str] = set()
    for _, qrels in sorted(groups, key=lambda group: group[0].encode()):  # summed in trec_eval's order: a mean's last digit can differ
        (result,) = evaluate_gradings(qrels, [qrels.relevance], [run], grouped or [Measure("NumQ")], options=options)[0]
        at = np.array([position[q] for q in result.query_ids], dtype=np.int64)
        for m in grouped:
            sums[m][at] += result.values[m]
        judged_by[at] += 1
        present |= set(result.query_ids) - set(result.missing_queries)
    names = dictionary_codes(run.query_ids)[0].to_pylist()
    return own_evaluation(run, chosen, queries, lambda m: np.divide(sums[m], judged_by, out=np.zeros(len(queries)), where=judged_by > 0),
                          [q for q in queries if q not in present], [q for q in names if q not in position], options.complete)
