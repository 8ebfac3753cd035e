"""TREC runs and qrels: run names, the run's tag, error lines and the bytes written (mutation audit)."""

from __future__ import annotations

import gzip
import re
import tracemalloc

import numpy as np
import pyarrow as pa
import pytest

from helpers import SHARED_DATA
from semrel.errors import FormatError, SemrelError, ValidationError
from semrel.formats import columns, read_qrels
from semrel.formats.columns import finite_float, line_number, whole_number
from semrel.formats.files import read_blocks, read_bytes
from semrel.formats.trec import (
    PREFS_COLUMNS,
    QRELS_COLUMNS,
    RUN_COLUMNS,
    graded_pairs,
    read_judgment_groups,
    read_preferences,
    read_run,
    run_name,
    write_qrels,
    write_run,
)
from semrel.records import Qrels, Run

SUITE = SHARED_DATA / "trec_eval_test"
needs_suite = pytest.mark.skipif(not SUITE.is_dir(), reason=f"trec_eval's test files are not at {SUITE}")


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


def _message(read, path) -> str:
    with pytest.raises(FormatError) as caught:
        read(path)
    return str(caught.value)


def test_comment_lines_indented_or_shaped_like_data_are_skipped(write):
    """trec_eval skips a line whose first non-blank is '#': one indented, or with six fields and a numeric fifth
    (which Arrow reads as a row), is no query '#'."""
    text = "  # a comment\nq1 Q0 d1 1 2 r\n# x y 1 2 z\n\t# q1 Q0 d2 1 3 r\n"
    assert read_run(write("c.run", text)).to_dict() == {"q1": {"d1": 2.0}}
    for text in ("q1 Q0 d1 1 2 r\n# x y 1 2 z\n", "# x y 1 2 z\nq1 Q0 d1 1 2 r\n"):  # Arrow reads either whole
        assert read_run(write("c.run", text)).to_dict() == {"q1": {"d1": 2.0}}
    assert read_qrels(write("c.qrels", "# 0 d 1\nq1 0 d1 1\n   # c\n")).to_dict() == {"q1": {"d1": 1}}


def test_lines_ended_by_a_lone_cr_or_holding_only_blanks(write):
    """Old Mac files end lines with a CR alone: in a tab-separated file (mended, not read by Arrow at once) a tab
    before one left a blank field in the row."""
    assert read_qrels(write("mac.qrels", "q1 0 d1 1\rq1 0 d2 0\r")).to_dict() == {"q1": {"d1": 1, "d2": 0}}
    assert read_qrels(write("mac.qrels", "q1\t0\td1\t1\t\rq1\t0\td2\t0\r")).to_dict() == {"q1": {"d1": 1, "d2": 0}}
    assert len(read_run(write("blank.run", " \n\t\n  \n"))) == 0


@pytest.mark.parametrize("text, expected", [
    ("q1 Q0 d1 1 2 r\n\nq1 Q0 d2 2 x r extra fields\n", "3: column 5 is 'x', expected a number (the score)"),
    ("q1 Q0 d1 1 inf r\nq1 Q0 d2 2 x r\n", "1: column 5 is 'inf', expected a number (the score)"),
    ("q1 Q0 d1 1 1e400 r\nq1 Q0 d2 2 x r\n", "1: column 5 is '1e400', expected a number (the score)"),
    ("q1 Q0 d1 1 1_0 r\n", "1: column 5 is '1_0', expected a number (the score)"),
    ("q1 Q0 d1 1 \u0661 r\n", "1: column 5 is '\u0661', expected a number (the score)"),
    ("q1 Q0 d1 1 2 r\nq1\u00a0Q0 d1 1 2 r\n", "2: expected 6 columns (qid Q0 docid rank score tag; any after them are ignored), "
                                              "found 5: it holds NO-BREAK SPACE (U+00A0), which separates no columns: use spaces or tabs"),
    ("q1 0 d1 1\n", "1: expected 6 columns (qid Q0 docid rank score tag; any after them are ignored), found 4: "
                    "this file looks like TREC qrels, not a TREC run: `semrel retrieve` writes one"),
])


def test_a_bad_run_line_is_named_with_its_column(write, text, expected):
    """The first bad line and column, counted from 1; '1_0', Arabic digits and 1e400 pass Python's float but not Arrow."""
    path = write("bad.run", text)
    assert _message(read_run, path) == f"{path}:{expected}"


@pytest.mark.parametrize("text, expected", [
    ("q1 0 d1 1\nq1 0 d2 +1\n", "2: column 4 is '+1', expected an integer relevance grade"),
    ("q1 0 d1 1\nq1 0 d2 9223372036854775808\n", "2: column 4 is '9223372036854775808', expected an integer relevance grade"),
    ("q1 0 d1 1 extra\n", "1: expected 4 columns (qid 0 docid rel), found 5"),
    ("q1 Q0 d1 1 2.5 bm25\n", "1: expected 4 columns (qid 0 docid rel), found 6: this file looks like a TREC run, not TREC "
                              "qrels: `semrel label` makes them from judgments, `semrel golden qrels` from a golden set; "
                              "commands that take runs too take the qrels first"),
])


def test_a_bad_qrels_line_is_named_with_its_column(write, text, expected):
    path = write("bad.qrels", text)
    assert _message(read_qrels, path) == f"{path}:{expected}"


def test_the_first_score_that_is_not_finite_is_named(write):
    path = write("two.run", "q1 Q0 d1 1 0.5 a\nq1 Q0 d2 2 -inf a\nq1 Q0 d3 3 nan a\n")
    assert _message(read_run, path) == f"{path}:2: score -inf is not a finite number"


def test_a_score_past_a_float_is_quoted_as_the_file_writes_it(write):
    """1e400 overflows to inf as Arrow reads it, and the error said 'score inf', which is nowhere in the file."""
    path = write("big.run", "# a comment\nq1 Q0 d1 1 0.5 a\n\nq1 Q0 d2 2 1e400 a tag\n")
    assert _message(read_run, path) == f"{path}:4: score 1e400 is not a finite number"
    path = write("p.txt", "q g s a 2\nq g s b -1E+999\n")
    assert _message(read_preferences, path) == f"{path}:2: value -1E+999 is not a finite number"


def test_a_pair_listed_twice_in_python_names_its_row_counted_from_1():
    with pytest.raises(ValidationError, match=r"^duplicate judgment for query 'q' and doc 'a' \(row 3; each document may "
                                              r"appear once per query\)$"):
        graded_pairs(Qrels.from_columns(["q", "q", "q"], ["a", "b", "a"], [1, 0, 2]))


def test_qrels_read_as_preferences_are_one_subgroup_per_group_and_bad_values_name_their_line(write):

    prefs = read_preferences(write("p.qrels", "q1 a d1 2\nq1 b d2 0\n"), from_qrels=True)
    assert (prefs.query_ids, prefs.groups, prefs.subgroups, prefs.doc_ids, prefs.values.tolist()) == (
        ["q1", "q1"], ["a", "b"], ["0", "0"], ["d1", "d2"], [2.0, 0.0])
    path = write("p.txt", "q g s a 2\n\n# note\nq g s b inf\n")
    assert _message(read_preferences, path) == f"{path}:4: value inf is not a finite number"


def test_writers_refuse_a_query_id_opening_with_a_hash_or_an_id_with_blanks_but_take_such_a_doc_id(tmp_path):

    write_qrels(Qrels.from_dict({"q1": {"#3": 1}}), tmp_path / "ok.qrels")
    assert (tmp_path / "ok.qrels").read_text() == "q1 0 #3 1\n"
    with pytest.raises(SemrelError, match="^query id '#1' starts with '#'"):
        write_qrels(Qrels.from_dict({"#1": {"d": 1}}), tmp_path / "bad.qrels")
    for ranked in ({"q1": {"d 1": 1.0}}, {"#q": {"d": 1.0}}):
        with pytest.raises(SemrelError):
            write_run(Run.from_dict(ranked, name="r"), tmp_path / "bad.run")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ok.qrels"]


# ---------------------------------------------------------------- files larger than the limit on files read whole


def _large_run(last: str) -> str:
    """A run of 2,000 lines (about 40 KB) that Arrow reads from disk, `last` its last line."""
    return "".join(f"q{i // 100} Q0 d{i % 100} {i % 100 + 1} {1000 - i}.5 a\n" for i in range(2000)) + last


@pytest.mark.parametrize("last, expected", [
    ("q19 Q0 d5 7 1e400 a\n", "big.run:2001: score 1e400 is not a finite number"),
    ("q19 Q0 d99 101 0.5 a\n", "big.run:2001: duplicate document in run for query 'q19' and doc 'd99'"),
])
def test_a_run_larger_than_a_file_read_whole_names_its_bad_line(write, cli, monkeypatch, last, expected):
    """A run read from disk by Arrow was read whole again to name the line of a score past a float or of a pair listed
    twice: past SEMREL_MAX_DOCUMENT_MB (a 600 MB run at the default 512) the error said the file was too long, not what
    was wrong, and raising the limit held the file twice. The line is now found a block at a time."""
    monkeypatch.setenv("SEMREL_MAX_DOCUMENT_MB", "0.01")
    qrels = write("q.qrels", "q19 0 d99 1\n")
    run = write("big.run", _large_run(last))
    result = cli("eval", qrels, run, "-m", "map")
    assert result.exit_code == 1 and expected in result.stderr and "limit" not in result.stderr, result.stderr


@pytest.mark.parametrize("gap, end", [("\t", "\n"), ("  ", "\r\n"), (" \t", "\n")])
@pytest.mark.parametrize("gzipped", [False, True])
def test_a_run_past_the_limit_is_parsed_a_block_of_lines_at_a_time(tmp_path, monkeypatch, gap, end, gzipped):
    """A run Arrow does not read from disk as it is (tabs, runs of blanks, a BOM, comments, gzip) was read whole: past
    SEMREL_MAX_DOCUMENT_MB a valid tab-separated run was refused ('the file is longer than the limit'), and a bad line was
    not named. It is now parsed a block of whole lines at a time, here blocks of 50 bytes (lines and CRLF cut between
    the reads), each bad line named by its own number."""
    monkeypatch.setenv("SEMREL_MAX_DOCUMENT_MB", "0.01")
    monkeypatch.setattr(columns, "BLOCK_BYTES", 50)
    lines = [f"q{i // 100}{gap}Q0{gap}d{i % 100}{gap}{i % 100 + 1}{gap}{1000 - i}.5{gap}a" for i in range(2000)]
    lines[500:500] = ["# a comment", "", f"{gap}q5 Q0 d5x 1 0.25 a"]  # a blank before a line's first field
    text = "\ufeff" + end.join(lines) + end
    path = tmp_path / ("r.run.gz" if gzipped else "r.run")
    save = (lambda data: path.write_bytes(gzip.compress(data))) if gzipped else path.write_bytes
    save(text.encode())
    run = read_run(path)
    assert len(run.scores) == 2001 and run.scores[:3].tolist() == [1000.5, 999.5, 998.5] and run.tag == "a"
    assert run.to_dict()["q5"]["d5x"] == 0.25 and run.to_dict()["q19"]["d99"] == -999.5
    save((text + f"q20{gap}Q0{gap}d1{gap}1{gap}x{gap}a{end}").encode())
    with pytest.raises(FormatError, match=r"r\.run(\.gz)?:2004: column 5 is 'x', expected a number"):
        read_run(path)
    save((text.replace(f"d7{gap}8", f"d7{gap}8{gap}", 1)).replace(f"{gap}a{end}q9", f"{gap}a{end}q9{gap}", 1).encode())
    assert read_run(path).to_dict() == run.to_dict()  # a field past the tag, and a blank at a line's end


@pytest.mark.parametrize("end", ["\n", "\r\n", "\r"])
def test_a_bad_line_is_looked_for_in_the_block_arrow_refused_only(tmp_path, monkeypatch, end):
    """A bad line near the end of a large run was found by going through every block of the file line by line in
    Python (11 s on 5.6M lines, bench/run_layouts.py); the blocks before the refused one were read, so only it is, its
    first line numbered on from theirs (CRLF and lone CR ends counted as normalise counts them)."""
    monkeypatch.setattr(columns, "BLOCK_BYTES", 50)
    explained = []
    checked = columns.first_bad_line
    monkeypatch.setattr(columns, "first_bad_line", lambda data, *args, **kw: explained.append(kw["first"]) or checked(data, *args, **kw))
    lines = [f"q{i // 100}\tQ0\td{i % 100}\t{i % 100 + 1}\t{1000 - i}.5\ta" for i in range(300)]
    lines[100:100] = ["# a comment", ""]
    path = tmp_path / "r.run"
    path.write_bytes((end.join(lines) + end + "q9 Q0 d1 1 x a" + end).encode())
    with pytest.raises(FormatError, match=r"r\.run:303: column 5 is 'x', expected a number"):
        read_run(path)
    assert len(explained) == 1 and explained[0] > 250


@needs_suite
@pytest.mark.parametrize("name", sorted(p.name for p in SUITE.glob("*") if p.name.startswith(("qrels", "results", "prefs"))))
def test_trec_eval_files_parse_in_blocks_as_in_one(monkeypatch, name):
    """The parse a block of lines at a time gives the arrays (or the error) the parse of the whole bytes gives."""
    path = str(SUITE / name)
    names, types, checks, what, extra = (
        (RUN_COLUMNS, {"query_id": pa.string(), "doc_id": pa.string(), "score": pa.float64()}, {4: ("a number", finite_float)},
         "run", True) if name.startswith(("results", "prefs.results")) else
        (PREFS_COLUMNS, {n: pa.string() for n in PREFS_COLUMNS} | {"value": pa.float64()}, {4: ("a number", finite_float)},
         "prefs", False) if name.startswith("prefs") else
        (QRELS_COLUMNS, {"query_id": pa.string(), "iteration": pa.string(), "doc_id": pa.string(), "relevance": pa.int64()},
         {3: ("a grade", whole_number)}, "qrels", False))

    def parse(content, block):
        monkeypatch.setattr(columns, "BLOCK_BYTES", block)
        try:
            return columns.read_columns(content, path, names, types, checks, what, extra).to_pydict()
        except FormatError as exc:
            return str(exc)

    whole = parse(read_bytes(path), 1 << 30)
    assert parse(path, 300) == whole and (isinstance(whole, str) or len(whole["query_id"]) > 10)


def test_lines_are_counted_across_blocks_of_whole_lines(write, monkeypatch):
    text = "\ufeff" + _large_run("\n# a comment\nq19 Q0 d5 7 0.5 a")  # a BOM, a blank line, a comment, no newline at the end
    path = write("b.run", text.encode())
    blocks = list(read_blocks(path, size=1000))
    assert b"".join(blocks) == text[1:].encode() and len(blocks) > 30
    assert all(block.endswith(b"\n") for block in blocks[:-1])
    monkeypatch.setattr(columns, "read_blocks", lambda path: read_blocks(path, size=1000))
    assert [line_number(path, row) for row in (0, 999, 1999, 2000)] == [1, 1000, 2000, 2003]


def test_a_run_is_written_a_batch_of_rows_at_a_time(tmp_path):
    """write_run made every id a Python string at once: fusing two runs of 12.5M rows peaked at 7.3 GB, most of it the
    two lists. Python's allocations while writing 400,000 rows now stay a batch's, and ranks go on across batches."""
    rows = 400_000
    run = Run(pa.array([f"q{i // 150_000}" for i in range(rows)]), pa.array([f"doc-{i:07d}" for i in range(rows)]),
              np.arange(rows, 0, -1, dtype=float), "r")
    tracemalloc.start()
    write_run(run, tmp_path / "r.run")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 16 * 2**20, peak  # the ids as lists alone take over 50 MB
    lines = (tmp_path / "r.run").read_text().splitlines()
    assert len(lines) == rows and lines[149_999] == "q0 Q0 doc-0149999 150000 250001.0 r"
    assert lines[150_000] == "q1 Q0 doc-0150000 1 250000.0 r"


def test_a_comment_line_of_a_file_ending_lines_in_a_lone_cr_is_skipped(write):
    """Comment lines were found after a newline only: in a file whose lines end in a lone CR (old Mac) a comment was read
    as data, and the run refused as 'could not be read'."""
    path = write("c.run", b"q1 Q0 d1 1 2.5 a\r# a note\r  # another\rq1 Q0 d2 2 1.5 a\r")
    assert read_run(path).to_dict() == {"q1": {"d1": 2.5, "d2": 1.5}}


def test_a_row_of_a_file_ending_lines_in_a_lone_cr_is_named_by_its_own_line(write):
    """The newline that ends a block opens no line, but a block ending in a lone CR was taken to open one: each block
    after it was numbered a line too far (`semrel eval` named a duplicate on line 3 as line 4)."""
    path = write("d.run", b"q1 Q0 d1 1 2.5 a\rq1 Q0 d2 2 1.5 a\rq1 Q0 d2 3 0.5 a\r")
    assert [line_number(path, row) for row in range(3)] == [1, 2, 3]


def test_blocks_end_at_a_lone_cr_and_a_line_has_a_limit(write, monkeypatch):
    """A file whose lines end in a lone CR, or that holds no line end, was one block: read whole, with no limit, since
    runs and qrels are parsed a block at a time. A lone CR ends a block, as it ends a line for normalise; a line past
    SEMREL_MAX_LINE_MB is refused, named by its number."""
    lines = [f"q1\tQ0\td{i}\t{i}\t{100 - i}\tr" for i in range(60)]
    path = write("cr.run", ("\r".join(lines) + "\r").encode())
    blocks = list(read_blocks(path, size=50))
    assert len(blocks) > 20 and b"".join(blocks) == ("\r".join(lines) + "\r").encode()
    monkeypatch.setattr(columns, "BLOCK_BYTES", 50)
    monkeypatch.setenv("SEMREL_MAX_LINE_MB", "0.001")  # 1,048 bytes
    assert read_run(path).to_dict() == {"q1": {f"d{i}": 100 - i for i in range(60)}}
    path = write("long.run", ("q1 Q0 d1 1 2 r\r\nq1 Q0 d2 2 1 r\r" + "x" * 2000).encode())
    with pytest.raises(FormatError, match=r"long\.run:3: the line is longer than the limit of 0\.001 MB"):
        list(read_blocks(path, size=50))


@pytest.mark.parametrize("bad", ["", *(f"d{c}1" for c in map(chr, range(0x110000)) if c.isspace())])
def test_writers_refuse_an_id_with_any_whitespace_among_many(tmp_path, bad):
    """Ids are checked a block at a time (joined and split again, at C speed, where a Python test of every character
    took most of a run's writing): every character str.isspace knows, or an empty id, deep in a block and past its
    first, is still refused, naming the id."""
    docs = [f"d{i}" for i in range(40_000)]
    docs[35_000] = bad
    run = Run(pa.array(["q1"] * len(docs)), pa.array(docs), np.arange(len(docs), 0, -1, dtype=float), "r")
    with pytest.raises(SemrelError, match=rf"^doc id {re.escape(repr(bad))} is empty or contains whitespace"):
        write_run(run, tmp_path / "r.run")
    with pytest.raises(SemrelError, match=rf"^doc id {re.escape(repr(bad))} is empty or contains whitespace"):
        write_qrels(Qrels(pa.array(["q1"] * len(docs)), pa.array(docs), np.ones(len(docs), dtype=np.int64)), tmp_path / "q.txt")
    assert not (tmp_path / "r.run").exists() and not (tmp_path / "q.txt").exists()


def test_writers_refuse_a_query_id_opening_with_a_hash_in_a_later_block(tmp_path):
    queries = ["q1"] * 40_000 + ["#q2"]
    run = Run(pa.array(queries), pa.array([f"d{i}" for i in range(len(queries))]), np.ones(len(queries)), "r")
    with pytest.raises(SemrelError, match=r"^query id '#q2' starts with '#'"):
        write_run(run, tmp_path / "r.run")


def test_of_several_bad_ids_in_a_block_the_writers_name_the_first_in_row_order(tmp_path):
    """Before the block check the ids of a block were checked as a set, so which of several bad ids was named hung on
    PYTHONHASHSEED ('#y' under seed 1, '' under seed 2): the first in row order is named now, whichever the seed."""
    queries = ["q1", "a b", "#y", "", "c\td"]
    qrels = Qrels(pa.array(queries), pa.array([f"d{i}" for i in range(len(queries))]), np.ones(len(queries), dtype=np.int64))
    for path in (tmp_path / "q.txt", tmp_path / "q.json"):
        with pytest.raises(SemrelError, match=r"^query id 'a b' is empty or contains whitespace"):
            write_qrels(qrels, path)
    with pytest.raises(SemrelError, match=r"^query id '#y' starts with '#'"):
        write_run(Run(pa.array(["q1", "#y", "a b"]), pa.array(["d1", "d2", "d3"]), np.ones(3), "r"), tmp_path / "r.run")
