"""`semrel label`: thresholds and grades on hand-made judgments; no model is involved."""

from __future__ import annotations

import json
import sys

import pytest

import semrel
from helpers import run
from semrel.errors import UsageError
from semrel.formats import read_qrels
from semrel.records import Judgment

ROWS = [  # query, chunk, P, R, F
    ("q1", "a", 0.90, 0.80, 0.85),
    ("q1", "b", 0.20, 0.50, 0.29),
    ("q1", "c", 0.10, 0.30, 0.15),
    ("q2", "a", 0.50, 0.65, 0.56),
    ("q2", "d", 0.70, 0.40, 0.51),
]


@pytest.fixture
def judgments(tmp_path):
    path = tmp_path / "judgments.jsonl"
    path.write_text("".join(json.dumps({"query_id": q, "chunk_id": c, "P": p, "R": r, "F": f, "source": "bm25"}) + "\n"
                            for q, c, p, r, f in ROWS))
    (tmp_path / "judgments.jsonl.manifest.json").write_text(json.dumps({"params": {"model": "all-MiniLM-L6-v2", "layer": 6}}))
    return path


def _run(*args):
    result = run(*args)
    return result.exit_code, result.output


def test_binary_threshold_on_recall_keeps_every_pair(judgments, tmp_path):
    code, text = _run("label", judgments, "-o", tmp_path / "qrels.txt", "--threshold", 0.5)
    assert code == 0, text
    assert (tmp_path / "qrels.txt").read_text().splitlines() == [
        "q1 0 a 1", "q1 0 b 1", "q1 0 c 0", "q2 0 a 1", "q2 0 d 0",  # 0.50 reaches 0.5; below it is judged 0
    ]
    manifest = json.loads((tmp_path / "qrels.txt.manifest.json").read_text())
    assert manifest["params"]["on"] == "R" and manifest["params"]["thresholds"] == [0.5]
    assert manifest["params"]["grade_counts"] == {"0": 2, "1": 3} and manifest["params"]["judge"]["layer"] == 6
    assert "3 relevant, 2 not" in text


def test_grades_count_the_thresholds_reached(judgments, tmp_path):
    code, text = _run("label", judgments, "-o", tmp_path / "qrels.txt", "--on", "P", "--grades", "0.2,0.5,0.9")
    assert code == 0, text
    assert read_qrels(tmp_path / "qrels.txt").to_dict() == {"q1": {"a": 3, "b": 1, "c": 0}, "q2": {"a": 2, "d": 2}}


def test_python_api_matches_the_command(judgments):
    rows = [Judgment(q, c, p, r, f) for q, c, p, r, f in ROWS]
    assert semrel.label(rows, on="F", threshold=0.5).to_dict() == {"q1": {"a": 1, "b": 0, "c": 0}, "q2": {"a": 1, "d": 1}}
    assert semrel.label(judgments, on="F", grades=[0.3, 0.55]).to_dict() == {"q1": {"a": 2, "b": 0, "c": 0}, "q2": {"a": 2, "d": 1}}


@pytest.mark.slow
def test_labelling_loads_no_model(judgments, tmp_path):
    import subprocess

    code = ("import sys, semrel; semrel.label(sys.argv[1], sys.argv[2]); "
            "assert 'torch' not in sys.modules and 'transformers' not in sys.modules")
    subprocess.run([sys.executable, "-c", code, str(judgments), str(tmp_path / "q.txt")], check=True)


@pytest.mark.parametrize("args, expected", [
    (["--grades", "0.5,0.4"], "strictly increasing"),
    (["--grades", "0.5,0.5"], "strictly increasing"),
    (["--grades", "0.4,x"], "comma-separated numbers"),
    (["--threshold", "0.5", "--grades", "0.4,0.6"], "not both"),
])
def test_bad_thresholds_are_one_clear_line(judgments, tmp_path, args, expected):
    code, text = _run("label", judgments, "-o", tmp_path / "qrels.txt", *args)
    assert code == UsageError.exit_code and expected in text and text.count("\n") == 1
    assert not (tmp_path / "qrels.txt").exists()


@pytest.mark.parametrize("line, expected", [
    ('{"query_id": "q1", "chunk_id": "b", "P": 0.1, "F": 0.2}', "judgments.jsonl:2: missing field 'R'"),
    ('{"query_id": "q1", "chunk_id": "b", "P": 0.1, "R": "high", "F": 0.2}', "judgments.jsonl:2: field 'R' should be"),
    ('{"query_id": "q1", "chunk_id": "a", "P": 0.1, "R": 0.2, "F": 0.2}', "judgments.jsonl:2: pair ('q1', 'a') already judged on line 1"),
    ("not json", "judgments.jsonl:2: invalid JSON"),
])
def test_bad_judgments_name_file_and_line(tmp_path, line, expected):
    path = tmp_path / "judgments.jsonl"
    path.write_text('{"query_id": "q1", "chunk_id": "a", "P": 0.1, "R": 0.2, "F": 0.15}\n' + line + "\n")
    code, text = _run("label", path, "-o", tmp_path / "qrels.txt")
    assert code == 1 and expected in text and text.count("\n") == 1
