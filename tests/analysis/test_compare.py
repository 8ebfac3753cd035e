"""`semrel compare`: values, paired tests and marks on hand-made runs, every format, clear errors."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
import pytrec_eval
from scipy import stats

from semrel.analysis.compare import Reversal, compare_evaluations, reversals, run_letter
from semrel.analysis.significance import StatSettings
from semrel.evaluation.measures import parse_measures
from semrel.evaluation.metrics import evaluate
from semrel.records import Qrels, Run

QUERIES = [f"q{i}" for i in range(1, 9)]
QRELS = "".join(f"{q} 0 r 1\n" for q in QUERIES)
# a: the relevant doc second everywhere (RR 0.5); b: first everywhere (RR 1);
# c: first on q1-q4 and no results for q5-q8 (they score 0)
RUN_A = "".join(f"{q} Q0 x 1 2.0 a\n{q} Q0 r 2 1.0 a\n" for q in QUERIES)
RUN_B = "".join(f"{q} Q0 r 1 2.0 b\n{q} Q0 x 2 1.0 b\n" for q in QUERIES)
RUN_C = "".join(f"{q} Q0 r 1 2.0 c\n" for q in QUERIES[:4])


@pytest.fixture
def files(write):
    return write("qrels.txt", QRELS), write("a.run", RUN_A), write("b.run", RUN_B), write("c.run", RUN_C)


def test_a_comparison_on_fewer_than_five_queries_says_its_tests_mean_little(cli, write):
    """Two queries with one difference each gave the t-test p 0.0000 and "significant yes", without a word."""
    qrels = write("two.qrels", "".join(f"{q} 0 r 1\n" for q in QUERIES[:2]))
    runs = write("a.run", RUN_A), write("b.run", RUN_B)
    result = cli("compare", qrels, *runs, "-m", "RR", "--test", "t")
    assert result.exit_code == 0 and "the runs are compared on 2 queries: paired tests of so few differences mean little" in result.stderr
    assert "compared on" not in cli("compare", write("all.qrels", QRELS), *runs, "-m", "RR").stderr  # eight are enough here


def test_a_difference_the_same_on_every_query_is_said_to_leave_t_and_the_bootstrap_nothing_to_weigh(cli, files):
    """b beats a by 0.5 RR on each of the 8 queries: the bootstrap's resampled means are all 0.5, so its p is its floor
    1/10001 (t's is 0) on 8 queries as on 8,000, with no word, where the randomization test's is 2/2^8."""
    qrels, a, b, c = files
    result = cli("compare", qrels, a, b, c, "-m", "RR", "--test", "bootstrap", "-f", "json")
    assert result.exit_code == 0, result.stderr
    tests = {t["run"]: t for t in json.loads(result.stdout)["tests"]}
    assert (tests["b"]["p_bootstrap"], tests["b"]["p_t"], tests["b"]["p_randomization"]) == (1 / 10001, 0.0, 2 / 256)
    said = ("RR b vs a: the difference is the same on every one of the 8 queries, so the bootstrap test has no spread between "
            "queries to weigh it against: its p (1/10001) is what it gives on 5 queries as on 5,000, not a measure of the evidence; "
            "the randomization test (the default) counts the sign patterns that reach the difference")
    assert said in result.stderr.replace("\n", " ") and "RR c vs a" not in result.stderr  # c: +0.5 on four, -0.5 on four
    t = cli("compare", qrels, a, b, "-m", "RR", "--test", "t", "--bootstrap", "99")
    assert "the t test has no spread between queries to weigh it against: its p (0) is" in t.stderr.replace("\n", " ")
    assert "same on every one" not in cli("compare", qrels, a, b, "-m", "RR").stderr  # randomization: its p counts patterns


def test_baseline_marks_only_the_run_that_beats_it(cli, files):
    result = cli("compare", *files, "-m", "RR,P@1", "--seed", "3")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["#", "run", "RR", "P@1"]
    # b beats a on all 8 queries: exact randomization p = 2/256, Holm over 2 pairs -> 1/64 < 0.05
    assert lines[2].split() == ["a", "a", "0.5000", "0.0000"]
    assert lines[3].split() == ["b", "b", "1.0000", "a", "1.0000", "a"]
    # c: +0.5 on four queries, -0.5 on four: no difference from a on RR; P@1 +1 on four: p = 2/16, times 2
    assert lines[4].split() == ["c", "c", "0.5000", "0.5000"]
    assert "significantly better" in result.stdout and "'a'" in result.stdout
    assert "4 of 8 queries" in result.stderr  # c lacks q5-q8: they score 0


def test_json_holds_every_p_value_and_matches_scipy(cli, files):
    result = cli("compare", *files, "-m", "RR", "--all-pairs", "-f", "json", "--correction", "bonferroni")
    report = json.loads(result.stdout)
    assert report["settings"]["all_pairs"] is True and report["queries"] == 8
    tests = {(t["run"], t["vs"]): t for t in report["tests"]}
    assert set(tests) == {("b", "a"), ("c", "a"), ("c", "b")}
    cb = tests["c", "b"]
    assert cb["difference"] == pytest.approx(-0.5)
    assert cb["p_t"] == pytest.approx(stats.ttest_rel([1, 1, 1, 1, 0, 0, 0, 0], [1] * 8).pvalue)
    assert cb["p_randomization"] == pytest.approx(2 / 16)  # only four queries differ
    assert cb["p"] == pytest.approx(3 * 2 / 16)  # Bonferroni over the three pairs
    assert tests["b", "a"]["p"] == pytest.approx(3 * 2 / 256) and tests["b", "a"]["significant"]
    assert tests["b", "a"]["ci"] == [pytest.approx(0.5), pytest.approx(0.5)]
    runs = {r["run"]: r for r in report["runs"]}
    assert runs["b"]["beats"]["RR"] == ["a"] and runs["a"]["beats"]["RR"] == []
    assert runs["c"]["values"]["RR"] == pytest.approx(0.5)


def test_formats_carry_marks_their_own_way(cli, files):
    latex = cli("compare", *files, "-m", "RR", "-f", "latex").stdout
    assert "1.0000$^{a}$" in latex and "\\begin{tabular}" in latex
    markdown = cli("compare", *files, "-m", "RR", "-f", "markdown").stdout
    assert "1.0000<sup>a</sup>" in markdown
    rows = list(csv.DictReader(io.StringIO(cli("compare", *files, "-m", "RR", "-f", "csv").stdout)))
    assert [(r["run"], float(r["RR"]), r["RR beats"]) for r in rows] == [("a", 0.5, ""), ("b", 1.0, "a"), ("c", 0.5, "")]
    detail = cli("compare", *files, "-m", "RR", "--detail", "-f", "csv").stdout
    assert len(list(csv.reader(io.StringIO(detail)))) == 3  # header and two pairs against the baseline
    # tsv, as eval writes it for a shell's cut and sort: csv's cells, tab-separated
    tsv = cli("compare", *files, "-m", "RR", "-f", "tsv").stdout
    assert list(csv.reader(io.StringIO(tsv), delimiter="\t")) == list(csv.reader(io.StringIO(cli("compare", *files, "-m", "RR",
                                                                                                "-f", "csv").stdout)))


def test_baseline_option_and_worse_runs(cli, files):
    result = cli("compare", *files, "-m", "RR", "--baseline", "b", "-f", "json")
    runs = {r["run"]: r for r in json.loads(result.stdout)["runs"]}
    assert runs["b"]["beats"]["RR"] == ["a"]  # the baseline carries the letters of the runs below it


def test_baseline_may_be_given_as_its_run_file(cli, files, tmp_path, monkeypatch):
    """`--baseline runs/b.run`, as a shell completes it, was refused ("is none of the runs (a, b, c)"): only the
    stem was taken. The file, by the path given or another path to it, is the run of that name."""
    by_name = json.loads(cli("compare", *files, "-m", "RR", "--baseline", "b", "-f", "json").stdout)
    monkeypatch.chdir(tmp_path)
    for given in (files[2], "b.run", "./b.run"):
        result = cli("compare", *files, "-m", "RR", "--baseline", given, "-f", "json")
        assert result.exit_code == 0, result.stderr
        report = json.loads(result.stdout)
        assert report["settings"]["baseline"] == "b" and report["runs"] == by_name["runs"]
        assert {(t["run"], t["vs"]) for t in report["tests"]} == {("a", "b"), ("c", "b")}
    result = cli("compare", *files, "-m", "RR", "--baseline", "d.run")
    assert result.exit_code == 2 and "--baseline 'd.run' is none of the runs (a, b, c)" in result.stderr, result.stderr


def test_condensed_and_cut_lists_are_compared_as_eval_scores_them(cli, files):
    """compare had none of eval's -J and -M, so significance could not be tested on condensed lists or at a depth.
    a ranks an unjudged x above the relevant r: condensed (-J) it ties b, cut at 1 (-M 1) it finds nothing."""
    values = {}
    for args in ((), ("-J",), ("-M", "1")):
        report = json.loads(cli("compare", *files[:3], "-m", "RR", "--test", "t", *args, "-f", "json").stdout)
        values[args] = {r["run"]: r["values"]["RR"] for r in report["runs"]}
        evaluated = json.loads(cli("eval", *files[:3], "-m", "RR", *args, "-f", "json").stdout)
        assert values[args] == {run: rows["all"]["RR"] for run, rows in evaluated.items()}
    assert values == {(): {"a": 0.5, "b": 1.0}, ("-J",): {"a": 1.0, "b": 1.0}, ("-M", "1"): {"a": 0.0, "b": 1.0}}


def test_randomization_reproducible_through_the_api():
    qrels = Qrels.from_dict({f"q{i}": {"r": 1} for i in range(40)})
    a = Run.from_dict({f"q{i}": {"r": 1.0, "x": 2.0 if i % 3 else 0.5} for i in range(40)}, name="a")
    b = Run.from_dict({f"q{i}": {"r": 1.0, "x": 2.0 if i % 4 else 0.5} for i in range(40)}, name="b")
    results = evaluate(qrels, [a, b], parse_measures(["RR"]))
    first = compare_evaluations(results, StatSettings(permutations=500, bootstrap=300, seed=9))
    again = compare_evaluations(results, StatSettings(permutations=500, bootstrap=300, seed=9))
    assert first.tests == again.tests
    other = compare_evaluations(results, StatSettings(permutations=500, bootstrap=300, seed=10))
    assert other.tests[0].randomization_p != first.tests[0].randomization_p
    assert 0 < first.tests[0].randomization_p < 1


def test_reversals_are_opposite_orders_that_one_qrels_finds_significant():
    """Run a puts each query's g first, run b its x: the gold chunks (g) find a significantly better, labels that
    call x relevant find b better. A tie under one qrels, or a difference neither finds significant, is no reversal."""
    a = Run.from_dict({f"q{i}": {"g": 2.0, "x": 1.0, "y": 0.5} for i in range(10)}, name="a")
    b = Run.from_dict({f"q{i}": {"x": 2.0, "g": 1.0, "y": 0.5} for i in range(10)}, name="b")
    settings = StatSettings(permutations=2000, bootstrap=200)

    def compared(relevant: str | dict[int, str], queries: int = 10, measures=("RR", "P@3")):
        qrels = Qrels.from_dict({f"q{i}": {relevant if isinstance(relevant, str) else relevant[i]: 1} for i in range(queries)})
        return compare_evaluations(evaluate(qrels, [a, b], parse_measures(list(measures))), settings)

    gold, derived = compared("g"), compared("x")
    found = reversals(derived, gold)
    rr = parse_measures(["RR"])[0]
    assert found == [Reversal(rr, "a", "b", (1.0, 0.5), (0.5, 1.0), ("ref", "test"))]  # P@3 ties under both: none
    # significant under the derived labels only (half the gold favours each run): still one conclusion reversed
    assert [r.significant for r in reversals(derived, compared({i: "g" if i < 6 else "x" for i in range(10)}))] == [("test",)]
    assert reversals(derived, derived) == []
    with pytest.warns(UserWarning, match="the runs are compared on 3 queries"):
        few = reversals(compared("x", queries=3, measures=("RR",)), compared("g", queries=3, measures=("RR",)))
    assert few == []  # 3 queries: neither difference is significant


def test_letters_go_on_past_z():
    assert [run_letter(i) for i in (0, 25, 26, 27, 51, 52)] == ["a", "z", "aa", "ab", "az", "ba"]


@pytest.mark.parametrize("args, message", [
    (("a.run",), "at least two runs"),
    (("a.run", "b.run", "--baseline", "zzz"), "--baseline 'zzz' is none of the runs"),
    (("a.run", "a.run"), "a.run is given twice; give each run once"),
    (("a.run", "b.run", "--all-pairs", "--baseline", "a"), "not both"),
    (("a.run", "b.run", "-m", "nDCG@x"), "unknown measure"),
])
def test_usage_errors_are_one_line(cli, files, tmp_path, args, message):
    result = cli("compare", files[0], *[str(tmp_path / a) if a.endswith(".run") else a for a in args])
    assert result.exit_code == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_run_names_are_checked_before_any_run_is_read(cli, files, write):
    """A --baseline that names no run (or two runs of one name) was said only after every run had been read and
    scored; a broken run then hid it behind its own error."""
    broken = write("broken.run", "q1 Q0 r 1 high a\n")
    result = cli("compare", files[0], files[1], broken, "--baseline", "zzz")
    assert result.exit_code == 2 and "--baseline 'zzz' is none of the runs (a, broken)" in result.stderr, result.stderr
    result = cli("compare", files[0], broken, broken)
    assert result.exit_code == 2 and "the run file " in result.stderr and "broken.run is given twice" in result.stderr, result.stderr


def test_a_broken_run_names_its_line(cli, files, write):
    broken = write("broken.run", "q1 Q0 r 1 high a\n")
    result = cli("compare", files[0], files[1], broken)
    assert result.exit_code == 1
    assert "broken.run:1" in result.stderr and "Traceback" not in result.stderr


def test_geometric_means_and_sums_are_tested_and_reported_on_their_own_scale():
    """gm_map's 'all' row is exp(mean log AP): its test runs on log(max(AP, 1e-5)), and a difference
    or interval is of that row, as for a sum (NumRelRet: the total). Before, both copied AP's
    per-query mean difference: B's gm_map 0.0032 was marked significantly better than A's 0.3333."""
    queries = [f"q{i}" for i in range(60)]
    qrels = Qrels.from_dict({q: {"r": 1} for q in queries})
    a = Run.from_dict({q: {"x": 3.0, "y": 2.0, "r": 1.0} for q in queries}, name="a")  # AP 1/3 everywhere
    b = Run.from_dict({q: {"r": 1.0} if i % 2 == 0 else {"x": 1.0} for i, q in enumerate(queries)}, name="b")  # 1 or 0
    comparison = compare_evaluations(evaluate(qrels, [a, b], parse_measures(["AP", "gm_map", "NumRelRet"])),
                                     StatSettings(permutations=2000, bootstrap=2000))
    ap, gm, found = comparison.tests
    assert comparison.value("b", gm.measure) == pytest.approx(1e-5 ** 0.5)  # half 1, half floored at 1e-5
    assert ap.difference == pytest.approx(1 / 6) and ap.significant  # b's AP is higher
    assert gm.difference == pytest.approx(1e-5 ** 0.5 - 1 / 3) and gm.significant  # b's gm_map is far lower
    assert gm.ci_low <= gm.difference <= gm.ci_high < 0 and comparison.marks("a", gm.measure) == "b"
    assert found.difference == -30 and found.ci_low <= -30 <= found.ci_high and found.ci_high < -1


def _runs_of(rr_per_query: dict[str, list[float]]) -> list[Run]:
    """Runs whose RR on query i is 1 (r first), 0.5 (r second) or 1/3, by the values given."""
    runs = []
    for name, values in rr_per_query.items():
        rows = {}
        for i, value in enumerate(values):
            before = {1.0: [], 0.5: ["x"], 1 / 3: ["x", "y"]}[value]
            rows[f"q{i}"] = {doc: float(10 - k) for k, doc in enumerate([*before, "r"])}
        runs.append(Run.from_dict(rows, name=name))
    return runs



def _qrels(n: int) -> Qrels:
    return Qrels.from_dict({f"q{i}": {"r": 1} for i in range(n)})



def test_a_tie_under_one_qrels_is_no_reversal():
    """b beats a significantly under one qrels and ties it under the other: the order is not reversed."""
    settings = StatSettings(permutations=2000, bootstrap=200)
    a = Run.from_dict({f"q{i}": {"g": 2.0, "x": 1.0, "y": 0.5} for i in range(10)}, name="a")
    b = Run.from_dict({f"q{i}": {"x": 2.0, "g": 1.0, "y": 0.5} for i in range(10)}, name="b")
    compared = {rel: compare_evaluations(evaluate(Qrels.from_dict({f"q{i}": {rel: 1} for i in range(10)}), [a, b],
                                                  parse_measures(["RR"])), settings) for rel in "xy"}
    assert compared["x"].tests[0].significant and compared["y"].tests[0].difference == 0
    assert reversals(compared["x"], compared["y"]) == [] and reversals(compared["y"], compared["x"]) == []



def test_five_queries_are_enough_to_compare_without_a_warning():
    """FEW_QUERIES is 5: four queries are warned about, five are not."""
    for n, warned in ((4, True), (5, False)):
        heard: list[str] = []
        runs = _runs_of({"a": [0.5] * n, "b": [1.0] * n})
        compare_evaluations(evaluate(_qrels(n), runs, parse_measures(["RR"])), StatSettings(), warn=heard.append)
        assert bool(heard) == warned



def test_a_p_value_equal_to_alpha_is_not_significant_in_compare():
    """Five queries all better: the exact randomization p is 2/32 = 0.0625; significant means p < alpha."""
    runs = _runs_of({"a": [0.5] * 5, "b": [1.0] * 5})
    results = evaluate(_qrels(5), runs, parse_measures(["RR"]))
    for alpha, significant in ((0.0625, False), (0.0626, True)):
        (found,) = compare_evaluations(results, StatSettings(alpha=alpha)).tests
        assert found.p == 0.0625 and found.significant == significant



def test_p_values_are_corrected_within_each_measure_not_across_measures():
    """Holm over the two pairs of each measure (t-test p-values from scipy), not over all four tests together."""
    rng = np.random.default_rng(3)
    values = {name: rng.choice([1.0, 0.5, 1 / 3], size=12).tolist() for name in "abc"}
    runs = _runs_of(values)
    measures = parse_measures(["RR", "P@1"])
    results = evaluate(_qrels(12), runs, measures)
    comparison = compare_evaluations(results, StatSettings(test="t", correction="holm"))
    for m in measures:
        per_query = {e.run_name: np.asarray(e.values[m]) for e in results}
        raw = [stats.ttest_rel(per_query[run], per_query["a"]).pvalue for run in "bc"]
        low, high = sorted(raw)
        holm = [min(1.0, 2 * low) if p == low else min(1.0, max(2 * low, high)) for p in raw]
        found = [t.p for t in comparison.tests if t.measure == m]
        assert found == pytest.approx(holm, rel=1e-9)
        assert min(raw) < 0.5  # a correction over four tests would have given a different p here



def test_marks_list_the_runs_beaten_in_table_order():
    """Marks name the beaten runs in the table's order (b before c), not by name (aa before zz)."""
    runs = _runs_of({"best": [1.0] * 8, "zz": [0.5] * 8, "aa": [0.5] * 8})
    comparison = compare_evaluations(evaluate(_qrels(8), runs, parse_measures(["RR"])), StatSettings(), all_pairs=True)
    assert comparison.beaten("best", "RR") == ["zz", "aa"] and comparison.marks("best", "RR") == "bc"


def test_counts_print_as_whole_numbers_as_eval_prints_them(cli, files):
    """NumRelRet and NumRet came out as 1063.0000 in compare's table where eval prints 1063: they are sums of counts.
    The totals are pytrec_eval's num_rel_ret and num_ret summed over the queries (those a run lacks add 0)."""
    qrels = {q: {"r": 1} for q in QUERIES}
    runs = {name: {} for name in "abc"}
    for name, text in zip("abc", (RUN_A, RUN_B, RUN_C)):
        for line in text.splitlines():
            q, _, d, _, score, _ = line.split()
            runs[name].setdefault(q, {})[d] = float(score)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"num_rel_ret", "num_ret"})
    totals = {name: [sum(int(v[key]) for v in evaluator.evaluate(run).values()) for key in ("num_rel_ret", "num_ret")]
              for name, run in runs.items()}
    table = cli("compare", *files, "-m", "NumRelRet,NumRet").stdout
    rows = {line.split()[1]: line.split()[2:] for line in table.splitlines()[2:5]}
    assert {name: [int(cell) for cell in cells if cell.isdigit()] for name, cells in rows.items()} == totals, table
    rows_csv = list(csv.DictReader(io.StringIO(cli("compare", *files, "-m", "NumRelRet,NumRet", "-f", "csv").stdout)))
    assert {r["run"]: [r["NumRelRet"], r["NumRet"]] for r in rows_csv} == {k: [str(v) for v in t] for k, t in totals.items()}
