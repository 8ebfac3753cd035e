"""judgments.jsonl: read with line-numbered errors."""

from __future__ import annotations

import json
import re

import pytest

from review_helpers import write_pool
from semrel.errors import FormatError
from semrel.formats.judgments import read_judgments
from semrel.records import Judgment

GOOD = {"query_id": "q1", "chunk_id": "c1", "P": 0.5, "R": 0.75, "F": 0.6, "source": "bm25,dense"}


def test_reads_pairs_and_defaults_the_source(write):
    path = write("j.jsonl", json.dumps(GOOD) + "\n\n" + json.dumps({**GOOD, "chunk_id": 7, "source": None}) + "\n")
    assert read_judgments(path) == [
        Judgment("q1", "c1", 0.5, 0.75, 0.6, "bm25,dense"), Judgment("q1", "7", 0.5, 0.75, 0.6, ""),
    ]


@pytest.mark.parametrize("second, message", [
    ({**GOOD}, "pair ('q1', 'c1') already judged on line 1"),
    ({k: v for k, v in GOOD.items() if k != "R"} | {"chunk_id": "c2"}, "missing field 'R'"),
    ({**GOOD, "chunk_id": "c2", "F": "high"}, "field 'F' should be int or float"),
    ({**GOOD, "chunk_id": "c2", "P": float("nan")}, "finite"),
])
def test_errors_name_the_line(write, second, message):
    path = write("j.jsonl", json.dumps(GOOD) + "\n" + json.dumps(second) + "\n")
    with pytest.raises(FormatError, match=re.escape(message)) as caught:
        read_judgments(path)
    assert caught.value.line == 2


def test_review_start_names_a_chunk_missing_from_the_corpus(tmp_path, cli):
    pool = write_pool(tmp_path)
    with open(pool["judgments"], "a") as out:
        out.write(json.dumps({**GOOD, "chunk_id": "ghost"}) + "\n")
    result = cli("review", "start", "--db", str(tmp_path / "r.sqlite"), "--reviewer", "a", "--no-highlight",
                 "--judgments", pool["judgments"], "--labels", pool["labels"], "--corpus", pool["corpus"],
                 "--golden", pool["golden"], "--thresholds", "0.5", input="q")
    assert result.exit_code == 1
    assert "chunk 'ghost' (query 'q1') is not in" in result.stderr and result.stderr.count("\n") == 1
    bad = cli("review", "start", "--db", str(tmp_path / "s.sqlite"), "--reviewer", "a", "--no-highlight",
              "--judgments", pool["judgments"], "--labels", pool["labels"], "--corpus", pool["corpus"],
              "--golden", pool["golden"], "--thresholds", "0.6,0.5")
    assert bad.exit_code == 2 and "increasing" in bad.stderr
