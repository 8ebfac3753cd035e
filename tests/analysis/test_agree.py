"""`semrel agree`: label agreement and the system rankings two qrels files produce."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from scipy.stats import kendalltau
from sklearn.metrics import cohen_kappa_score

import semrel
from helpers import assert_one_error
from semrel.analysis.agreement import agreement, common_labels, group_agreement, label_agreement, ranking_agreement
from semrel.errors import UsageError
from semrel.evaluation.measures import parse_measures
from semrel.records import Qrels, Run

REF = {"q1": {"a": 1, "b": 0, "c": 0}, "q2": {"a": 0, "b": 1, "c": 1}}
TEST = {"q1": {"a": 0, "b": 1, "c": 0}, "q2": {"a": 0, "b": 1}}


def test_common_labels_use_pairs_both_judged_or_all_with_zeros():
    assert common_labels(Qrels.from_dict(REF), Qrels.from_dict(TEST)) == ([1, 0, 0, 0, 1], [0, 1, 0, 0, 1], 2)
    first, second, queries = common_labels(Qrels.from_dict(REF), Qrels.from_dict(TEST), unlisted_as_zero=True)
    assert (first, second, queries) == ([1, 0, 0, 0, 1, 1], [0, 1, 0, 0, 1, 0], 2)
    # the queries the pairs are of: a kappa over 22 pairs of 2 queries said nothing of the 2 (q3 shares no pair)
    assert common_labels(Qrels.from_dict({**REF, "q3": {"x": 1}}), Qrels.from_dict({**TEST, "q3": {"y": 1}}))[2] == 2


def test_rankings_swap_when_the_qrels_disagree():
    runs = [
        Run.from_dict({"q1": {"a": 3, "b": 2, "c": 1}, "q2": {"b": 3, "a": 2, "c": 1}}, "first_a"),
        Run.from_dict({"q1": {"b": 3, "a": 2, "c": 1}, "q2": {"b": 3, "c": 2, "a": 1}}, "first_b"),
        Run.from_dict({"q1": {"c": 3, "a": 2, "b": 1}, "q2": {"a": 3, "c": 2, "b": 1}}, "first_c"),
    ]
    (p1,) = ranking_agreement(Qrels.from_dict(REF), Qrels.from_dict(TEST), runs, parse_measures(["P@1"]))
    # ref: first_a 1.0, first_b 0.5, first_c 0.0; test: first_a 0.5, first_b 1.0, first_c 0.0
    assert p1.ref == {"first_a": 1.0, "first_b": 0.5, "first_c": 0.0}
    assert p1.test == {"first_a": 0.5, "first_b": 1.0, "first_c": 0.0}
    assert p1.swapped == [("first_a", "first_b")]
    assert p1.tau == pytest.approx(1 / 3)


def test_agree_command(write, cli):
    ref = write("ref.qrels", "".join(f"{q} 0 {d} {r}\n" for q, docs in REF.items() for d, r in docs.items()))
    test = write("test.qrels", "".join(f"{q} 0 {d} {r}\n" for q, docs in TEST.items() for d, r in docs.items()))
    run_a = write("a.run", "q1 Q0 a 1 3 a\nq1 Q0 b 2 2 a\nq2 Q0 b 1 3 a\n")
    run_b = write("b.run", "q1 Q0 b 1 3 b\nq2 Q0 a 1 3 b\n")
    result = cli("agree", ref, test, run_a, run_b, "-m", "P@1", "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["labels"]["n"] == 5
    assert report["labels"]["kappa"] == pytest.approx(cohen_kappa_score([1, 0, 0, 0, 1], [0, 1, 0, 0, 1]))
    (p1,) = report["rankings"]
    assert p1["ref"] == {"a": 1.0, "b": 0.0} and p1["test"] == {"a": 0.5, "b": 0.5}
    assert p1["swapped"] == [] and p1["tau"] is None  # one side ties the systems: tau undefined, null in JSON
    table = cli("agree", ref, test, run_a, run_b, "-m", "P@1")
    assert "kendall tau" in table.stdout and "ref \\ test" in table.stdout
    for at in (0, 1, 2):  # any one input from stdin, as elsewhere in semrel: the same figures (the run's name aside)
        args = [ref, test, run_a, run_b]
        given = open(args[at]).read()
        args[at] = "-"
        piped = json.loads(cli("agree", *args, "-m", "P@1", "--format", "json", input=given).stdout)
        assert piped["labels"] == report["labels"] and piped["rankings"][0]["tau"] is None
        assert sorted(piped["rankings"][0]["ref"].values()) == [0.0, 1.0]


def test_agree_ranks_runs_at_the_relevance_level_given_as_eval_does(write, cli):
    """agree had no -l: graded labels (a review's export) ranked runs with every grade of 1 or more relevant, where `eval
    -l 2` ranks them by grade 2 alone, so agree's taus were not about the comparison a user made."""
    ref = write("ref.qrels", "q1 0 a 2\nq1 0 b 1\nq2 0 a 2\nq2 0 b 1\n")
    test = write("test.qrels", "q1 0 a 1\nq1 0 b 2\nq2 0 a 1\nq2 0 b 2\n")  # the two grades swapped
    run_a = write("a.run", "q1 Q0 a 1 2 a\nq2 Q0 a 1 2 a\n")
    run_b = write("b.run", "q1 Q0 b 1 2 b\nq2 Q0 b 1 2 b\n")
    at = {level: json.loads(cli("agree", ref, test, run_a, run_b, "-m", "P@1", "-l", level, "-f", "json").stdout)
          for level in ("1", "2")}
    assert at["1"]["rel_level"] == 1 and at["1"]["rankings"][0]["tau"] is None  # everything relevant: the runs tie
    (p1,) = at["2"]["rankings"]
    assert p1["ref"] == {"a": 1.0, "b": 0.0} and p1["test"] == {"a": 0.0, "b": 1.0} and p1["tau"] == -1.0
    assert semrel.agree(ref, test, [run_a, run_b], ["P@1"], rel_level=2).rankings[0].tau == -1.0
    assert_one_error(cli("agree", ref, test, "-l", "2"), "-l sets what the runs' rankings count as relevant: give two RUNs or "
                     "more too", code=2)


def test_agree_refuses_qrels_without_common_pairs(write, cli):
    first, second = write("a.qrels", "q1 0 a 1\n"), write("b.qrels", "q9 0 a 1\n")
    result = cli("agree", first, second)
    assert result.exit_code == 1 and f"{first} and {second} share no judged pair" in result.stderr  # named neither


def test_agree_refuses_measures_without_runs(write, cli, monkeypatch):
    """-m without runs was ignored in silence (there are no rankings to measure); SEMREL_AGREE_MEASURES is a default for
    whenever runs are given."""
    ref, test = write("ref.qrels", "q1 0 a 1\nq1 0 b 0\n"), write("test.qrels", "q1 0 a 1\nq1 0 b 1\n")
    result = cli("agree", ref, test, "-m", "P@1")
    assert result.exit_code == 2
    assert result.stderr == "semrel: error: -m names the measures of the runs' rankings: give two RUNs or more too\n"
    with pytest.raises(UsageError, match=r"^measures= score the rankings of runs=: give runs= too$"):
        semrel.agree(ref, test, measures=["P@1"])
    monkeypatch.setenv("SEMREL_AGREE_MEASURES", "P@1")
    assert cli("agree", ref, test).exit_code == 0


def test_agree_refuses_one_run(write, cli):
    """Kendall's tau needs two systems to order: one run gave a table of nan; none gives the labels' agreement only."""
    ref = write("ref.qrels", "".join(f"{q} 0 {d} {r}\n" for q, docs in REF.items() for d, r in docs.items()))
    test = write("test.qrels", "".join(f"{q} 0 {d} {r}\n" for q, docs in TEST.items() for d, r in docs.items()))
    run_a = write("a.run", "q1 Q0 a 1 3 a\nq1 Q0 b 2 2 a\nq2 Q0 b 1 3 a\n")
    for fmt in ("table", "json"):
        result = cli("agree", ref, test, run_a, "--unlisted-as-zero", "-f", fmt)
        assert_one_error(result, "give two or more runs to compare how the qrels rank them (got 1)", code=2)
        assert result.stdout == ""
    assert json.loads(cli("agree", ref, test, "-f", "json").stdout)["rankings"] == []
    with pytest.raises(UsageError, match="two or more runs"):
        ranking_agreement(Qrels.from_dict(REF), Qrels.from_dict(TEST), [], parse_measures(["P@1"]))


def test_a_run_of_other_ids_is_refused_as_eval_refuses_it(write, cli):
    """A run sharing no document with the qrels scored 0 under both and was shown as agreeing."""
    ref = write("ref.qrels", "".join(f"{q} 0 {d} {r}\n" for q, docs in REF.items() for d, r in docs.items()))
    test = write("test.qrels", "".join(f"{q} 0 {d} {r}\n" for q, docs in TEST.items() for d, r in docs.items()))
    run_a = write("a.run", "q1 Q0 a 1 3 a\nq1 Q0 b 2 2 a\nq2 Q0 b 1 3 a\n")
    other = write("other.run", "q1 Q0 x#0 1 3 o\nq2 Q0 y#0 1 3 o\n")
    assert_one_error(cli("agree", ref, test, run_a, other, "-m", "P@1"),
                     "run 'other' shares no document id with the reference qrels")


def test_a_pair_listed_twice_is_refused_as_eval_refuses_it(write, cli):
    """Without runs, the second grade of a pair listed twice silently replaced the first (kappa 0.545, where the first
    grade gives 0.167); eval, estimate and calibrate refuse such a file, naming the line."""
    ref = write("ref.qrels", "".join(f"{q} 0 {d} {r}\n" for q, docs in REF.items() for d, r in docs.items()) + "q1 0 a 0\n")
    test = write("test.qrels", "".join(f"{q} 0 {d} {r}\n" for q, docs in TEST.items() for d, r in docs.items()))
    for args in ((ref, test), (test, ref)):
        result = cli("agree", *args)
        assert_one_error(result, f"{ref}:7: duplicate judgment for query 'q1' and doc 'a' (each document may appear once per query)")
        assert result.stdout == ""


def test_agree_warns_when_one_side_gives_every_pair_one_grade(write, cli):
    """Gold qrels list only relevant pairs: compared on the pairs both list, kappa is 0 whatever the judge says, so
    `agree` says so on stderr and names --unlisted-as-zero, which compares every pair and agrees here."""
    gold = write("gold.qrels", "q1 0 a 1\nq2 0 b 1\n")
    derived = write("derived.qrels", "q1 0 a 1\nq1 0 c 0\nq2 0 b 0\nq2 0 d 0\n")
    result = cli("agree", gold, derived, "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["labels"]["kappa"] == 0.0
    assert result.stderr == (f"semrel: warning: {gold} gives all 2 compared pairs grade 1: kappa is 0 by construction, whatever the "
                             "other labels say; if it lists only relevant pairs (a golden set's gold, gold qrels), count the pairs it "
                             "leaves out as 0 with --unlisted-as-zero\n")
    counted = cli("agree", gold, derived, "--unlisted-as-zero", "--format", "json")
    assert counted.stderr == "" and json.loads(counted.stdout)["labels"]["kappa"] == pytest.approx(
        cohen_kappa_score([1, 0, 1, 0], [1, 0, 0, 0]))


def test_agree_says_why_kappa_and_tau_are_nan_where_both_sides_are_constant(write, cli):
    """The table showed nan while the warning said "kappa is 0 by construction", and tau nan with no word."""
    zeros = write("z1.qrels", "q1 0 d1 0\nq1 0 d2 0\n")
    same = write("z2.qrels", "q1 0 d1 0\nq1 0 d2 0\n")
    runs = write("a.run", "q1 Q0 d1 1 2 a\n"), write("b.run", "q1 Q0 d2 1 2 b\n")
    result = cli("agree", zeros, same, *runs, "-m", "P@1")
    assert result.exit_code == 0 and result.stderr.splitlines() == [
        "semrel: warning: kappa is undefined (nan) for the two qrels: both give all 2 compared pairs grade 0, so they agree on "
        "every pair, but chance alone would agree as much; compare pairs of more than one grade"]
    assert result.stdout.splitlines()[-1].split()[:3] == ["P@1", "all", "tie"]  # both give every run 0: no order to swap
    one = write("one.qrels", "q1 0 d1 1\nq1 0 d2 0\n")
    result = cli("agree", zeros, one, *runs, "-m", "P@1")
    assert (f"semrel: warning: Kendall's tau is undefined (nan) for P@1: under {zeros} every run has the same value, so none "
            "ranks above another") in result.stderr.splitlines()


def test_the_unlisted_as_zero_hint_is_given_only_for_a_side_of_one_relevant_grade_compared_without_it():
    """A side that gives every compared pair grade 0, or that is still of one grade with unlisted_as_zero, gets the
    'kappa is 0 by construction' warning without the advice to count unlisted pairs as 0: it would change nothing."""
    zeros = replace(Qrels.from_dict({"q1": {"a": 0, "b": 0, "c": 0}}), source="zeros.qrels")
    mixed = replace(Qrels.from_dict({"q1": {"a": 0, "b": 1, "c": 2}}), source="mixed.qrels")
    heard: list[str] = []
    label_agreement(zeros, mixed, resamples=10, warn=heard.append)
    assert heard == ["zeros.qrels gives all 3 compared pairs grade 0: kappa is 0 by construction, whatever the other labels say"]
    gold = replace(Qrels.from_dict({"q1": {"a": 1, "b": 1}}), source="gold.qrels")
    judged = replace(Qrels.from_dict({"q1": {"a": 1, "b": 0}}), source="judged.qrels")
    heard.clear()
    label_agreement(gold, judged, unlisted_as_zero=True, resamples=10, warn=heard.append)
    assert heard == ["gold.qrels gives all 2 compared pairs grade 1: kappa is 0 by construction, whatever the other labels say"]


def test_grades_are_compared_on_the_scale_of_the_qrels_with_fewer():
    """Binary derived labels against people's grades 0-3: a relevant pair graded 3 and labelled 1 was a disagreement, so
    labels that agree on every pair's relevance got kappa 0.40 (quadratic, over 0-3). Compared as relevant or not, a
    grade above 1 counting as 1, as calibrate reads grades; a side of grade 0 alone sets no scale."""
    human = replace(Qrels.from_dict({"q1": {"a": 3, "b": 2, "c": 0, "d": 1, "e": 0}, "q2": {"a": 0, "b": 3, "c": 2}}), source="h.qrels")
    derived = replace(Qrels.from_dict({"q1": {"a": 1, "b": 1, "c": 0, "d": 0, "e": 0}, "q2": {"a": 1, "b": 1, "c": 1}}),
                      source="d.qrels")
    heard: list[str] = []
    result = label_agreement(human, derived, resamples=10, warn=heard.append)
    first, second, _ = common_labels(human, derived)
    assert result.kappa == pytest.approx(cohen_kappa_score([min(g, 1) for g in first], second))
    assert (result.weights, result.labels, result.confusion) == ("none", [0, 1], [[2, 1], [1, 4]])
    assert heard == ["h.qrels grades up to 3 and d.qrels up to 1: compared on grades 0-1, a grade above 1 counting as 1"]
    two = replace(derived, relevance=derived.relevance * 2)  # grades 0 and 2 against 0-3: 3 counts as 2
    assert label_agreement(human, two, resamples=10, warn=heard.append).kappa == pytest.approx(
        cohen_kappa_score([min(g, 2) for g in first], [g * 2 for g in second], weights="quadratic"))


def test_graded_qrels_are_weighted_by_grade_whatever_grades_neither_uses():
    """Two 0-3 qrels neither of which gives grade 2: quadratic weights go by position, so without the whole scale grade 3
    sat one step above 1 and kappa was 0.640 (scikit-learn's without labels=), not 0.557; qrels of grades 0 and 3 alone
    got plain kappa, as if binary. Assessor groups compare alike."""
    first = Qrels.from_dict({"q": {"a": 0, "b": 1, "c": 3, "d": 3}, "r": {"a": 0, "b": 3}})
    second = Qrels.from_dict({"q": {"a": 0, "b": 3, "c": 1, "d": 3}, "r": {"a": 1, "b": 3}})
    a, b, _ = common_labels(first, second)
    result = label_agreement(first, second, resamples=10)
    assert (result.labels, result.weights) == ([0, 1, 2, 3], "quadratic")
    assert result.kappa == pytest.approx(cohen_kappa_score(a, b, weights="quadratic", labels=[0, 1, 2, 3]))
    ends = replace(second, relevance=(second.relevance > 1) * 3)  # grades 0 and 3 on both sides
    assert label_agreement(ends, ends, resamples=10).weights == "quadratic"
    groups = group_agreement([("x", first), ("y", second)], first)
    assert groups.between[0][2].kappa == pytest.approx(result.kappa)


def test_label_agreement_bootstraps_with_the_seed_given():
    """`agree --seed` reaches label_agreement: its interval is the one agreement() draws with that seed, not seed 0's."""
    ref, test = Qrels.from_dict(REF), Qrels.from_dict(TEST)
    first, second, _ = common_labels(ref, test)
    seeded = label_agreement(ref, test, resamples=200, seed=7)
    assert (seeded.low, seeded.high) == (agreement(first, second, resamples=200, seed=7).low,
                                         agreement(first, second, resamples=200, seed=7).high)
    assert (seeded.low, seeded.high) != (label_agreement(ref, test, resamples=200, seed=0).low,
                                         label_agreement(ref, test, resamples=200, seed=0).high)


def test_tau_pairs_each_runs_values_by_name_whatever_the_names_order():
    """Runs given in an order unlike their names' (zeta, alpha, mid): tau-b is scipy's of each run's two values, not
    of values lined up by sorted name."""
    ref = {f"q{i}": {"r": 1} for i in range(4)}
    test = {f"q{i}": {"r" if i < 2 else "x": 1} for i in range(4)}
    ranked = {"zeta": ["r", "x", "y"], "alpha": ["x", "r", "y"], "mid": ["y", "x", "r"]}  # where each run puts r and x
    runs = [Run.from_dict({f"q{i}": {d: 3.0 - k for k, d in enumerate(order)} for i in range(4)}, name)
            for name, order in ranked.items()]
    (rr,) = ranking_agreement(Qrels.from_dict(ref), Qrels.from_dict(test), runs, parse_measures(["RR"]))
    names = list(ranked)
    assert rr.tau == pytest.approx(kendalltau([rr.ref[n] for n in names], [rr.test[n] for n in names]).statistic)
    assert rr.ref == {"zeta": 1.0, "alpha": 0.5, "mid": 1 / 3}


def test_an_assessor_whose_kappa_is_undefined_is_said_why_beneath_the_table(write, cli):
    """With --groups the rows of each assessor showed a bare nan: here assessor b and the test give both pairs grade 0."""
    ref = write("jg.qrels", "q1 a d1 1\nq1 a d2 0\nq1 b d1 0\nq1 b d2 0\n")
    test = write("t.qrels", "q1 0 d1 0\nq1 0 d2 0\n")
    result = cli("agree", ref, test, "--groups")
    assert result.exit_code == 0, result.output
    assert (f"kappa is undefined (nan) for b vs {test}: both give all 2 compared pairs grade 0, so they agree on every pair, but "
            "chance alone would agree as much") in result.stdout.splitlines()
