"""`semrel.sensitivity` and `semrel.calibrate`: what `semrel sensitivity -f json` and `semrel calibrate -f json`
print and the files they write, from paths and from records alike; wrong arguments refused, naming them."""

from __future__ import annotations

import contextlib
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

import semrel
from helpers import drawn_features, ok, run
from semrel import Qrels
from semrel.analysis.calibrate import Calibration, ProbabilityCalibration
from semrel.analysis.sensitivity import Sensitivity, render_sensitivity, sensitivity_json
from semrel.errors import SemrelError, UsageError, ValidationError
from semrel.formats import read_qrels
from semrel.formats.jsonl import json_text
from semrel.formats.judgments import read_judgments
from semrel.judging import labels
from semrel.records import Judgment

QRELS_KINDS = "give a Qrels, a dict {query: {doc: grade}}, a pandas DataFrame or a file path"

QUERIES = [f"q{i:02d}" for i in range(12)]
FIRST = "".join(f"{q} Q0 {q}-a 1 1.0 first\n" for q in QUERIES)  # as tests/analysis/test_sensitivity.py
SECOND = "".join(f"{q} Q0 {q}-z 1 2.0 second\n{q} Q0 {q}-b 2 1.0 second\n" for q in QUERIES)
QUICK = ["--permutations", "500", "--bootstrap", "200"]  # the tests' draws, few: the same on both sides
QUICK_KW = {"permutations": 500, "bootstrap": 200}


def judgment_lines(p: dict | None = None, features: dict | None = None) -> str:
    """Per query: chunk a (R 0.57), b (0.83), z (0.30); with `p`, the probability of each chunk letter."""
    rows = []
    for q in QUERIES:
        for c, r in (("a", 0.57), ("b", 0.83), ("z", 0.30)):
            row = {"query_id": q, "chunk_id": f"{q}-{c}", "P": 0.5, "R": r, "F": 0.5, "source": "pool"}
            if p is not None:
                row["p"] = p[c]
            if features is not None:
                row["p"], row["features"] = features[q, c]
            rows.append(row)
    return "".join(json.dumps(row) + "\n" for row in rows)


@pytest.fixture
def sweep_files(write):
    """Judgments holding only P, R, F (swept on R by default), judgments holding p, and two runs."""
    return {"raw": write("raw.jsonl", judgment_lines()), "p": write("p.jsonl", judgment_lines({"a": 0.62, "b": 0.41, "z": 0.12})),
            "first": write("first.run", FIRST), "second": write("second.run", SECOND)}


def cli_json(*args) -> dict:
    result = run(*args, "-f", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


# ---------------------------------------------------------------- sensitivity


@pytest.mark.parametrize("which,cli_args,options", [
    ("raw", [], {}),  # on R: 0.5..0.9 by 0.01, at 0.7
    ("p", [], {}),  # on p: 0.05..0.95 by 0.01, at the cut
    ("raw", ["--on", "R", "--from", "0.5", "--to", "0.9", "--step", "0.05", "--at", "0.55", "--test", "t", "--correction", "none"],
     {"on": "R", "thresholds": [0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9], "at": 0.55, "test": "t", "correction": "none"}),
    ("p", ["--on", "R", "-l", "1", "--alpha", "0.01", "--seed", "3"], {"on": "R", "rel_level": 1, "alpha": 0.01, "seed": 3}),
])
@pytest.mark.filterwarnings("ignore:the label threshold .* sits on a cliff")  # warned as the CLI warns: tested apart
def test_sensitivity_gives_what_semrel_sensitivity_prints(sweep_files, which, cli_args, options):
    runs = [sweep_files["first"], sweep_files["second"]]
    printed = cli_json("sensitivity", sweep_files[which], *runs, "-m", "RR,P@1", *QUICK, *cli_args)
    from_files = semrel.sensitivity(sweep_files[which], runs, ["RR", "P@1"], **QUICK_KW, **options)
    records = read_judgments(sweep_files[which])
    from_records = semrel.sensitivity(records, {"first": Path(runs[0]), "second": runs[1]}, "RR,P@1", **QUICK_KW, **options)
    assert isinstance(from_files, Sensitivity)
    assert sensitivity_json(from_files) == printed and sensitivity_json(from_records) == printed  # exact: the same computation
    assert render_sensitivity(from_files, "json") == json.dumps(printed, indent=2) + "\n"
    expected_on = options.get("on", "p" if which == "p" else "R")
    assert printed["on"] == expected_on and printed["at"] == options.get("at", labels.CUT if expected_on == "p" else 0.7)
    grid = printed["thresholds"]
    expected_grid = (0.05, 0.95, 91) if expected_on == "p" else (0.5, 0.9, 9 if options.get("thresholds") else 41)
    assert (grid[0], grid[-1], len(grid)) == expected_grid
    rr = {(v["threshold"], v["run"]): v["value"] for v in printed["values"] if v["measure"] == "RR"}
    if expected_on == "R":  # a (0.57) and b (0.83) relevant at 0.5; b alone at 0.7
        assert (rr[0.5, "first"], rr[0.5, "second"], rr[0.7, "first"], rr[0.7, "second"]) == (1.0, 0.5, 0.0, 0.5)
    else:  # on p: a (0.62) and b (0.41) relevant at the cut; a alone at 0.5
        cut = labels.CUT
        assert (rr[cut, "first"], rr[cut, "second"], rr[0.5, "first"], rr[0.5, "second"]) == (1.0, 0.5, 1.0, 0.0)


def test_sensitivity_of_one_run_gives_what_the_command_prints_for_it(sweep_files):
    """One run (alone or in a list) is swept as `semrel sensitivity` sweeps it: its values, no pair to test."""
    printed = cli_json("sensitivity", sweep_files["raw"], sweep_files["first"], "-m", "RR", *QUICK)
    for runs in (sweep_files["first"], [sweep_files["first"]]):
        result = semrel.sensitivity(sweep_files["raw"], runs, "RR", **QUICK_KW)
        assert result.runs == ["first"] and result.conclusions == [] and sensitivity_json(result) == printed
    assert {(v["threshold"], v["value"]) for v in printed["values"]} >= {(0.5, 1.0), (0.7, 0.0)}


def test_sensitivity_defaults_measures_as_the_command(sweep_files):
    runs = [sweep_files["first"], sweep_files["second"]]
    printed = cli_json("sensitivity", sweep_files["raw"], *runs, "--from", "0.5", "--to", "0.6", "--step", "0.1", *QUICK)
    ours = semrel.sensitivity(sweep_files["raw"], runs, thresholds=[0.5, 0.6], **QUICK_KW)
    assert sensitivity_json(ours) == printed
    assert [m.name for m in ours.measures] == ["nDCG@10", "AP", "RR", "R@100", "P@10", "Success@10"]
    assert repr(ours) == ("Sensitivity(on R at 0.7: 2 thresholds from 0.5 to 0.6; runs 'first', 'second' on nDCG@10, AP, RR, R@100, "
                          "P@10, Success@10; 12 queries)")  # one line, not its arrays


def test_a_refit_of_every_coefficient_is_swept_as_the_command_sweeps_it(write, sweep_files, tmp_path):
    rng = np.random.default_rng(2)
    featured = {}
    for q in QUERIES:
        for c in ("a", "b", "z"):
            x = drawn_features(rng)
            featured[q, c] = (float(labels.probability(x, True)[0]), {**dict(zip(labels.FEATURES, x.tolist())), "with_gold": 1.0})
    judgments = write("featured.jsonl", judgment_lines(features=featured))
    rule = labels.ProbabilityRule(cut=0.3, calibration={"fit": "features"}, refit=(0.5, -4.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0))
    cal = write("cal.json", json.dumps(rule.params()))
    runs = [sweep_files["first"], sweep_files["second"]]
    printed = cli_json("sensitivity", judgments, *runs, "-m", "RR", "--calibration", cal, "--from", "0.1", "--to", "0.9",
                       "--step", "0.1", *QUICK)
    thresholds = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
    from_file = semrel.sensitivity(judgments, runs, "RR", calibration=cal, thresholds=thresholds, **QUICK_KW)
    from_rule = semrel.sensitivity(read_judgments(judgments), runs, "RR", calibration=rule, thresholds=thresholds, **QUICK_KW)
    assert sensitivity_json(from_file) == sensitivity_json(from_rule) == printed
    assert (printed["on"], printed["at"]) == ("p", 0.3)  # the refit's cut
    plain = semrel.sensitivity(judgments, runs, "RR", thresholds=thresholds, **QUICK_KW)
    assert sensitivity_json(plain)["values"] != printed["values"]  # the judge's p orders the pairs otherwise
    threshold_file = write("thresholds.json", json.dumps({"rule": "threshold", "on": "R", "thresholds": [0.6]}))
    message = f"calibration={threshold_file!r}: give a refit of every coefficient (`calibrate --fit features`) without on="
    with pytest.raises(UsageError, match=f"^{re.escape(message)}"):
        semrel.sensitivity(judgments, runs, calibration=threshold_file)
    with pytest.raises(UsageError, match=re.escape("without on= (other calibrations are cuts on a score: give on= and at=)")):
        semrel.sensitivity(judgments, runs, calibration=rule, on="R")
    refused = run("sensitivity", judgments, *runs, "--calibration", threshold_file)
    assert refused.exit_code == 2 and refused.stderr == (
        f"semrel: error: --calibration {threshold_file}: give a refit of every coefficient (`calibrate --fit features`) without "
        "--on (other calibrations are cuts on a score: give --on and --at)\n")


def test_curves_writes_the_file_and_manifest_the_command_writes(sweep_files, tmp_path):
    runs = [sweep_files["first"], sweep_files["second"]]
    (tmp_path / "cli").mkdir()
    ok("sensitivity", sweep_files["raw"], *runs, "-m", "RR", *QUICK, "--curves", tmp_path / "cli" / "curves.csv")
    ours = semrel.sensitivity(sweep_files["raw"], runs, "RR", curves=tmp_path / "curves.csv", **QUICK_KW)
    written = (tmp_path / "curves.csv").read_text()
    assert written == (tmp_path / "cli" / "curves.csv").read_text()
    assert written.splitlines()[:3] == ["threshold,run,measure,value", "0.5,first,RR,1.0", "0.5,second,RR,0.5"]
    assert len(written.splitlines()) == 1 + 41 * 2 == 1 + ours.values.size
    mine, theirs = (json.loads(Path(f"{p}.manifest.json").read_text()) for p in (tmp_path / "curves.csv", tmp_path / "cli" / "curves.csv"))
    assert mine["params"] == theirs["params"] and mine["params"]["at"] == 0.7 and mine["params"]["on"] == "R"
    assert mine["inputs"] == theirs["inputs"] and [i["path"] for i in mine["inputs"]] == [sweep_files["raw"], *runs]
    assert mine["rows"] == theirs["rows"] == 82
    # records and dicts in memory: only the files among the inputs are recorded
    first = {q: {f"{q}-a": 1.0} for q in QUERIES}
    semrel.sensitivity(read_judgments(sweep_files["raw"]), {"first": first, "second": runs[1]}, "RR", curves=tmp_path / "mixed.csv",
                       **QUICK_KW)
    mixed = json.loads((tmp_path / "mixed.csv.manifest.json").read_text())
    assert [i["path"] for i in mixed["inputs"]] == [runs[1]]
    assert (tmp_path / "mixed.csv").read_text() == written
    before = Path(runs[0]).read_bytes()
    with pytest.raises(SemrelError, match="is an input of this command"):
        semrel.sensitivity(sweep_files["raw"], runs, "RR", curves=runs[0], **QUICK_KW)
    assert Path(runs[0]).read_bytes() == before


def test_sensitivity_warnings_go_to_warn_or_are_python_warnings_at_the_callers_line(sweep_files):
    runs = [sweep_files["first"], sweep_files["second"]]
    result = run("sensitivity", sweep_files["raw"], *runs, "-m", "RR", "--at", "0.57", *QUICK)
    assert result.exit_code == 0, result.output
    (printed,) = [line.removeprefix("semrel: warning: ") for line in result.stderr.splitlines() if "warning" in line]
    assert "the label threshold 0.57 on R sits on a cliff" in printed and "'first' moves from 1.000 to 0.000" in printed
    heard: list[str] = []
    semrel.sensitivity(sweep_files["raw"], runs, "RR", at=0.57, warn=heard.append, **QUICK_KW)
    assert heard == [printed]
    with pytest.warns(UserWarning, match="sits on a cliff") as caught:
        semrel.sensitivity(sweep_files["raw"], runs, "RR", at=0.57, **QUICK_KW)
    assert caught[0].filename == __file__ and str(caught[0].message) == printed
    heard.clear()
    semrel.sensitivity(sweep_files["raw"], runs, "RR", warn=heard.append, **QUICK_KW)  # at 0.7: flat
    assert heard == []


def test_sensitivity_refuses_wrong_kinds_and_bad_values(sweep_files):
    judgments, runs = sweep_files["raw"], [sweep_files["first"], sweep_files["second"]]
    judgment = Judgment("q", "c", 0.5, 0.5, 0.5, "pool")
    for args, kwargs, message in [
        ((3, runs), {}, "judgments: give a file path or a list of Judgment, not int"),
        (([judgment, "x"], runs), {}, "judgments: give a file path or a list of Judgment, not of str (item 1: 'x')"),
        ((judgments, runs, 3), {}, "measures: give a name, a Measure or a list of them, not int"),
        ((judgments, runs), {"on": 1}, "on: give a score name (p, P, R, F), not int"),
        ((judgments, runs), {"thresholds": "0.5,0.6"}, "thresholds: give a list of numbers, e.g. [0.3, 0.4, 0.5], not str"),
        ((judgments, runs), {"thresholds": 0.5}, "thresholds: give a list of numbers, e.g. [0.3, 0.4, 0.5], not float"),
        ((judgments, runs), {"thresholds": [0.5, "0.6"]}, "thresholds: give numbers, not str"),
        ((judgments, runs), {"at": "0.7"}, "at: give a number, not str"),
        ((judgments, runs), {"at": True}, "at: give a number, not bool"),
        ((judgments, runs), {"calibration": 3}, "calibration: give the file `semrel calibrate -o` wrote, or a rule, not int"),
        ((judgments, runs), {"rel_level": 1.5}, "rel_level: give a whole number, not float"),
        ((judgments, runs), {"test": 1}, "test: give a name, not int"),
        ((judgments, runs), {"curves": 3}, "curves: give a file path, not int"),
        ((judgments, runs), {"warn": 3}, "warn: give a function taking one message, not int"),
        ((judgments, 5), {}, "runs: give a Run, a dict {query: {doc: score}}, a pandas DataFrame or a file path, not int"),
    ]:
        with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
            semrel.sensitivity(*args, **kwargs)
    for args, kwargs, error, message in [
        ((judgments, [{"q": {"d": 1.0}}, {"q": {"e": 1.0}}]), {}, UsageError, "runs: two runs are named 'run'"),
        ((judgments, runs), {"on": "x"}, UsageError, "on='x': choose one of p, P, R, F"),
        ((judgments, runs), {"thresholds": []}, UsageError, "give at least one threshold"),
        ((judgments, runs), {"thresholds": [0.6, 0.5]}, UsageError, "thresholds must be strictly increasing, got 0.6,0.5"),
        ((judgments, runs), {"thresholds": [0.5, math.inf]}, UsageError, "thresholds must be finite numbers, got 0.5, inf"),
        ((judgments, runs), {"at": math.nan}, UsageError, "at= must be a finite number"),
        ((sweep_files["p"], runs), {"thresholds": [0.5, 1.5]}, UsageError,
         "on='p' sweeps a probability: thresholds and at= must lie in 0..1, and these reach 1.5 (they run from 0.38 to 1.5); "
         "give on='R' (or P, F) for raw scores"),
        ((judgments, runs), {"test": "z"}, UsageError, "unknown test 'z'; choose one of t, randomization, bootstrap"),
        ((judgments, runs), {"alpha": 1.5}, UsageError, "alpha=1.5: give a number strictly between 0 and 1"),
        ((sweep_files["raw"], runs), {"on": "p"}, ValidationError, "36 of 36 judgments hold no probability p"),
        (([], runs), {}, ValidationError, "judgments: the list is empty; give at least one Judgment"),
        (([judgment, judgment], runs), {}, ValidationError, "judgments: item 1: pair ('q', 'c') is given twice (first as item 0)"),
    ]:
        with pytest.raises(error, match=f"^{re.escape(message)}"):
            semrel.sensitivity(*args, **kwargs)


@pytest.mark.parametrize("extra,message", [
    (["--on", "p"], "--on p sweeps a probability: thresholds and --at must lie in 0..1, and these reach 1.01 (they run from 0.05 "
                    "to 1.5); give --on R (or P, F) for raw scores"),  # "found 1.01", a number never typed
    (["--step", "0.00001"], "40001 thresholds from 0.5 to 0.9 by 1e-05; at most 2001: give a larger --step"),
])
def test_the_command_names_its_options_where_the_library_names_parameters(sweep_files, extra, message):
    p_judgments = sweep_files["p"] if extra[0] == "--on" else sweep_files["raw"]
    args = ["--from", "0.05", "--to", "1.5"] if extra[0] == "--on" else []
    result = run("sensitivity", p_judgments, sweep_files["first"], sweep_files["second"], *args, *extra)
    assert result.exit_code == 2 and result.stderr.startswith(f"semrel: error: {message}"), result.stderr


# ---------------------------------------------------------------- calibrate


def _line(query: str, r: float, p: float | None = None, features: dict | None = None) -> str:
    return json.dumps({"query_id": query, "chunk_id": "c", "P": r, "R": r, "F": r, "source": "bm25",
                       **({"p": p} if p is not None else {}), **({"features": features} if features else {})}) + "\n"


@pytest.fixture
def reviewed(write):
    """60 pairs: judgments with p and its features, with p alone, with R alone; human labels drawn from p (binary)
    and graded by R; held-out labels of other pairs."""
    rng = np.random.default_rng(4)
    x = drawn_features(rng, 60)
    p = labels.probability(x, True)
    r = rng.uniform(size=60)
    truth = (rng.uniform(size=60) < p).astype(int)
    feats = [{**dict(zip(labels.FEATURES, row.tolist())), "with_gold": 1.0} for row in x]
    grades = np.digitize(r + rng.normal(0, 0.08, 60), [0.35, 0.6, 0.8])
    return {
        "featured": write("featured.jsonl", "".join(_line(f"q{i}", float(r[i]), float(p[i]), feats[i]) for i in range(60))),
        "p": write("p.jsonl", "".join(_line(f"q{i}", float(r[i]), float(p[i])) for i in range(60))),
        "raw": write("raw.jsonl", "".join(_line(f"q{i}", float(r[i])) for i in range(60))),
        "human": write("human.qrels", "".join(f"q{i} 0 c {truth[i]}\n" for i in range(40))),
        "graded": write("graded.qrels", "".join(f"q{i} 0 c {grades[i]}\n" for i in range(40))),
        "test": write("test.qrels", "".join(f"q{i} 0 c {truth[i]}\n" for i in range(30, 60))),
        "graded_test": write("graded_test.qrels", "".join(f"q{i} 0 c {grades[i]}\n" for i in range(30, 60))),
    }


@pytest.mark.filterwarnings("ignore:the judgments hold")
@pytest.mark.parametrize("which,human,cli_args,options,kind", [
    ("featured", "human", [], {}, ("features", None)),
    ("featured", "human", ["--fit", "shift", "--graded", "--seed", "2"], {"fit": "shift", "graded": True, "seed": 2}, ("shift", None)),
    ("p", "human", [], {}, ("anchored", None)),  # p without its features: anchored
    ("featured", "human", ["--fit", "platt", "--test", "test"], {"fit": "platt", "test": "test"}, ("platt", None)),
    ("raw", "graded", [], {}, (None, "R")),  # no p: thresholds on R, as many as the human labels' top grade
    ("featured", "graded", ["--on", "F", "--grades", "2", "--weights", "linear", "--test", "graded_test"],
     {"on": "F", "grades": 2, "weights": "linear", "test": "graded_test"}, (None, "F")),
])
def test_calibrate_gives_what_semrel_calibrate_prints(reviewed, which, human, cli_args, options, kind):
    cli_args = [reviewed.get(a, a) for a in cli_args]
    options = {k: reviewed.get(v, v) if isinstance(v, str) else v for k, v in options.items()}
    printed = cli_json("calibrate", reviewed[which], reviewed[human], *cli_args)
    binary_against_graded = options.get("graded") and human == "human"  # said, as the command says it on stderr
    with pytest.warns(UserWarning, match="compared on grades 0-1") if binary_against_graded else contextlib.nullcontext():
        from_files = semrel.calibrate(reviewed[which], reviewed[human], **options)
        from_records = semrel.calibrate(read_judgments(reviewed[which]), Path(reviewed[human]), **options)
        in_memory = {k: Qrels.from_file(v).to_dict() if k == "test" else v for k, v in options.items()}  # a file was the only form
        from_dicts = semrel.calibrate(read_judgments(reviewed[which]), Qrels.from_file(reviewed[human]), **in_memory)
    assert json.loads(json_text(from_files.to_json())) == printed  # exact: the same computation
    assert json.loads(json_text(from_records.to_json())) == printed
    assert json.loads(json_text(from_dicts.to_json())) == printed
    fit, on = kind
    if fit:
        assert isinstance(from_files, ProbabilityCalibration) and from_files.fit == printed["fit"] == fit
        assert printed["pairs"] == 40 and printed["rule"]["labels"] == ("graded" if options.get("graded") else "binary")
        assert 0.05 <= from_files.rule.cut <= 0.95 and from_files.after.kappa >= from_files.before.kappa - 0.1
    else:
        assert isinstance(from_files, Calibration) and from_files.on == printed["on"] == on
        assert len(printed["thresholds"]) == options.get("grades", 3) and printed["n"] == 40
    assert ("test" in printed) == ("test" in options) == (from_files.held_out is not None)
    if "test" in options:  # pairs q30..q59 less the 10 calibrated on
        assert (printed["test"]["after"] if fit else printed["test"])["n"] == 20


def test_calibrate_output_writes_the_file_and_manifest_the_command_writes(reviewed, tmp_path):
    (tmp_path / "cli").mkdir()
    for which, human, cli_args, options in [
        ("featured", "human", [], {}),
        ("raw", "graded", ["--grades", "2", "--unlisted-as-zero"], {"grades": 2, "unlisted_as_zero": True}),
    ]:
        theirs_path, ours_path = tmp_path / "cli" / f"{which}.json", tmp_path / f"{which}.json"
        ok("calibrate", reviewed[which], reviewed[human], *cli_args, "-o", theirs_path)
        with pytest.warns(UserWarning, match="fitting thresholds on R") if which == "raw" else contextlib.nullcontext():
            result = semrel.calibrate(reviewed[which], reviewed[human], output=ours_path, **options)
        assert ours_path.read_bytes() == theirs_path.read_bytes()
        mine, theirs = (json.loads(Path(f"{p}.manifest.json").read_text()) for p in (ours_path, theirs_path))
        assert mine["params"] == theirs["params"] and mine["inputs"] == theirs["inputs"] and mine["rows"] == theirs["rows"]
        assert [i["path"] for i in mine["inputs"]] == [reviewed[which], reviewed[human]]
        assert mine["params"]["unlisted_as_zero"] == options.get("unlisted_as_zero", False) and mine["params"]["seed"] == 0
        written = json.loads(ours_path.read_text())
        if which == "featured":
            assert written["rule"] == "probability" and written["cut"] == result.rule.cut and mine["rows"] == 40
            assert written["calibration"]["refit"] == list(result.rule.refit)
        else:
            assert written == {"rule": "threshold", "on": "R", "thresholds": result.thresholds, "labels": "graded"}
            assert mine["rows"] == 40  # q40..q59 are no query of the human file
    # what `semrel.label` reads back: the same qrels as `semrel label --calibration`
    ok("label", reviewed["featured"], "--calibration", tmp_path / "featured.json", "-o", tmp_path / "cli.qrels")
    labelled = semrel.label(reviewed["featured"], calibration=tmp_path / "featured.json", warn=[].append)
    assert labelled.to_dict() == read_qrels(tmp_path / "cli.qrels").to_dict()
    # records in memory: only the human file is recorded
    semrel.calibrate(read_judgments(reviewed["featured"]), reviewed["human"], output=tmp_path / "mem.json")
    memory = json.loads((tmp_path / "mem.json.manifest.json").read_text())
    assert [i["path"] for i in memory["inputs"]] == [reviewed["human"]]
    assert (tmp_path / "mem.json").read_bytes() == (tmp_path / "featured.json").read_bytes()
    before = Path(reviewed["human"]).read_bytes()
    with pytest.raises(SemrelError, match="is an input of this command"):
        semrel.calibrate(reviewed["featured"], reviewed["human"], output=reviewed["human"])
    assert Path(reviewed["human"]).read_bytes() == before


def test_calibrate_warnings_go_to_warn_or_are_python_warnings_at_the_callers_line(reviewed):
    for which, human, text in [("p", "human", "refitting p's slope and offset (fit='anchored'); re-run `semrel judge`"),
                               ("raw", "graded", "the judgments hold no probability p (judged with a null sample of 0 chunks, "
                                                 "against a corpus with no chunk outside each query's pool, or by a semrel judge "
                                                 "older than p): fitting thresholds on R instead")]:
        heard: list[str] = []
        semrel.calibrate(reviewed[which], reviewed[human], warn=heard.append)
        assert len(heard) == 1 and text in heard[0]
        with pytest.warns(UserWarning) as caught:
            semrel.calibrate(reviewed[which], reviewed[human])
        assert [str(w.message) for w in caught] == heard and caught[0].filename == __file__
        result = run("calibrate", reviewed[which], reviewed[human])
        assert result.exit_code == 0, result.output
        flagged = heard[0].replace("(fit='anchored')", "(--fit anchored)")  # the command names its option
        assert result.stderr == f"semrel: warning: {flagged}\n"
    heard.clear()
    semrel.calibrate(reviewed["featured"], reviewed["human"], warn=heard.append)
    assert heard == []


def test_calibrate_refuses_wrong_kinds_and_bad_values(reviewed):
    judgments, human = reviewed["featured"], reviewed["human"]
    for args, kwargs, message in [
        ((3, human), {}, "judgments: give a file path or a list of Judgment, not int"),
        ((judgments, 3), {}, f"reviewed: {QRELS_KINDS}, not int"),
        ((judgments, None), {}, f"reviewed: {QRELS_KINDS}, not NoneType"),  # "None: no such file" before
        ((judgments, {"q0": {"c": 1}}), {"groups": True}, "Qrels.from_dict: give {query_id: {doc_id: grade}}, not dict of non-mappings"),
        ((judgments, human), {"on": 1}, "on: give a name, not int"),
        ((judgments, human), {"fit": 1}, "fit: give a name, not int"),
        ((judgments, human), {"graded": "yes"}, "graded: give True or False, not str"),
        ((judgments, human), {"grades": 1.5}, "grades: give a whole number of thresholds, not float"),
        ((judgments, human), {"grades": True}, "grades: give a whole number of thresholds, not bool"),
        ((judgments, human), {"test": 3}, f"test: {QRELS_KINDS}, not int"),
        ((judgments, human), {"seed": "0"}, "seed: give a whole number, not str"),
        ((judgments, human), {"output": 3}, "output: give a file path, not int"),
        ((judgments, human), {"warn": 3}, "warn: give a function taking one message, not int"),
    ]:
        with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
            semrel.calibrate(*args, **kwargs)
    for kwargs, cli_args, message, flags in [
        ({"on": "x"}, None, "on='x': choose one of p, P, R, F", None),
        ({"fit": "x"}, None, "fit='x': choose one of features, anchored, shift, platt", None),
        ({"on": "R", "weights": "cubic"}, None, "weights='cubic': choose one of none, linear, quadratic", None),
        ({"on": "R", "grades": 0}, None, "grades=0: give 1 or more thresholds", None),
        ({"on": "R", "graded": True}, ["--on", "R", "--graded"],
         "graded= applies to the probability refit; with on= P, R or F give grades= N",
         "--graded applies to the probability refit; with --on P, R or F give --grades N"),
        ({"on": "R", "fit": "anchored"}, ["--on", "R", "--fit", "anchored"],
         "fit='anchored' applies to the probability refit (on='p'); thresholds on P, R or F take grades= N",
         "--fit anchored applies to the probability refit (--on p); thresholds on P, R or F take --grades N"),
        ({"grades": 2}, ["--grades", "2"],
         "grades= and weights= apply to thresholds on P, R or F (on=); the probability refit takes graded=",
         "--grades and --weights apply to thresholds on P, R or F (--on); the probability refit takes --graded"),
        ({"test_groups": True}, ["--test-groups"],
         "test_unlisted_as_zero= and test_groups= read the test= labels: give test= too",
         "--test-unlisted-as-zero and --test-groups read the --test labels: give --test too"),
        ({"test_unlisted_as_zero": True}, ["--test-unlisted-as-zero"],
         "test_unlisted_as_zero= and test_groups= read the test= labels: give test= too",
         "--test-unlisted-as-zero and --test-groups read the --test labels: give --test too"),
        ({"weights": "linear"}, ["--weights", "linear"],  # weights= alone, on p: the refit has no thresholds to weigh
         "grades= and weights= apply to thresholds on P, R or F (on=); the probability refit takes graded=",
         "--grades and --weights apply to thresholds on P, R or F (--on); the probability refit takes --graded"),
    ]:
        with pytest.raises(UsageError, match=f"^{re.escape(message)}$"):
            semrel.calibrate(judgments, human, **kwargs)
        if cli_args:
            result = run("calibrate", judgments, human, *cli_args)
            assert result.exit_code == 2 and result.stderr == f"semrel: error: {flags}\n"
    judgment = Judgment("q0", "c", 0.5, 0.5, 0.5, "pool")
    for args, kwargs, message in [
        ((judgments, reviewed["human"]), {"test": reviewed["human"]},
         f"{reviewed['human']}: no judged pair is left once the calibration pairs are set aside"),
        (([], human), {}, "judgments: the list is empty; give at least one Judgment"),
        (([judgment, judgment], human), {}, "judgments: item 1: pair ('q0', 'c') is given twice (first as item 0)"),
        (([judgment], human), {"on": "R"}, "the one reviewed pair is non-relevant: a fit of thresholds needs both"),
    ]:
        with pytest.raises(ValidationError, match=f"^{re.escape(message)}"):
            semrel.calibrate(*args, **kwargs)


def test_a_sweep_past_every_score_says_each_threshold_labels_every_pair_alike(sweep_files):
    """--on R --from 1.5 --to 3 gave all-zero curves, a blank tau and "better at 5: neither" without a word."""
    result = run("sensitivity", sweep_files["raw"], sweep_files["first"], sweep_files["second"], "--on", "R", "--from", "1.5",
                 "--to", "3", "--at", "2", "--permutations", "100")
    assert result.exit_code == 0 and "every threshold (1.5 to 3) lies beyond the judgments' R (" in result.stderr, result.stderr
