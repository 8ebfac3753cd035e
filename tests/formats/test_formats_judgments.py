"""judgments.jsonl: read with line-numbered errors."""

from __future__ import annotations

import json
import re

import pytest

import semrel
from review_helpers import write_pool
from semrel.errors import FormatError, ValidationError
from semrel.formats.judgments import read_judgment_columns, read_judgments
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


@pytest.mark.parametrize("reader", [read_judgments, read_judgment_columns])
@pytest.mark.parametrize("lines, line, message", [
    (['c1', 'c2', 'c1', 'c3', '{"bad": 1}'], 3, "pair ('q1', 'c1') already judged on line 1"),  # before a later line's error
    (['c1', '{"bad": 1}', 'c2', 'c1'], 2, "missing field 'query_id'"),  # a later repeat is not reached
    (['c1', 'c2', '{"chunk_id": "c2", "P": "x"}'], 3, "pair ('q1', 'c2') already judged on line 2"),  # the line's own repeat first
    (['c1', 'c2', 'c2', 'not json'], 3, "pair ('q1', 'c2') already judged on line 2"),
    (['c1', 'c2', 'c3', 'c2', 'c1'], 4, "pair ('q1', 'c2') already judged on line 2"),  # the first line that repeats one
    (['c1', 'c1', 'c1'], 2, "pair ('q1', 'c1') already judged on line 1"),
])
def test_a_repeated_pair_is_reported_where_a_check_line_by_line_finds_it(write, reader, lines, line, message):
    """Repeats are found from the pairs' hashes once the lines are read: the error must still be the first a reader going
    line by line meets, a repeat before another line's error included."""
    text = "".join((json.dumps({**GOOD, "chunk_id": c}) if c.startswith("c") else
                    json.dumps({**GOOD, **json.loads(c)}) if c.startswith("{") and "P" in c else c) + "\n" for c in lines)
    with pytest.raises(FormatError, match=re.escape(message)) as caught:
        reader(write("j.jsonl", text))
    assert caught.value.line == line


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


def test_pairs_whose_hashes_collide_are_no_repeat():
    """Equal hashes only make pairs suspects: they are compared by their ids, and different ones pass."""
    from array import array

    from semrel.formats.judgments import _no_repeat

    _no_repeat("j.jsonl", array("q", [5, 7, 5, 5]), array("q", [1, 2, 3, 4]), ["q1", "q1", "q2", "q1"], ["a", "b", "a", "c"])
    with pytest.raises(FormatError, match=re.escape("j.jsonl:4: pair ('q1', 'a') already judged on line 1")):
        _no_repeat("j.jsonl", array("q", [5, 7, 5, 5]), array("q", [1, 2, 3, 4]), ["q1", "q1", "q2", "q1"], ["a", "b", "a", "a"])


@pytest.mark.parametrize("field, message", [
    ({"R": 10**400}, "P, R and F must be finite numbers"),
    ({"P": -(10**400)}, "P, R and F must be finite numbers"),
    ({"p": 10**400}, "p must be a probability between 0 and 1, found inf"),
    ({"features": {"lenratio": 10**400, "with_gold": 1}}, "features must map names to finite numbers, found 'lenratio': inf"),
])
def test_a_whole_number_past_a_floats_range_is_one_error_naming_its_line(write, cli, field, message):
    """JSON holds integers of any size: 10**400 as a score or a feature raised an OverflowError (a traceback from
    `semrel label`, and from semrel.label given records) where NaN gets one line."""
    path = write("j.jsonl", json.dumps(GOOD) + "\n" + json.dumps({**GOOD, "chunk_id": "c2", **field}) + "\n")
    for reader in (read_judgments, read_judgment_columns):
        with pytest.raises(FormatError, match=re.escape(message)) as caught:
            reader(path)
        assert caught.value.line == 2
    result = cli("label", str(path), "-o", str(path) + ".qrels")
    assert result.exit_code == 1 and result.stderr == f"semrel: error: {path}:2: {message}\n"
    record = {k: v for k, v in {**GOOD, **field}.items() if k not in ("query_id", "chunk_id", "source")}
    with pytest.raises(ValidationError, match=re.escape(f"judgments: item 0: {message.split(', found')[0]}")):  # p: its digits
        semrel.label([Judgment("q1", "c1", **{"P": 0.5, "R": 0.5, "F": 0.5, **record})])
