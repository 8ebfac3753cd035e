"""TREC runs and qrels: run names, the run's tag, error lines and the bytes written (mutation audit)."""

from __future__ import annotations

import pytest

from semrel.errors import FormatError
from semrel.formats import read_qrels
from semrel.formats.trec import graded_pairs, read_judgment_groups, read_preferences, read_run, run_name, write_run
from semrel.records import Run


@pytest.mark.parametrize("path, name", [
    ("runs/bm25.run.gz", "bm25"), ("dense.trec", "dense"), ("-", "stdin"), (".run", ".run"), ("a.tsv", "a"),
])
def test_a_run_is_named_by_its_stem_never_by_nothing(path, name):
    """A file named only by a suffix ('.run') was named '' (a run with no name in every table), not kept whole."""
    assert run_name(path) == name


def test_a_score_that_is_not_finite_names_its_own_line(write):
    """The line counted one row too far: a blank line before and a line after moved the error off the bad score."""
    path = write("bad.run", "q1 Q0 d1 1 0.5 a\n\nq1 Q0 d2 2 inf a\nq1 Q0 d3 3 0.1 a\n")
    with pytest.raises(FormatError, match=r"bad\.run:3: score inf is not a finite number") as caught:
        read_run(path)
    assert caught.value.line == 3


@pytest.mark.parametrize("text", [
    "q1 Q0 d1 1 2.0 bm25\n# six words of a closing comment\n",
    "q1 Q0 d1 1 2.0 old\nq1 Q0 d2 2 1.0 bm25 trailing fields\n",
    "# a header of six words here\nq1 Q0 d1 1 2.0 old\nq1 Q0 d2 2 1.0 bm25\n",
])
def test_the_tag_is_the_sixth_field_of_the_last_data_line(write, text):
    """trec_eval's runid: a closing comment of six words, or fields after the sixth, gave the tag instead."""
    assert read_run(write("r.run", text)).tag == "bm25"


def test_judgment_groups_hold_their_own_judgments_in_order_of_first_appearance(write):
    """qrels_jg: each assessor's qrels must be the lines naming that assessor; with two groups, one holding the other's
    lines averaged to the same value and passed unseen."""
    path = write("jg.qrels", "q 2 a 1\nq 1 a 0\nq 1 b 2\nr 3 c 1\nr 2 d 0\n")
    groups = read_judgment_groups(path)
    assert [(group, qrels.to_dict()) for group, qrels in groups] == [
        ("2", {"q": {"a": 1}, "r": {"d": 0}}), ("1", {"q": {"a": 0, "b": 2}}), ("3", {"r": {"c": 1}}),
    ]


def test_a_run_is_written_under_the_tag_given(tmp_path):
    """write_run's tag was dropped for the run's name: every line must carry the tag asked for, scores as repr, ranks from 1."""
    path = tmp_path / "out.run"
    write_run(Run.from_dict({"q1": {"d1": 0.25, "d2": 0.75}}, name="bm25"), path, tag="tuned")
    assert path.read_text() == "q1 Q0 d2 1 0.75 tuned\nq1 Q0 d1 2 0.25 tuned\n"


def test_a_judgment_listed_twice_names_the_line_of_its_second_listing(write):
    """graded_pairs counted rows as lines one too far (a blank line before made it worse): the error must name line 4."""
    qrels = read_qrels(write("dup.qrels", "q 0 a 1\n\nq 0 b 1\nq 0 a 0\n"))
    with pytest.raises(FormatError, match="duplicate judgment") as caught:
        graded_pairs(qrels)
    assert caught.value.line == 4 and "dup.qrels:4:" in str(caught.value)


def test_a_preference_value_that_is_not_finite_names_its_line(write):
    """Arrow reads 'nan' as a number: a preference of nan was taken (every comparison with it false) without a word."""
    path = write("p.txt", "q g s a 2\nq g s b nan\n")
    with pytest.raises(FormatError, match=r"p\.txt:2: value nan is not a finite number"):
        read_preferences(path)
