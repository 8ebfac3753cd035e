"""Audit of `semrel agree` and `semrel sensitivity` against references: negative grades (trec_eval's -1) count as 0 in
kappa, as calibrate counts them (they had been a third label, a binary file's 0 against them a disagreement); empty
qrels, a run short of queries, -l above the sweep's binary labels and ranx's JSON given as judgments each say so; a
sweep's values are `label` + `eval`'s at each threshold."""

from __future__ import annotations

import json
import random
from itertools import combinations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

import semrel
from helpers import SHARED_DATA, assert_one_error, message_lines, needs_shared
from semrel.analysis.agreement import group_agreement, label_agreement, on_scale
from semrel.errors import UsageError
from semrel.records import Qrels

TREC_EVAL = SHARED_DATA / "trec_eval_test"


def _read(path, groups: bool = False) -> dict:
    """Qrels read by hand, {group: {(qid, docid): grade}} (one group '' without `groups`)."""
    out: dict = {}
    for line in open(path, encoding="utf-8"):
        fields = line.split()
        if fields and not fields[0].startswith("#"):
            out.setdefault(fields[1] if groups else "", {})[fields[0], fields[2]] = int(fields[3])
    return out if groups else out[""]


def _sklearn_kappa(a: dict, b: dict, top: int) -> tuple[int, float]:
    """scikit-learn's kappa of the pairs both list, grades clipped to 0..top (quadratic weights above binary)."""
    pairs = sorted(a.keys() & b.keys())
    x, y = ([min(max(g[p], 0), top) for p in pairs] for g in (a, b))
    return len(pairs), cohen_kappa_score(x, y, labels=list(range(top + 1)), weights="quadratic" if top > 1 else None)


def test_negative_grades_count_as_zero_not_as_a_third_label():
    ref = Qrels.from_dict({"q1": {"a": -1, "b": 0, "c": 1, "d": 2, "e": -1}, "q2": {"a": 3, "b": -2}})
    test = Qrels.from_dict({"q1": {"a": 0, "b": 0, "c": 1, "d": 1, "e": 1}, "q2": {"a": 1, "b": 0}})
    agreed = label_agreement(ref, test, warn=lambda message: None)
    assert agreed.labels == [0, 1] and agreed.weights == "none"  # before: labels [-2, -1, 0, 1], quadratic weights
    assert agreed.confusion == [[3, 1], [0, 3]]
    assert agreed.kappa == pytest.approx(cohen_kappa_score([0, 0, 1, 1, 0, 1, 0], [0, 0, 1, 1, 1, 1, 0]))
    assert on_scale([-3, -1, 0, 2, 5], 2).tolist() == [0, 0, 0, 2, 2] and on_scale([-1, 4]).tolist() == [0, 4]


def test_assessors_negative_grades_are_0_before_their_majority_is_taken():
    """-1, -2, 1, 1 is 0, 0, 1, 1: a tie, to the lower grade 0 (the raw grades' majority was 1)."""
    groups = [(who, Qrels.from_dict({"q1": {"a": grade, "b": 0}})) for who, grade in zip("abcd", (-1, -2, 1, 1))]
    result = group_agreement(groups, Qrels.from_dict({"q1": {"a": 1, "b": 0}}))
    assert result.majority.confusion == [[1, 1], [0, 0]]  # rows: the majority, 0 for both pairs (before: [[1, 0], [0, 1]])
    assert all(min(a.labels) == 0 for _, _, a in result.between)  # no label below 0


@needs_shared("trec_eval_test/qrels.test", "trec_eval_test/qrels.rel_level")
def test_trec_eval_s_binary_and_graded_qrels_agree_as_scikit_learn_says(cli):
    """qrels.rel_level grades the pairs of qrels.test -1..4: 304 pairs -1, which qrels.test grades 0. Kappa was 0.770
    (91.7% agreement) with -1 a label of its own; their relevance differs on 2 pairs of 3,681."""
    done = cli("agree", TREC_EVAL / "qrels.test", TREC_EVAL / "qrels.rel_level", "-f", "json")
    assert done.exit_code == 0, done.output
    labels = json.loads(done.stdout)["labels"]
    n, kappa = _sklearn_kappa(_read(TREC_EVAL / "qrels.test"), _read(TREC_EVAL / "qrels.rel_level"), 1)
    assert (labels["n"], labels["labels"], labels["weights"]) == (n, [0, 1], "none") == (3681, [0, 1], "none")
    assert labels["kappa"] == pytest.approx(kappa) and round(kappa, 3) == 0.998
    assert labels["confusion"] == [[3120, 0], [2, 559]]


@needs_shared("trec_eval_test/qrels.123", "trec_eval_test/qrels.rel_level")
def test_trec_eval_s_judgment_groups_against_graded_labels_equal_scikit_learn(cli):
    """qrels.123: three assessors grading -1..6, against qrels.rel_level (-1..4): compared on 0-4, each as scikit-learn's
    quadratic-weighted kappa of the grades read by hand."""
    done = cli("agree", TREC_EVAL / "qrels.123", TREC_EVAL / "qrels.rel_level", "--groups", "-f", "json")
    assert done.exit_code == 0, done.output
    groups = json.loads(done.stdout)["groups"]
    people, labels = _read(TREC_EVAL / "qrels.123", groups=True), _read(TREC_EVAL / "qrels.rel_level")
    for group, grades in people.items():
        n, kappa = _sklearn_kappa(grades, labels, 4)
        assert (groups["each"][group]["n"], groups["each"][group]["weights"]) == (n, "quadratic")
        assert groups["each"][group]["kappa"] == pytest.approx(kappa)
    between = {(b["first"], b["second"]): b["kappa"] for b in groups["between"]}
    for first, second in combinations(people, 2):
        assert between[first, second] == pytest.approx(_sklearn_kappa(people[first], people[second], 4)[1])


def test_empty_qrels_are_said_empty_not_of_other_ids(write, cli):
    full, empty = write("full.qrels", "q1 0 a 1\nq1 0 b 0\n"), write("empty.qrels", "# nothing judged\n")
    for ref, test in ((empty, full), (full, empty)):  # had said the two 'share no judged pair (different query or document ids?)'
        assert_one_error(cli("agree", ref, test), "empty.qrels: no judgments (the qrels are empty)")
    assert_one_error(cli("agree", empty, full, "--groups"), "empty.qrels: no judgments (the file is empty)")  # 'one only ()'
    with pytest.raises(UsageError, match="assessor groups: none given"):
        semrel.agree({}, {"q1": {"a": 1}}, groups=True)


def test_a_run_short_of_queries_is_warned_about_as_eval_warns(write, cli):
    qrels = write("q.qrels", "q1 0 a 1\nq1 0 b 0\nq2 0 a 0\nq2 0 b 1\n")
    both, one = write("both.run", "q1 Q0 a 1 2 x\nq2 Q0 b 1 2 x\n"), write("one.run", "q1 Q0 b 1 2 y\n")
    done = cli("agree", qrels, qrels, both, one, "-m", "P@1")
    assert done.exit_code == 0, done.output
    (line,) = message_lines(done.stderr)  # once: both qrels are one file
    assert line.startswith("semrel: warning: 1 of 2 queries in ") and line.endswith("q.qrels has no results in run 'one'; they "
                                                                                  "score 0 (e.g. 'q2')")


def _judgments(rng: random.Random, queries: int, without_p: set[int]) -> str:
    lines = []
    for q in range(queries):
        for c in range(6):
            row = {"query_id": f"q{q}", "chunk_id": f"q{q}-{c}", "P": rng.random(), "R": rng.random(), "F": rng.random(),
                   "source": "pool"}
            lines.append(json.dumps(row if q in without_p else {**row, "p": rng.random()}))
    return "\n".join(lines) + "\n"


def _run(rng: random.Random, queries: int, name: str) -> str:
    return "".join(f"q{q} Q0 q{q}-{c} {rank} {10 - rank} {name}\n" for q in range(queries)
                   for rank, c in enumerate(rng.sample(range(6), 5), start=1))


MEASURES = "nDCG@10,AP,RR,P@5,R@100"


def _eval(cli, qrels, runs) -> dict:
    done = cli("eval", qrels, *runs, "-m", MEASURES, "-f", "json")
    assert done.exit_code == 0, done.output
    return {run: values["all"] for run, values in json.loads(done.stdout).items()}


def test_a_sweep_s_values_are_label_then_eval_s_at_each_threshold(write, cli, tmp_path):
    rng = random.Random(3)
    judgments = write("j.jsonl", _judgments(rng, 12, set()))
    runs = [write(f"{name}.run", _run(rng, 12, name)) for name in ("a", "b", "c")]
    done = cli("sensitivity", judgments, *runs, "--from", "0.2", "--to", "0.8", "--step", "0.3", "-m", MEASURES, "-f", "json",
               "--permutations", "100")
    assert done.exit_code == 0, done.output
    swept = json.loads(done.stdout)
    assert swept["thresholds"] == [0.2, 0.5, 0.8]
    for threshold in swept["thresholds"]:
        labelled = cli("label", judgments, "--on", "p", "--threshold", str(threshold), "-o", str(tmp_path / f"{threshold}.qrels"))
        assert labelled.exit_code == 0, labelled.output
        evaluated = _eval(cli, tmp_path / f"{threshold}.qrels", runs)
        for v in swept["values"]:
            if v["threshold"] == threshold:
                assert v["value"] == evaluated[v["run"]][v["measure"]], (threshold, v)  # the same figure, to the last digit


def test_a_sweep_at_the_cut_is_label_s_default_with_its_fallback(write, cli, tmp_path):
    """Queries without p keep `label`'s R >= 0.7 at every cut: at the default cut, the sweep is `label` then `eval`."""
    rng = random.Random(5)
    judgments = write("j.jsonl", _judgments(rng, 10, {1, 4, 7}))
    runs = [write(f"{name}.run", _run(rng, 10, name)) for name in ("a", "b")]
    done = cli("sensitivity", judgments, *runs, "--from", "0.3", "--to", "0.4", "--step", "0.1", "-m", MEASURES, "-f", "json",
               "--permutations", "100")
    assert done.exit_code == 0, done.output
    assert any("hold no probability p: labelled by R >= 0.7 instead" in line for line in message_lines(done.stderr))
    assert cli("label", judgments, "-o", str(tmp_path / "cut.qrels")).exit_code == 0
    assert json.loads(done.stdout)["at_values"] == _eval(cli, tmp_path / "cut.qrels", runs)


def test_a_relevance_level_above_the_sweep_s_binary_labels_is_refused(write, cli):
    """-l 2 counted no pair relevant at any threshold: every binary measure 0 for every run, with nothing said."""
    judgments = write("j.jsonl", _judgments(random.Random(1), 4, set()))
    run = write("a.run", _run(random.Random(2), 4, "a"))
    assert_one_error(cli("sensitivity", judgments, run, "-l", "2"), "--rel-level 2: a sweep labels pairs 0 or 1",
                     "leave --rel-level at 1", code=2)
    with pytest.raises(UsageError, match="rel_level=3: a sweep labels pairs 0 or 1"):
        semrel.sensitivity(judgments, [run], rel_level=3)
    assert cli("sensitivity", judgments, run, "-l", "1", "--from", "0.4", "--to", "0.5", "--step", "0.1").exit_code == 0


@pytest.mark.parametrize("name", ["qrels.json", "run.txt"])
def test_ranx_s_json_given_for_judgments_or_a_trec_file_is_named(write, cli, name):
    ranx = write(name, '{"q1": {"a": 2.5, "b": 1.0}, "q2": {"a": 0.5}}\n')
    judgments = write("j.jsonl", _judgments(random.Random(1), 2, set()))
    run = write("a.run", _run(random.Random(2), 2, "a"))
    failed = cli("sensitivity", ranx, run) if name.endswith(".json") else cli("sensitivity", judgments, ranx)
    assert_one_error(failed, "this file looks like ranx's JSON qrels or run ({query_id: {doc_id: value}}, read as such from a "
                             "file named .json)")


def test_kappa_on_the_compared_scale_equals_scikit_learn_for_random_grades():
    rng = np.random.default_rng(0)
    for _ in range(20):
        a, b = rng.integers(-1, 4, 40), rng.integers(-1, 3, 40)
        ref = Qrels.from_columns(["q"] * 40, [f"d{i}" for i in range(40)], a)
        test = Qrels.from_columns(["q"] * 40, [f"d{i}" for i in range(40)], b)
        agreed = label_agreement(ref, test, warn=lambda message: None)
        top = min(int(a.max()), int(b.max()))
        x, y = np.clip(a, 0, top), np.clip(b, 0, top)
        weights = "quadratic" if top > 1 else None
        assert agreed.kappa == pytest.approx(cohen_kappa_score(x, y, labels=list(range(top + 1)), weights=weights))
