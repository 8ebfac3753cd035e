"""`semrel calibrate` on the inputs an audit found mishandled: judgments of which some hold no p, a pair the human
file grades twice, `-o -`, and more thresholds asked for than the human labels have grades."""

from __future__ import annotations

import json

import numpy as np
import pytest

from helpers import assert_one_error, run
from semrel.analysis.calibrate import calibrate
from semrel.errors import UsageError, ValidationError
from semrel.formats import read_qrels


def _line(query: str, r: float, p: float | None = None) -> str:
    return json.dumps({"query_id": query, "chunk_id": "c", "P": r, "R": r, "F": r, "source": "bm25",
                       **({"p": p} if p is not None else {})}) + "\n"


def test_a_refit_uses_the_pairs_that_hold_p_and_says_how_many_do_not(write, tmp_path):
    """Three queries without a null sample (no p) used to turn the whole calibration into thresholds on R."""
    rng = np.random.default_rng(6)
    p = rng.uniform(0.02, 0.98, 40)
    truth = (rng.uniform(size=40) < p).astype(int)
    judgments = write("j.jsonl", "".join(_line(f"q{i}", 0.5, float(v)) for i, v in enumerate(p))
                      + "".join(_line(f"n{i}", r) for i, r in enumerate([0.9, 0.75, 0.3])))
    human = write("h.qrels", "".join(f"q{i} 0 c {t}\n" for i, t in enumerate(truth)) + "n0 0 c 1\nn1 0 c 0\nn2 0 c 0\n")
    result = run("calibrate", judgments, human, "--fit", "anchored", "-o", tmp_path / "cal.json")
    assert result.exit_code == 0, result.output
    (warning,) = result.stderr.splitlines()
    assert "3 of 43 judgments hold no probability p" in warning and "no null sample" in warning
    assert "the refit and its cut use the other 40 (3 reviewed pairs left out)" in warning
    written = json.loads((tmp_path / "cal.json").read_text())
    assert written["rule"] == "probability" and written["calibration"]["pairs"] == 40
    assert "over the 40 judged pairs" in written["calibration"]["cut_from"]
    result = run("label", judgments, "--calibration", tmp_path / "cal.json", "-o", tmp_path / "q.txt")
    assert result.exit_code == 0, result.output
    got = read_qrels(tmp_path / "q.txt").to_dict()
    assert [got[f"n{i}"]["c"] for i in range(3)] == [1, 1, 0]  # R >= 0.70
    assert [got[f"q{i}"]["c"] for i in range(40)] == (p >= written["thresholds"][0]).astype(int).tolist()


def test_a_pair_the_human_file_grades_twice_is_refused_as_eval_refuses_it(write, tmp_path):
    """The last of two conflicting grades used to win, silently."""
    judgments = write("j.jsonl", "".join(_line(f"q{i}", r, r) for i, r in enumerate([0.2, 0.5, 0.7, 0.9])))
    good = write("good.qrels", "q0 0 c 0\nq3 0 c 1\n")
    twice = write("twice.qrels", "q0 0 c 0\nq1 0 c 1\nq0 0 c 1\nq2 0 c 0\n")
    expected = f"{twice}:3: duplicate judgment for query 'q0' and doc 'c'"
    for args in (["--on", "R"], ["--fit", "anchored"]):
        assert_one_error(run("calibrate", judgments, twice, *args, "-o", tmp_path / "cal.json"), expected)
        assert_one_error(run("calibrate", judgments, good, "--test", twice, *args, "-o", tmp_path / "cal.json"), expected)
    assert not (tmp_path / "cal.json").exists()


def test_the_calibration_is_not_written_to_stdout(write):
    """It went there with the summary, which made neither readable."""
    judgments = write("j.jsonl", "".join(_line(f"q{i}", r, r) for i, r in enumerate([0.2, 0.5, 0.7, 0.9])))
    human = write("h.qrels", "q0 0 c 0\nq3 0 c 1\n")
    result = run("calibrate", judgments, human, "-o", "-")
    assert_one_error(result, "give -o a file name, not '-'", code=UsageError.exit_code)
    assert result.stdout == ""


def test_more_thresholds_than_the_human_labels_have_grades_are_refused(write, tmp_path):
    """--grades 3 on binary labels used to write thresholds for grades 2 and 3 above every score."""
    judgments = write("j.jsonl", "".join(_line(f"q{i}", r) for i, r in enumerate([0.2, 0.5, 0.7, 0.9])))
    human = write("h.qrels", "q0 0 c 0\nq1 0 c 0\nq2 0 c 1\nq3 0 c 1\n")
    assert_one_error(run("calibrate", judgments, human, "--on", "R", "--grades", "3", "-o", tmp_path / "cal.json"),
                     "3 thresholds asked for, but the human labels' top grade is 1")
    assert not (tmp_path / "cal.json").exists()
    with pytest.raises(ValidationError, match="top grade is 2: ask for 2 at most"):
        calibrate(np.array([0.1, 0.4, 0.6, 0.9]), np.array([0, 1, 2, 2]), 3)
    assert len(calibrate(np.array([0.1, 0.4, 0.6, 0.9]), np.array([0, 1, 2, 2]), 2).thresholds) == 2
