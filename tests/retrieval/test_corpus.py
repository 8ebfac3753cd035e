"""retrieval.corpus.Corpus: ids and text keys held, texts read again by position; runs over a corpus file equal
runs over the same chunks in memory, with and without the cache, and a warm vector store reads no text."""

from __future__ import annotations

import json
import os
import tracemalloc

import numpy as np
import pytest

from semrel.encoding.vectors import text_keys
from semrel.errors import SemrelError, ValidationError
from semrel.formats.corpus import read_corpus
from semrel.records import Run
from semrel.retrieval.corpus import Corpus
from semrel.retrieval.lexical import indexed_text
from semrel.retrieval.retrieve import RetrievalSpec, hits_from_run, retrieval_stores, retrieve_files
from small_corpus import TEXTS, write_corpus, write_golden

QUERIES = {"q1": "why does sourdough bread rise slowly", "q2": "which chess piece is the most powerful",
           "q3": "how do volcanoes erupt", "q4": "ocean ports"}


def titled_corpus(path):
    """The small corpus, one chunk with a title (its indexed text is the title, then the text)."""
    rows = [{"_id": i, "title": "Bakery" if i == "bread#0" else "", "text": t} for i, t in TEXTS.items()]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_texts_by_position_and_keys_equal_the_chunks_in_memory(tmp_path):
    path = titled_corpus(tmp_path / "corpus.jsonl")
    chunks = read_corpus(path)
    streamed, held = Corpus.read(path), Corpus.of_chunks(chunks)
    texts = [indexed_text(c) for c in chunks]
    assert texts[2] == "Bakery " + TEXTS["bread#0"]
    for corpus in (streamed, held):
        assert corpus.ids == list(TEXTS) and len(corpus) == 6
        assert np.array_equal(corpus.keys, text_keys(texts))
        assert corpus.texts(np.array([4, 0, 4, 2])) == [texts[4], texts[0], texts[4], texts[2]]
        assert list(corpus.iter_texts(np.array([1, 5]))) == [texts[1], texts[5]]
        assert corpus.texts(np.zeros(0, dtype=np.int64)) == []


def test_a_corpus_file_changed_since_it_was_read_is_one_line_error(tmp_path):
    path = write_corpus(tmp_path / "corpus.jsonl")
    corpus = Corpus.read(path)
    with path.open("a") as handle:
        handle.write(json.dumps({"_id": "new#0", "text": "another"}) + "\n")
    with pytest.raises(SemrelError, match=f"^{path}: changed while it was being read; run again$"):
        corpus.texts(np.array([0]))
    os.remove(path)
    with pytest.raises(SemrelError, match="changed while it was being read"):
        corpus.texts(np.array([0]))


def test_a_streamed_corpus_holds_its_ids_and_keys_not_its_texts(tmp_path):
    texts = 20_000 * 1000
    path = write_corpus(tmp_path / "corpus.jsonl", {f"d{n}#0": f"{n} " + "x" * 994 for n in range(20_000)})
    tracemalloc.start()
    try:
        corpus = Corpus.read(path)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(corpus) == 20_000 and held < texts / 10, held


@pytest.mark.slow
def test_runs_over_a_corpus_file_equal_runs_over_its_chunks_in_memory(tmp_path, monkeypatch):
    path = titled_corpus(tmp_path / "corpus.jsonl")
    golden = write_golden(tmp_path / "golden.jsonl", [(q, t, "x", []) for q, t in QUERIES.items()])
    first = tmp_path / "first.run"
    first.write_text("q1 Q0 rain#0 1 3 f\nq1 Q0 bread#0 2 2 f\nq1 Q0 ships#0 3 1 f\nq2 Q0 cats#0 1 2 f\nq2 Q0 chess#0 2 1 f\n")
    specs = {"bm25": RetrievalSpec("bm25", 4), "dense": RetrievalSpec("dense", 4), "hybrid": RetrievalSpec("hybrid", 4),
             "bm25-rerank": RetrievalSpec("bm25", 3, rerank="dense", rerank_depth=4),
             "run-rerank": RetrievalSpec(None, 2, rerank="dense", rerank_depth=3, first_stage_run=str(first))}

    def ran(name, spec, corpus, cache):
        store, lexical = retrieval_stores(spec, corpus, tmp_path / "cache", cache)
        out = tmp_path / f"{name}.run"
        retrieve_files(corpus, str(golden), spec, out, store=store, lexical=lexical, name="x")
        return out.read_bytes()

    for method, spec in specs.items():  # the file streamed; the chunks held (in memory, or a run without the cache)
        runs = {ran(f"{method}-{where}-{cache}", spec, corpus, cache)
                for where, corpus, cache in (("file", str(path), True), ("memory", read_corpus(path), True),
                                             ("file", str(path), False))}
        assert len(runs) == 1 and next(iter(runs)), method

    def no_text(self, positions):
        raise AssertionError("a warm store asked for texts")

    monkeypatch.setattr(Corpus, "iter_texts", no_text)  # every vector is in the store now: no text is read again
    for method in ("hybrid", "run-rerank"):
        assert ran(f"{method}-warm", specs[method], str(path), True) == (tmp_path / f"{method}-file-True.run").read_bytes()


def test_the_store_refuses_texts_that_are_not_the_ones_keyed(tmp_path):
    """A file rewritten in place between the two reads (same stamp or not) must not put a vector under another text's key."""
    from semrel.encoding.vectors import VectorStore
    from semrel.progress import no_progress

    store = VectorStore(tmp_path / "cache", None)
    with pytest.raises(SemrelError, match="changed while they were read"):
        store.rows_for(text_keys(["one", "two"]), lambda at: ["one", "three"], "x", no_progress)
    assert store.rows == 0


def test_a_first_stage_run_maps_its_own_chunks_not_the_corpus():
    ids = [f"doc{n}#0" for n in range(200_000)]
    run = Run.from_dict({"q1": {"doc7#0": 2.0, "doc199999#0": 3.0}, "q3": {"doc0#0": 1.0}})
    tracemalloc.start()
    try:
        hits = hits_from_run(run, ["q1", "q2"], ids, "corpus.jsonl")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [(p.tolist(), s.tolist()) for p, s in hits] == [([199_999, 7], [3.0, 2.0]), ([], [])]
    assert peak < 1_000_000, peak  # a dictionary of every corpus id took 16 MB here
    with pytest.raises(ValidationError, match="^run run: chunk 'doc9#1' \\(query 'q1'\\) is not in corpus.jsonl; rerank"):
        hits_from_run(Run.from_dict({"q1": {"doc9#1": 1.0}}), ["q1"], ids, "corpus.jsonl")


def test_a_corpus_file_changed_while_its_texts_are_read_again_is_an_error(tmp_path, monkeypatch):
    """The stamp is checked after the read too: a line added once the first check passed must not go unnoticed."""
    from semrel.retrieval import corpus as corpus_module

    path = write_corpus(tmp_path / "corpus.jsonl")
    corpus, real = Corpus.read(path), corpus_module.iter_corpus

    def growing(name):
        for n, row in enumerate(real(name)):
            yield row
            if n == 0:
                with path.open("a") as handle:
                    handle.write(json.dumps({"_id": "new#0", "text": "another"}) + "\n")

    monkeypatch.setattr(corpus_module, "iter_corpus", growing)
    with pytest.raises(SemrelError, match=f"^{path}: changed while it was being read; run again$"):
        corpus.texts(np.array([0]))
