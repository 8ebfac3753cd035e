"""`semrel sensitivity`: tau against scipy, significance ranges on hand-made judgments, curves
the report reads, and one-line errors."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest
from scipy import stats

from helpers import drawn_features
from semrel.analysis.agreement import settled
from semrel.analysis.sensitivity import sensitivity, threshold_grid
from semrel.analysis.significance import StatSettings
from semrel.evaluation.measures import parse_measures
from semrel.records import Judgment, Run
from semrel.report.html import read_sensitivity

QUERIES = [f"q{i:02d}" for i in range(12)]
# per query: chunk a (recall 0.57), b (0.83) and z (0.30). `first` returns only a; `second`
# returns z then b. On RR, first wins on every query while a is relevant and b is too (t <= 0.57),
# second wins while only b is (0.57 < t <= 0.83), and both score 0 above.
JUDGMENTS = "".join(
    json.dumps({"query_id": q, "chunk_id": f"{q}-{c}", "P": 0.5, "R": r, "F": 0.5, "source": "pool"}) + "\n"
    for q in QUERIES for c, r in (("a", 0.57), ("b", 0.83), ("z", 0.30))
)
FIRST = "".join(f"{q} Q0 {q}-a 1 1.0 first\n" for q in QUERIES)
SECOND = "".join(f"{q} Q0 {q}-z 1 2.0 second\n{q} Q0 {q}-b 2 1.0 second\n" for q in QUERIES)


@pytest.fixture
def files(write):
    return write("judgments.jsonl", JUDGMENTS), write("first.run", FIRST), write("second.run", SECOND)


def sweep(cli, files, *extra: str):
    judgments, first, second = files
    return cli("sensitivity", judgments, first, second, "-m", "RR",
               "--from", "0.5", "--to", "0.9", "--step", "0.05", *extra)


def test_ranges_where_each_run_wins(cli, files):
    result = sweep(cli, files, "-f", "json")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["thresholds"] == [0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9]
    rr = {(v["threshold"], v["run"]): v["value"] for v in out["values"]}
    assert (rr[0.5, "first"], rr[0.5, "second"]) == (1.0, 0.5)
    assert (rr[0.7, "first"], rr[0.7, "second"]) == (0.0, 0.5)
    assert (rr[0.9, "first"], rr[0.9, "second"]) == (0.0, 0.0)
    # 12 queries, all differences of one sign: exact randomization p = 2/4096
    [c] = out["conclusions"]
    assert (c["run"], c["vs"]) == ("first", "second")
    assert c["run_better"] == [[0.5, 0.55]]
    assert c["vs_better"] == [[0.6, 0.8]]
    assert c["better_at"] == "second"
    assert [t["tau"] for t in out["tau"]] == [-1.0, -1.0, 1.0, 1.0, 1.0, 1.0, 1.0, None, None]


def test_table_names_ranges_and_rankings(cli, files):
    result = sweep(cli, files, "--at", "0.55")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["threshold", "measure", "first", "second", "tau", "vs", "0.55", "ranking"]
    assert lines[2].split() == ["0.5000", "RR", "1.0000", "0.5000", "1.0000", "first", ">", "second"]
    assert lines[4].split() == ["0.6000", "RR", "0.0000", "0.5000", "-1.0000", "second", ">", "first"]
    assert lines[10].split() == ["0.9000", "RR", "0.0000", "0.0000", "first", "=", "second"]
    row = next(line for line in lines if line.startswith("RR "))
    assert row.split() == ["RR", "first", "second", "0.5-0.55", "0.6-0.8", "first"]
    assert "labelling at 9 thresholds, evaluating 2 runs" in result.stderr


def test_tau_equals_scipy(tmp_path):
    rng = np.random.default_rng(7)
    queries, docs = [f"q{i}" for i in range(20)], [f"d{i}" for i in range(15)]
    judgments = [Judgment(q, d, 0.5, float(rng.uniform(0.4, 1.0)), 0.5, "pool") for q in queries for d in docs]
    runs = [Run.from_columns([q for q in queries for _ in docs], [d for _ in queries for d in docs],
                             rng.random(len(queries) * len(docs)), name=f"r{k}") for k in range(5)]
    measures = parse_measures(["nDCG@5", "P@3", "AP"])
    grid = threshold_grid(0.5, 0.9, 0.02)
    result = sensitivity(judgments, runs, measures, grid, at=0.73, on="R")
    assert len(result.thresholds) == 21 and result.values.shape == (21, 5, 3)
    checked = 0
    for k in range(len(grid)):
        for m in range(len(measures)):
            expected = stats.kendalltau(settled(result.values[k, :, m]), settled(result.reference[:, m])).statistic
            if math.isnan(expected):
                assert math.isnan(result.taus[k, m])
            else:
                assert result.taus[k, m] == pytest.approx(expected, abs=1e-12)
                checked += 1
    assert checked > 50
    assert len({round(t, 6) for t in result.taus.ravel() if math.isfinite(t)}) > 3  # rankings really move


@pytest.mark.slow
def test_curves_round_trip_through_the_report_reader(cli, files, tmp_path):
    curves = str(tmp_path / "curves.csv")
    result = sweep(cli, files, "-m", "P@1", "--curves", curves, "-f", "json")
    assert result.exit_code == 0, result.stderr
    points = read_sensitivity(curves)
    assert len(points) == 9 * 2 * 2
    expected = {(v["threshold"], v["run"], v["measure"]): v["value"] for v in json.loads(result.stdout)["values"]}
    assert {(p.threshold, p.run, p.measure): p.value for p in points} == expected
    assert os.path.exists(curves + ".manifest.json")
    report = cli("report", "--sensitivity", curves, "-o", str(tmp_path / "report.html"))
    assert report.exit_code == 0, report.stderr


@pytest.mark.parametrize("extra, message", [
    (("--from", "0.9", "--to", "0.5"), "--from 0.9 is above --to 0.5"),
    (("--step", "0"), "--step must be greater than 0"),
    (("--step", "-0.1"), "--step must be greater than 0"),
    (("--step", "0.00001"), "give a larger --step"),
    (("--at", "nan"), "--at must be a finite number"),
    (("--curves", "-"), "--curves -: stdout holds the tables"),  # curves and tables together on stdout: neither readable
])
def test_bad_thresholds_give_one_line(cli, files, extra, message):
    judgments, first, second = files
    result = cli("sensitivity", judgments, first, second, *extra)
    assert result.exit_code != 0
    assert result.stderr.count("\n") == 1 and message in result.stderr


def test_an_unknown_run_gives_one_line(cli, files, tmp_path):
    judgments, first, _ = files
    missing = cli("sensitivity", judgments, first, str(tmp_path / "nope.run"))
    assert missing.exit_code != 0 and missing.stderr.count("\n") == 1 and "nope.run" in missing.stderr


def test_one_run_shows_its_curve_and_is_checked_for_a_cliff(cli, files):
    """A user with one system was refused ('a ranking needs two'), and so `semrel run` with one method never checked
    that the cut sits on no cliff: one run's values move with the threshold all the same. `first` scores RR 1 up to
    R 0.57 and 0 above, a cliff 0.02 from 0.56."""
    judgments, first, _ = files
    result = cli("sensitivity", judgments, first, "-m", "RR", "--on", "R", "--from", "0.5", "--to", "0.6", "--at", "0.56")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["threshold", "measure", "first"]
    assert lines[2].split() == ["0.5000", "RR", "1.0000"] and lines[-3].split() == ["0.6000", "RR", "0.0000"]
    assert lines[-1] == ("Labels: R >= threshold, over 12 judged queries. One run: no ranking or significance to show; "
                         "give more runs to compare them.")
    assert "testing every pair" not in result.stderr
    assert "the label threshold 0.56 on R sits on a cliff of the sensitivity curve: RR of run 'first' moves from 1.000 to 0.000" \
        in result.stderr
    flat = cli("sensitivity", judgments, first, "-m", "RR", "--on", "R", "--from", "0.5", "--to", "0.6", "--at", "0.52")
    assert flat.exit_code == 0 and "cliff" not in flat.stderr


def test_a_run_of_other_ids_is_refused_as_eval_refuses_it(cli, files, write):
    """It scored 0 at every threshold, exit code 0, and the other run 'significantly better' everywhere."""
    judgments, first, _ = files
    other = write("other.run", "".join(f"{q} Q0 {q}-other#0 1 1.0 other\n" for q in QUERIES))
    result = cli("sensitivity", judgments, first, other, "-m", "RR")
    assert result.exit_code == 1 and result.stdout == ""
    assert "semrel: error: run 'other' shares no document id with the judgments" in result.stderr
    assert "--doc-level" not in result.stderr  # eval's way out; sensitivity has no such option


def test_grid_is_rounded_and_includes_the_end():
    grid = threshold_grid(0.5, 0.9, 0.01)
    assert len(grid) == 41 and grid[7] == 0.57 and grid[-1] == 0.9


def test_report_numbers_the_objects_of_agreement_lists(cli, write, tmp_path):
    agreement = write("agreement.json", json.dumps({"rankings": [{"measure": "nDCG@10", "tau": 0.5}], "pairs": [1, 2]}))
    out = tmp_path / "report.html"
    assert cli("report", "--agreement", agreement, "-o", str(out)).exit_code == 0
    html = out.read_text(encoding="utf-8")
    assert "rankings.1.measure" in html and "rankings.1.tau" in html and "0.5000" in html and "[1, 2]" in html


def test_a_threshold_on_a_cliff_is_warned_about_and_a_flat_one_is_not():
    from semrel.analysis.sensitivity import cliff_warnings

    grid = [round(0.30 + k / 100, 2) for k in range(17)]  # 0.30 .. 0.46
    flat = np.array([[[0.50 + t / 50], [0.60 + t / 50]] for t in grid])  # (thresholds, runs, measures)
    assert cliff_warnings(grid, ["a", "b"], ["nDCG@10"], flat, 0.38, "p") == []
    steep = np.array([[[0.50 if t < 0.40 else 0.30], [0.60]] for t in grid])
    (message,) = cliff_warnings(grid, ["a", "b"], ["nDCG@10"], steep, 0.38, "p")
    assert "0.38 on p sits on a cliff" in message and "'a' moves from 0.500 to 0.300" in message and "semrel calibrate" in message
    assert cliff_warnings(grid, ["a", "b"], ["nDCG@10"], steep, 0.32, "p") == []  # the step is more than 0.05 away
    swapped = np.array([[[0.50], [0.49 if t < 0.40 else 0.52]] for t in grid])  # small moves, but the order flips
    assert "order changes" in cliff_warnings(grid, ["a", "b"], ["nDCG@10"], swapped, 0.38, "p")[0]


def test_a_refit_of_every_coefficient_sweeps_its_recomputed_p(cli, write, tmp_path):
    """`--calibration` with a `calibrate --fit features` file: the sweep is over p recomputed from the features (here in
    the opposite order to the judge's p), marked at the refit's cut."""
    from semrel.judging import labels

    rng = np.random.default_rng(2)
    rows, x = [], {}
    for q in QUERIES:
        for c in ("a", "b", "z"):
            x[q, c] = drawn_features(rng)
            rows.append({"query_id": q, "chunk_id": f"{q}-{c}", "P": 0.5, "R": 0.5, "F": 0.5, "source": "pool",
                         "p": float(labels.probability(x[q, c], True)[0]),
                         "features": {**dict(zip(labels.FEATURES, x[q, c].tolist())), "with_gold": 1.0}})
    judgments = write("judgments.jsonl", "".join(json.dumps(r) + "\n" for r in rows))
    refit = (0.5, -4.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)  # relR_idf now counts against relevance
    cal = write("cal.json", json.dumps(labels.ProbabilityRule(cut=0.3, calibration={"fit": "features"}, refit=refit).params()))
    result = cli("sensitivity", judgments, write("first.run", FIRST), write("second.run", SECOND), "-m", "RR",
                 "--calibration", cal, "--from", "0.1", "--to", "0.9", "--step", "0.1", "-f", "json")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["at"] == 0.3 and out["on"] == "p"
    q = {key: labels.probability(v, True, refit)[0] for key, v in x.items()}
    values = {(v["threshold"], v["run"]): v["value"] for v in out["values"]}
    for t in out["thresholds"]:
        assert values[t, "first"] == pytest.approx(np.mean([float(q[k, "a"] >= t) for k in QUERIES]))
        assert values[t, "second"] == pytest.approx(np.mean([1.0 if q[k, "z"] >= t else 0.5 if q[k, "b"] >= t else 0.0
                                                             for k in QUERIES]))
    plain = cli("sensitivity", judgments, write("f.run", FIRST), write("s.run", SECOND), "-m", "RR", "-f", "json",
                "--from", "0.1", "--to", "0.9", "--step", "0.1")
    assert json.loads(plain.stdout)["values"] != out["values"]  # the judge's p orders the pairs otherwise
    wrong = cli("sensitivity", judgments, write("f2.run", FIRST), write("s2.run", SECOND), "--calibration", cal, "--on", "R")
    assert wrong.exit_code == 2 and "without --on" in wrong.stderr


def _five_queries_three_runs():
    """On 5 queries at R >= 0.5, `first` (a relevant chunk at rank 1) has RR 1 and `second` and `third` (the same
    ranking: an irrelevant chunk, then a relevant one) RR 0.5: first - second is +0.5 on every query, whose exact
    randomization p is 2 / 2**5 = 0.0625 (only all signs kept or all flipped reach the observed sum)."""
    queries = [f"q{i}" for i in range(5)]
    judgments = [Judgment(q, f"{q}-{c}", 0.5, r, 0.5, "pool") for q in queries for c, r in (("a", 0.57), ("b", 0.83), ("z", 0.30))]
    first = Run.from_columns(queries, [f"{q}-a" for q in queries], [1.0] * 5, name="first")
    ids, docs = [q for q in queries for _ in "zb"], [f"{q}-{c}" for q in queries for c in "zb"]
    return judgments, [first, Run.from_columns(ids, docs, [2.0, 1.0] * 5, name="second"),
                       Run.from_columns(ids, docs, [2.0, 1.0] * 5, name="third")]


def test_a_p_value_equal_to_alpha_is_not_significant():
    """Significant means p < alpha: p = 0.0625 wins at alpha 0.07 and not at alpha 0.0625."""
    judgments, runs = _five_queries_three_runs()
    for alpha, wins in ((0.07, [(0.5, 0.5)]), (0.0625, [])):
        settings = StatSettings(test="randomization", alpha=alpha, correction="none")
        result = sensitivity(judgments, runs[:2], ["RR"], [0.5], at=0.5, on="R", settings=settings)
        (conclusion,) = result.conclusions
        assert (conclusion.first, conclusion.first_wins, conclusion.second_wins) == ("first", wins, [])


def test_the_correction_is_across_the_pairs_of_runs_at_each_threshold_and_measure():
    """Three runs make three comparisons: Bonferroni multiplies first vs second's p of 0.0625 by 3, past alpha 0.1,
    though one measure alone would leave it significant."""
    judgments, runs = _five_queries_three_runs()
    for correction, wins in (("none", [(0.5, 0.5)]), ("bonferroni", [])):
        settings = StatSettings(test="randomization", alpha=0.1, correction=correction)
        result = sensitivity(judgments, runs, ["RR"], [0.5], at=0.5, on="R", settings=settings)
        by_pair = {(c.first, c.second): c for c in result.conclusions}
        assert by_pair["first", "second"].first_wins == wins and by_pair["first", "second"].at == ("first" if wins else None)
        assert by_pair["second", "third"].first_wins == by_pair["second", "third"].second_wins == []
