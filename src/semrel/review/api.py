"""`semrel.export_reviews` and `semrel.simulate_review`: the Python side of `semrel review export` and `simulate`.

Thin over adjudicate.py and simulate.py, which the commands call too: the same queue, adjudication, labels and files.
"""

from __future__ import annotations

import dataclasses
import numbers
import os
from typing import Callable, Iterable, Mapping, Sequence, Union

from ..analysis.ppi import Estimate, corrected_estimates
from ..analysis.significance import MAX_DRAWS
from ..errors import UsageError, check_flags, check_kind, check_list, check_seed, check_warn, tell
from ..evaluation.api import Measures, Qrels, QrelsLike, RunLike, as_qrels, as_runs
from ..evaluation.measures import parse_measures
from ..formats.files import guarded
from ..formats.judgments import SCORES
from ..formats.trec import graded_pairs
from .adjudicate import ReviewedLabels, reviewed_labels, reviewed_sample, write_reviewed
from .engine import QueueRequest, QueueSettings
from .order import ORDERS, RANDOM_SHARE
from .simulate import simulate
from .stats import ReviewStats
from .stats import review_stats as stats_of

PathLike = Union[str, os.PathLike]


@guarded
def export_reviews(db: PathLike, labels: QrelsLike, output: PathLike | None = None, *, adjudicate: str = "majority",
                   only_reviewed: bool = False, by_reviewer: PathLike | None = None,
                   warn: Callable[[str], None] | None = None) -> ReviewedLabels:
    """The derived labels with the human grades of a review overriding them (the Python side of `semrel review
    export`, with its defaults).

    db: the review database. labels: the derived qrels the review was queued from (a qrels file, a Qrels, a
    `{query: {doc: grade}}` dict or a DataFrame). adjudicate: how reviewers' conflicts are settled: majority
    (ties: the lowest grade), a reviewer's name (their grade wins where they gave one) or strict (a conflict is an
    error listing them). only_reviewed: only the pairs with a human grade (e.g. to calibrate on).
    Returns a ReviewedLabels: `.qrels` (a semrel.Qrels), `.sources` (where each label came from: judge, review,
    adjudicated:RULE, with the reviewers' grades), `.counts`. With `output`, the qrels are written there and the
    sources to `<output>.sources.jsonl`, with their manifests, as one unit, as the command writes them; with
    `by_reviewer` too, each reviewer's grades go there as trec_eval's qrels_jg (for `agree --groups`) and into
    `.by_reviewer` [(reviewer, Qrels)], the reviewer's spaces made '_'. Reviewed
    decisions left out because their pairs' texts changed since are told to `warn`, else as a Python warning.
    """
    check_warn(warn)
    check_kind("db", db, (str, os.PathLike), "the review database's file path", required=True)
    check_kind("output", output, (str, os.PathLike), "a file path")
    check_kind("adjudicate", adjudicate, (str,), "majority, strict or a reviewer's name", required=True)
    check_kind("by_reviewer", by_reviewer, (str, os.PathLike), "a file path")
    check_flags(only_reviewed=only_reviewed)
    if by_reviewer is not None and output is None:
        raise UsageError("by_reviewer= is written with the reviewed qrels: give output= too")
    given = labels if isinstance(labels, (str, os.PathLike)) else as_qrels(labels, "labels")
    result = reviewed_labels(db, given, adjudicate, only_reviewed, by_reviewer is not None)
    if output is not None:
        write_reviewed(result, output, [db, *([labels] if isinstance(labels, (str, os.PathLike)) else [])], by_reviewer)
    tell(result.warnings, warn, stacklevel=3)  # past @guarded's wrapper, to the caller's line
    q = result.qrels
    return dataclasses.replace(result, qrels=Qrels(q.query_ids, q.doc_ids, q.relevance, q.source))


@guarded
def simulate_review(db: PathLike, human: QrelsLike, *, reviewer: str, judgments: PathLike | None = None,
                    labels: PathLike | None = None, corpus: PathLike | None = None, golden: PathLike | None = None,
                    on: str | None = None, thresholds: str | Sequence[float] | None = None, order: str = "uncertain",
                    random_share: float = RANDOM_SHARE, seed: int = 0, limit: int | None = None, overlap: int = 0,
                    unlisted_as_zero: bool = False, warn: Callable[[str], None] | None = None) -> tuple[int, int]:
    """Grade a review queue from known labels, as `semrel review simulate` does (with its defaults): to measure, before
    anyone reviews, what a review of N pairs would give (agreement, `calibrate`, corrected estimates).

    db: the review database, built on first use from judgments, labels (the derived qrels), corpus and golden (all
    four paths, or none to join the database's queue). human: the grades standing in for the reviewer's (a qrels or
    golden.jsonl path, a Qrels, a dict or a DataFrame); a queued pair it does not list is skipped, or graded 0 with
    `unlisted_as_zero` where it lists the query. on, thresholds: the labelling the queue grades by (numbers, or the
    file `semrel calibrate -o` writes; default: the rule the labels' manifest records). order ('uncertain', 'random',
    'query', 'query-sample'), random_share, seed, limit (pairs queued) and overlap (pairs every reviewer sees) build a new queue.
    Returns (graded, skipped): the decisions recorded. Refused under the name of a reviewer who graded by hand."""
    check_warn(warn)
    check_kind("db", db, (str, os.PathLike), "the review database's file path", required=True)
    check_kind("reviewer", reviewer, (str,), "a reviewer's name", required=True)
    for name, given in (("judgments", judgments), ("labels", labels), ("corpus", corpus), ("golden", golden)):
        check_kind(name, given, (str, os.PathLike), "a file path")
    check_kind("on", on, (str,), f"one of {', '.join(SCORES)}")
    if on is not None and on not in SCORES:
        raise UsageError(f"on={on!r}: choose one of {', '.join(SCORES)}")
    check_kind("order", order, (str,), f"one of {', '.join(ORDERS)}", required=True)
    if order not in ORDERS:
        raise UsageError(f"order={order!r}: choose one of {', '.join(ORDERS)}")
    check_kind("random_share", random_share, (numbers.Real,), "a share from 0 to 1", required=True)
    if not 0 <= random_share <= 1:
        raise UsageError(f"random_share={random_share!r}: give a share from 0 to 1")
    check_seed(seed)
    check_kind("limit", limit, (numbers.Integral,), "a number of pairs, 1 or more")
    check_kind("overlap", overlap, (numbers.Integral,), "a number of pairs, 0 or more", required=True)
    if limit is not None and limit < 1 or overlap < 0:
        raise UsageError(f"limit={limit!r}, overlap={overlap!r}: give a limit of 1 or more (or None) and an overlap of 0 or more")
    check_flags(unlisted_as_zero=unlisted_as_zero)
    if thresholds is not None and not isinstance(thresholds, (str, os.PathLike)):  # an int was "'int' object is not iterable"
        numbers_given = check_list("thresholds", thresholds, (numbers.Real,),
                                   "a list of numbers, e.g. [0.5, 0.7], or the file `semrel calibrate -o` wrote", "numbers")
        thresholds = ",".join(str(float(t)) for t in numbers_given or ())
    grades = graded_pairs(as_qrels(human, "human"))  # before the database is opened: a bad file leaves no database behind
    request = QueueRequest(_named(judgments), _named(labels), _named(corpus), _named(golden), on, _named(thresholds),
                           QueueSettings(order, float(random_share), int(seed), None if limit is None else int(limit), int(overlap)))
    messages: list[str] = []
    result = simulate(os.fspath(db), reviewer, grades, request, messages.append, unlisted_as_zero)
    tell(messages, warn, stacklevel=3)
    return result


def _named(path: PathLike | None) -> str | None:
    return None if path is None else os.fspath(path)


@guarded
def review_stats(db: PathLike, *, resamples: int = 1000, seed: int = 0) -> ReviewStats:
    """Progress and agreement of a review (the Python side of `semrel review stats`, with its defaults): `.tasks`,
    `.reviewed`, `.reviewers` (grades, skips, pace) and `.agreements` (kappa of each pair of reviewers and of each with
    the judge, bootstrap intervals from `resamples` draws with `seed`); `.to_json()` is the command's `-f json`."""
    check_kind("db", db, (str, os.PathLike), "the review database's file path", required=True)
    check_kind("resamples", resamples, (numbers.Integral,), f"a whole number, 10 to {MAX_DRAWS:,}", required=True)
    check_seed(seed)
    if not 10 <= resamples <= MAX_DRAWS:
        raise UsageError(f"resamples={resamples}: give 10 to {MAX_DRAWS:,}")
    return stats_of(db, resamples=resamples, seed=seed)


@guarded
def estimate(qrels: QrelsLike, runs: RunLike | Iterable[RunLike] | Mapping[str, RunLike], db: PathLike, measures: Measures = None, *,
             adjudicate: str = "majority", confidence: float = 0.95, rel_level: int = 1,
             warn: Callable[[str], None] | None = None) -> list[Estimate]:
    """Each run's metrics on derived qrels next to prediction-powered estimates corrected by the human grades of the
    review's random sample in `db`, with a `confidence` interval (the Python side of `semrel estimate`, with its defaults).
    qrels and runs take what `evaluate` takes; adjudicate settles reviewers' conflicts as in `export_reviews`. Returns one
    Estimate per run and measure (`render_estimates(e, confidence, "table")` prints the command's table)."""
    check_warn(warn)
    check_kind("db", db, (str, os.PathLike), "the review database's file path", required=True)
    check_kind("adjudicate", adjudicate, (str,), "majority, strict or a reviewer's name", required=True)
    check_kind("confidence", confidence, (numbers.Real,), "a number from 0.5 to 0.999", required=True)
    check_kind("rel_level", rel_level, (numbers.Integral,), "a whole number", required=True)
    if not 0.5 <= confidence <= 0.999:
        raise UsageError(f"confidence={confidence!r}: give a number from 0.5 to 0.999")
    judged = as_qrels(qrels)
    _, read, _ = as_runs(runs)
    notes: list[str] = []
    found = corrected_estimates(judged, list(read), parse_measures(measures), reviewed_sample(db, adjudicate), confidence,
                                int(rel_level), notes.append)
    tell(notes, warn, stacklevel=3)  # past @guarded's wrapper, to the caller's line
    return found
