"""judgments.jsonl rows written and read back: p and features kept as written, edge values taken (mutation audit)."""

from __future__ import annotations

import json
import re

import pytest

from semrel.errors import FormatError
from semrel.formats.judgments import read_judgments, write_judgments
from semrel.records import Judgment


def test_a_probability_of_zero_and_empty_features_survive_a_round_trip(tmp_path):
    """p = 0.0 (a pair the judge is sure is not relevant) was written or read as no p at all, as if an older semrel had
    judged it; the row's bytes are semrel's compact JSON in field order."""
    judgments = [Judgment("q1", "c1", 1.0, 0.0, 0.5, "bm25", p=0.0, features={}),
                 Judgment("q1", "c2", 0.25, 0.5, 0.75, "", p=1.0, features={"P": 0.25})]
    path = tmp_path / "j.jsonl"
    assert write_judgments(judgments, path) == 2
    assert path.read_text().splitlines() == [
        '{"query_id":"q1","chunk_id":"c1","P":1.0,"R":0.0,"F":0.5,"source":"bm25","p":0.0,"features":{}}',
        '{"query_id":"q1","chunk_id":"c2","P":0.25,"R":0.5,"F":0.75,"source":"","p":1.0,"features":{"P":0.25}}',
    ]
    assert read_judgments(path) == judgments


@pytest.mark.parametrize("extra, message", [
    ({"features": {"P": True}}, "features must map names to finite numbers, found 'P': True"),
    ({"features": {"P": 0.5, "R_max": "0.5"}}, "features must map names to finite numbers, found 'R_max': '0.5'"),
    ({"features": {"P": None}}, "features must map names to finite numbers, found 'P': None"),
    ({"features": {"P": float("nan")}}, "features must map names to finite numbers, found 'P': nan"),
    ({"p": 1.5}, "p must be a probability between 0 and 1, found 1.5"),
    ({"p": -0.25}, "p must be a probability between 0 and 1, found -0.25"),
    ({"R": 1.5}, "P, R and F are BERTScores, at most 1; found 1.5"),
    ({"p": True}, "field 'p' should be int or float, found bool"),
])
def test_a_bad_probability_or_feature_names_its_line(write, extra, message):
    """true or the text "0.5" taken as the feature's number, a p outside [0, 1] or a score past 1 was read as a valid judgment."""
    good = {"query_id": "q1", "chunk_id": "c1", "P": 0.5, "R": 0.75, "F": 0.6, "source": "s"}
    path = write("j.jsonl", json.dumps(good) + "\n\n" + json.dumps({**good, "chunk_id": "c2", **extra}) + "\n")
    with pytest.raises(FormatError, match=re.escape(f"j.jsonl:3: {message}")) as caught:
        read_judgments(path)
    assert caught.value.line == 3
