"""Defects an audit of `golden split` found, each pinned by a test that failed before its fix: parts of other sizes
than asked went out without a word, a part of an earlier split left in the folder lay beside the new parts in silence,
and `--names ""` split under the default names."""

from __future__ import annotations

import json

from helpers import assert_one_error, message_lines, read_lines, run, write

# q1..q4 ask one thing in four spellings (equal but for case and spacing: one group, whatever the model), q5, q6 others
QUERIES = [("q1", "How do bees make honey?"), ("q2", "how do bees make honey?"), ("q3", "HOW do bees  make honey?"),
           ("q4", "How do bees make honey? "), ("q5", "Which planet has the most moons?"), ("q6", "Why is the sky blue?")]


DISTINCT = [("q7", "What does a sourdough starter need?"), ("q8", "Who wrote the first chess manual?"), ("q9", "When do cats purr?")]


def golden(tmp_path, queries=QUERIES):
    return write(tmp_path / "golden.jsonl", "".join(json.dumps({"query_id": q, "query": t, "reference_answer": "a",
                                                                "gold_chunk_ids": ["d#0"]}) + "\n" for q, t in queries))


def test_parts_of_other_sizes_than_asked_are_warned_about(tmp_path):
    """--ratio 0.5 of 6 asks 3 and 3; the group of 4 fits in neither and goes whole to one part (COVID-QA at --threshold
    0.7: train 1,017 for 1,104, test 363 for 276), which the parts' counts alone left unexplained."""
    result = run("golden", "split", golden(tmp_path), "-o", tmp_path / "s", "--ratio", "0.5")
    assert result.exit_code == 0, result.output
    sizes = {name: len(read_lines(tmp_path / "s" / f"{name}.jsonl")) for name in ("train", "test")}
    assert sorted(sizes.values()) == [2, 4]
    said = [line for line in message_lines(result.stderr) if line.startswith("semrel: warning: ")]
    assert said == [f"semrel: warning: parts of other sizes than asked (train {sizes['train']} for 3, test {sizes['test']} for 3): a "
                    "group of near-duplicates, joined transitively (the largest 4 queries at --threshold 0.95), fit in no part's "
                    "room and went whole to the part with most; `semrel golden dedup` lists the near-duplicates"]
    apart = run("golden", "split", golden(tmp_path, QUERIES[3:] + DISTINCT), "-o", tmp_path / "t", "--ratio", "0.5")
    assert apart.exit_code == 0 and "warning" not in apart.stderr, apart.output  # no group: every part as asked
    assert [len(read_lines(tmp_path / "t" / f"{name}.jsonl")) for name in ("train", "test")] == [3, 3]


def test_a_part_of_an_earlier_split_left_in_the_folder_is_named(tmp_path):
    """A 0.5,0.2 split then a 0.5 one into the same folder: dev.jsonl stayed, holding queries now in train or test."""
    source, out = golden(tmp_path), tmp_path / "s"
    assert run("golden", "split", source, "-o", out, "--ratio", "0.5,0.2", "--threshold", "1").exit_code == 0
    dev = read_lines(out / "dev.jsonl")
    again = run("golden", "split", source, "-o", out, "--ratio", "0.5", "--threshold", "1")
    assert again.exit_code == 0, again.output
    assert {q["query_id"] for q in dev} <= {q["query_id"] for name in ("train", "test") for q in read_lines(out / f"{name}.jsonl")}
    assert f"semrel: warning: {out / 'dev.jsonl'} is a part of an earlier split, not of this one, and holds queries of these " \
           "parts: delete it, or split into an empty folder" in message_lines(again.stderr)
    (out / "notes.jsonl").write_text("{}\n")  # a file of the user's, no part of a split: not named
    third = run("golden", "split", source, "-o", out, "--ratio", "0.5,0.2", "--threshold", "1")
    assert third.exit_code == 0 and "earlier split" not in third.stderr, third.output


def test_empty_names_are_refused_not_read_as_the_default(tmp_path):
    """'--names ""' (a script's unset variable) wrote train.jsonl and test.jsonl, as '--ratio ""' is refused for."""
    assert_one_error(run("golden", "split", golden(tmp_path), "-o", tmp_path / "s", "--names", ""), "--names", code=2)
    assert not (tmp_path / "s").exists()
