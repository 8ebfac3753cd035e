"""Encoders choose their device (--device auto|cpu|cuda) and precision (--precision exact|int8|fp16): the CPU
path with device="cpu" given explicitly, batch sizes per device, and caches that keep precisions apart."""

from __future__ import annotations

import json

import numpy as np
import pytest

from helpers import run
from semrel.encoding import engines
from semrel.encoding.encode import CPU_BATCH, GPU_BATCH, GPU_TOKENS, batch_limits, length_batches, token_windows
from semrel.encoding.engines import LocalEngine, make_engine, resolve_device
from semrel.encoding.sentences import sentence_embeddings
from semrel.encoding.vectors import VectorStore, text_keys
from semrel.errors import SemrelError, UsageError
from semrel.progress import no_progress

TEXTS = ["Sourdough bread rises slowly because wild yeast ferments the dough.",
         "In chess the queen is the most powerful piece on the board.",
         "A volcano erupts when molten rock and gas escape from the magma chamber."]


def test_batches_grow_on_a_gpu_and_stay_as_asked_on_cpu():
    assert batch_limits("cpu", 4096) == (4096, CPU_BATCH)
    assert batch_limits("cuda", 4096) == (GPU_TOKENS, GPU_BATCH)
    assert batch_limits("cuda", 10 * GPU_TOKENS) == (10 * GPU_TOKENS, GPU_BATCH)


def test_batches_are_longest_first_within_the_token_budget_and_the_row_limit():
    lengths = [3, 10, 7, 10, 2]
    # a budget of exactly two 10-token rows keeps both; the 7 starts a batch of 7-token rows, which three would overfill
    assert [b.tolist() for b in length_batches(lengths, max_tokens=20)] == [[1, 3], [2, 0], [4]]
    assert [b.tolist() for b in length_batches(lengths, max_tokens=100, max_batch=2)] == [[1, 3], [2, 0], [4]]
    assert [b.tolist() for b in length_batches(lengths, max_tokens=100, max_batch=3)] == [[1, 3, 2], [0, 4]]
    assert [b.tolist() for b in length_batches([50, 1], max_tokens=20)] == [[0], [1]]  # a row over the budget is a batch alone


def test_token_windows_overlap_as_asked_and_the_last_ends_at_the_end():
    ids = list(range(10))
    assert token_windows(ids, 4, 1) == [[0, 1, 2, 3], [3, 4, 5, 6], [6, 7, 8, 9]]
    assert token_windows(ids, 4, 0) == [[0, 1, 2, 3], [4, 5, 6, 7], [6, 7, 8, 9]]  # shifted back, not left short
    assert token_windows(ids[:9], 4, 2) == [[0, 1, 2, 3], [2, 3, 4, 5], [4, 5, 6, 7], [5, 6, 7, 8]]
    assert token_windows(ids[:4], 4, 1) == [[0, 1, 2, 3]] and token_windows(ids[:3], 4, 1) == [[0, 1, 2]]


def test_auto_takes_cuda_only_when_torch_sees_it(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert resolve_device("auto") == "cpu" and resolve_device("cpu") == "cpu"
    with pytest.raises(UsageError, match="device='cuda': torch sees no CUDA device"):
        resolve_device("cuda")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert resolve_device("auto") == "cuda" and resolve_device("cuda") == "cuda"
    assert resolve_device("cpu") == "cpu"  # asked for: never moved


def test_precision_and_device_must_fit():
    with pytest.raises(UsageError, match="int8.* CPU only"):
        make_engine("local", device="cuda", precision="int8")
    with pytest.raises(UsageError, match="fp16.* runs on a GPU only"):
        make_engine("local", device="cpu", precision="fp16")
    with pytest.raises(UsageError, match="precision='bf16'"):
        make_engine("local", precision="bf16")
    with pytest.raises(UsageError, match="device='tpu'"):
        make_engine("local", device="tpu")
    assert make_engine("local") is engines.LOCAL  # the defaults: auto device, exact precision
    assert engines.LOCAL.precision == "exact"


def test_int8_on_a_gpu_machine_says_how_to_get_it(monkeypatch):
    """With the default device (auto) on a GPU machine int8 was refused with only "use fp16 on a GPU", not
    that --device cpu runs it."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    with pytest.raises(UsageError, match=r"runs on CPU only: give device='cpu' \(auto takes a GPU torch sees\), or use fp16"):
        _ = LocalEngine("auto", "int8").device


@pytest.mark.slow
def test_cpu_given_explicitly_runs_the_same_path_and_says_so():
    engine = make_engine("local", device="cpu")
    assert isinstance(engine, LocalEngine) and engine.params()["device"] == "cpu"
    explicit = sentence_embeddings(TEXTS, None, None, engine)
    default = sentence_embeddings(TEXTS, None, None, LocalEngine())
    assert np.array_equal(explicit, default)  # auto resolves to the CPU here: the very same computation
    assert engine.params() == {"name": "local", "workers": 1, "device": "cpu", "precision": "exact"}


def held(texts):
    """rows_for's texts of a list in memory."""
    return lambda at: [texts[i] for i in at]


@pytest.mark.slow
def test_int8_vectors_are_close_to_exact_and_kept_apart_in_the_vector_store(tmp_path):
    exact_engine, int8_engine = make_engine("local", device="cpu"), make_engine("local", device="cpu", precision="int8")
    exact = VectorStore(tmp_path, None)
    int8 = VectorStore(tmp_path, None, "int8")
    assert int8.folder != exact.folder and int8.folder.name.endswith("-int8")
    exact_rows = exact.rows_for(text_keys(TEXTS), held(TEXTS), "x", no_progress, exact_engine)
    int8_rows = int8.rows_for(text_keys(TEXTS), held(TEXTS), "x", no_progress, int8_engine)
    assert exact.encoded == int8.encoded == 3  # neither found the other's vectors
    a, b = exact.vectors()[exact_rows], int8.vectors()[int8_rows]
    assert not np.array_equal(a, b)
    cosine = np.sum(a * b, axis=1)
    assert cosine.min() > 0.9  # the same sentences, slightly moved
    assert np.argmax(a @ a.T, axis=1).tolist() == np.argmax(b @ b.T, axis=1).tolist()
    with pytest.raises(SemrelError, match="holds exact vectors; the encoder runs at int8"):
        exact.rows_for(text_keys(["a new text"]), held(["a new text"]), "x", no_progress, int8_engine)


@pytest.mark.slow
def test_judge_records_precision_and_never_mixes_cached_embeddings(tmp_path, write):
    corpus = write("corpus.jsonl", "".join(json.dumps({"_id": f"c{i}", "text": t}) + "\n" for i, t in enumerate(TEXTS)))
    golden = write("golden.jsonl", "".join(json.dumps({"query_id": f"q{i}", "query": "?", "reference_answer": " ".join(t.split()[:5]),
                                                       "gold_chunk_ids": [f"c{i}"]}) + "\n" for i, t in enumerate(TEXTS)))
    cache = tmp_path / "cache"
    outputs = {}
    for name, extra in (("exact", []), ("int8", ["--precision", "int8", "--device", "cpu"]), ("again", [])):
        out = tmp_path / f"{name}.jsonl"
        result = run("judge", "--corpus", corpus, "--golden", golden, "--cache", cache, *extra, "-o", out)
        assert result.exit_code == 0, result.output
        outputs[name] = [json.loads(line) for line in out.read_text().splitlines()]
        params = json.loads((tmp_path / f"{name}.jsonl.manifest.json").read_text())["params"]
        assert params["precision"] == ("int8" if name == "int8" else "exact") == params["engine"]["precision"]
        if name == "int8":
            assert params["engine"]["device"] == "cpu"
            assert ", 0 from cache" in result.stderr  # exact embeddings in the same cache were not used
        if name == "again":
            assert " 0 texts encoded" in result.stderr  # exact ones were kept, not overwritten by int8
    exact, int8 = (np.array([[r[c] for c in "PRF"] for r in outputs[k]]) for k in ("exact", "int8"))
    assert outputs["again"] == outputs["exact"]
    assert 0 < np.abs(exact - int8).max() < 0.05


@pytest.mark.slow
def test_dense_retrieval_at_int8_records_it_and_uses_its_own_store(tmp_path, write):
    corpus = write("corpus.jsonl", "".join(json.dumps({"_id": f"c{i}", "text": t}) + "\n" for i, t in enumerate(TEXTS)))
    golden = write("golden.jsonl", json.dumps({"query_id": "q1", "query": "why does bread rise", "reference_answer": "x"}) + "\n")
    runs = {}
    for precision in ("exact", "int8"):
        out = tmp_path / f"{precision}.run"
        result = run("retrieve", "--corpus", corpus, "--golden", golden, "--method", "dense", "--cache", tmp_path / "cache",
                     "--precision", precision, "--device", "cpu", "-o", out)
        assert result.exit_code == 0, result.output
        assert "3 encoded, 0 from the vector store" in result.stderr  # int8 did not take the exact vectors
        params = json.loads((tmp_path / f"{precision}.run.manifest.json").read_text())["params"]
        assert params["engine"]["precision"] == precision and params["engine"]["device"] == "cpu"
        assert params["vector_store"]["folder"].endswith("-int8") == (precision == "int8")
        runs[precision] = [line.split()[2] for line in out.read_text().splitlines()]
    assert runs["exact"][0] == runs["int8"][0] == "c0"  # the bread chunk first either way


def test_a_gpu_asked_for_where_there_is_none_is_said_before_any_work(monkeypatch):
    """--device cuda or --precision fp16 on a machine without a GPU failed when the model first ran: after
    the judge had read the corpus and the pool."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    for device, precision in (("cuda", "exact"), ("auto", "fp16")):
        with pytest.raises(UsageError, match="CUDA device|GPU only"):
            LocalEngine(device, precision)
    assert LocalEngine("auto", "int8")._device is None  # auto stays lazy: a cached run never imports torch


@pytest.mark.slow
def test_sentence_embeddings_come_in_text_order_as_float32_and_advance_by_each_batchs_texts():
    counts: list[int] = []
    vectors = sentence_embeddings(TEXTS * 50, None, counts.append)
    assert counts == [CPU_BATCH, 150 - CPU_BATCH]  # short texts: batches of as many rows as a CPU batch takes
    assert vectors.dtype == np.float32 and vectors.shape == (150, 384)
    assert np.allclose(vectors[:3], vectors[-3:], atol=1e-6) and not np.allclose(vectors[0], vectors[1])
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert sentence_embeddings([]).shape == (0, 0)
