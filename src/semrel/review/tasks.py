"""Review tasks: a judged pair with the texts a reviewer reads and what the judge said about it."""

from __future__ import annotations

import hashlib
import json
import math
import os
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..errors import UsageError, ValidationError
from ..formats import read_qrels
from ..formats.corpus import read_golden, unique_chunks
from ..formats.judgments import JudgmentColumns, read_judgment_columns
from ..formats.manifest import manifest_path, read_params
from ..formats.trec import graded_pairs
from ..judging.labels import (
    PROBABILITY,
    Judged,
    ProbabilityRule,
    Rule,
    ThresholdRule,
    reached,
    read_calibration,
    recorded_rule,
    score_values,
)
from .order import distance_to_threshold


@dataclass(frozen=True)
class Task:
    """One pair to review, as stored (id and position are None before it is)."""

    query_id: str
    chunk_id: str
    query: str
    answers: tuple[str, ...]
    chunk: str
    P: float
    R: float
    F: float
    proposed: int
    distance: float
    p: float | None = None  # the judge's probability of relevance (None: judged without it)
    id: int | None = None
    position: int | None = None
    sample_rank: int | None = None
    shared: bool = False
    shown_hash: str | None = None  # the stored texts' hash when read from the database: a decision is on the texts shown

    @property
    def hash(self) -> str:
        return text_hash(self.query, self.answers, self.chunk)


def judge_line(task: Task, labelling: Labelling) -> str:
    """The judge's view of a task, one line for both review screens: p first where the judge
    computed it, since the default rule (and the queue's order) is on p, not on R."""
    p = f"p {task.p:.3f}  " if task.p is not None else ""
    cuts = ", ".join(f"{t:g}" for t in labelling.thresholds)
    refitted = ", p refitted on every coefficient" if labelling.refit is not None else ""
    return (f"judge: {p}P {task.P:.3f}  R {task.R:.3f}  F {task.F:.3f} -> proposed grade {task.proposed}"
            f" ({labelling.on} thresholds {cuts}{refitted})")


def text_hash(query: str, answers: Sequence[str], chunk: str) -> str:
    """sha256 over the texts a reviewer judged: a label given to other texts is stale."""
    return hashlib.sha256(json.dumps([query, list(answers), chunk], ensure_ascii=False).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Labelling:
    """Which judge score is thresholded (p for the probability rule: its cuts moved to the judge's
    p where a calibration applies), and where: grade = number of thresholds reached. With `refit`
    (`semrel calibrate --fit features`) the score is p recomputed from each pair's features."""

    on: str
    thresholds: tuple[float, ...]
    refit: tuple[float, ...] | None = None

    @property
    def max_grade(self) -> int:
        return len(self.thresholds)

    def scores(self, judgments: JudgmentColumns) -> np.ndarray:
        if self.refit is None:
            return score_values(judgments, self.on)
        return ProbabilityRule(refit=self.refit).scores(judgments)

    def graded(self, judged: Judged) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(score, grade, distance to the nearest threshold) of each pair. Pairs the probability rule cannot score
        (the judge wrote no p for a query with no null sample) are graded, as `label` grades them, by its fallback
        on R, and their distance is R's to its thresholds."""
        judgments = JudgmentColumns.of(judged)
        missing = (ProbabilityRule(refit=self.refit).unscored(judgments) if self.on == PROBABILITY
                   else np.zeros(len(judgments), dtype=bool))
        if missing.all():
            missing[:] = False  # none can be scored: scores() says what is missing
        fallback = ProbabilityRule(graded=self.max_grade > 1).fallback
        scores, grades, distance = np.zeros(len(judgments)), np.zeros(len(judgments), dtype=np.int64), np.zeros(len(judgments))
        for rows, labelling in ((~missing, self), (missing, Labelling(fallback.on, fallback.thresholds))):
            if rows.any():
                part = labelling.scores(judgments.where(rows))
                scores[rows], grades[rows] = part, reached(part, labelling.thresholds)
                distance[rows] = distance_to_threshold(part, labelling.thresholds)
        return scores, grades, distance

    def to_json(self) -> dict:
        return {"on": self.on, "thresholds": list(self.thresholds), **({"refit": list(self.refit)} if self.refit is not None else {})}


def parse_labelling(on: str | None, thresholds: str | None, labels_path: str | None = None,
                    judgments_path: str | None = None) -> Labelling:
    """The labelling from `on` and `thresholds` (comma-separated numbers, or the file `semrel
    calibrate -o` writes); else from the labels file's manifest, where `semrel label` records its
    rule. A file is read as `label` reads it (judging.labels.rule_from_params), so the queue's
    thresholds are the ones its labels came from."""
    if thresholds and thresholds.endswith(".json"):
        return labelling_of_rule(read_calibration(thresholds, judgments_path), on, thresholds)  # fitted to these judgments' judge
    if thresholds:
        try:
            values = tuple(float(t) for t in thresholds.split(","))
        except ValueError:
            raise UsageError(f"thresholds= expects comma-separated numbers or a .json file, not {thresholds!r}") from None
        return labelling_of_rule(ThresholdRule(on or "R", values))
    recorded = labels_labelling(labels_path, on) if labels_path else None
    if recorded is not None:
        return recorded
    raise UsageError("give the labelling thresholds, e.g. on='R' thresholds='0.5' (or '0.4,0.5,0.6' for grades 0-3)")  # the CLI: --on R


def labels_labelling(labels_path: str | os.PathLike, on: str | None = None) -> Labelling | None:
    """The labelling of the rule the labels file's manifest records (None: it records none, as for gold qrels)."""
    where = manifest_path(labels_path)
    rule = recorded_rule(read_params(labels_path), where)
    return labelling_of_rule(rule, on, where) if rule is not None else None


def labelling_of_rule(rule: Rule, on: str | None = None, where: str = "") -> Labelling:
    """What the queue thresholds to grade as `rule` does: the score it is on with its thresholds on the judge's own
    score (a calibration's cuts moved onto p), or for a refit of every coefficient p recomputed from the features. An `on`
    given beside a rule read from a file (`where`: a calibration, a labels manifest) must be the rule's."""
    if on is not None and on != rule.on:
        raise UsageError(f"on={on!r} does not match {where}, whose rule is on {rule.on}: give it without on=")
    if isinstance(rule, ProbabilityRule) and not rule.cuts_on_p:
        return Labelling(PROBABILITY, rule.thresholds, rule.refit)
    return Labelling(rule.on, rule.judge_thresholds)


def load_tasks(
    judgments_path: str | os.PathLike, labels_path: str | os.PathLike, corpus_path: str | os.PathLike,
    golden_path: str | os.PathLike, labelling: Labelling,
) -> list[Task]:
    """One task per judged pair, with texts from the corpus and golden set and the proposed
    grade from the derived qrels (from the thresholds where the qrels lack the pair)."""
    judgments = read_judgment_columns(judgments_path)  # a Judgment a pair took 1.8 KB, beside the task made of it
    if not len(judgments):
        raise ValidationError(f"{judgments_path}: no judged pairs to review")
    proposed = graded_pairs(read_qrels(labels_path))  # a pair listed twice is refused, not queued with one of its grades
    judged = set(judgments.chunk_ids)
    chunks = {c.id: c.text for c in unique_chunks(corpus_path) if c.id in judged}  # the judged texts, not the corpus's
    golden = {g.query_id: g for g in read_golden(golden_path)}
    scores, grades, distance = labelling.graded(judgments)
    tasks = []
    p = judgments.p if labelling.refit is None else scores
    for query_id, chunk_id, P, R, F, probability, grade, gap in zip(
            judgments.query_ids, judgments.chunk_ids, judgments.P.tolist(), judgments.R.tolist(), judgments.F.tolist(), p.tolist(),
            grades.tolist(), distance.tolist()):
        if chunk_id not in chunks:
            raise ValidationError(f"{judgments_path}: chunk {chunk_id!r} (query {query_id!r}) is not in {corpus_path}")
        if query_id not in golden:
            raise ValidationError(f"{judgments_path}: query {query_id!r} is not in {golden_path}")
        item = golden[query_id]
        tasks.append(Task(
            query_id=query_id, chunk_id=chunk_id, query=item.query, answers=item.reference_answers, chunk=chunks[chunk_id],
            P=P, R=R, F=F, p=None if math.isnan(probability) else probability,
            proposed=int(proposed.get(query_id, {}).get(chunk_id, grade)), distance=gap,
        ))
    return tasks
