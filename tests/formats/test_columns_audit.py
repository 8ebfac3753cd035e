"""What a mutation audit of formats/columns.py found unpinned: the numbers a score or grade may be written as, the
judgment-group hint (several groups only, comment lines not counted) and the line a duplicate read from stdin is named
by. K17, K19, K29, K32, K36, K37 and K39 of that audit are equivalent: comments are blanked and line edges stripped
before the column check, a row past the last is never asked for, a qrels line of more than four fields is refused before
the hint, and the rest change only speed."""

from __future__ import annotations

import re

import pytest

from helpers import assert_one_error, run
from semrel.errors import FormatError
from semrel.formats import read_run
from semrel.formats.columns import whole_number
from semrel.formats.trec import read_trec_qrels


def test_a_score_may_open_with_its_point_and_carry_a_signed_exponent(tmp_path):
    """'.5' and '2.5e-3' are numbers as Arrow reads them (and as trec_eval's atof does)."""
    path = tmp_path / "r.run"
    path.write_text("q1 Q0 d1 1 .5 r\nq1 Q0 d2 2 2.5e-3 r\nq1 Q0 d3 3 x r\n")
    with pytest.raises(FormatError, match=r"r\.run:3: column 5 is 'x', expected a number"):
        read_run(path)  # the slow path, which checks each field, takes the first two
    path.write_text("q1 Q0 d1 1 .5 r\nq1 Q0 d2 2 2.5e-3 r\n")
    assert read_run(path).to_dict() == {"q1": {"d1": 0.5, "d2": 0.0025}}


def test_a_grade_may_be_the_least_64_bit_integer():
    assert whole_number("-9223372036854775808") == -(2**63)
    with pytest.raises(ValueError):
        whole_number("-9223372036854775809")


@pytest.mark.parametrize("groups, named", [(["0", "0"], None), (["a", "b"], "2 groups (a, b)"), (["a", "b", "c"], "3 groups (a, b, c)"),
                                           (["a", "b", "c", "d"], "4 groups (a, b, c, ...)")])
def test_a_duplicate_judgment_names_the_files_judgment_groups_only_where_there_are_several(tmp_path, groups, named):
    path = tmp_path / "q.qrels"
    lines = [f"q1 {g} d{k} 1" for k, g in enumerate(groups)] + ["#q9 x d9 1", f"q1 {groups[0]} d0 0"]
    path.write_text("\n".join(lines) + "\n")
    (tmp_path / "r.run").write_text("q1 Q0 d0 1 1 r\n")
    message = assert_one_error(run("eval", path, tmp_path / "r.run"),
                               f"q.qrels:{len(lines)}: duplicate judgment for query 'q1' and doc 'd0'")
    assert (f"its second column names {named}:" in message) if named else "groups" not in message


def test_a_duplicate_read_from_stdin_is_named_by_its_line_among_those_with_content(tmp_path):
    """stdin cannot be read again for the line number, so the line is counted among the lines with content; it said
    'the 2th line with content'."""
    qrels = tmp_path / "q.qrels"
    qrels.write_text("q1 0 d1 1\n")
    assert_one_error(run("eval", qrels, "-", input="q1 Q0 d1 1 2 r\n\nq1 Q0 d1 2 1 r\n"),
                     "<stdin>: duplicate document in run for query 'q1' and doc 'd1' (line 2 not counting blank and comment lines)")


@pytest.mark.parametrize("line, error", [
    (" q1 0 1", "q.qrels:2: expected 4 columns (qid 0 docid rel), found 3"),  # Arrow read query '', doc '0'
    ("q1 0  1", "q.qrels:2: expected 4 columns (qid 0 docid rel), found 3"),  # doc ''
    ("q1 0 d2 1 ", None),  # a blank at the end, which Arrow reads as a fifth field, mended
    (" # a 1", None),  # a comment after a blank: Arrow read query '' (and stdin with it)
])
@pytest.mark.parametrize("read_bytes_given", [False, True])
def test_a_line_spaced_by_blanks_is_never_read_with_an_empty_field(tmp_path, line, error, read_bytes_given):
    """Arrow splits at each space: a blank at a line's start or a second blank between fields gave an empty field, and
    a line of three fields (or a comment) was read as a judgment for query '' where its field count fit. Both the file
    Arrow reads from disk and bytes already read (stdin) are checked."""
    path = tmp_path / "q.qrels"
    path.write_bytes(f"q1 0 d1 1\n{line}\n".encode())
    read = lambda: read_trec_qrels(path, path.read_bytes() if read_bytes_given else None)  # noqa: E731
    if error is None:
        assert read().to_dict() == ({"q1": {"d1": 1, "d2": 1}} if "d2" in line else {"q1": {"d1": 1}})
    else:
        with pytest.raises(FormatError, match=re.escape(error)):
            read()


def test_a_run_line_missing_its_rank_is_refused_not_read_with_an_empty_one(tmp_path):
    """'d2  0.4' (the rank left out, two blanks) was six fields to Arrow, an empty rank among them; trec_eval refuses it."""
    path = tmp_path / "r.run"
    path.write_text("q1 Q0 d1 1 0.5 r\nq1 Q0 d2  0.4 r\n")
    with pytest.raises(FormatError, match=r"r\.run:2: expected 6 columns .*found 5"):
        read_run(path)


def test_a_single_spaced_run_is_read_by_arrow_from_disk_whatever_its_blocks(tmp_path, monkeypatch):
    """The spacing check read the file 16 MB at a time, and took a blank ending one read for a blank opening a line: a
    300 MB single-spaced run was parsed again in Python's blocks (3.4 s, not 2.2). Here the 16 MB read ends in a blank."""
    line = b"q1 Q0 d%08d 1 0.5 r\n"
    lines = b"".join(line % i for i in range((2**24 + 100) // len(line % 0)))
    pads = (b"q0 Q0 d 1 1 r%s\n" % (b"r" * k) for k in range(len(line % 0)))
    data = next(first + lines for first in pads if (first + lines)[2**24 - 1:2**24] == b" ")
    path = tmp_path / "r.run"
    path.write_bytes(data)

    def refused(*args, **kwargs):
        raise AssertionError("read in Python")

    monkeypatch.setattr("semrel.formats.trec.read_columns", refused)
    assert len(read_run(path).scores) == data.count(b"\n")
