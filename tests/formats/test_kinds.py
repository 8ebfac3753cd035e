"""Each of semrel's files given to each reader: the reader of its own kind reads it; every other reader's error says
what the file looks like and how the file it wanted is made. Before, most of these said only "invalid JSON
(Expecting value)", "missing field 'query'", or named judgments given for a corpus a golden set."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from semrel.errors import FormatError, SemrelError
from semrel.formats import read_qrels, read_run
from semrel.formats.corpus import read_corpus, read_golden
from semrel.formats.judgments import read_judgments
from semrel.formats.pool import read_pool
from semrel.judging.labels import read_calibration
from semrel.review.store import open_db

FILES = {
    "qrels": "q1 0 a#0 1\nq1 0 a#1 0\n",
    "run": "q1 Q0 a#0 1 0.9 bm25\nq1 Q0 a#1 2 0.5 bm25\n",
    "corpus": '{"_id": "a#0", "title": "", "text": "chain oil", "doc_id": "a", "start": 0, "end": 9}\n',
    "golden": '{"query_id": "q1", "query": "oil?", "reference_answer": "chain oil", "gold_chunk_ids": ["a#0"]}\n',
    "judgments": '{"query_id": "q1", "chunk_id": "a#0", "P": 0.5, "R": 0.8, "F": 0.6, "source": "gold"}\n'
                 '{"query_id": "q1", "chunk_id": "a#1", "P": 0.2, "R": 0.3, "F": 0.25, "source": "bm25"}\n',
    "pool": "query_id\tchunk_id\tsources\nq1\ta#0\tbm25,gold\n",
    "calibration": '{\n "rule": "threshold",\n "on": "R",\n "thresholds": [0.7]\n}\n',
    "csv": "query_id,query,answer,gold_chunk_ids\nq1,oil?,chain oil,a#0\n",
    "review": None,  # a new review database (made by open_db)
}
READERS: dict[str, tuple[Callable[[Path], Any], str]] = {
    "qrels": (read_qrels, "not TREC qrels: `semrel label` makes them from judgments, `semrel golden qrels` from a golden set; "
                          "commands that take runs too take the qrels first"),
    "run": (read_run, "not a TREC run: `semrel retrieve` writes one"),
    "corpus": (read_corpus, "not a corpus: `semrel corpus chunk` makes one from documents"),
    "golden": (read_golden, "not a golden set: `semrel golden import` makes one from a CSV, JSON or testset file"),
    "judgments": (read_judgments, "not judgments: `semrel judge` writes them"),
    "pool": (read_pool, "not a pool: `semrel pool` makes one from runs"),
    "calibration": (read_calibration, "not a calibration: `semrel calibrate -o` writes one"),
    "review": (lambda path: open_db(path, create=False).close(),
               "not a review database: `semrel review start` or `semrel review simulate` makes one"),
}
NAMES = {"qrels": "TREC qrels", "run": "a TREC run", "corpus": "a corpus", "golden": "a golden set", "judgments": "judgments",
         "pool": "a pool", "calibration": "a calibration", "csv": "a CSV file", "review": "a review database"}
ACCEPTED = {("qrels", "golden")}  # eval takes a golden set's gold chunks as qrels


@pytest.mark.parametrize("wanted", READERS)
@pytest.mark.parametrize("given", FILES)
def test_a_file_given_in_another_s_place_is_named(tmp_path, given, wanted):
    path = tmp_path / f"given.{given}"
    if FILES[given] is None:
        open_db(path).close()
    else:
        path.write_text(FILES[given])
    read, made = READERS[wanted]
    if given == wanted or (wanted, given) in ACCEPTED:
        read(path)
        return
    with pytest.raises(SemrelError) as caught:
        read(path)
    assert str(caught.value).endswith(f": this file looks like {NAMES[given]}, {made}"), str(caught.value)
    assert str(caught.value).startswith(f"{path}:")


def test_errors_in_a_file_of_the_kind_wanted_say_only_what_is_wrong(tmp_path):
    """The hint is for a file of another kind: a bad later line, or a first line that fits no kind, keeps its plain message."""
    cases = {
        read_judgments: (FILES["judgments"] + '{"query_id": "q1", "chunk_id": "a#2", "P": "x", "R": 0.1, "F": 0.1}\n',
                         ":3: field 'P' should be int or float, found str"),
        read_run: (FILES["run"] + FILES["qrels"], ":3: expected 6 columns (qid Q0 docid rank score tag; any after them are ignored), "
                                                  "found 4"),
        read_golden: ('{"query_id": "q1", "reference_answer": "chain oil"}\n',
                      ":1: missing field 'query' (the line has: query_id, reference_answer)"),
        read_corpus: ('{"id": "a#0", "text": "chain oil"}\n', ":1: missing field '_id' (the line has: id, text)"),
        read_qrels: ("q1 0 a#0 yes\n", ":1: column 4 is 'yes', expected an integer relevance grade"),
    }
    for read, (text, message) in cases.items():
        path = tmp_path / "file"
        path.write_text(text)
        with pytest.raises(FormatError) as caught:
            read(path)
        assert str(caught.value) == f"{path}{message}", read.__name__


def test_the_first_line_is_found_past_blank_lines_and_comments(tmp_path):
    path = tmp_path / "r.run"
    path.write_text("\n# a run, given for qrels\n" + FILES["run"])
    with pytest.raises(FormatError, match=r"r\.run:3: expected 4 columns .*: this file looks like a TREC run, not TREC qrels"):
        read_qrels(path)


def test_a_first_line_longer_than_the_head_read_is_still_recognised(tmp_path):
    """A corpus line of 80 KB given as a golden set: the head read to tell the kind (64 KiB) cuts it, here inside a
    two-byte character, which decoded as U+FFFD made the line look binary and the hint was lost."""
    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps({"_id": "a", "text": "x" + "é" * 40_000}, ensure_ascii=False) + "\n", encoding="utf-8")
    with pytest.raises(FormatError, match=r"missing field 'query_id' \(the line has: _id, text\): this file looks like a corpus, not a "
                                          "golden set"):
        read_golden(path)
