"""Audit of retrieval/fusion.py, retrieval/pool.py, retrieval/retrieve.py, retrieval/corpus.py and formats/pool.py:
behaviour that hand-made mutants of them survived, pinned with values worked out by hand."""

from __future__ import annotations

import json
import os
import re

import numpy as np
import pytest

import semrel
from helpers import run
from semrel.errors import FormatError, SemrelError, UsageError, ValidationError
from semrel.formats.pool import given_pool, pool_error, read_pool, write_pool
from semrel.formats.trec import read_run
from semrel.records import Chunk, GoldenItem, Run
from semrel.retrieval.corpus import Corpus
from semrel.retrieval.fusion import FusionSpec, fuse_runs
from semrel.retrieval.pool import pool
from semrel.retrieval.retrieve import fuse, hits_from_run
from small_corpus import TEXTS, write_corpus, write_golden

# ---------------------------------------------------------------- fusion


def test_a_weight_of_0_leaves_its_run_out_of_wsum_and_is_accepted():
    """Only weights that are all 0 are refused: (0, 1) is the second run's min-max scores alone.
    a: x 3, y 1 -> x 1, y 0;  b: y 4, z 2 -> y 1, z 0;  0 x a + 1 x b: x 0, y 1, z 0 (x kept: a holds it), as ranx's wsum
    with weights [0, 1]."""
    a = Run.from_dict({"q": {"x": 3.0, "y": 1.0}}, "a")
    b = Run.from_dict({"q": {"y": 4.0, "z": 2.0}}, "b")
    fused = fuse_runs([a, b], FusionSpec("wsum", "minmax", (0.0, 1.0))).to_dict()
    assert fused == {"q": {"x": 0.0, "y": 1.0, "z": 0.0}}
    with pytest.raises(UsageError, match="give at least one weight above 0"):
        fuse_runs([a, b], FusionSpec("wsum", "minmax", (0.0, 0.0)))


def test_the_sum_normalisation_of_equal_scores_is_0_not_a_division_by_0():
    """sum: (s - min) / (sum of s - min x count), the denominator floored at 1e-9 as ranx floors it. a's query holds one
    doc (2 - 2 x 1 = 0) and p two equal scores (4 - 2 x 2 = 0): 0 / 1e-9 = 0. b: y (1 - 1) / (4 - 2) = 0, z 2 / 2 = 1;
    u (5 - 1) / (6 - 2) = 1, w 0. ranx.fuse(norm="sum", method="sum") gives the same."""
    a = Run.from_dict({"q": {"x": 2.0}, "p": {"u": 2.0, "v": 2.0}}, "a")
    b = Run.from_dict({"q": {"y": 1.0, "z": 3.0}, "p": {"u": 5.0, "w": 1.0}}, "b")
    fused = fuse_runs([a, b], FusionSpec("combsum", "sum")).to_dict()
    assert fused == {"q": {"x": 0.0, "y": 0.0, "z": 1.0}, "p": {"u": 1.0, "v": 0.0, "w": 0.0}}


def test_the_fused_run_is_named_after_its_output_file(cli, write, tmp_path):
    a, b = write("a.run", "q Q0 x 1 3 a\n"), write("b.run", "q Q0 y 1 2 b\n")
    out = tmp_path / "mine.run"
    assert cli("fuse", a, b, "-o", out).exit_code == 0
    assert {line.split()[5] for line in out.read_text().splitlines()} == {"mine"}


def test_the_manifest_records_rrf_k_for_rrf_alone_and_the_norm_for_the_score_methods_alone(cli, write, tmp_path):
    a, b = write("a.run", "q Q0 x 1 3 a\n"), write("b.run", "q Q0 y 1 2 b\n")
    for method, norm, rrf_k in (("rrf", None, 60), ("combsum", "minmax", None), ("combmnz", "zscore", None)):
        out = tmp_path / f"{method}.run"
        assert cli("fuse", a, b, "-o", out, "--method", method, *(["--norm", norm] if norm and norm != "minmax" else [])).exit_code == 0
        fusion = json.loads((tmp_path / f"{method}.run.manifest.json").read_text())["params"]["fusion"]
        assert (fusion["norm"], fusion["rrf_k"], fusion["weights"]) == (norm, rrf_k, None), method


# ---------------------------------------------------------------- hybrid fusion (retrieve.fuse)


def test_hybrid_fusion_keeps_the_best_k_per_query():
    """rrf over [4, 1] and [1, 9]: 1 gets 1/62 + 1/61, 4 gets 1/61, 9 and nothing else 1/62: k = 2 keeps 1 and 4."""
    first = [(np.array([4, 1]), np.array([2.0, 1.0]))]
    second = [(np.array([1, 9]), np.array([0.9, 0.8]))]
    ((positions, scores),) = fuse([first, second], k=2)
    assert positions.tolist() == [1, 4] and scores.tolist() == [1 / 62 + 1 / 61, 1 / 61]


def test_hybrid_fusion_keeps_queries_apart_when_a_position_is_the_largest():
    """Query 0 holds positions 3 and 1, query 1 positions 0 and 2 (one each per ranking, all at rank 1, 1/61):
    each query keeps its own two chunks (a (query, position) code of query x 3 + position would make query 0's
    position 3 query 1's position 0)."""
    first = [(np.array([3]), np.array([1.0])), (np.array([0]), np.array([1.0]))]
    second = [(np.array([1]), np.array([1.0])), (np.array([2]), np.array([1.0]))]
    hits = fuse([first, second], k=10)
    assert [p.tolist() for p, _ in hits] == [[1, 3], [0, 2]]  # ties to the earlier corpus position
    assert [s[0] for _, s in hits] == [1 / 61, 1 / 61]


def test_hybrid_fusion_uses_the_rrf_k_given():
    """rrf_k = 0: 1 / rank, so position 1 (rank 2 and rank 1) scores 1/2 + 1, position 4 1, position 9 1/2."""
    first = [(np.array([4, 1]), np.array([2.0, 1.0]))]
    second = [(np.array([1, 9]), np.array([0.9, 0.8]))]
    ((positions, scores),) = fuse([first, second], k=10, rrf_k=0)
    assert positions.tolist() == [1, 4, 9]
    assert scores[0] == 1.5 and scores[1] == 1.0 and scores[2] == 0.5


def test_a_hybrid_run_holds_k_chunks_per_query(monkeypatch):
    """bm25 over the six-chunk corpus and a dense ranking that disagrees with it (no model: ranked by hand), fused with
    rrf and cut to k = 2: the union of the two top-2 lists holds three or four chunks, the run two."""
    from semrel.retrieval import retrieve as module

    class Dense:
        def __init__(self, *args, **kwargs):
            pass

        def search(self, queries, k):
            return [(np.array([0, 5, 3])[:k], np.array([0.9, 0.8, 0.7])[:k]) for _ in queries]  # cats, rain, volcano

    monkeypatch.setattr(module, "DenseIndex", Dense)
    chunks = [Chunk(i, t, i, 0, len(t)) for i, t in TEXTS.items()]
    items = [GoldenItem("q1", "sourdough bread yeast", ("x",)), GoldenItem("q2", "ships carry boxes in ports", ("x",))]
    found = module.retrieve_files(chunks, items, module.RetrievalSpec("hybrid", k=2), None).to_dict()
    assert {q: len(docs) for q, docs in found.items()} == {"q1": 2, "q2": 2}
    # q2: bm25 ranks ships first (1/61), dense cats first (1/61): a tie, broken by corpus order (cats#0 is chunk 0)
    assert list(found["q2"]) == ["cats#0", "ships#0"] and found["q2"]["cats#0"] == 1 / 61


# ---------------------------------------------------------------- rerank's first stage (hits_from_run)


def test_a_first_stage_run_is_read_in_trec_eval_order_not_file_order(write):
    """Rows listed out of order: the candidates are by score descending, ties by doc id descending (chess#0 before
    cats#0 at 2.0), so a --rerank-depth cut keeps the run's own top chunks."""
    first = read_run(write("first.run", "q1 Q0 rain#0 1 1.0 f\nq1 Q0 cats#0 2 2.0 f\nq1 Q0 bread#0 3 5.0 f\nq1 Q0 chess#0 4 2.0 f\n"))
    ids = list(TEXTS)  # cats ships bread volcano chess rain
    ((positions, scores),) = hits_from_run(first, ["q1"], ids, "corpus.jsonl")
    assert [ids[p] for p in positions.tolist()] == ["bread#0", "chess#0", "cats#0", "rain#0"]
    assert scores.tolist() == [5.0, 2.0, 2.0, 1.0]


def test_a_first_stage_run_that_lists_a_chunk_twice_is_refused_as_pool_and_fuse_refuse_it(write):
    path = write("first.run", "q1 Q0 bread#0 1 3 f\nq1 Q0 cats#0 2 2 f\nq1 Q0 bread#0 3 1 f\n")
    with pytest.raises(SemrelError, match=r"first\.run:3: duplicate document in run for query 'q1' and doc 'bread#0'"):
        hits_from_run(read_run(path), ["q1"], list(TEXTS), "corpus.jsonl")


def test_a_sampled_rerank_does_not_say_the_unsampled_queries_are_missing_from_the_golden_set(write, monkeypatch):
    from semrel.records import QuerySample
    from semrel.retrieval import retrieve as module

    monkeypatch.setattr(module, "rerank_hits", lambda first, *args, **kwargs: first)  # no model: the first stage as it is
    first = write("first.run", "q1 Q0 bread#0 1 3 first\nq2 Q0 chess#0 1 2 first\nq3 Q0 volcano#0 1 1 first\n")
    chunks = [Chunk(i, t, i, 0, len(t)) for i, t in TEXTS.items()]
    items = [GoldenItem(q, "a query", ("x",)) for q in ("q1", "q2", "q3")]
    heard: list[str] = []
    found = module.retrieve_files(chunks, items, module.RetrievalSpec(None, first_stage_run=first, rerank="dense"), None,
                                  warn=heard.append, sample=QuerySample(limit=1))
    assert found.to_dict() == {"q1": {"bread#0": 3.0}}
    assert not [message for message in heard if "not in the golden set" in message], heard


def test_a_run_is_named_after_its_output_file_else_its_method(tmp_path):
    corpus = write_corpus(tmp_path / "corpus.jsonl")
    golden = write_golden(tmp_path / "golden.jsonl", [("q1", "ocean ports", "x", [])])
    result = run("retrieve", "--corpus", corpus, "--golden", golden, "--no-cache", "-o", tmp_path / "mine.run")
    assert result.exit_code == 0, result.output
    assert [line.split()[2:6:3] for line in (tmp_path / "mine.run").read_text().splitlines()] == [["ships#0", "mine"]]
    from semrel.retrieval.retrieve import RetrievalSpec, retrieve_files

    items = [GoldenItem("q1", "ocean ports", ("x",))]
    assert retrieve_files(str(corpus), items, RetrievalSpec(), tmp_path / "other.run").name == "other"
    assert retrieve_files(str(corpus), items, RetrievalSpec(), None).name == "bm25"


def test_a_corpus_of_no_chunks_is_refused_in_one_line():
    from semrel.retrieval.retrieve import RetrievalSpec, retrieve_files

    with pytest.raises(ValidationError, match="^corpus: the corpus has no chunks$"):
        retrieve_files([], [GoldenItem("q1", "ocean ports", ("x",))], RetrievalSpec(), None)


# ---------------------------------------------------------------- pool


def test_every_gold_chunk_of_a_query_is_pooled():
    items = [GoldenItem("q1", "q?", ("a",), ("g2", "g1", "g3")), GoldenItem("q2", "r?", ("b",), ("g1",))]
    runs = [Run.from_dict({"q1": {"g1": 2.0, "x": 1.0}}, "bm25")]
    assert pool(items, runs, 1) == [("q1", "g1", ("bm25", "gold")), ("q1", "g2", ("gold",)), ("q1", "g3", ("gold",)),
                                    ("q2", "g1", ("gold",))]


@pytest.mark.parametrize("record", [("q", "c", ("gold",), "x"), ("q", "c", ())], ids=["four fields", "no source"])
def test_a_pool_record_of_four_fields_or_no_source_is_refused(record):
    with pytest.raises(ValidationError, match=rf"^pool: item 0: {re.escape(repr(record))} is not \(query_id, chunk_id, sources\)"):
        given_pool([record])


def test_a_tie_at_the_pool_depth_goes_to_the_larger_doc_id_as_trec_eval_ranks_it(write):
    """x and y tie at 1.0, x listed first: trec_eval ranks y (the larger id) first, so depth 1 pools y."""
    runs = [read_run(write("r.run", "q1 Q0 x 1 1.0 r\nq1 Q0 y 2 1.0 r\nq1 Q0 a 3 2.0 r\n"))]
    items = [GoldenItem("q1", "q?", ("a",), ())]
    assert pool(items, runs, 2) == [("q1", "a", ("r",)), ("q1", "y", ("r",))]


def test_a_run_name_with_a_blank_is_no_pool_source():
    """pool.tsv's sources are one word each: a run named 'my run' is refused, by pool and by read_pool alike."""
    items = [GoldenItem("q1", "q?", ("a",), ("g1",))]
    with pytest.raises(UsageError, match=r"^run name 'my run' is not one word without commas; "):
        pool(items, [Run.from_dict({"q1": {"x": 1.0}}, "my run")], 1)
    with pytest.raises(ValidationError, match=r"^pool: item 0: "):
        given_pool([("q1", "x", ("my run",))])


@pytest.mark.parametrize("line, message", [
    ("q1\tx\tgold,my run", "sources 'gold,my run' should be comma-joined names"),
    ("q1\tx\tgold\textra", "expected 3 tab-separated fields, found 4"),
])
def test_read_pool_refuses_a_blank_in_a_source_and_a_fourth_field_on_their_line(tmp_path, line, message):
    path = tmp_path / "pool.tsv"
    path.write_text(f"query_id\tchunk_id\tsources\nq1\ta\tgold\n{line}\n")
    with pytest.raises(FormatError) as caught:
        read_pool(path)
    assert caught.value.line == 3 and message in str(caught.value)


def test_a_pool_written_with_crlf_line_ends_reads_as_with_lf(tmp_path):
    path = tmp_path / "pool.tsv"
    path.write_bytes(b"query_id\tchunk_id\tsources\r\nq1\ta\tbm25,gold\r\nq1\tb\tbm25\r\n")
    assert read_pool(path) == [("q1", "a", ("bm25", "gold")), ("q1", "b", ("bm25",))]


@pytest.mark.parametrize("row, message", [
    (("q1", "a b", ("gold",)), "chunk id 'a b' is empty or contains whitespace"),
    (("q1", "a", ()), "pair ('q1', 'a') has bad sources (); sources are names without commas or blanks"),
], ids=["blank in chunk id", "no source"])
def test_write_pool_refuses_a_row_read_pool_could_not_read_back(tmp_path, row, message):
    with pytest.raises(SemrelError, match=re.escape(message)):
        write_pool([("q1", "z", ("gold",)), row], tmp_path / "pool.tsv")
    assert not (tmp_path / "pool.tsv").exists()


def test_a_pool_error_names_the_line_of_its_pair_or_of_its_query(tmp_path):
    """judge's errors point at the pool.tsv line: the pair's own (chunk b of q1 on line 3, not q1's first line), the
    query's first line when no chunk is named, and no line at all for a pool given as records."""
    path = tmp_path / "pool.tsv"
    path.write_text("query_id\tchunk_id\tsources\nq1\ta\tgold\nq1\tb\tbm25\nquery_id\tc\tbm25\n")
    assert pool_error(str(path), "m", "q1", "b").line == 3
    assert pool_error(str(path), "m", "q1").line == 2
    assert pool_error(str(path), "m", "query_id").line == 4  # a query named query_id: its line, not the header
    error = pool_error("pool", "m", "q1", "b")
    assert isinstance(error, ValidationError) and str(error) == "pool: m"


# ---------------------------------------------------------------- corpus


def write_titled(path):
    path.write_text("".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n"
                            for i, t, x in [("a#0", "Cats", "purr."), ("b#0", "", "ships sail.")]))
    return path


def test_a_chunks_title_comes_before_its_text_in_memory_and_from_a_file(tmp_path):
    """What bm25 and dense see: 'title text' (indexed_text), from chunks in memory and a streamed file alike, keys too."""
    streamed = Corpus.read(write_titled(tmp_path / "c.jsonl"))
    held = Corpus.of_chunks([Chunk("a#0", "purr.", "a", 0, 5, "Cats"), Chunk("b#0", "ships sail.", "b", 0, 11)])
    assert streamed.texts(np.array([1, 0, 1])) == held.texts(np.array([1, 0, 1])) == ["ships sail.", "Cats purr.", "ships sail."]
    assert streamed.keys.tolist() == held.keys.tolist()


def test_a_corpus_file_removed_since_it_was_read_is_said_to_have_changed(tmp_path):
    corpus = Corpus.read(write_titled(tmp_path / "c.jsonl"))
    os.unlink(tmp_path / "c.jsonl")
    with pytest.raises(SemrelError, match=r"c\.jsonl: changed while it was being read; run again$"):
        corpus.texts(np.array([0]))


def test_a_changed_corpus_file_yields_no_text_before_the_error(tmp_path):
    """The store encodes texts as they come: a chunk of the changed file must not be handed out under the old key."""
    path = write_titled(tmp_path / "c.jsonl")
    corpus = Corpus.read(path)
    path.write_text(path.read_text().replace("purr.", "bark.") + "\n")
    with pytest.raises(SemrelError, match="changed while it was being read"):
        next(corpus.iter_texts(np.array([0, 1])))


@pytest.mark.parametrize("method", ["lucene", "bm25l"])
def test_a_cache_that_cannot_be_used_names_the_callers_way_round_it(tmp_path, method):
    """semrel.retrieve told a Python caller to pass --cache DIR or --no-cache (or to use --no-cache for bm25l);
    it names its parameter, which `semrel retrieve` shows as the options."""
    corpus = write_corpus(tmp_path / "corpus.jsonl")
    golden = write_golden(tmp_path / "golden.jsonl", [("q1", "ocean ports", "x", [])])
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "bm25").write_text("a file, not the folder of the BM25 indexes")
    folder = re.escape(str(tmp_path / "cache" / "bm25"))
    said = {"lucene": rf"{folder}/[^:]+: cannot create the BM25 index \(.*\); pass {{}}",
            "bm25l": r"BM25 method 'bm25l': the on-disk index scores lucene, robertson, atire; use {} for bm25s' other variants"}[method]
    with pytest.raises(SemrelError) as raised:
        semrel.retrieve(str(corpus), str(golden), "bm25", bm25_method=method, cache=tmp_path / "cache")
    python, command = ("cache='DIR' or cache=False", "--cache DIR or --no-cache") if method == "lucene" else ("cache=False", "--no-cache")
    assert re.fullmatch(said.format(python), str(raised.value)), str(raised.value)
    result = run("retrieve", "--corpus", corpus, "--golden", golden, "--bm25-method", method, "--cache", tmp_path / "cache",
                 "-o", tmp_path / "out.run")
    assert result.exit_code != 0 and re.fullmatch(f"semrel: error: {said.format(command)}\n", result.stderr), result.stderr
