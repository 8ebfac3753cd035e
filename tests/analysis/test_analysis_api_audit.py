"""Mutation audit of analysis/api.py: behaviours the other tests left unpinned (each test names the mutant ids it kills).

`semrel.sensitivity`, `semrel.calibrate` and `semrel.agree` check every argument's kind before any work, pass each one on
to sensitivity.py, calibrate.py and agreement.py unchanged (a parameter dropped or defaulted there would be accepted and
ignored), record the files they read in the manifests they write, and tell warnings from the caller's line. Each value
asserted here is worked out in the comment, or is what the library's own function gives for the same arguments."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import semrel
from semrel.analysis.agreement import label_agreement
from semrel.errors import UsageError, ValidationError
from semrel.formats.trec import read_judgment_groups
from semrel.judging import labels
from semrel.records import Qrels

QUERIES = [f"q{i:02d}" for i in range(12)]
FIRST = "".join(f"{q} Q0 {q}-a 1 1.0 first\n" for q in QUERIES)  # as tests/test_api_analysis.py: a (R 0.57) first
SECOND = "".join(f"{q} Q0 {q}-z 1 2.0 second\n{q} Q0 {q}-b 2 1.0 second\n" for q in QUERIES)  # z (0.30), then b (0.83)
QUICK = {"permutations": 200, "bootstrap": 200}


def judgment_rows(chunks: dict[str, float]) -> str:
    return "".join(json.dumps({"query_id": q, "chunk_id": f"{q}-{c}", "P": 0.5, "R": r, "F": 0.5, "source": "pool"}) + "\n"
                   for q in QUERIES for c, r in chunks.items())


@pytest.fixture
def sweep(write):
    """Judgments of P, R, F only (swept on R) and two runs: at 0.5 'first' finds a relevant chunk at rank 1 (RR 1) and
    'second' at rank 2 (RR 0.5); at 0.7 only b (0.83) is relevant: RR 0 and 0.5."""
    return {"judgments": write("j.jsonl", judgment_rows({"a": 0.57, "b": 0.83, "z": 0.30})),
            "runs": [write("first.run", FIRST), write("second.run", SECOND)]}


def manifest(path) -> dict:
    return json.loads(Path(f"{path}.manifest.json").read_text())


# ---------------------------------------------------------------- sensitivity


def test_sensitivity_refuses_a_correction_of_the_wrong_kind_by_name(sweep):
    """A9: correction=1 reached StatSettings, which refused it as an unknown correction, not as a wrong kind."""
    with pytest.raises(TypeError, match=r"^correction: give a name, not int$"):
        semrel.sensitivity(sweep["judgments"], sweep["runs"], "RR", correction=1, **QUICK)


def test_sensitivity_takes_at_zero_as_a_threshold_and_passes_rel_level_on(sweep):
    """at=0.0 is a chosen threshold, not `no at` (A12 turned it into the default 0.7, off this grid). rel_level=0 counts
    every judged pair relevant, so both runs find one at rank 1 at every threshold (A16 evaluated at level 1). rel_level=2
    asks for grade 2 and up, which the binary labels give no pair: refused (every value had been 0)."""
    zero = semrel.sensitivity(sweep["judgments"], sweep["runs"], "RR", thresholds=[0.0, 0.5], at=0.0, warn=[].append, **QUICK)
    assert zero.at == 0.0
    one = semrel.sensitivity(sweep["judgments"], sweep["runs"], "RR", thresholds=[0.5, 0.7], warn=[].append, **QUICK)
    every = semrel.sensitivity(sweep["judgments"], sweep["runs"], "RR", thresholds=[0.5, 0.7], rel_level=0, warn=[].append, **QUICK)
    assert one.values.tolist() == [[[1.0], [0.5]], [[0.0], [0.5]]]  # [threshold][run][measure]
    assert every.values.tolist() == [[[1.0], [1.0]], [[1.0], [1.0]]]
    with pytest.raises(UsageError, match="rel_level=2: a sweep labels pairs 0 or 1"):
        semrel.sensitivity(sweep["judgments"], sweep["runs"], "RR", thresholds=[0.5, 0.7], rel_level=2, warn=[].append, **QUICK)


def test_curves_name_runs_given_as_a_tuple_or_as_paths(sweep, tmp_path):
    """The manifest names every run that is a file: a tuple is as much a list of runs as a list (A1 took the tuple for one
    run, naming none), and a Path as much a file as a str (A2 named only str)."""
    first, second = sweep["runs"]
    semrel.sensitivity(sweep["judgments"], (Path(first), second), "RR", thresholds=[0.5, 0.7], curves=tmp_path / "c.csv",
                       warn=[].append, **QUICK)
    assert [i["path"] for i in manifest(tmp_path / "c.csv")["inputs"]] == [sweep["judgments"], first, second]


def test_curves_name_runs_given_as_a_generator(sweep, tmp_path):
    """runs: Iterable[RunLike]. A generator of paths was evaluated like a list of them, but its files went unrecorded
    (the manifest's paths were looked for in the generator after the runs had used it up)."""
    first, second = sweep["runs"]
    semrel.sensitivity(sweep["judgments"], (path for path in (first, second)), "RR", thresholds=[0.5, 0.7], curves=tmp_path / "c.csv",
                       warn=[].append, **QUICK)
    assert [i["path"] for i in manifest(tmp_path / "c.csv")["inputs"]] == [sweep["judgments"], first, second]


def test_a_calibration_fitted_to_another_judge_is_refused_for_these_judgments(write):
    """The judgments' file is passed on, so the calibration's `judged_with` is checked against the judge in their manifest
    (A14 passed no file: the refit was swept on another judge's p without a word)."""
    judgments = write("j.jsonl", judgment_rows({"a": 0.57, "b": 0.83}))
    write("j.jsonl.manifest.json", json.dumps({"params": {"model": "judge-x", "layer": 9, "idf": False, "rescale": False}}))
    rule = labels.ProbabilityRule(cut=0.3, calibration={"fit": "features"}, refit=(0.5, -4.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0))
    calibration = write("cal.json", json.dumps({**rule.params(), "judged_with": {"model": "judge-y", "layer": 9, "idf": False}}))
    runs = [write("first.run", FIRST), write("second.run", SECOND)]
    message = (f"{calibration} was fitted on judgments of judge-y (layer 9, idf False), but {judgments} are of judge-x (layer 9, "
               "idf False): its labels do not carry over to other scores")
    with pytest.raises(ValidationError, match=f"^{re.escape(message)}"):
        semrel.sensitivity(judgments, runs, "RR", calibration=calibration, **QUICK)


# ---------------------------------------------------------------- calibrate


@pytest.fixture
def human(write):
    """30 queries of two judged chunks, c and d (R drawn); the human file lists c alone, relevant where R >= 0.5; held-out
    labels of q15..q29 in the same way; three assessors cutting R at 0.4, 0.5 and 0.6, whose majority is the 0.5 cut."""
    r = np.random.default_rng(3).uniform(size=(30, 2))
    rows = [{"query_id": f"q{i}", "chunk_id": c, "P": 0.0, "R": float(r[i, k]), "F": 0.0, "source": ""} for i in range(30)
            for k, c in enumerate("cd")]
    return {
        "judgments": write("j.jsonl", "".join(json.dumps(row) + "\n" for row in rows)),
        "human": write("h.qrels", "".join(f"q{i} 0 c {int(r[i, 0] >= 0.5)}\n" for i in range(30))),
        "first": write("first.qrels", "".join(f"q{i} 0 c {int(r[i, 0] >= 0.5)}\n" for i in range(15))),
        "test": write("test.qrels", "".join(f"q{i} 0 c {int(r[i, 0] >= 0.5)}\n" for i in range(15, 30))),
        "people": write("people.qrels", "".join(f"q{i} {who} c {int(r[i, 0] >= cut)}\n"
                                                for who, cut in (("ann", 0.4), ("bob", 0.5), ("cat", 0.6)) for i in range(30))),
    }


@pytest.mark.parametrize("kwargs, message", [
    ({"weights": 1}, "weights: give a name, not int"),  # A24
    ({"groups": "yes"}, "groups: give True or False, not str"),  # A25
    ({"test_groups": "yes"}, "test_groups: give True or False, not str"),  # A26
    ({"unlisted_as_zero": "yes"}, "unlisted_as_zero: give True or False, not str"),  # A27
    ({"test_unlisted_as_zero": "yes"}, "test_unlisted_as_zero: give True or False, not str"),  # A28
])
def test_calibrate_refuses_each_argument_of_the_wrong_kind_by_name(human, kwargs, message):
    with pytest.raises(TypeError, match=f"^{re.escape(message)}$"):
        semrel.calibrate(human["judgments"], human["human"], on="R", **kwargs)


def test_calibrate_refuses_empty_weights_rather_than_taking_the_default(human):
    """weights='' names no weighting: refused as calibrate_labels refuses any other name (A39 read '' as None, unweighted)."""
    with pytest.raises(UsageError, match=r"^weights='': choose one of none, linear, quadratic$"):
        semrel.calibrate(human["judgments"], human["human"], on="R", weights="")


def test_unlisted_as_zero_and_its_test_twin_each_reach_their_own_labels(human):
    """The human file lists c of each query: with unlisted_as_zero=True each query's judged d counts as grade 0, 60 pairs
    instead of 30; test_unlisted_as_zero does the same to the held-out file, 30 pairs of q15..q29 instead of 15. A29 gave
    each flag to the other's labels."""
    plain = semrel.calibrate(human["judgments"], human["human"], on="R")
    zeros = semrel.calibrate(human["judgments"], human["human"], on="R", unlisted_as_zero=True)
    assert (plain.agreement.n, zeros.agreement.n) == (30, 60)
    held = semrel.calibrate(human["judgments"], human["first"], on="R", test=human["test"], test_unlisted_as_zero=True)
    assert (held.agreement.n, held.held_out.n) == (15, 30)


def test_calibrate_fits_to_the_assessors_majority_and_records_groups_seed_and_judge(human, write, tmp_path):
    """groups=True reads people.qrels as assessors (without it, q0 c is listed three times and refused) and fits to their
    majority, the 0.5 cut of h.qrels: the same thresholds (A31 read it as one qrels). The written rule records the judge
    of the judgments' manifest (A35 passed no judgments file) and its manifest groups=True and seed=3 (A36, A34)."""
    write("j.jsonl.manifest.json", json.dumps({"params": {"model": "judge-x", "layer": 9, "idf": False, "rescale": False}}))
    majority = semrel.calibrate(human["judgments"], human["human"], on="R")
    grouped = semrel.calibrate(human["judgments"], human["people"], on="R", groups=True, seed=3, output=tmp_path / "cal.json")
    assert grouped.thresholds == majority.thresholds and grouped.agreement.n == 30
    assessors = {who: qrels for who, qrels in read_judgment_groups(human["people"])}  # {assessor: qrels}, as agree takes them
    from_dict = semrel.calibrate(human["judgments"], assessors, on="R", groups=True)
    assert from_dict.thresholds == majority.thresholds and from_dict.agreement.n == 30
    written = json.loads((tmp_path / "cal.json").read_text())
    assert written["judged_with"] == {"model": "judge-x", "model_fingerprint": None, "layer": 9, "idf": False, "rescale": False}
    params = manifest(tmp_path / "cal.json")["params"]
    assert (params["groups"], params["seed"], params["unlisted_as_zero"]) == (True, 3, False)


# ---------------------------------------------------------------- agree

REF = {"q1": {"a": 1, "b": 0, "c": 1}, "q2": {"a": 0, "b": 1, "c": 1}, "q3": {"a": 1, "b": 1, "d": 0}}
TEST = {"q1": {"a": 1, "b": 1, "c": 0}, "q2": {"a": 0, "b": 1}, "q3": {"a": 1, "b": 0, "c": 1}}  # 7 pairs in common, 10 listed
RUNS = {"A": {"q1": {"a": 3, "b": 2, "c": 1}, "q2": {"b": 3, "c": 2}, "q3": {"a": 3, "c": 2}},
        "B": {"q1": {"c": 3, "b": 2}, "q2": {"a": 3, "c": 2}, "q3": {"d": 3, "b": 2}}}


@pytest.mark.parametrize("kwargs, error, message", [
    ({"warn": 3}, TypeError, "warn: give a function taking one message, not int"),  # A41: no warning here, so 3 was never called
    ({"groups": "yes"}, TypeError, "groups: give True or False, not str"),  # A42
    ({"unlisted_as_zero": "yes"}, TypeError, "unlisted_as_zero: give True or False, not str"),  # A43
    ({"seed": -1}, UsageError, "seed=-1: give 0 or more"),  # A44: numpy's generator refused it, naming no parameter
    ({"ref": 3}, TypeError, "ref: give a Qrels, a dict {query: {doc: grade}}, a pandas DataFrame or a file path, not int"),  # A48
    ({"test": 3}, TypeError, "test: give a Qrels, a dict {query: {doc: grade}}, a pandas DataFrame or a file path, not int"),  # A55
    ({"ref": {"ann": REF, "bob": 3}, "groups": True}, TypeError,  # A47: which assessor's qrels is wrong
     "ref['bob']: give a Qrels, a dict {query: {doc: grade}}, a pandas DataFrame or a file path, not int"),
    ({"runs": []}, UsageError, "runs: none given; give a run, a list of runs or {name: run}"),  # A51: [] gave no rankings, silently
    ({"runs": [], "measures": ["P@1"]}, UsageError, "runs: none given; give a run, a list of runs or {name: run}"),  # A49, A50
])
def test_agree_refuses_wrong_arguments_by_name(kwargs, error, message):
    with pytest.raises(error, match=f"^{re.escape(message)}$"):
        semrel.agree(**{"ref": REF, "test": TEST, **kwargs})


def test_agree_ranks_runs_by_the_measures_given_or_its_own_default():
    """Without measures= the rankings are AGREE_MEASURES' four (A52 took evaluate's six), with measures= and runs= the ones
    given (A50 refused measures= whenever given)."""
    default = semrel.agree(REF, TEST, RUNS, warn=[].append)
    assert [r.measure for r in default.rankings] == ["nDCG@10", "AP", "RR", "P@10"]
    given = semrel.agree(REF, TEST, RUNS, ["P@1"], warn=[].append)
    assert [r.measure for r in given.rankings] == ["P@1"]


def test_agree_passes_unlisted_as_zero_and_the_seed_on():
    """unlisted_as_zero=True compares the 10 pairs either lists, not the 7 both do (A53); the bootstrap interval is the
    one label_agreement draws with the seed given, here 40 pairs whose interval moves with it (A54 drew with seed 0)."""
    assert semrel.agree(REF, TEST, warn=[].append).labels.n == 7
    assert semrel.agree(REF, TEST, unlisted_as_zero=True, warn=[].append).labels.n == 10
    rng = np.random.default_rng(9)
    ref = {f"q{i}": {"d": int(g)} for i, g in enumerate(rng.integers(0, 2, 40))}
    test = {q: {"d": g if rng.uniform() < 0.7 else 1 - g} for q, docs in ref.items() for g in docs.values()}
    seeded = semrel.agree(ref, test, seed=5).labels
    expected = label_agreement(Qrels.from_dict(ref), Qrels.from_dict(test), False, seed=5)
    assert (seeded.low, seeded.high) == (expected.low, expected.high)
    assert (seeded.low, seeded.high) != (semrel.agree(ref, test).labels.low, semrel.agree(ref, test).labels.high)


def test_agree_reads_a_plain_qrels_file_as_one_qrels_without_groups(write):
    """Without groups=True a qrels file is one assessor's labels, compared as the dict it holds (A45 read every file as
    assessor groups: its one assessor '0' was refused as too few)."""
    lines = "".join(f"{q} 0 {d} {g}\n" for q, docs in REF.items() for d, g in docs.items())
    from_file = semrel.agree(write("ref.qrels", lines), TEST, warn=[].append)
    assert from_file.groups is None and from_file.to_json() == semrel.agree(REF, TEST, warn=[].append).to_json()
    assert from_file.labels.n == 7


def test_assessors_named_by_numbers_are_named_as_text():
    """{1: qrels, 2: qrels}: the names are made text, as a qrels_jg file's second column is (A46 kept the ints)."""
    grouped = semrel.agree({1: REF, 2: TEST}, TEST, groups=True, warn=[].append)
    assert [name for name, _ in grouped.groups.each] == ["1", "2"]


def test_agree_warns_from_the_callers_line():
    """One side gives both compared pairs grade 1: kappa is 0 by construction, warned from this file (A56 warned from
    analysis/api.py; A59 dropped it)."""
    with pytest.warns(UserWarning, match="^one of the qrels gives all 2 compared pairs grade 1: kappa is 0 by construction") as caught:
        semrel.agree({"q1": {"a": 1, "b": 1}}, {"q1": {"a": 1, "b": 0}})
    assert len(caught) == 1 and caught[0].filename == __file__
