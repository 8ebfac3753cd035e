"""From decisions to labels: each reviewer's standing grade per pair, conflicts between
reviewers settled by a rule, and the derived qrels with human labels overriding them.

Rules: `majority` takes the most common grade (a tie goes to the lowest tied grade, the
conservative choice); a reviewer's name makes that reviewer's grade win where they gave one
(majority elsewhere); `strict` makes any disagreement an error that lists the pairs.

The export's files (the qrels, their `.sources.jsonl` and both manifests) are written as one
unit: all four are made whole in a hidden folder beside the output, then renamed into place
together, the qrels last, with Ctrl-C and SIGTERM held back while they are renamed, so an
interrupt leaves the old files or the new ones.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
from collections import Counter
from dataclasses import dataclass
from typing import Callable

from ..analysis.agreement import majority
from ..analysis.ppi import ReviewedSample
from ..errors import UsageError, ValidationError, tell
from ..formats import read_qrels
from ..formats.files import STDIO, file_digest, files_as_one
from ..formats.jsonl import write_jsonl
from ..formats.manifest import manifest_path, write_manifest
from ..formats.trec import graded_pairs, write_judgment_groups, write_qrels
from ..records import Qrels
from ..terminal import quantity
from .engine import ADJUDICATION_RULES, as_recorded, labelling_of
from .store import open_db_read_only, queued, read_meta, snapshot

Pair = tuple[str, str]


@dataclass(frozen=True)
class HumanGrade:
    query_id: str
    chunk_id: str
    reviewer: str
    grade: int
    proposed: int
    sample_rank: int | None


def human_grades(conn: sqlite3.Connection) -> list[HumanGrade]:
    """Every standing grade (not skipped, not undone, not stale), in task order."""
    rows = conn.execute(
        "SELECT t.query_id, t.chunk_id, l.reviewer, l.grade, t.proposed, t.sample_rank FROM live l"
        " JOIN tasks t ON t.id = l.task_id WHERE l.kind = 'grade' ORDER BY t.position, l.reviewer"
    )
    return [HumanGrade(*row) for row in rows]


def grades_digest(grades: list[HumanGrade]) -> str:
    """sha256 of the standing grades an export read: the database file's own digest in the manifest misses the
    decisions still in its write-ahead log, and changes when SQLite folds the log in although no grade did."""
    rows = sorted((g.query_id, g.chunk_id, g.reviewer, g.grade) for g in grades)
    return hashlib.sha256(json.dumps(rows).encode()).hexdigest()


def grades_by_pair(grades: list[HumanGrade]) -> dict[Pair, dict[str, int]]:
    by_pair: dict[Pair, dict[str, int]] = {}
    for g in grades:
        by_pair.setdefault((g.query_id, g.chunk_id), {})[g.reviewer] = g.grade
    return by_pair


def settled_by(by_reviewer: dict[str, int], rule: str) -> str:
    """The rule that settles a pair: the named reviewer where they graded it, else majority
    (whose ties go to the lowest tied grade)."""
    return rule if rule not in ADJUDICATION_RULES and rule in by_reviewer else "majority"


def settle(by_reviewer: dict[str, int], rule: str) -> int:
    """One grade from several reviewers' grades of a pair (see the module's rules)."""
    if settled_by(by_reviewer, rule) != "majority":
        return by_reviewer[rule]
    return majority(by_reviewer.values())


def adjudicate(by_pair: dict[Pair, dict[str, int]], rule: str, reviewers: set[str]) -> dict[Pair, int]:
    """The settled grade of each reviewed pair."""
    if rule not in ADJUDICATION_RULES and rule not in reviewers:
        known = ", ".join(sorted(reviewers)) or "none yet"
        raise UsageError(f"adjudicate={rule!r}: not majority, strict or a reviewer of this database ({known})")
    if rule == "strict":
        conflicts = [(pair, grades) for pair, grades in by_pair.items() if len(set(grades.values())) > 1]
        if conflicts:
            listed = "; ".join(
                f"{q}/{c}: " + ", ".join(f"{r}={g}" for r, g in sorted(grades.items())) for (q, c), grades in conflicts[:5]
            )
            more = f" and {len(conflicts) - 5} more" if len(conflicts) > 5 else ""
            raise ValidationError(
                f"{len(conflicts)} reviewed pairs have conflicting grades: {listed}{more}; "
                "settle them in a review or use adjudicate='majority' or a reviewer's name"
            )
    return {pair: settle(grades, rule) for pair, grades in by_pair.items()}


def reviewer_groups(grades: list[HumanGrade]) -> list[tuple[str, Qrels]]:
    """Each reviewer's standing grades as one judgment group of trec_eval's qrels_jg, for `agree --groups` and
    `eval -R qrels_jg`: the group is the reviewer's name with its spaces made '_' (a column of a qrels line)."""
    by_group: dict[str, dict[str, dict[str, int]]] = {}
    named: dict[str, str] = {}
    for g in grades:
        group = "_".join(g.reviewer.split())
        if named.setdefault(group, g.reviewer) != g.reviewer:
            raise ValidationError(f"reviewers {named[group]!r} and {g.reviewer!r} would both be judgment group {group!r}, "
                                  "as a group may hold no space: export without by_reviewer")
        by_group.setdefault(group, {}).setdefault(g.query_id, {})[g.chunk_id] = g.grade
    return [(group, Qrels.from_dict(judged)) for group, judged in sorted(by_group.items())]


@dataclass(frozen=True)
class ReviewedLabels:
    """The derived qrels with the human grades overriding them (`qrels`), where each label came from (`sources`,
    the rows of `<output>.sources.jsonl`), the export's settings (`params`, for the manifests) and what it warns of."""

    qrels: Qrels
    sources: list[dict]
    params: dict
    warnings: list[str]
    by_reviewer: list[tuple[str, Qrels]] | None = None  # each reviewer's grades (reviewer_groups), where asked for

    @property
    def counts(self) -> dict[str, int]:
        """How many labels came from each source: judge, review, adjudicated:RULE."""
        return dict(Counter(row["source"] for row in self.sources))


def reviewed_labels(db: str | os.PathLike, labels: str | os.PathLike | Qrels, rule: str = "majority",
                    only_reviewed: bool = False, by_reviewer: bool = False) -> ReviewedLabels:
    """The derived qrels `labels` (a file, or Qrels) with the human grades of `db` overriding them (only the human
    grades with `only_reviewed`), reviewers' conflicts settled by `rule`, and with `by_reviewer` each reviewer's
    grades apart. Reviewed decisions left out because their pairs' texts changed since are counted in a warning."""
    rule = as_recorded(rule)
    with contextlib.closing(open_db_read_only(db)) as conn:  # closed also on an error mid-read, which would hold its lock
        with snapshot(conn):  # the grades and the stale decisions left out agree
            grades = human_grades(conn)
            stale = stale_decisions(conn)
        top = labelling_of(conn).max_grade
    by_pair = grades_by_pair(grades)
    settled = adjudicate(by_pair, rule, {g.reviewer for g in grades})
    named = labels if isinstance(labels, (str, os.PathLike)) else "labels"
    derived = graded_pairs(read_qrels(labels) if isinstance(labels, (str, os.PathLike)) else labels)  # a pair listed twice: refused
    highest = max((g for docs in derived.values() for g in docs.values()), default=0)
    if highest > top:  # a reviewer's 1 (relevant) beside the judge's 3 (highly relevant) would be one scale read as two
        raise ValidationError(f"{named} grade up to {highest}, and the review in {db} grades 0..{top}: give the derived qrels "
                              "the review was queued from")
    if settled and not any(query in derived for query, _ in settled):  # another set's qrels: merging them would mix two sets
        raise ValidationError(f"{named} shares no query with the pairs reviewed in {db}: give the derived qrels the review "
                              "was queued from")
    rows: list[dict] = []
    judged: dict[str, dict[str, int]] = {}
    for query_id, docs in derived.items():
        for chunk_id, grade in docs.items():
            rows.append(_source_row(query_id, chunk_id, grade, settled, by_pair, rule))
    for (query_id, chunk_id) in settled:
        if chunk_id not in derived.get(query_id, {}):
            rows.append(_source_row(query_id, chunk_id, None, settled, by_pair, rule))
    if only_reviewed:
        rows = [row for row in rows if row["source"] != "judge"]
    for row in rows:
        judged.setdefault(row["query_id"], {})[row["chunk_id"]] = row["grade"]
    params = {"adjudicate": rule, "only_reviewed": only_reviewed, "reviewed_pairs": len(settled),
              "reviewers": sorted({g.reviewer for g in grades}), "stale_decisions_left_out": stale.decisions,
              "grades_sha256": grades_digest(grades)}
    warnings = [stale.describe(db)] if stale.decisions else []
    if not settled and not stale.decisions:  # an empty --only-reviewed file (or the judge's labels alone), which calibrate refuses
        warnings.append(f"{db} holds no reviewed pair yet: " + ("the file holds no label" if only_reviewed else
                                                                 "every label is the judge's"))
    return ReviewedLabels(Qrels.from_dict(judged), rows, params, warnings, reviewer_groups(grades) if by_reviewer else None)


def export_reviewed(db: str | os.PathLike, labels_path: str | os.PathLike, output: str | os.PathLike,
                    rule: str = "majority", only_reviewed: bool = False,
                    warn: Callable[[str], None] | None = None, by_reviewer: str | os.PathLike | None = None) -> dict[str, int]:
    """Write the derived qrels with human grades overriding them (see reviewed_labels), a
    `<output>.sources.jsonl` saying where each label came from, with `by_reviewer` each reviewer's grades as
    qrels_jg, and manifests, as one unit (see the module); returns counts by source. `warn` is told how many
    reviewed decisions were left out because their pairs' texts changed since."""
    result = reviewed_labels(db, labels_path, rule, only_reviewed, by_reviewer is not None)
    write_reviewed(result, output, [db, labels_path], by_reviewer)
    tell(result.warnings, warn)
    return result.counts


def write_reviewed(result: ReviewedLabels, output: str | os.PathLike, inputs: list, by_reviewer: str | os.PathLike | None = None
                   ) -> None:
    """The qrels, their sources, each reviewer's grades (to `by_reviewer`, where given) and the manifests as one
    unit (files_as_one), the qrels last: a hard kill between two renames shows, as the old qrels beside a manifest
    that no longer matches its file, or a sources' manifest naming (params.qrels) a digest the qrels do not have."""
    if STDIO in (str(output), str(by_reviewer)):
        raise UsageError(f"{'by_reviewer' if str(by_reviewer) == STDIO else 'output'}='-': the reviewed qrels are written with "
                         "OUTPUT.sources.jsonl beside them: give a file name")
    output = str(output)
    sidecar = f"{output}.sources.jsonl"
    groups = [] if by_reviewer is None else [str(by_reviewer), manifest_path(str(by_reviewer))]
    with files_as_one([sidecar, manifest_path(sidecar), *groups, manifest_path(output), output]) as staged:
        if groups:
            by = result.by_reviewer or []
            write_judgment_groups(by, staged[groups[0]])
            write_manifest(groups[0], inputs=inputs, params={**result.params, "format": "qrels_jg (the group: a reviewer)"},
                           rows=sum(len(qrels) for _, qrels in by), staged=staged)
        write_qrels(result.qrels, staged[output])
        write_jsonl(result.sources, staged[sidecar])
        write_manifest(output, inputs=inputs, params=result.params, rows=len(result.qrels), staged=staged, holds="qrels")
        explained = {"qrels": {"path": output, **file_digest(staged[output])}}  # the sources belong to these qrels
        write_manifest(sidecar, inputs=inputs, params={**result.params, **explained}, rows=len(result.sources), staged=staged)


@dataclass(frozen=True)
class Stale:
    """Reviewed decisions (grades and skips) made on texts that have changed since, that nothing
    has replaced: neither undone nor followed by the same reviewer's decision on the new texts."""

    grades: int
    skips: int
    pairs: int

    @property
    def decisions(self) -> int:
        return self.grades + self.skips

    def describe(self, db: str | os.PathLike) -> str:
        kinds = ", ".join(quantity(n, kind) for n, kind in ((self.grades, "grade"), (self.skips, "skip")) if n)
        return (f"left out {quantity(self.decisions, 'reviewed decision')} ({kinds}) on {quantity(self.pairs, 'pair')} "
                f"whose texts changed since they were made; they are kept in {db} and count "
                "again if the texts change back (review the pairs again to label the new texts)")


def stale_decisions(conn: sqlite3.Connection, reviewer: str | None = None) -> Stale:
    """The reviewed decisions (of `reviewer`, or of all) an export leaves out because their pairs' texts
    changed (see Stale); `review stats` counts the same ones."""
    rows = conn.execute(
        "SELECT d.kind, d.task_id FROM decisions d JOIN tasks t ON t.id = d.task_id"
        " WHERE d.kind IN ('grade', 'skip') AND d.task_hash != t.hash AND (:r IS NULL OR d.reviewer = :r)"
        " AND NOT EXISTS (SELECT 1 FROM decisions u WHERE u.kind = 'undo' AND u.undoes = d.id)"
        " AND NOT EXISTS (SELECT 1 FROM live l WHERE l.task_id = d.task_id AND l.reviewer = d.reviewer)", {"r": reviewer},
    ).fetchall()
    kinds = Counter(kind for kind, _ in rows)
    return Stale(kinds["grade"], kinds["skip"], len({task for _, task in rows}))


def _source_row(query_id: str, chunk_id: str, derived: int | None, settled: dict[Pair, int],
                by_pair: dict[Pair, dict[str, int]], rule: str) -> dict:
    pair = (query_id, chunk_id)
    if pair not in settled:
        return {"query_id": query_id, "chunk_id": chunk_id, "grade": derived, "source": "judge", "judge": derived}
    reviewers = by_pair[pair]
    source = "review" if len(set(reviewers.values())) == 1 else f"adjudicated:{settled_by(reviewers, rule)}"
    return {"query_id": query_id, "chunk_id": chunk_id, "grade": settled[pair], "source": source, "judge": derived,
            "reviewers": reviewers}


def reviewed_sample(db: str | os.PathLike, rule: str = "majority") -> ReviewedSample:
    """The longest prefix of the review queue's random sample that has been decided (graded
    or skipped), less the skipped pairs; grades of several reviewers settled by `rule`. Where every
    pair of the pool is graded, in whatever order, all of them (the sample is then the pool). A queue in order
    query-sample gives the queries decided whole, a random sample of the pool's queries."""
    rule = as_recorded(rule)
    with contextlib.closing(open_db_read_only(db)) as conn, snapshot(conn):  # the prefix and its grades of one moment
        meta = read_meta(conn)
        first_open = conn.execute(
            f"SELECT min(sample_rank) FROM tasks t WHERE sample_rank IS NOT NULL AND {queued(conn)}"  # a withdrawn pair: decided never
            " AND NOT EXISTS (SELECT 1 FROM live l WHERE l.task_id = t.id)"
        ).fetchone()[0]
        ranked = conn.execute("SELECT EXISTS (SELECT 1 FROM tasks WHERE sample_rank IS NOT NULL)").fetchone()[0]
        every = human_grades(conn)
        top = labelling_of(conn).max_grade
    graded, pool = grades_by_pair(every), int(meta["pool_size"])
    if len(graded) >= pool:  # every pair of the pool graded: the pool itself, which makes the correction exact
        return ReviewedSample(adjudicate(graded, rule, {g.reviewer for g in every}), pool, top)
    grades = [g for g in every if g.sample_rank is not None and (first_open is None or g.sample_rank < first_open)]
    if not grades and meta.get("order") == "query-sample" and not ranked:  # its first query longer than the limit
        raise ValidationError(f"{db}: the queue's --limit {meta.get('limit')} cuts its first query, and order query-sample samples "
                              "only queries queued whole: it holds no random sample; build a queue (a new --db) whose --limit "
                              "takes 2 queries or more")
    if not grades:
        raise ValidationError(
            f"{db}: no pair of the random sample is reviewed yet (review in --order uncertain or random, "
            "which mix in a random sample of pairs, or query-sample, whose queries reviewed whole are one)"
        )
    settled = adjudicate(grades_by_pair(grades), rule, {g.reviewer for g in grades})
    queries = meta.get("pool_queries") if meta.get("order") == "query-sample" else None
    return ReviewedSample(settled, pool, top, queries)
