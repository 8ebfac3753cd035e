"""`semrel lift` on hand-made runs: values, wins/ties/losses, gained/lost queries, cost and the reorder check."""

from __future__ import annotations

import json
import os

import pytest
from scipy import stats

import semrel
from semrel.analysis.lift import Latency, check_reorder, lift, read_latency
from semrel.analysis.significance import StatSettings
from semrel.errors import FormatError, UsageError
from semrel.formats import read_run
from semrel.records import Qrels, Run

QRELS = "q1 0 d1 1\nq2 0 d2 1\nq3 0 d3 1\nq4 0 d4 1\n"
# RR base: q1 0.5, q2 1, q3 1/3, q4 1 -> mean 17/24
BASE = ("q1 Q0 d0 1 3 bm25\nq1 Q0 d1 2 2 bm25\nq1 Q0 d9 3 1 bm25\n"
        "q2 Q0 d2 1 2 bm25\nq2 Q0 d0 2 1 bm25\n"
        "q3 Q0 d8 1 3 bm25\nq3 Q0 d7 2 2 bm25\nq3 Q0 d3 3 1 bm25\n"
        "q4 Q0 d4 1 2 bm25\nq4 Q0 d5 2 1 bm25\n")
# RR reranked: q1 1 (+0.5), q2 1 (tie), q3 1 (+2/3), q4 0.5 (-0.5) -> mean 7/8
RERANKED = ("q1 Q0 d1 1 9 ce\nq1 Q0 d0 2 8 ce\n"
            "q2 Q0 d2 1 9 ce\n"
            "q3 Q0 d3 1 9 ce\nq3 Q0 d8 2 8 ce\n"
            "q4 Q0 d5 1 9 ce\nq4 Q0 d4 2 8 ce\n")


# the one warning these four queries get, as compare gives it: paired tests of so few differences mean little
FEW = "semrel: warning: the runs are compared on 4 queries: paired tests of so few differences mean little"


def only_few(stderr: str) -> bool:
    return stderr.startswith(FEW) and stderr.count("\n") == 1


@pytest.fixture
def files(write):
    return write("qrels.txt", QRELS), write("bm25.run", BASE), write("ce.run", RERANKED)


def _lift(cli, files, *args):
    qrels, base, reranked = files
    return cli("lift", qrels, "--base", base, "--reranked", reranked, "-m", "RR,P@1", *args)


@pytest.mark.parametrize("fmt, delimiter", [("csv", ","), ("tsv", "\t")])
def test_delimited_formats_hold_the_measures_table_alone(cli, files, fmt, delimiter):
    """tsv, as csv, parses as one table: it carried the caption and the gained/lost table after a blank line."""
    result = _lift(cli, files, "-f", fmt, "--places", "3")
    rows = [line.split(delimiter) for line in result.stdout.splitlines()]
    assert [r[:4] for r in rows] == [["measure", "base", "reranked", "change"], ["RR", "0.708", "0.875", "0.167"],
                                     ["P@1", "0.500", "0.750", "0.250"]], result.stdout
    assert {len(r) for r in rows} == {12}


def test_lift_numbers_by_hand(cli, files):
    result = _lift(cli, files, "-f", "json", "--base-latency-ms", "10", "--reranked-latency-ms", "60")
    assert result.exit_code == 0, result.stderr
    assert only_few(result.stderr)  # only reordering: no other warning
    report = json.loads(result.stdout)
    rr = report["measures"][0]
    assert rr["measure"] == "RR" and report["queries"] == 4
    assert rr["base"] == pytest.approx(17 / 24) and rr["reranked"] == pytest.approx(7 / 8)
    assert rr["change"] == pytest.approx(1 / 6) and rr["relative"] == pytest.approx((1 / 6) / (17 / 24))
    assert (rr["wins"], rr["ties"], rr["losses"]) == (2, 1, 1)
    assert rr["change_per_ms"] == pytest.approx((1 / 6) / 50)
    # 16 sign patterns, enumerated; of the 8 signs of (+1/2, +2/3, -1/2), |sum| >= 2/3 in 6
    assert rr["p"] == pytest.approx(6 / 8)
    assert rr["significant"] is False  # as the table's column says, not left to recompute from settings.alpha
    assert rr["ci"][0] <= rr["change"] <= rr["ci"][1]
    p1 = report["measures"][1]
    assert (p1["base"], p1["reranked"], p1["wins"], p1["losses"]) == (0.5, 0.75, 2, 1)
    assert [(c["query_id"], round(c["change"], 4)) for c in report["gained"]] == [("q3", 0.6667), ("q1", 0.5)]
    assert [(c["query_id"], c["change"]) for c in report["lost"]] == [("q4", -0.5)]
    assert report["reorder_check"] == {"depth": 3, "documents": 7, "outside": 0, "queries_outside": 0}
    assert report["latency"]["extra_ms"] == 50


def test_table_shows_relative_change_and_top_queries(cli, files):
    result = _lift(cli, files, "--top", "1")
    lines = result.stdout.splitlines()
    assert lines[0].split()[:5] == ["measure", "base", "reranked", "change", "relative"]
    assert lines[2].split()[:5] == ["RR", "0.7083", "0.8750", "0.1667", "+23.5%"]
    assert lines[2].split()[-3:] == ["2", "1", "1"]
    assert any(line.split()[:2] == ["gained", "q3"] for line in lines)
    assert sum(line.startswith("gained") for line in lines) == 1


def test_per_query_timing_file(cli, files, write):
    timings = write("t.tsv", "qid\tbase_ms\treranked_ms\nq1\t10\t50\nq2\t20\t100\n# q3 lost\nq3\t30\t90\n")
    result = _lift(cli, files, "--latency", timings, "-f", "json")
    latency = json.loads(result.stdout)["latency"]
    assert latency == {"base_ms": 20.0, "reranked_ms": 80.0, "extra_ms": 60.0, "queries": 3}
    assert "1 of 4 queries has no timings" in result.stderr


def test_reorder_check_warns_with_counts(cli, files, write):
    qrels, base, _ = files
    outside = write("new.run", RERANKED + "q2 Q0 d99 2 8 ce\nq9 Q0 d1 1 1 ce\n")
    result = cli("lift", qrels, "--base", base, "--reranked", outside, "-m", "RR")
    assert result.exit_code == 0
    # in the words of semrel.lift, semrel lift and semrel report alike (it said '--depth' to semrel.lift)
    said = ("the reranked run does not only reorder the base run: 2 of its 9 documents (in 2 queries) are not among the base run's "
            "top 3 for their query (e.g. 'd99' for query 'q2'); check the depth and that both runs come from the same first stage")
    assert f"semrel: warning: {said}\n" in result.stderr
    heard: list[str] = []
    semrel.lift(qrels, base, outside, "RR", warn=heard.append)
    assert said in heard
    # within depth 1, q1's d0 and q3's d8 (base rank 1) stay in; d1, d3 and d5 came from deeper
    check = check_reorder(read_run(base), read_run(files[2]), depth=1)
    assert (check.outside, check.queries_outside, check.depth) == (3, 3, 1)


@pytest.mark.parametrize("args, message", [
    (("--base-latency-ms", "5"), "go together"),
    (("--latency", "t.tsv", "--base-latency-ms", "5", "--reranked-latency-ms", "9"), "not both"),
])
def test_latency_usage_errors(cli, files, write, args, message):
    write("t.tsv", "q1 1 2\n")
    args = tuple(str(files[0]).replace("qrels.txt", a) if a == "t.tsv" else a for a in args)
    result = _lift(cli, files, *args)
    assert result.exit_code == 2 and message in result.stderr


@pytest.mark.parametrize("option, value", [("--base-latency-ms", "nan"), ("--reranked-latency-ms", "inf")])
def test_flat_timings_must_be_finite(cli, files, option, value):
    """click's FloatRange(min=0) lets inf and nan through: the table said change/ms 0 (or nothing) and -f json printed
    Infinity and NaN, which no JSON parser reads. The timing file refused them already."""
    timings = {"--base-latency-ms": "5", "--reranked-latency-ms": "9", option: value}
    result = _lift(cli, files, *(arg for pair in timings.items() for arg in pair), "-f", "json")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == f"semrel: error: {option} {value}: give a finite number of milliseconds\n"
    parameter = {"--base-latency-ms": "base_ms", "--reranked-latency-ms": "reranked_ms"}[option]
    with pytest.raises(UsageError) as raised:  # semrel.lift said 'base_ms= nan'
        semrel.lift(*files, "RR", **{"base_ms": 5.0, "reranked_ms": 9.0, parameter: float(value)})
    assert str(raised.value) == f"{parameter}={value}: give a finite number of milliseconds"
    with pytest.raises(UsageError, match="finite, non-negative"):
        Latency(float("nan"), 1.0, None)


def test_a_broken_timing_file_is_said_before_the_runs_are_read(cli, files, write):
    """The runs' own warnings (here R@100 past their depth) stood above the timing file's error, as if part of it."""
    timings = write("t.tsv", "q1 10 fast\n")
    result = _lift(cli, files, "-m", "R@100", "--latency", timings)
    assert result.exit_code == 1 and "R@100" not in result.stderr
    assert result.stderr.startswith("semrel: error: ") and result.stderr.count("\n") == 1 and "t.tsv:1" in result.stderr


def test_lift_on_fewer_than_five_queries_says_its_tests_mean_little(cli, write):
    """compare warned of paired tests over one query (p = 1, an interval of one point); lift, the same test, did not."""
    qrels = write("one.qrels", "q1 0 d1 1\n")
    base, reranked = write("a.run", "q1 Q0 d1 1 2 a\nq1 Q0 d2 2 1 a\n"), write("b.run", "q1 Q0 d2 1 2 b\nq1 Q0 d1 2 1 b\n")
    result = cli("lift", qrels, "--base", base, "--reranked", reranked, "-m", "RR")
    assert result.exit_code == 0
    assert "the runs are compared on 1 query: paired tests of so few differences mean little" in result.stderr


def test_lift_says_a_change_the_same_on_every_query_leaves_t_and_the_bootstrap_nothing_to_weigh(cli, write):
    """The reranker moves the relevant document from second to first on each of 6 queries: RR +0.5 everywhere, and the
    bootstrap's p was its floor 1/10001 (t's 0) with no word, as on 6,000 queries; compare warns of it the same way."""
    queries = [f"q{i}" for i in range(1, 7)]
    qrels = write("six.qrels", "".join(f"{q} 0 r 1\n" for q in queries))
    base = write("a.run", "".join(f"{q} Q0 x 1 2 a\n{q} Q0 r 2 1 a\n" for q in queries))
    reranked = write("b.run", "".join(f"{q} Q0 r 1 2 b\n{q} Q0 x 2 1 b\n" for q in queries))
    result = cli("lift", qrels, "--base", base, "--reranked", reranked, "-m", "RR,P@2", "--test", "bootstrap")
    assert result.exit_code == 0, result.stderr
    assert ("semrel: warning: RR: the difference is the same on every one of the 6 queries, so the bootstrap test has no spread "
            "between queries to weigh it against: its p (1/10001) is") in result.stderr.replace("\n", " ")  # P@2: 0.5 both
    plain = cli("lift", qrels, "--base", base, "--reranked", reranked, "-m", "RR,P@2")
    assert plain.exit_code == 0 and "same on every one" not in plain.stderr


def test_the_table_says_whose_interval_it_shows(cli, files):
    """Under --test t the interval beside the t p-value is the bootstrap's, and the two can disagree (0 left out where
    p >= alpha): the table said neither which test nor whose interval."""
    result = _lift(cli, files, "--test", "t", "--bootstrap", "300", "--seed", "7")
    assert result.exit_code == 0
    assert ("4 queries; significant: p < 0.05 (t test); the 95% interval is the bootstrap's percentiles of the change "
            "(300 resamples, seed 7); wins/ties/losses count queries.") in result.stdout
    assert "(randomization test, 10000 permutations)" in _lift(cli, files).stdout


def test_a_reranker_that_is_not_slower_gets_no_change_per_ms(cli, files):
    """It printed '(+-2.0 ms)' and a change/ms column of blank cells."""
    slower, faster = (_lift(cli, files, "--base-latency-ms", base, "--reranked-latency-ms", reranked).stdout
                      for base, reranked in (("5", "8"), ("5", "3")))
    assert "change/ms" in slower.splitlines()[0] and "(+3.0 ms)." in slower
    assert "change/ms" not in faster.splitlines()[0]
    assert "Latency per query: base 5.0 ms, reranked 3.0 ms (-2.0 ms; not slower: no change/ms)." in faster


def test_missing_runs_are_a_usage_error(cli, files):
    result = cli("lift", files[0], "--base", files[1])
    assert result.exit_code == 2 and "--reranked" in result.stderr


def test_one_file_as_both_runs_is_refused(cli, files, tmp_path):
    """It printed a table of ties, no change anywhere, as if the reranker had done nothing."""
    os.link(files[1], tmp_path / "same.run")
    for reranked in (files[1], tmp_path / "same.run"):
        result = cli("lift", files[0], "--base", files[1], "--reranked", reranked)
        assert result.exit_code == 2 and result.stderr.strip().splitlines()[-1] == (
            f"semrel: error: --base and --reranked are one file ({files[1]}): every query would tie; give the reranked run")


def test_timing_file_errors_name_the_line(write):
    with pytest.raises(FormatError, match=r"t.tsv:3: timings 'fast' 'slow' are not numbers"):
        read_latency(write("t.tsv", "qid base reranked\nq1 1 2\nq2 fast slow\n"))
    with pytest.raises(FormatError, match=r"u.tsv:2: query 'q1' is timed twice"):
        read_latency(write("u.tsv", "q1 1 2\nq1 1 2\n"))
    with pytest.raises(FormatError, match=r"v.tsv:1: expected 3 fields"):
        read_latency(write("v.tsv", "q1 1\n"))


def test_queries_missing_from_a_run_are_reported(cli, files, write):
    qrels, base, _ = files
    partial = write("partial.run", "q1 Q0 d1 1 9 ce\nq1 Q0 d0 2 8 ce\n")
    result = cli("lift", qrels, "--base", base, "--reranked", partial, "-m", "RR", "-f", "json")
    assert "3 of 4 queries have no results in the reranked run; they score 0" in result.stderr
    assert json.loads(result.stdout)["measures"][0]["reranked"] == pytest.approx(1 / 4)


@pytest.mark.parametrize("text, shown", [("", "the run has no rows"), ("x1 Q0 d1 1 9 ce\n", "the run has 'x1'")])
def test_a_run_sharing_no_query_with_the_qrels_is_refused(cli, files, write, text, shown):
    """As in eval and compare: a reranked run of other queries (or an empty one) would show a -100% lift."""
    qrels, base, _ = files
    result = cli("lift", qrels, "--base", base, "--reranked", write("other.run", text))
    assert result.exit_code == 1 and result.stdout == ""
    assert "other.run shares no query id with " in result.stderr
    assert f"qrels.txt: the qrels have 'q1', 'q2', 'q3', {shown}" in result.stderr


def test_the_interval_is_of_the_change_shown_for_geometric_means_and_sums(cli, write):
    """gm_map's change is of the geometric mean and NumRelRet's of the total; their intervals were of
    AP's and of the per-query mean change, and lay beside the change instead of around it."""
    queries = [f"q{i}" for i in range(40)]
    qrels = write("g.qrels", "".join(f"{q} 0 r 1\n" for q in queries))
    base = write("a.run", "".join(f"{q} Q0 x 1 3 a\n{q} Q0 y 2 2 a\n{q} Q0 r 3 1 a\n" for q in queries))
    reranked = write("b.run", "".join(f"{q} Q0 r 1 3 b\n{q} Q0 x 2 2 b\n{q} Q0 y 3 1 b\n" if i % 2 == 0
                                      else f"{q} Q0 x 1 3 b\n{q} Q0 y 2 2 b\n" for i, q in enumerate(queries)))
    result = cli("lift", qrels, "--base", base, "--reranked", reranked, "-m", "gm_map,NumRelRet", "-f", "json")
    assert result.exit_code == 0, result.stderr
    gm, found = json.loads(result.stdout)["measures"]
    assert gm["change"] == pytest.approx(1e-5 ** 0.5 - 1 / 3) and found["change"] == -20
    for row in (gm, found):
        assert row["ci"][0] <= row["change"] <= row["ci"][1] < 0, row


def test_empty_qrels_are_refused_as_eval_refuses_them(cli, files, write):
    """Empty qrels gave 'the qrels have, the run has ...': a sentence with no ids on one side."""
    _, base, reranked = files
    result = cli("lift", write("empty.qrels", ""), "--base", base, "--reranked", reranked)
    assert result.exit_code == 1 and result.stdout == ""
    assert "empty.qrels: no judgments (the qrels are empty); every measure would be 0" in result.stderr


def test_run_queries_not_in_the_qrels_are_reported_as_eval_reports_them(cli, files, write):
    """eval and compare warn that such queries are ignored; lift left them out without a word."""
    qrels, base, reranked = files
    extra = write("extra.run", BASE + "q9 Q0 d1 1 1 bm25\nq8 Q0 d1 1 1 bm25\n")
    result = cli("lift", qrels, "--base", extra, "--reranked", reranked, "-m", "RR")
    assert result.exit_code == 0, result.stderr
    assert "2 queries in the base run are not in the qrels and are ignored" in result.stderr
    assert "reranked run are not in the qrels" not in result.stderr


def test_a_typo_on_the_first_timing_line_is_not_taken_for_a_header(write):
    """'q1 1O 20' (a letter O) was skipped as a header, its query then left out of the means without a word."""
    with pytest.raises(FormatError, match=r"w.tsv:1: timings '1O' '20' are not numbers"):
        read_latency(write("w.tsv", "q1 1O 20\nq2 1 2\n"))
    assert read_latency(write("h.tsv", "qid base_ms reranked_ms\nq2 1 2\n")) == {"q2": (1.0, 2.0)}


def test_tied_queries_are_cut_by_id_among_gained_and_lost_alike():
    """Gained queries of equal change were listed by id and lost ones by id reversed, so --top cut a tie at
    opposite ends."""
    from semrel.evaluation.api import as_qrels, as_runs

    qrels = as_qrels({q: {"hit": 1} for q in ("a", "b", "c", "d")})
    base = {"a": {"hit": 1.0}, "b": {"hit": 1.0}, "c": {"miss": 1.0, "hit": 0.5}, "d": {"miss": 1.0, "hit": 0.5}}
    reranked = {"a": {"miss": 1.0, "hit": 0.5}, "b": {"miss": 1.0, "hit": 0.5}, "c": {"hit": 1.0}, "d": {"hit": 1.0}}
    _, runs, _ = as_runs({"base": base, "reranked": reranked})
    result = lift(qrels, *runs, ["RR"], top=1)
    assert [c.query_id for c in result.gained] == ["c"] and [c.query_id for c in result.lost] == ["a"]


def test_each_measure_gets_its_own_p_value_of_the_test_chosen(cli, files):
    """P@1's per-query changes (+1, 0, +1, -1) sum to an odd number under every sign pattern: p = 1, not RR's 6/8; with
    --test t both are scipy's paired t-test of the per-query values, not the randomization p."""
    report = json.loads(_lift(cli, files, "-f", "json").stdout)
    assert [row["p"] for row in report["measures"]] == pytest.approx([6 / 8, 1.0])
    report = json.loads(_lift(cli, files, "-f", "json", "--test", "t").stdout)
    rr = stats.ttest_rel([1, 1, 1, 1 / 2], [1 / 2, 1, 1 / 3, 1]).pvalue
    p1 = stats.ttest_rel([1, 1, 1, 0], [0, 1, 0, 1]).pvalue
    assert [row["p"] for row in report["measures"]] == pytest.approx([rr, p1], rel=1e-12)


@pytest.mark.parametrize("alpha, shown", [("0.75", "no"), ("0.76", "yes")])
def test_a_p_value_equal_to_alpha_is_not_significant(cli, files, alpha, shown):
    """Significant means p < alpha: RR's exact p of 0.75 is not significant at alpha 0.75."""
    row = _lift(cli, files, "--alpha", alpha).stdout.splitlines()[2].split()
    assert row[0] == "RR" and row[7] == "0.7500" and row[8] == shown


def test_a_reranker_exactly_as_fast_gets_no_change_per_ms(cli, files):
    """No extra milliseconds: change/ms is null, not a division by zero."""
    result = _lift(cli, files, "-f", "json", "--base-latency-ms", "5", "--reranked-latency-ms", "5")
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert [row["change_per_ms"] for row in report["measures"]] == [None, None] and report["latency"]["extra_ms"] == 0


def test_lost_queries_are_listed_biggest_loss_first():
    """--top keeps the queries that lost most: b (RR 1 -> 1/3) before a (1 -> 1/2), as gained lists the biggest gain first."""
    qrels = Qrels.from_dict({"a": {"hit": 1}, "b": {"hit": 1}})
    base = Run.from_dict({"a": {"hit": 3.0, "x": 2.0, "y": 1.0}, "b": {"hit": 3.0, "x": 2.0, "y": 1.0}}, "base")
    reranked = Run.from_dict({"a": {"x": 3.0, "hit": 2.0, "y": 1.0}, "b": {"x": 3.0, "y": 2.0, "hit": 1.0}}, "reranked")
    assert [c.query_id for c in lift(qrels, base, reranked, ["RR"], StatSettings(permutations=10, bootstrap=10)).lost] == ["b", "a"]
    assert [c.query_id for c in lift(qrels, base, reranked, ["RR"], StatSettings(permutations=10, bootstrap=10), top=1).lost] == ["b"]


def test_lift_counts_relevance_from_rel_level():
    """At rel_level 2 only grade 2 is relevant: the reranker that puts it first lifts RR from 1/2 to 1 (at level 1 both are 1)."""
    qrels = Qrels.from_dict({"q1": {"partial": 1, "full": 2}, "q2": {"partial": 1, "full": 2}})
    base = Run.from_dict({q: {"partial": 2.0, "full": 1.0} for q in ("q1", "q2")}, "base")
    reranked = Run.from_dict({q: {"full": 2.0, "partial": 1.0} for q in ("q1", "q2")}, "reranked")
    settings = StatSettings(permutations=10, bootstrap=10)
    (row,) = lift(qrels, base, reranked, ["RR"], settings, rel_level=2).rows
    assert (row.base, row.reranked, row.wins) == (0.5, 1.0, 2)
    assert lift(qrels, base, reranked, ["RR"], settings).rows[0].change == 0.0


def test_negative_timings_are_refused_in_either_column(write):
    """A negative reranked time, as a negative base time, is refused, not averaged into the cost."""
    for text in ("q1 -1 2\n", "q1 1 -2\n"):
        with pytest.raises(FormatError, match=r"t.tsv:1: timings must be finite, non-negative milliseconds"):
            read_latency(write("t.tsv", text))


def test_a_timing_file_of_every_query_is_not_warned_about(cli, files, write):
    """Only queries without timings are warned of: a file timing all four gave no '0 of 4 queries have no timings'."""
    timings = write("t.tsv", "q1 10 50\nq2 20 100\nq3 30 90\nq4 40 80\n")
    result = _lift(cli, files, "--latency", timings, "-f", "json")
    assert result.exit_code == 0 and only_few(result.stderr)
    assert json.loads(result.stdout)["latency"] == {"base_ms": 25.0, "reranked_ms": 80.0, "extra_ms": 55.0, "queries": 4}


def test_the_reorder_check_counts_the_queries_of_the_rows_outside(files):
    """Two new documents in one query are 2 rows outside in 1 query, not in 2."""
    _, base, reranked = files
    run = read_run(reranked)
    extra = Run.from_columns([*run.query_ids.to_pylist(), "q2", "q2"], [*run.doc_ids.to_pylist(), "d99", "d98"],
                             [*run.scores.tolist(), 7.0, 6.0], "ce")
    check = check_reorder(read_run(base), extra)
    assert (check.outside, check.queries_outside, check.documents) == (2, 1, 9)


def test_the_reorder_check_takes_the_base_runs_top_by_score_not_by_row_order():
    """The base run lists d2 (score 1) before d1 (score 5): its top 1 is d1, so a reranked run of d1 only reorders it."""
    base = Run.from_columns(["q1", "q1"], ["d2", "d1"], [1.0, 5.0], name="base")
    assert check_reorder(base, Run.from_columns(["q1"], ["d1"], [1.0], name="re"), depth=1).ok
    assert not check_reorder(base, Run.from_columns(["q1"], ["d2"], [1.0], name="re"), depth=1).ok


def test_counts_print_as_whole_numbers_as_eval_prints_them(cli, files):
    """NumRet came out as 10.0000 (and its per-query changes as -1.0000) where eval prints 10: the base run returns 10
    documents (3 + 2 + 3 + 2 lines), the reranked 7 (2 + 1 + 2 + 2)."""
    qrels, base, reranked = files
    result = cli("lift", qrels, "--base", base, "--reranked", reranked, "-m", "NumRet,RR")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[2].split()[:4] == ["NumRet", "10", "7", "-3"], result.stdout
    assert lines[3].split()[:3] == ["RR", "0.7083", "0.8750"]
    assert [line.split()[:5] for line in lines if line.startswith("lost")] == [["lost", q, k, str(int(k) - 1), "-1"]
                                                                              for q, k in (("q1", "3"), ("q2", "2"), ("q3", "3"))]


def test_timing_file_is_read_a_line_at_a_time(write, monkeypatch):
    """It was read whole, so a timing file over SEMREL_MAX_DOCUMENT_MB was refused although each of its lines is short."""
    monkeypatch.setenv("SEMREL_MAX_DOCUMENT_MB", "0.01")
    timings = read_latency(write("big.tsv", "".join(f"q{i}\t{i}.5\t{2 * i}\n" for i in range(2_000))))
    assert len(timings) == 2_000 and timings["q1999"] == (1999.5, 3998.0)
