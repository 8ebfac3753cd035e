"""Pooling runs with gold chunks, and the pool.tsv format other steps read."""

from __future__ import annotations

import json

import pytest

from helpers import assert_one_error, run
from semrel.errors import FormatError
from semrel.formats.pool import read_pool, write_pool


def write_files(tmp_path):
    golden = tmp_path / "golden.jsonl"
    golden.write_text(
        json.dumps({"query_id": "q1", "query": "a?", "reference_answer": "a", "gold_chunk_ids": ["a#0"]}) + "\n"
        + json.dumps({"query_id": "q2", "query": "b?", "reference_answer": "b", "gold_chunk_ids": []}) + "\n"
    )
    (tmp_path / "runs").mkdir()
    # ranks are deliberately wrong: the order comes from the scores, as in trec_eval
    (tmp_path / "runs" / "bm25.run").write_text(
        "q1 Q0 c#0 1 1.0 bm25\nq1 Q0 a#0 2 3.0 bm25\nq1 Q0 b#0 3 2.0 bm25\nq2 Q0 d#0 1 5.0 bm25\nq2 Q0 e#0 2 4.0 bm25\n"
    )
    (tmp_path / "runs" / "dense.run").write_text("q1 Q0 c#0 1 0.9 dense\nq1 Q0 f#0 2 0.8 dense\nq1 Q0 g#0 3 0.7 dense\n"
                                                 "q9 Q0 a#0 1 0.9 dense\n")
    return golden, tmp_path / "runs" / "bm25.run", tmp_path / "runs" / "dense.run"


def test_pool_is_the_union_of_run_tops_and_gold_with_sources(tmp_path):
    golden, bm25, dense = write_files(tmp_path)
    out = tmp_path / "pool.tsv"
    result = run(*["pool", "--golden", str(golden), str(bm25), str(dense),
                                       "--depth", "2", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text() == (
        "query_id\tchunk_id\tsources\n"
        "q1\ta#0\tbm25,gold\n"
        "q1\tb#0\tbm25\n"
        "q1\tc#0\tdense\n"
        "q1\tf#0\tdense\n"
        "q2\td#0\tbm25\n"
        "q2\te#0\tbm25\n"
    )
    assert "1 query of run dense is not in the golden set" in result.output and "'q9'" in result.output
    assert read_pool(out)[0] == ("q1", "a#0", ("bm25", "gold"))
    manifest = json.loads((tmp_path / "pool.tsv.manifest.json").read_text())
    assert manifest["rows"] == 6 and manifest["params"]["depth"] == 2 and len(manifest["inputs"]) == 3


def test_pool_without_runs_holds_the_gold_chunks_and_depth_reaches_deeper(tmp_path):
    golden, bm25, dense = write_files(tmp_path)
    out = tmp_path / "pool.tsv"
    alone = run(*["pool", "--golden", str(golden), "-o", str(out)])
    assert alone.exit_code == 0 and read_pool(out) == [("q1", "a#0", ("gold",))]
    assert "semrel: warning: no run given: the pool is the golden set's gold chunks alone, with no retrieved chunk to judge" \
        in alone.stderr  # an empty run and a run of one query were warned of, no run at all went by in silence
    assert run(*["pool", "--golden", str(golden), str(dense), "-o", str(out)]).exit_code == 0
    assert [c for _, c, _ in read_pool(out)] == ["a#0", "c#0", "f#0", "g#0"]


@pytest.mark.parametrize("args, message", [
    (["--depth", "0"], "Invalid value for '--depth'"),
    (["{bm25}", "{bm25}"], "run name 'bm25' is used twice"),
    (["{tmp}/gold.run"], "run name 'gold' is reserved"),
    (["{tmp}/nope.run"], "nope.run: no such file"),
])
def test_bad_pool_options_give_one_line(tmp_path, args, message):
    golden, bm25, _ = write_files(tmp_path)
    (tmp_path / "gold.run").write_text("q1 Q0 a#0 1 1.0 x\n")
    args = [a.format(bm25=bm25, tmp=tmp_path) for a in args]
    result = run(*["pool", "--golden", str(golden), *args, "-o", str(tmp_path / "p.tsv")])
    assert result.exit_code != 0
    assert len(result.output.strip().splitlines()) == 1 and message in result.output, result.output
    assert not (tmp_path / "p.tsv").exists()


@pytest.mark.parametrize("text, line, message", [
    ("query\tchunk\n", 1, "first line should be the header"),
    ("query_id\tchunk_id\tsources\nq1\ta#0\n", 2, "expected 3 tab-separated fields, found 2"),
    ("query_id\tchunk_id\tsources\nq1\ta#0\tgold\n\nq1\ta#0\tbm25\n", 4, "already on line 2"),
    ("query_id\tchunk_id\tsources\nq1\ta b\tgold\n", 2, "chunk id 'a b' is empty or contains whitespace"),
    ("query_id\tchunk_id\tsources\nq1\ta\tgold,\n", 2, "sources 'gold,'"),
])
def test_read_pool_names_the_bad_line(tmp_path, text, line, message):
    path = tmp_path / "pool.tsv"
    path.write_text(text)
    with pytest.raises(FormatError) as caught:
        read_pool(path)
    assert caught.value.line == line and message in str(caught.value)


def test_write_pool_sorts_rows_and_sources(tmp_path):
    path = tmp_path / "pool.tsv.gz"
    assert write_pool([("q2", "b", ("x",)), ("q1", "z", ("gold", "bm25", "gold")), ("q1", "a", ("y",))], path) == 3
    assert read_pool(path) == [("q1", "a", ("y",)), ("q1", "z", ("bm25", "gold")), ("q2", "b", ("x",))]


@pytest.mark.parametrize("rows, why", [("", "it holds no row"), ("q9 Q0 a#0 1 1.0 other\n", "it holds no row of a golden query")],
                         ids=["empty", "other queries"])
def test_a_run_that_adds_nothing_is_warned_about(tmp_path, rows, why):
    golden, bm25, _ = write_files(tmp_path)
    other = tmp_path / "other.run"
    other.write_text(rows)
    result = run("pool", "--golden", golden, bm25, other, "-o", tmp_path / "pool.tsv")
    assert result.exit_code == 0, result.output
    assert f"semrel: warning: run other adds no pair to the pool: {why}" in result.stderr
    assert "run bm25 adds no pair" not in result.stderr


def test_a_document_twice_in_a_run_is_refused_as_eval_refuses_it(tmp_path):
    """It took two of the run's `depth` places: at depth 2, x twice and y (third) left out of the pool."""
    golden, _, _ = write_files(tmp_path)
    twice = tmp_path / "twice.run"
    twice.write_text("q1 Q0 x 1 3 r\nq1 Q0 x 2 2 r\nq1 Q0 y 3 1 r\n")
    result = run("pool", "--golden", golden, twice, "--depth", "2", "-o", tmp_path / "pool.tsv")
    assert_one_error(result, f"{twice}:2: duplicate document in run for query 'q1' and doc 'x'")
    assert not (tmp_path / "pool.tsv").exists()


def test_rows_of_chunks_the_corpus_does_not_list_leave_the_pool_and_the_rest_keep_their_scores(tmp_path):
    """--corpus drops a run's rows of unlisted chunks; the rows left keep their own scores (a run file need not be
    sorted), so the top `depth` is the one the run ranks. The corpus is an input of the pool's manifest."""
    golden, _, _ = write_files(tmp_path)
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"_id": c, "text": "t"}) + "\n" for c in ("a#0", "b#0", "c#0")))
    mine = tmp_path / "mine.run"
    mine.write_text("q1 Q0 zz#9 1 0.9 r\nq1 Q0 c#0 2 0.1 r\nq1 Q0 b#0 3 0.5 r\n")
    out = tmp_path / "pool.tsv"
    result = run("pool", "--golden", golden, mine, "--depth", "1", "--corpus", corpus, "-o", out)
    assert result.exit_code == 0, result.output
    assert read_pool(out) == [("q1", "a#0", ("gold",)), ("q1", "b#0", ("mine",))]
    assert "1 of the 3 rows of run 'mine' (33%) names a chunk the corpus does not list (e.g. 'zz#9'): it is left out" in result.stderr
    manifest = json.loads((tmp_path / "pool.tsv.manifest.json").read_text())
    assert [i["path"] for i in manifest["inputs"]] == [str(golden), str(mine), str(corpus)]


def test_the_queries_a_run_has_beyond_the_golden_set_are_said_by_the_first_of_them(tmp_path):
    """The example named is the least id, the same on every run (not a set's order, which changes with the hash seed)."""
    golden, _, _ = write_files(tmp_path)
    other = tmp_path / "other.run"
    other.write_text("q1 Q0 a#0 1 1.0 r\n" + "".join(f"x{n:02d} Q0 a#0 1 1.0 r\n" for n in range(30, 0, -1)))
    result = run("pool", "--golden", golden, other, "-o", tmp_path / "pool.tsv")
    assert "30 queries of run other are not in the golden set and are left out (e.g. 'x01')" in result.stderr, result.stderr


def test_pool_refuses_a_depth_of_no_chunks_from_python_too():
    """The CLI's --depth refuses 0 itself; the function, called from Python, must not pool gold alone as if asked to."""
    from semrel.errors import UsageError
    from semrel.retrieval.pool import pool

    with pytest.raises(UsageError, match="depth=0: give a positive number"):
        pool([], [], 0)


def test_the_sources_of_a_pair_are_sorted_as_pool_tsv_lists_them():
    """From Python too: eleven sources in name order, not a set's order (which the hash seed moves)."""
    from semrel.records import GoldenItem, Run
    from semrel.retrieval.pool import pool

    runs = [Run.from_dict({"q1": {"a#0": 1.0}}, name) for name in ("r7", "r2", "r9", "r0", "r5", "r1", "r8", "r3", "r6", "r4")]
    assert pool([GoldenItem("q1", "q?", ("a",), ("a#0",))], runs, 1) == [("q1", "a#0", ("gold", *(f"r{n}" for n in range(10))))]


def test_golden_queries_that_no_run_holds_are_warned_of(tmp_path):
    """They were pooled with their gold chunks alone, without a word (a run of a sample of the queries)."""
    golden, bm25, dense = write_files(tmp_path)
    result = run("pool", "--golden", str(golden), str(dense), "-o", str(tmp_path / "pool.tsv"))
    assert result.exit_code == 0, result.output
    assert "semrel: warning: 1 of the golden set's 2 queries is in no run (e.g. 'q2'): their pool is their gold chunks alone" \
        in result.stderr
    assert "in no run" not in run("pool", "--golden", str(golden), str(bm25), "-o", str(tmp_path / "p2.tsv")).stderr


def test_pool_files_holds_one_whole_run_at_a_time(tmp_path, monkeypatch):
    """Each run is cut to its top `depth` as it is read: all of them were held whole until pooling, so 8 runs of 10M rows
    peaked at 4.9 GB (one at a time: 1.7 GB). When a run is read, no whole run read before is alive."""
    import gc
    import weakref

    from semrel.retrieval import pool as pooling

    golden, bm25, dense = write_files(tmp_path)
    third = tmp_path / "third.run"
    third.write_text(bm25.read_text())
    read, alive_at_read = [], []
    whole_run = pooling.read_run

    def reading(path):
        gc.collect()
        alive_at_read.append(sum(ref() is not None for ref in read))
        run = whole_run(path)
        read.append(weakref.ref(run))
        return run

    monkeypatch.setattr(pooling, "read_run", reading)
    rows = pooling.pool_files(golden, [bm25, dense, third], 2)
    assert alive_at_read == [0, 0, 0]
    assert ("q1", "a#0", ("bm25", "gold", "third")) in rows and ("q1", "f#0", ("dense",)) in rows
