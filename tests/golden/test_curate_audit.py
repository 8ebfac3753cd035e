"""Defects an audit found in `golden pick|dedup|split|validate`, each pinned by a test that failed before its fix:
skip kept the marks, pick rewrote (and stripped) the golden set on opening, dedup dropped the removed queries'
gold chunks and answers, split took a NaN ratio, validate stopped at the first malformed line."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import semrel
from helpers import assert_one_error, read_lines, run, write
from semrel.errors import FormatError, UsageError, ValidationError
from semrel.formats.corpus import read_golden
from semrel.golden.neardup import NearDuplicates, deduplicated, split_targets
from semrel.golden.pick import open_pick_session
from semrel.records import GoldenItem
from small_corpus import write_corpus

GOLDEN = [
    {"query_id": "q1", "query": "why does sourdough bread rise slowly", "reference_answer": "wild yeast",
     "gold_chunk_ids": [], "meta": {"line": 1}, "extra_field": "keep me"},
    {"query_id": "q2", "query": "which chess piece is the most powerful", "reference_answer": "the queen",
     "gold_chunk_ids": [], "source": {"page": 3}},
    {"query_id": "q3", "query": "do cats purr", "reference_answer": "when content", "gold_chunk_ids": ["cats#0"]},
]


@pytest.fixture
def files(tmp_path):
    golden = write(tmp_path / "golden.jsonl", "".join(json.dumps(r) + "\n" for r in GOLDEN))
    return write_corpus(tmp_path / "corpus.jsonl"), golden


def pick(files, keys, *extra):
    corpus, golden = files
    result = run("golden", "pick", "--golden", golden, "--corpus", corpus, "--candidates", "2", *extra, input=keys)
    assert result.exit_code == 0, result.output
    return result.output


def gold(path) -> dict[str, tuple[str, ...]]:
    return {i.query_id: i.gold_chunk_ids for i in read_golden(path)}


# ---------------------------------------------------------------- pick: skip leaves the query without gold

def test_skip_drops_the_marks_of_the_query_and_undo_brings_them_back(files, tmp_path):
    out = tmp_path / "picked.jsonl"
    text = pick(files, "1s", "-o", out)
    assert "marked bread#0" in text and "skipped q1: left without gold, marks dropped: bread#0" in text
    assert gold(out)["q1"] == () and "1 skipped" in text
    journal = [json.loads(line) for line in (tmp_path / "picked.jsonl.pick.jsonl").read_text().splitlines()]
    assert journal[-1]["action"] == "skip" and journal[-1]["after"] == {"gold_chunk_ids": [], "status": "skipped"}
    pick(files, "u", "-o", out)  # the marks are in the journal: undo restores them, the query open again
    assert gold(out)["q1"] == ("bread#0",)


def test_skip_in_a_later_session_drops_marks_saved_by_an_earlier_one(files):
    corpus, golden = files
    pick(files, "1q")  # in place: the golden set now holds q1's mark, the journal says q1 is still open
    assert gold(golden)["q1"] == ("bread#0",)
    session = open_pick_session(str(golden), str(corpus), per_method=1)
    assert session.current().gold == ("bread#0",) and session.skip()
    assert gold(golden) == {"q1": (), "q2": (), "q3": ("cats#0",)}  # q3 came with gold: untouched


# ---------------------------------------------------------------- pick: nothing written before a change, fields kept

def test_opening_and_quitting_writes_nothing(files, tmp_path):
    corpus, golden = files
    before = golden.read_bytes()
    text = pick(files, "q")
    assert "no changes; " in text and "left as it was" in text
    assert golden.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.jsonl", "golden.jsonl"]  # no manifest, no journal
    text = pick(files, "q", "-o", tmp_path / "picked.jsonl")
    assert not (tmp_path / "picked.jsonl").exists()
    assert "picked.jsonl not written" in text and "left as it was" not in text  # a file that is not there was left as nothing


def test_rewrites_change_only_the_gold_chunk_ids(files, tmp_path):
    corpus, golden = files
    pick(files, "1n")
    rows = read_lines(golden)
    assert rows[0] == {**GOLDEN[0], "gold_chunk_ids": ["bread#0"]}  # extra_field kept, key order too
    assert rows[1] == GOLDEN[1] and rows[2] == GOLDEN[2]
    assert list(rows[0]) == list(GOLDEN[0])
    out = tmp_path / "picked.jsonl"
    pick(files, "n", "-o", out)  # and into another file
    assert read_lines(out)[1] == {**GOLDEN[1], "gold_chunk_ids": []} and read_lines(out)[0]["extra_field"] == "keep me"


def test_a_resumed_session_restores_an_output_that_lags_its_journal(files, tmp_path):
    out = tmp_path / "picked.jsonl"
    pick(files, "1n", "-o", out)
    out.unlink()  # e.g. removed, or a crash between the journal's line and the rewrite
    pick(files, "q", "-o", out)
    assert gold(out)["q1"] == ("bread#0",) and read_lines(out)[0]["extra_field"] == "keep me"
    stamp = out.stat().st_mtime_ns
    pick(files, "q", "-o", out)  # in step with its journal: left alone
    assert out.stat().st_mtime_ns == stamp


# ---------------------------------------------------------------- dedup: the removed queries' gold is merged

NEAR = [
    ("q1", "What is the conclusion of this report?", "A", ["a#0"]),
    ("q2", "How do I feed bees in winter?", "B", ["b#0"]),
    ("q3", "what is the  conclusion of this REPORT?", "C", ["a#1", "a#0"]),
    ("q4", "how do i feed bees in winter", "B", ["b#0"]),
]


def test_dedup_apply_merges_the_gold_and_answers_of_removed_queries_and_warns(tmp_path):
    golden = write(tmp_path / "golden.jsonl", "".join(
        json.dumps({"query_id": q, "query": t, "reference_answer": a, "gold_chunk_ids": g}) + "\n" for q, t, a, g in NEAR))
    out = tmp_path / "deduped.jsonl"
    result = run("golden", "dedup", golden, "--report", tmp_path / "r.jsonl", "--apply", "-o", out)
    assert result.exit_code == 0, result.output
    kept = read_lines(out)
    assert [i["query_id"] for i in kept] == ["q1", "q2"]
    assert kept[0]["gold_chunk_ids"] == ["a#0", "a#1"] and kept[0]["reference_answer"] == ["A", "C"]
    assert kept[0]["meta"] == {"duplicates_removed": ["q3"]}
    assert kept[1]["gold_chunk_ids"] == ["b#0"] and kept[1]["reference_answer"] == "B"  # q4 brought nothing new
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert warnings == ["semrel: warning: query 'q3', removed as a near-duplicate of 'q1', had gold chunks a#1 and "
                        "reference answers 'C' that 'q1' lacked: merged into 'q1'"]


def test_deduplicated_merges_grades_and_fills_an_empty_answer():
    items = [GoldenItem("k", "x", ("",), ("a",), {"grades": {"a": 2}}),
             GoldenItem("r1", "x", ("yes",), ("b", "a")),
             GoldenItem("r2", "x", ("yes", "also"), (), {"grades": {"c": 3, "a": 0}, "duplicates_removed": ["old"]})]
    notes: list[str] = []
    [merged] = deduplicated(items, NearDuplicates([[0, 1, 2]], np.zeros((3, 1))), notes)
    assert merged.gold_chunk_ids == ("a", "b") and merged.reference_answers == ("yes", "also")
    assert merged.meta == {"grades": {"a": 2, "b": 1, "c": 3}, "duplicates_removed": ["r1", "r2", "old"]}
    assert len(notes) == 2 and "gold chunks b and reference answers 'yes'" in notes[0]
    assert "'r2', removed as a near-duplicate of 'k', had reference answers 'yes', 'also' that 'k' lacked" in notes[1]


# ---------------------------------------------------------------- split: non-finite ratios and sizes

@pytest.mark.parametrize("ratio", ["nan", "inf", "0.5,nan", "-inf"])
def test_split_refuses_a_ratio_that_is_not_a_finite_number(tmp_path, ratio):
    golden = write(tmp_path / "golden.jsonl", "".join(
        json.dumps({"query_id": q, "query": t, "reference_answer": a, "gold_chunk_ids": g}) + "\n" for q, t, a, g in NEAR))
    assert_one_error(run("golden", "split", golden, "-o", tmp_path / "parts", "--ratio", ratio),
                     "ratios must be finite numbers", code=2)
    assert not (tmp_path / "parts").exists()


@pytest.mark.parametrize("option,value,message", [
    ("--ratio", "0.8,x", "--ratio '0.8,x': give comma-separated numbers, e.g. 0.8,0.1"),
    ("--sizes", "5,2.5", "--sizes '5,2.5': give comma-separated whole numbers, e.g. 200,100"),
    ("--ratio", "", "--ratio '': give comma-separated numbers, e.g. 0.8,0.1"),  # had split 80/20, as if not given
])
def test_split_names_the_option_whose_numbers_it_cannot_read(tmp_path, option, value, message):
    golden = write(tmp_path / "golden.jsonl", "".join(
        json.dumps({"query_id": q, "query": t, "reference_answer": a, "gold_chunk_ids": g}) + "\n" for q, t, a, g in NEAR))
    assert_one_error(run("golden", "split", golden, "-o", tmp_path / "parts", option, value), message, code=2)
    assert not (tmp_path / "parts").exists()


def test_split_targets_refuse_non_finite_or_fractional_sizes():
    for sizes in ([float("nan")], [float("inf")], [2.5]):
        with pytest.raises(UsageError, match="positive query counts"):
            split_targets(10, None, sizes)
    with pytest.raises(UsageError, match="finite"):
        split_targets(10, [float("nan")], None)


# ---------------------------------------------------------------- validate: malformed lines are issues

def test_validate_lists_malformed_lines_and_goes_on(tmp_path):
    corpus = write(tmp_path / "corpus.jsonl", json.dumps({"_id": "a#0", "title": "", "text": "x"}) + "\n")
    golden = write(tmp_path / "golden.jsonl", "\n".join([
        '{"query_id":"a","query":"Q one","reference_answer":"x","gold_chunk_ids":["a#0"]}',
        '{"query_id":"b","query":"Q two","reference_answer":"x","gold_chunk_ids":["nope#9"]',
        '[1]',
        '',
        '{"query_id":"a","query":"q  ONE","reference_answer":"","gold_chunk_ids":[]}',
        '{"query_id":"d","query":"Q d","reference_answer":"y","gold_chunk_ids":["nope#1"]}',
    ]) + "\n")
    result = run("golden", "validate", golden, "--corpus", corpus)
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.stdout.splitlines() == [
        f"{golden}:2: error: invalid JSON (Expecting ',' delimiter) (the line ends with an object, list or string left open: a "
        "file cut short by a copy or write that stopped, or a record spread over several lines, where JSON Lines holds one a line?)",
        f"{golden}:3: error: expected a JSON object, found list",
        f"{golden}:5: error: query id 'a' already used on line 1",
        f"{golden}:5: warning: query 'a' has the same text as line 1",
        f"{golden}:5: error: query 'a' has an empty reference answer",
        f"{golden}:5: warning: query 'a' has no gold chunks",
        f"{golden}:6: error: gold chunk 'nope#1' of query 'd' is not in the corpus",
    ]
    assert "3 queries: 5 errors, 2 warnings" in result.stderr  # lines 2 and 3 are no queries


def test_split_and_dedup_keep_a_lines_own_fields(tmp_path, cli):
    """GoldenItem had no place for them: split and dedup --apply wrote every line without its own keys."""
    golden = tmp_path / "g.jsonl"
    golden.write_text("".join(json.dumps(row) + "\n" for row in [
        {"query_id": "q1", "query": "why do cats purr?", "reference_answer": "content", "source": "forum", "tags": ["a"]},
        {"query_id": "q2", "query": "why do cats purr?", "reference_answer": "content", "gold_chunk_ids": ["c#1"]},
        {"query_id": "q3", "query": "how do ships float?", "reference_answer": "buoyancy", "source": "faq"},
    ]))
    assert cli("golden", "split", golden, "-o", tmp_path / "parts", "--sizes", "1,2").exit_code == 0
    rows = [json.loads(line) for part in sorted((tmp_path / "parts").glob("*.jsonl")) for line in part.read_text().splitlines()]
    assert {r["query_id"]: (r.get("source"), r.get("tags")) for r in rows} == {
        "q1": ("forum", ["a"]), "q2": (None, None), "q3": ("faq", None)}
    assert cli("golden", "dedup", golden, "--report", tmp_path / "r.jsonl", "--apply", "-o", tmp_path / "d.jsonl").exit_code == 0
    kept = [json.loads(line) for line in (tmp_path / "d.jsonl").read_text().splitlines()]
    assert [(r["query_id"], r.get("source"), r["gold_chunk_ids"]) for r in kept] == [("q1", "forum", ["c#1"]), ("q3", "faq", [])]


def test_validate_names_stdin_as_every_other_message_does(tmp_path):
    """Its lines began '-:2:' where errors say '<stdin>:2:'."""
    result = run("golden", "validate", "-", input='{"query_id":"a","query":"Q","reference_answer":"x","gold_chunk_ids":[]}\n[1]\n')
    assert result.exit_code == 1
    assert result.stdout.splitlines() == ["<stdin>:1: warning: query 'a' has no gold chunks",
                                          "<stdin>:2: error: expected a JSON object, found list"]


def test_validate_of_a_file_that_is_no_golden_set_says_what_it_looks_like(tmp_path):
    """`golden validate questions.csv`, a new user's first check, printed 'invalid JSON' for every line and counted each
    row a query, where `golden stats` said in one line that it is a CSV file and how a golden set is made of it."""
    questions = write(tmp_path / "questions.csv", "question,answer\nWhy?,Because.\nHow?,So.\n")
    assert_one_error(run("golden", "validate", questions),
                     "questions.csv:1: invalid JSON (Expecting value): this file looks like a CSV file, not a golden set: "
                     "`semrel golden import` makes one from a CSV, JSON or testset file")
    corpus = write(tmp_path / "corpus.jsonl", json.dumps({"_id": "a#0", "title": "", "text": "x"}) + "\n")
    assert_one_error(run("golden", "validate", corpus), "this file looks like a corpus, not a golden set")


def test_split_and_dedup_refuse_an_empty_query_as_validate_calls_it_an_error(tmp_path):
    """A query of spaces (a blank line's line 2 counts) was split and deduplicated like any other: every empty query is
    a near-duplicate of every other, so dedup --apply merged them all into the first, and split kept them in one part."""
    golden = write(tmp_path / "golden.jsonl", "".join(json.dumps(row) + "\n" if row else "\n" for row in [
        {"query_id": "q1", "query": "why do cats purr?", "reference_answer": "content"}, None,
        {"query_id": "q2", "query": " \t", "reference_answer": "buoyancy"},
        {"query_id": "q3", "query": "", "reference_answer": "wind"}]))
    said = f"{golden}:3: query 'q2' is empty: give it its text, or drop the line (`semrel golden validate {golden}` lists every problem)"
    assert run("golden", "validate", golden).stdout.splitlines()[1] == f"{golden}:3: error: query 'q2' is empty"
    split = run("golden", "split", golden, "-o", tmp_path / "parts")
    assert assert_one_error(split) == f"semrel: error: {said}" and not (tmp_path / "parts").exists()
    dedup = run("golden", "dedup", golden, "--apply", "-o", tmp_path / "d.jsonl")
    assert assert_one_error(dedup) == f"semrel: error: {said}" and not (tmp_path / "d.jsonl").exists()
    items = [GoldenItem("q1", "why do cats purr?", ("content",)), GoldenItem("q2", " ", ("buoyancy",))]
    with pytest.raises(ValidationError, match=r"^golden: item 1: query 'q2' is empty: give it its text, or leave it out$"):
        semrel.dedup_golden(items)
    with pytest.raises(FormatError, match=re.escape(said)):
        semrel.split_golden(golden)
