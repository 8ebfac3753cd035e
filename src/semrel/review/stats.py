"""What a review database tells: each reviewer's counts and speed, and agreement between
reviewers and between each reviewer and the judge on the pairs both labelled."""

from __future__ import annotations

import contextlib
import itertools
import os
import sqlite3
from dataclasses import asdict, dataclass
from typing import Iterable

import numpy as np

from ..analysis.agreement import Agreement, agreement, scale
from .adjudicate import grades_by_pair, human_grades, stale_decisions
from .engine import flagged_pairs, labelling_of
from .store import open_db_read_only, queued, snapshot

JUDGE = "judge"  # how the judge is named beside the reviewers, unless a reviewer goes by that name (judge_label)


def judge_label(reviewers: Iterable[str]) -> str:
    """The judge's name in the figures: JUDGE, or, where a reviewer is called that (reviewer names
    are free text, and a name shown in a table loses its case and spaces to the eye), the first of
    "judge (semrel)", "judge (semrel 2)", ... that no reviewer's name can be taken for."""
    taken = {name.strip().casefold() for name in reviewers}
    candidates = itertools.chain([JUDGE, f"{JUDGE} (semrel)"], (f"{JUDGE} (semrel {n})" for n in itertools.count(2)))
    return next(label for label in candidates if label.casefold() not in taken)


@dataclass(frozen=True)
class ReviewerStats:
    reviewer: str
    graded: int  # standing grades
    skipped: int  # standing skips
    flags: int  # pairs flagged (twice is once), as the review page counts them
    notes: int
    undos: int
    stale: int  # grades and skips on texts changed since, neither undone nor made again on the new texts: those an export leaves out
    median_seconds: float  # per timed grade or skip (keys typed at a terminal, the browser), undone ones included: the time was spent
    per_hour: float


@dataclass(frozen=True)
class PairAgreement:
    first: str
    second: str  # a reviewer, or the judge (ReviewStats.judge names it; with_judge tells)
    agreement: Agreement
    with_judge: bool = False


@dataclass(frozen=True)
class ReviewStats:
    tasks: int
    reviewed: int  # tasks with at least one standing grade
    reviewers: list[ReviewerStats]
    agreements: list[PairAgreement]
    judge: str = JUDGE  # the judge's name in `agreements` (judge_label)

    def to_json(self) -> dict:
        return {
            "tasks": self.tasks, "reviewed": self.reviewed, "reviewers": [asdict(r) for r in self.reviewers], "judge": self.judge,
            "agreement": [{"first": a.first, "second": a.second, "with_judge": a.with_judge, **a.agreement.to_json()}
                          for a in self.agreements],
        }


def reviewer_stats(conn: sqlite3.Connection) -> list[ReviewerStats]:
    names = [r[0] for r in conn.execute("SELECT name FROM reviewers ORDER BY name")]
    result = []
    for name in names:
        kinds = dict(conn.execute("SELECT kind, count(*) FROM decisions WHERE reviewer = ? GROUP BY kind", (name,)).fetchall())
        standing = dict(conn.execute("SELECT kind, count(*) FROM live WHERE reviewer = ? GROUP BY kind", (name,)).fetchall())
        seconds = np.array([r[0] for r in conn.execute(
            "SELECT seconds FROM decisions WHERE reviewer = ? AND kind IN ('grade', 'skip') AND seconds IS NOT NULL", (name,)
        )], dtype=np.float64)
        result.append(ReviewerStats(
            reviewer=name, graded=standing.get("grade", 0), skipped=standing.get("skip", 0), flags=flagged_pairs(conn, name),
            notes=kinds.get("note", 0), undos=kinds.get("undo", 0), stale=stale_decisions(conn, name).decisions,
            median_seconds=float(np.median(seconds)) if len(seconds) else float("nan"),
            per_hour=float(3600.0 / seconds.mean()) if len(seconds) and seconds.mean() > 0 else float("nan"),
        ))
    return result


def review_stats(db: str | os.PathLike, resamples: int = 1000, seed: int = 0) -> ReviewStats:
    """Counts, speed and agreement (kappa quadratic-weighted for graded labels, with a seeded
    bootstrap interval) of a review database."""
    # closed also on an error mid-read, which would hold its lock; read as of one moment, so counts and agreement agree
    with contextlib.closing(open_db_read_only(db)) as conn, snapshot(conn):
        top = labelling_of(conn).max_grade
        grades = human_grades(conn)
        people = reviewer_stats(conn)
        tasks = conn.execute(f"SELECT count(*) FROM tasks t WHERE {queued(conn)}").fetchone()[0]
    by_pair = dict(sorted(grades_by_pair(grades).items()))  # the bootstrap draws pairs in (query, chunk) order, as `agree` does
    proposed = {(g.query_id, g.chunk_id): g.proposed for g in grades}
    # the whole scale, 0 to the queue's top or a proposed grade above it (labels of a graded rule queued on one threshold,
    # which `review start` warns of): weights go by position, so a grade left out would move 3 a step nearer 1
    labels = scale([top], [g for g in proposed.values() if g is not None])
    reviewers = sorted({g.reviewer for g in grades})
    judge = judge_label([r.reviewer for r in people] + reviewers)
    agreements = []
    for first, second in itertools.combinations(reviewers, 2):
        both = [(r[first], r[second]) for r in by_pair.values() if first in r and second in r]
        if both:
            a, b = zip(*both)
            agreements.append(PairAgreement(first, second, agreement(a, b, labels=labels, resamples=resamples, seed=seed)))
    for name in reviewers:
        mine = [(r[name], proposed[pair]) for pair, r in by_pair.items() if name in r and proposed[pair] is not None]
        if mine:
            a, b = zip(*mine)
            agreements.append(PairAgreement(name, judge, agreement(a, b, labels=labels, resamples=resamples, seed=seed), True))
    return ReviewStats(
        tasks=tasks, reviewed=len(by_pair),
        reviewers=people, agreements=agreements, judge=judge,
    )
