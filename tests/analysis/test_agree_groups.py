"""`semrel agree --groups`: labels against several assessors' qrels (trec_eval's qrels_jg), against their majority, and
the assessors against each other, the agreement people reach. Before, a qrels file listing a pair once per assessor was
refused as a duplicate judgment, with nothing said of what to do."""

from __future__ import annotations

import json
from itertools import combinations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

import semrel
from helpers import SHARED_DATA, assert_one_error, needs_shared
from semrel.analysis.agreement import group_agreement, majority, majority_qrels
from semrel.formats.trec import read_judgment_groups
from semrel.records import Qrels

PAIRS = [("q1", "d1"), ("q1", "d2"), ("q1", "d3"), ("q2", "d1"), ("q2", "d4"), ("q2", "d5")]
GRADES = {"ann": [1, 0, 2, 0, 1, 2], "bob": [2, 1, 2, 0, 2, 0], "cat": [2, 0, 1, 1, 0, 0]}
LABELS = [1, 0, 1, 0, 1, 1]  # binary: compared with the assessors as relevant (grade >= 1) or not


def qrels_jg() -> str:
    return "".join(f"{q} {who} {d} {g}\n" for who, grades in GRADES.items() for (q, d), g in zip(PAIRS, grades))


def labels_file() -> str:
    return "".join(f"{q} 0 {d} {g}\n" for (q, d), g in zip(PAIRS, LABELS))


def binary(grades):
    return [min(g, 1) for g in grades]


def test_majority_takes_the_most_common_grade_and_the_lowest_of_a_tie():
    assert majority([2, 1, 2]) == 2
    assert majority([0, 2, 1]) == 0  # a three-way tie: the lowest
    assert majority([1, 0, 1, 0]) == 0
    qrels = majority_qrels([(who, Qrels.from_dict({q: {d: g} for (q, d), g in zip(PAIRS[:1], grades)})) for who, grades in GRADES.items()])
    assert qrels.to_dict() == {"q1": {"d1": 2}}


def test_each_assessor_the_majority_and_the_assessors_against_each_other_equal_sklearn(tmp_path):
    path = tmp_path / "people.qrels"
    path.write_text(qrels_jg())
    heard: list[str] = []
    result = group_agreement(read_judgment_groups(path), Qrels.from_dict(_nested(LABELS)), warn=heard.append)
    assert [group for group, _ in result.each] == ["ann", "bob", "cat"]
    for group, agreed in result.each:
        assert agreed.n == 6 and agreed.kappa == pytest.approx(cohen_kappa_score(binary(GRADES[group]), LABELS))
    assert result.each[2][1].confusion == [[1, 2], [1, 2]]  # rows: the assessor (cat), columns: the labels
    settled = [majority(binary([GRADES[w][i] for w in GRADES])) for i in range(len(PAIRS))]  # on the labels' scale
    assert settled == [1, 0, 1, 0, 1, 0]
    assert result.majority.kappa == pytest.approx(cohen_kappa_score(settled, LABELS))
    between = {(f, s): a.kappa for f, s, a in result.between}
    for f, s in combinations(GRADES, 2):
        assert between[f, s] == pytest.approx(cohen_kappa_score(binary(GRADES[f]), binary(GRADES[s])))
    assert result.between_mean == pytest.approx(np.mean(list(between.values())))  # Light's kappa
    assert heard == ["the assessors grade up to 2 and the labels up to 1: compared on grades 0-1, a grade above 1 counting as 1"]


def test_graded_labels_are_compared_with_graded_assessors_on_their_grades(tmp_path):
    path = tmp_path / "people.qrels"
    path.write_text(qrels_jg())
    graded = [2, 0, 2, 0, 1, 1]
    heard: list[str] = []
    result = group_agreement(read_judgment_groups(path), Qrels.from_dict(_nested(graded)), warn=heard.append)
    assert heard == []
    (_, ann), *_ = result.each
    assert ann.weights == "quadratic" and ann.kappa == pytest.approx(cohen_kappa_score(GRADES["ann"], graded, weights="quadratic"))


def test_assessors_of_other_queries_agree_on_nothing(tmp_path):
    path = tmp_path / "split.qrels"
    path.write_text("q1 ann d1 1\nq1 ann d2 0\nq2 bob d1 1\nq2 bob d4 0\n")
    result = group_agreement(read_judgment_groups(path), Qrels.from_dict(_nested(LABELS)))
    ((_, _, between),) = result.between
    assert between.n == 0 and np.isnan(between.kappa) and np.isnan(result.between_mean)
    assert [a.n for _, a in result.each] == [2, 2] and result.majority.n == 4


def test_the_command_prints_every_comparison_and_the_yardstick(tmp_path, cli):
    (tmp_path / "people.qrels").write_text(qrels_jg())
    (tmp_path / "labels.qrels").write_text(labels_file())
    done = cli("agree", tmp_path / "people.qrels", tmp_path / "labels.qrels", "--groups")
    assert done.exit_code == 0, done.output
    rows = [line.split()[:2] for line in done.stdout.splitlines()[2:9]]
    assert [r[0] for r in rows] == ["ann", "bob", "cat", "majority", "ann", "ann", "bob"]
    assert [r[1] for r in rows[4:]] == ["bob", "cat", "cat"]
    mean = np.mean([cohen_kappa_score(binary(GRADES[f]), binary(GRADES[s])) for f, s in combinations(GRADES, 2)])
    assert (f"against the majority of 3 assessors: kappa {cohen_kappa_score([1, 0, 1, 0, 1, 0], LABELS):.3f}; the assessors "
            f"against each other: mean kappa {mean:.3f} (Light's kappa)") in done.stdout
    as_json = json.loads(cli("agree", tmp_path / "people.qrels", tmp_path / "labels.qrels", "--groups", "-f", "json").stdout)
    assert sorted(as_json["groups"]["each"]) == ["ann", "bob", "cat"] and len(as_json["groups"]["between"]) == 3
    assert as_json["labels"] == as_json["groups"]["majority"]


def test_one_group_is_refused_and_a_duplicate_judgment_names_the_groups(tmp_path, cli):
    (tmp_path / "plain.qrels").write_text(labels_file())
    assert_one_error(cli("agree", tmp_path / "plain.qrels", tmp_path / "plain.qrels", "--groups"), "assessor groups: one only ('0')",
                     "compare with one qrels instead (without groups)", code=2)
    (tmp_path / "people.qrels").write_text(qrels_jg())
    assert_one_error(cli("agree", tmp_path / "people.qrels", tmp_path / "plain.qrels"), "people.qrels:7: duplicate judgment",
                     "its second column names 3 groups (ann, bob, cat): if each is one assessor's judgments, "
                     "`semrel agree --groups`, `semrel calibrate --groups` (--test-groups) and `semrel eval -R qrels_jg` read "
                     "them")


@needs_shared("trec_eval_test/qrels.123")
def test_trec_eval_s_own_judgment_groups(cli):
    """qrels.123 of trec_eval's test folder: three groups (0, 1, 2) over the same documents, graded -1 to 6; -1 counts as
    0 (before, a label of its own: 0.958, 0.963, 0.999, test_agree_audit.py checks these against scikit-learn)."""
    done = cli("agree", SHARED_DATA / "trec_eval_test/qrels.123", SHARED_DATA / "trec_eval_test/qrels.test", "--groups", "-f", "json")
    assert done.exit_code == 0, done.output
    groups = json.loads(done.stdout)["groups"]
    assert [groups["each"][g]["n"] for g in "012"] == [3681, 3681, 2948]
    assert [round(b["kappa"], 3) for b in groups["between"]] == [0.924, 0.921, 0.998]


def _nested(grades) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for (q, d), g in zip(PAIRS, grades):
        out.setdefault(q, {})[d] = g
    return out


def test_the_python_api_takes_assessors_as_a_file_or_a_dict_and_says_what_else_to_give(tmp_path):
    (tmp_path / "people.qrels").write_text(qrels_jg())
    from_file = semrel.agree(tmp_path / "people.qrels", _nested(LABELS), groups=True, warn=lambda message: None)
    given = {who: _nested(grades) for who, grades in GRADES.items()}
    from_dict = semrel.agree(given, _nested(LABELS), groups=True, warn=lambda message: None)
    assert from_file.to_json() == from_dict.to_json()
    assert [who for who, _ in from_dict.groups.each] == ["ann", "bob", "cat"]
    plain = semrel.agree(given["ann"], _nested(LABELS), warn=lambda message: None)
    assert plain.groups is None and plain.labels.kappa == pytest.approx(cohen_kappa_score(binary(GRADES["ann"]), LABELS))
    with pytest.raises(TypeError, match=r"ref: give \{assessor: qrels\} or a qrels_jg file path"):
        semrel.agree(Qrels.from_dict(_nested(LABELS)), _nested(LABELS), groups=True)
    with pytest.warns(UserWarning, match="the assessors grade up to 2"):
        semrel.agree(given, _nested(LABELS), groups=True)


def test_calibrate_fits_to_the_assessors_majority_as_to_a_file_holding_it(tmp_path, cli):
    """calibrate --groups reads the assessors' qrels_jg and fits to their majority grade of each pair (ties to the lower, as
    review export settles reviewers): the same thresholds as from a qrels file of that majority, and a manifest saying so."""
    rng = np.random.default_rng(7)
    scores = rng.uniform(size=90)
    judged = [(f"q{i}", "c", float(s)) for i, s in enumerate(scores)]
    (tmp_path / "j.jsonl").write_text("".join(json.dumps({"query_id": q, "chunk_id": c, "P": 0.0, "R": r, "F": 0.0, "source": ""}) + "\n"
                                              for q, c, r in judged))
    noisy = {who: [int(s >= cut) for s in scores] for who, cut in (("ann", 0.5), ("bob", 0.6), ("cat", 0.7))}
    (tmp_path / "people.qrels").write_text("".join(f"q{i} {who} c {g}\n" for who, grades in noisy.items() for i, g in enumerate(grades)))
    settled = [majority([noisy[w][i] for w in noisy]) for i in range(len(scores))]  # bob's cut: two of three above 0.6
    assert settled == [int(s >= 0.6) for s in scores]
    (tmp_path / "majority.qrels").write_text("".join(f"q{i} 0 c {g}\n" for i, g in enumerate(settled)))
    grouped = cli("calibrate", tmp_path / "j.jsonl", tmp_path / "people.qrels", "--groups", "-o", tmp_path / "cal.json", "-f", "json")
    assert grouped.exit_code == 0, grouped.output
    plain = cli("calibrate", tmp_path / "j.jsonl", tmp_path / "majority.qrels", "-f", "json")
    assert json.loads(grouped.stdout) == json.loads(plain.stdout)
    assert abs(json.loads((tmp_path / "cal.json").read_text())["thresholds"][0] - 0.6) < 0.03
    assert json.loads((tmp_path / "cal.json.manifest.json").read_text())["params"]["groups"] is True
    refused = cli("calibrate", tmp_path / "j.jsonl", tmp_path / "people.qrels", "--on", "R")  # without --groups: the hint
    assert_one_error(refused, "people.qrels:91: duplicate judgment", "`semrel calibrate --groups`")


def test_calibrate_measures_on_a_test_file_of_several_assessors_against_their_majority(tmp_path, cli):
    """--test-groups reads the --test file as assessor groups, as --groups reads HUMAN: the held-out agreement is that with
    their majority, the same as with a qrels file of that majority; without it the file is refused naming the flag."""
    rng = np.random.default_rng(11)
    scores = rng.uniform(size=120)
    (tmp_path / "j.jsonl").write_text("".join(json.dumps({"query_id": f"q{i}", "chunk_id": "c", "P": 0.0, "R": float(s), "F": 0.0,
                                                          "source": ""}) + "\n" for i, s in enumerate(scores)))
    (tmp_path / "mine.qrels").write_text("".join(f"q{i} 0 c {int(s >= 0.55)}\n" for i, s in enumerate(scores[:40])))
    noisy = {who: [int(s >= cut) for s in scores] for who, cut in (("ann", 0.4), ("bob", 0.5), ("cat", 0.8))}
    (tmp_path / "people.qrels").write_text("".join(f"q{i} {who} c {g}\n" for who, grades in noisy.items() for i, g in enumerate(grades)))
    settled = [majority([noisy[w][i] for w in noisy]) for i in range(len(scores))]
    assert settled == [int(s >= 0.5) for s in scores]
    (tmp_path / "majority.qrels").write_text("".join(f"q{i} 0 c {g}\n" for i, g in enumerate(settled)))
    args = ("calibrate", tmp_path / "j.jsonl", tmp_path / "mine.qrels", "--on", "R", "-f", "json", "--test")
    grouped = cli(*args, tmp_path / "people.qrels", "--test-groups")
    assert grouped.exit_code == 0, grouped.output
    plain = json.loads(cli(*args, tmp_path / "majority.qrels").stdout)
    assert json.loads(grouped.stdout) == plain
    assert plain["test"]["n"] == 80  # the 40 calibration pairs left out
    table = cli(*args[:-3], "--test", tmp_path / "people.qrels", "--test-groups").stdout
    assert "test" in table and "held-out pairs" in table
    held = semrel.calibrate(tmp_path / "j.jsonl", tmp_path / "mine.qrels", on="R", test=tmp_path / "people.qrels", test_groups=True)
    assert held.held_out is not None and held.held_out.kappa == pytest.approx(plain["test"]["kappa"])
    assert_one_error(cli(*args, tmp_path / "people.qrels"), "people.qrels:121: duplicate judgment", "(--test-groups)")
