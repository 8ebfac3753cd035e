"""The dense vector store (real MiniLM on the bundled sample data) and the blockwise exact search."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

from helpers import assert_one_error, ok, run
from semrel.encoding.models import resolve_model
from semrel.formats.corpus import read_corpus
from semrel.progress import no_progress
from semrel.retrieval.lexical import indexed_text
from semrel.retrieval.retrieve import contenders, embed, search_vectors, strictly_ranked

DATA = Path(__file__).parents[2] / "data"



@pytest.fixture(scope="module")
def sample(tmp_path_factory):
    """The bundled docs chunked as the demo does, and its golden set."""
    folder = tmp_path_factory.mktemp("sample")
    ok("corpus", "chunk", DATA / "docs", "--size", "120", "--overlap", "20", "-o", folder / "corpus.jsonl")
    ok("golden", "import", DATA / "golden.csv", "--corpus", folder / "corpus.jsonl", "-o", folder / "golden.jsonl")
    return folder


def dense(sample, out, *options):
    result = ok("retrieve", "--corpus", sample / "corpus.jsonl", "--golden", sample / "golden.jsonl",
                 "--method", "dense", "-k", "10", "-o", out, *options)
    manifest = json.loads(Path(f"{out}.manifest.json").read_text())
    return Path(out).read_text(), result.stderr, manifest["params"].get("vector_store")


@pytest.mark.slow
def test_second_run_encodes_nothing_and_runs_equal_the_in_memory_path(sample, tmp_path):
    chunks = len(read_corpus(sample / "corpus.jsonl"))
    in_memory, _, none = dense(sample, tmp_path / "memory.run", "--no-cache")
    first, _, store = dense(sample, tmp_path / "first.run", "--cache", tmp_path / "cache")
    second, stderr, again = dense(sample, tmp_path / "second.run", "--cache", tmp_path / "cache")
    assert none is None
    assert (store["encoded"], store["reused"]) == (chunks, 0)
    assert (again["encoded"], again["reused"]) == (0, chunks)
    assert f"chunk vectors: 0 encoded, {chunks} from the vector store" in stderr and "encoding chunks" not in stderr
    untagged = [[line.rsplit(" ", 1)[0] for line in run.splitlines()] for run in (in_memory, first, second)]
    assert untagged[0] == untagged[1] == untagged[2] and len(untagged[0]) > 100
    assert Path(store["folder"]).parent == tmp_path / "cache" / "vectors"


@pytest.mark.slow
def test_a_grown_corpus_encodes_only_its_new_chunks_and_keeps_the_old_rows(sample, tmp_path):
    lines = (sample / "corpus.jsonl").read_text().splitlines(keepends=True)
    half = len(lines) // 2
    (tmp_path / "half.jsonl").write_text("".join(lines[:half]))
    cache = tmp_path / "cache"
    ok("retrieve", "--corpus", tmp_path / "half.jsonl", "--golden", sample / "golden.jsonl", "--method", "dense",
        "-o", tmp_path / "half.run", "--cache", cache)
    folder = json.loads((tmp_path / "half.run.manifest.json").read_text())["params"]["vector_store"]["folder"]
    before = (Path(folder) / "vectors.f32").read_bytes()
    _, _, store = dense(sample, tmp_path / "full.run", "--cache", cache)
    assert (store["encoded"], store["reused"]) == (len(lines) - half, half)
    after = (Path(folder) / "vectors.f32").read_bytes()
    assert after[: len(before)] == before and len(after) == len(before) * len(lines) // half
    stored = np.frombuffer(after, dtype="<f4").reshape(len(lines), -1)
    texts = [indexed_text(c) for c in read_corpus(sample / "corpus.jsonl")]
    np.testing.assert_allclose(stored, embed(texts, "", None, no_progress), atol=1e-5)
    # the first corpus again: its rows are the store's first, and the rows after them are not its chunks
    ok("retrieve", "--corpus", tmp_path / "half.jsonl", "--golden", sample / "golden.jsonl", "--method", "dense",
        "-o", tmp_path / "half-again.run", "--cache", cache)
    again, first = ([line.rsplit(" ", 1)[0] for line in (tmp_path / name).read_text().splitlines()]
                    for name in ("half-again.run", "half.run"))
    assert again == first and len(first) > 10


@pytest.mark.slow
def test_a_killed_run_leaves_committed_rows_only_and_the_next_run_carries_on(sample, tmp_path):
    cache = tmp_path / "cache"
    _, _, store = dense(sample, tmp_path / "a.run", "--cache", cache)
    folder = Path(store["folder"])
    sizes = {name: (folder / name).stat().st_size for name in ("vectors.f32", "keys.bin")}
    for name in sizes:  # a run killed between appending rows and committing their count
        with open(folder / name, "ab") as handle:
            handle.write(os.urandom(1000))
    _, _, again = dense(sample, tmp_path / "b.run", "--cache", cache)
    assert again["encoded"] == 0
    assert {name: (folder / name).stat().st_size for name in sizes} == sizes
    assert json.loads((folder / "store.json").read_text())["rows"] == store["encoded"]


@pytest.mark.slow
def test_a_bit_flipped_in_a_stored_vector_is_one_error_naming_the_store_and_the_way_on(sample, tmp_path):
    """A flipped bit keeps vectors.f32's length: the run ranked that chunk by another vector, without a word."""
    _, _, store = dense(sample, tmp_path / "a.run", "--cache", tmp_path / "cache")
    vectors = Path(store["folder"]) / "vectors.f32"
    data = bytearray(vectors.read_bytes())
    data[len(data) // 2 + 3] ^= 0x01
    vectors.write_bytes(bytes(data))
    result = run("retrieve", "--corpus", sample / "corpus.jsonl", "--golden", sample / "golden.jsonl", "--method", "dense",
                 "-o", tmp_path / "b.run", "--cache", tmp_path / "cache")
    assert_one_error(result, store["folder"], "are damaged", f"delete {store['folder']} to rebuild it", "--cache DIR or --no-cache")


@pytest.mark.slow
def test_another_model_gets_its_own_store_and_encodes_afresh(sample, tmp_path):
    """A copy of MiniLM cut to 3 layers (its config changed): another fingerprint, other vectors."""
    model = tmp_path / "minilm-3"
    model.mkdir()
    for path in Path(resolve_model()).iterdir():
        if path.is_file() and path.name != "config.json":
            (model / path.name).symlink_to(path)
    config = json.loads((Path(resolve_model()) / "config.json").read_text())
    (model / "config.json").write_text(json.dumps({**config, "num_hidden_layers": 3}))
    cache = tmp_path / "cache"
    _, _, first = dense(sample, tmp_path / "a.run", "--cache", cache)
    _, _, other = dense(sample, tmp_path / "b.run", "--cache", cache, "--model", model)
    assert other["folder"] != first["folder"]
    assert (other["encoded"], other["reused"]) == (first["encoded"], 0)
    a, b = (np.fromfile(Path(s["folder"]) / "vectors.f32", dtype="<f4") for s in (first, other))
    assert a.shape == b.shape and not np.allclose(a, b, atol=1e-3)


def brute_force(queries: np.ndarray, vectors: np.ndarray, k: int):
    """The top k of each query's full score row (everything tied with the k-th value, then ranked), as DenseIndex
    ranked before the block scan."""
    return [strictly_ranked(keep, row[keep], k) for row in queries @ vectors.T for keep in [contenders(row, k)]]


@pytest.mark.slow
@pytest.mark.parametrize("k", [1, 7, 50, 5000])
def test_block_search_equals_brute_force_with_ties_and_through_a_row_map(k):
    """Small integer vectors: every dot product is exact in float32, so ties are real ties."""
    rng = np.random.default_rng(k)
    vectors = rng.integers(-2, 3, size=(3000, 8)).astype(np.float32)
    vectors[1500:2000] = vectors[:500]  # exact duplicates in another block
    queries = rng.integers(-2, 3, size=(40, 8)).astype(np.float32)
    expected = brute_force(queries, vectors, k)
    for got in (search_vectors(queries, vectors, k, block=700), search_vectors(queries, vectors, k)):
        for (p, s), (ep, es) in zip(got, expected):
            assert p.tolist() == ep.tolist() and s.tolist() == es.tolist()
    shuffle = rng.permutation(len(vectors))  # stored in another order: position p is at row rows[p]
    stored, rows = np.empty_like(vectors), np.empty(len(vectors), dtype=np.int64)
    stored[shuffle], rows[:] = vectors, shuffle
    for (p, s), (ep, es) in zip(search_vectors(queries, stored, k, rows=rows, block=512), expected):
        assert p.tolist() == ep.tolist() and s.tolist() == es.tolist()
    grown = np.concatenate([vectors, rng.integers(-2, 3, size=(100, 8)).astype(np.float32)])  # another corpus's rows after
    for (p, s), (ep, es) in zip(search_vectors(queries, grown, k, rows=np.arange(len(vectors)), block=700), expected):
        assert p.tolist() == ep.tolist() and s.tolist() == es.tolist()
    assert all(len(p) == min(k, len(vectors)) for p, _ in expected)
    assert any(len(set(s[: min(k, 20)].round(3))) < min(k, 20) for _, s in expected) or k == 1  # ties occurred
