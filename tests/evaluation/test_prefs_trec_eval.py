"""The preference measures on random groups, against trec_eval's own output for them (prefs_trec_eval.json
says how it was made): `semrel eval -f trec` must print it byte for byte. trec_eval's test suite has one
file of each preference format; these reach what it does not, *_Rnonrel's recount with negative values and
unretrieved upper documents among them."""

from __future__ import annotations

import difflib
import json
from pathlib import Path

import pytest

CASES = json.loads((Path(__file__).with_name("prefs_trec_eval.json")).read_text(encoding="utf-8"))["cases"]


@pytest.mark.parametrize("case", CASES, ids=[f"{i}-{c['format']}" for i, c in enumerate(CASES)])
def test_preference_measures_equal_trec_eval(cli, tmp_path, case):
    (tmp_path / "judgments.txt").write_text(case["judgments"])
    (tmp_path / "run.txt").write_text(case["run"])
    depth = ["-M", str(case["depth"])] if case["depth"] else []
    result = cli("eval", tmp_path / "judgments.txt", tmp_path / "run.txt", "-c", "-q", "-m", "all_prefs", "-R", case["format"],
                 *depth, "-f", "trec")
    assert result.exit_code == 0, result.output
    diff = difflib.unified_diff(case["trec_eval"].splitlines(), result.stdout.splitlines(), "trec_eval", "semrel", lineterm="", n=0)
    assert result.stdout == case["trec_eval"], "\n".join(list(diff)[:40])
