"""Every file reader, fed arbitrary bytes, returns a result or raises one SemrelError: never
another exception. Inputs are built from fragments of the real formats, so many of them get
past the first check and exercise the deeper ones."""

from __future__ import annotations

import gzip

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from semrel.errors import SemrelError
from semrel.evaluation.measures import parse_measures
from semrel.evaluation.metrics import evaluate
from semrel.formats import columns, read_qrels, read_run
from semrel.formats.corpus import read_corpus, read_golden
from semrel.formats.judgments import read_judgments
from semrel.formats.pool import read_pool
from semrel.records import Qrels

FRAGMENTS = [
    b"q1", b"Q0", b"d9", b"d10", b"0", b"1", b"-1", b"2.5", b"nan", b"inf", b"1e400", b"run", b" ", b"  ", b"\t",
    b"\n", b"\r\n", b"\xef\xbb\xbf", b"\xff", b"\x00", b"query-id\tcorpus-id\tscore\n", b"query_id\tchunk_id\tsources\n",
    b'{"', b'"}', b'{"_id": "c1", "text": "t"}', b'{"query_id": "q1", "query": "x", "reference_answer": "a"}',
    b'{"query_id": "q1", "chunk_id": "c1", "P": 0.5, "R": 0.5, "F": 0.5}', b'"P": "x"', b"[1, 2]", b"null", b",",
    b":", b'"gold_chunk_ids": [1, null]', b'"meta": 3', b'"text": 7', b"gold", b"bm25,gold",
]
TOKENS = [b"q1", b"q2", b"Q0", b"0", b"d9", b"d10", b"1", b"2", b"-1", b"0.5", b"nan", b"x", b"run", b"gold", b"bm25"]
JSON_LINES = [
    b'{"_id": "c1", "text": "t", "doc_id": "d", "start": 0, "end": 1}', b'{"_id": "c1", "text": null}',
    b'{"_id": 3, "text": "t"}', b'{"query_id": "q1", "query": "x", "reference_answer": ["a", "b"], "gold_chunk_ids": ["c1"]}',
    b'{"query_id": "q1", "query": "", "reference_answer": 5}', b'{"query_id": "q1", "chunk_id": "c1", "P": 0.5, "R": 0.5, "F": 0.5}',
    b'{"query_id": "q1", "chunk_id": "c1", "P": NaN, "R": 1e999, "F": true}', b'{"_id": "q1", "text": "x"}', b"[]", b"{",
]
CONTENT = st.one_of(
    st.lists(st.sampled_from(FRAGMENTS) | st.binary(max_size=6), max_size=30).map(b"".join),
    st.lists(st.lists(st.sampled_from(TOKENS), min_size=2, max_size=7).map(b" ".join), max_size=8).map(b"\n".join),
    st.lists(st.lists(st.sampled_from(TOKENS), min_size=2, max_size=4).map(b"\t".join), max_size=8)
    .map(lambda lines: b"\n".join([b"query_id\tchunk_id\tsources", *lines])),
    st.lists(st.sampled_from(JSON_LINES), max_size=6).map(b"\n".join),
    st.lists(  # well-formed run and qrels lines, with repeats and odd values among them
        st.tuples(st.sampled_from(["q1", "q2"]), st.sampled_from(["d9", "d10", "d1"]),
                  st.sampled_from(["1", "0", "-1", "0.25", "nan", "inf", "x"]))
        .map(lambda t: f"{t[0]} Q0 {t[1]} 1 {t[2]} run" if t[2] != "x" else f"{t[0]} 0 {t[1]} {t[2]}"),
        max_size=8,
    ).map(lambda lines: "\n".join(lines).encode()),
)
READERS = [read_run, read_qrels, read_corpus, read_golden, read_judgments, read_pool]


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(content=CONTENT, compress=st.booleans())
def test_readers_give_a_result_or_one_semrel_error(tmp_path, content, compress):
    path = tmp_path / "input"
    path.write_bytes(gzip.compress(content) if compress else content)
    for reader in READERS:
        try:
            result = reader(str(path))
        except SemrelError as exc:
            assert str(exc) and "\n" not in str(exc).strip(), (reader.__name__, str(exc))
            continue
        if reader is read_run:  # a run that reads must also evaluate, or fail as one SemrelError
            try:
                evaluate(Qrels.from_dict({"q1": {"d9": 1}}), result, parse_measures(["nDCG@10,RR,P@5"]))
            except SemrelError:
                pass


RUN_LINES = st.lists(st.lists(st.sampled_from([b"q1", b"q2", b"Q0", b"d9", b"d10", b"1", b"2.5", b"run", b"x"]), min_size=5, max_size=8)
                     .flatmap(lambda fields: st.sampled_from([b" ", b"\t", b"  ", b" \t"]).map(lambda gap: gap.join(fields)))
                     | st.sampled_from([b"# a comment", b"", b"  "]), max_size=12)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=RUN_LINES, end=st.sampled_from([b"\n", b"\r\n"]))
def test_a_run_read_in_blocks_of_lines_reads_as_in_one(tmp_path, monkeypatch, lines, end):
    """Tabs, runs of blanks, extra fields and comments are mended a block of lines at a time (memory); tiny
    blocks must give what one block gives, or the same error."""
    path = tmp_path / "r.run"
    path.write_bytes(end.join(lines) + end)

    def read(block: int):
        monkeypatch.setattr(columns, "BLOCK_BYTES", block)
        try:
            return read_run(str(path)).to_dict()
        except SemrelError as exc:
            return str(exc)

    assert read(1 << 24) == read(5)


def test_a_line_longer_than_arrow_reads_is_named(tmp_path, monkeypatch):
    """It was "could not be read as qid Q0 docid rank score tag", naming no line (a 200 MB line)."""
    monkeypatch.setattr(columns, "ARROW_BLOCK", 1 << 10)
    path = tmp_path / "r.run"
    path.write_text("q1\tQ0\td1\t1\t0.5\tr\n" + f"q1\tQ0\t{'d' * 5000}\t2\t0.4\tr\n")
    with pytest.raises(SemrelError, match=r"r.run:2: the line is 5,0\d\d bytes long; semrel reads lines of up to 0 MB"):
        read_run(str(path))
