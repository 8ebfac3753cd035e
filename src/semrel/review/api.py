"""`semrel.export_reviews`: the Python side of `semrel review export`.

Thin over adjudicate.py, which the command calls too: the same adjudication, the same labels and files.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Callable, Union

from ..errors import check_flags, check_kind, check_warn, tell
from ..evaluation.api import Qrels, QrelsLike, as_qrels
from ..formats.files import guarded
from .adjudicate import ReviewedLabels, reviewed_labels, write_reviewed

PathLike = Union[str, os.PathLike]


@guarded
def export_reviews(db: PathLike, labels: QrelsLike, output: PathLike | None = None, *, adjudicate: str = "majority",
                   only_reviewed: bool = False, warn: Callable[[str], None] | None = None) -> ReviewedLabels:
    """The derived labels with the human grades of a review overriding them (the Python side of `semrel review
    export`, with its defaults).

    db: the review database. labels: the derived qrels the review was queued from (a qrels file, a Qrels, a
    `{query: {doc: grade}}` dict or a DataFrame). adjudicate: how reviewers' conflicts are settled: majority
    (ties: the lowest grade), a reviewer's name (their grade wins where they gave one) or strict (a conflict is an
    error listing them). only_reviewed: only the pairs with a human grade (e.g. to calibrate on).
    Returns a ReviewedLabels: `.qrels` (a semrel.Qrels), `.sources` (where each label came from: judge, review,
    adjudicated:RULE, with the reviewers' grades), `.counts`. With `output`, the qrels are written there and the
    sources to `<output>.sources.jsonl`, with their manifests, as one unit, as the command writes them. Reviewed
    decisions left out because their pairs' texts changed since are told to `warn`, else as a Python warning.
    """
    check_warn(warn)
    check_kind("db", db, (str, os.PathLike), "the review database's file path", required=True)
    check_kind("output", output, (str, os.PathLike), "a file path")
    check_kind("adjudicate", adjudicate, (str,), "majority, strict or a reviewer's name", required=True)
    check_flags(only_reviewed=only_reviewed)
    given = labels if isinstance(labels, (str, os.PathLike)) else as_qrels(labels, "labels")
    result = reviewed_labels(db, given, adjudicate, only_reviewed)
    if output is not None:
        write_reviewed(result, output, [db, *([labels] if isinstance(labels, (str, os.PathLike)) else [])])
    tell(result.warnings, warn, stacklevel=3)  # past @guarded's wrapper, to the caller's line
    q = result.qrels
    return dataclasses.replace(result, qrels=Qrels(q.query_ids, q.doc_ids, q.relevance, q.source))
