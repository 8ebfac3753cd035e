"""The BERTScore judge on real COVID-QA text with the real all-MiniLM-L6-v2: exactness against
bert_score.score, long-chunk windows, the embedding cache, resume, rescaling and bad input."""

from __future__ import annotations

import contextlib
import json
import random
import re
from pathlib import Path

import numpy as np
import pytest

import semrel
import small_corpus
from bert_score_reference import bert_score_reference
from helpers import SHARED_DATA, run
from semrel.encoding.models import resolve_model
from semrel.errors import UsageError
from semrel.judging import labels
from semrel.judging.bertscore import greedy_match_tokens
from semrel.judging.checkpoint import Checkpoint, pack, unpack
from semrel.judging.judge import short_answer_warnings

COVID_QA = SHARED_DATA / "covid_qa_deepset" / "200423_covidQA.json"
WORDS_PER_CHUNK = 60

pytestmark = [
    pytest.mark.skipif(not COVID_QA.exists(), reason=f"needs COVID-QA at {COVID_QA} (SEMREL_DATA: the shared data folder)"),
    # p's warnings about the fixtures (answers copied into chunks, other layers, tiny corpora), tested where they are the point
    pytest.mark.filterwarnings("ignore:.* lie beyond the development sets p was fitted on"),
    pytest.mark.filterwarnings("ignore:p's coefficients were fitted for"),
    pytest.mark.filterwarnings("ignore:.* pairs have no probability p"),
    pytest.mark.filterwarnings("ignore:.* reference answers of 2 words or fewer"),
]


def _articles(count: int) -> list[dict]:
    return [a["paragraphs"][0] for a in json.loads(COVID_QA.read_text(encoding="utf-8"))["data"][:count]]


def _chunks(article: dict) -> list[dict]:
    """The article cut into chunks of WORDS_PER_CHUNK words, with character offsets."""
    spans = [m.span() for m in re.finditer(r"\S+", article["context"])]
    doc = str(article["document_id"])
    out = []
    for k in range(0, len(spans), WORDS_PER_CHUNK):
        start, end = spans[k][0], spans[min(k + WORDS_PER_CHUNK, len(spans)) - 1][1]
        out.append({"_id": f"{doc}-{k // WORDS_PER_CHUNK}", "title": "", "text": article["context"][start:end],
                    "doc_id": doc, "start": start, "end": end})
    return out


def _write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _write_pool(path: Path, pairs) -> Path:
    path.write_text("query_id\tchunk_id\tsources\n" + "".join(f"{q}\t{c}\t{s}\n" for q, c, s in pairs), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """~290 real (chunk, answer) pairs: 2 articles in 60-word chunks, up to 25 questions, 12 pooled chunks each."""
    folder = tmp_path_factory.mktemp("judge")
    chunks, golden = [], []
    for article in _articles(2):
        mine = _chunks(article)
        chunks += mine
        for qa in article["qas"][:13]:
            answer = qa["answers"][0]["text"].strip()
            at = article["context"].find(answer, max(0, qa["answers"][0]["answer_start"] - 5))
            gold = [c["_id"] for c in mine if c["start"] <= at < c["end"]]
            golden.append({"query_id": f"q{qa['id']}", "query": qa["question"], "reference_answer": answer, "gold_chunk_ids": gold})
    golden = golden[:25]
    for item in golden[:5]:  # several acceptable answers: the answer and its first half
        words = item["reference_answer"].split()
        item["reference_answer"] = [item["reference_answer"], " ".join(words[: max(3, len(words) // 2)])]
    rng = random.Random(7)
    candidates = rng.sample([c["_id"] for c in chunks], 50)
    pairs = [(g["query_id"], c, "bm25") for g in golden for c in rng.sample(candidates, 12)]
    expected = {(q, c) for q, c, _ in pairs} | {(g["query_id"], c) for g in golden for c in g["gold_chunk_ids"]}
    return {
        "expected_pairs": expected, "folder": folder, "chunks": {c["_id"]: c["text"] for c in chunks}, "golden": golden,
        "corpus": _write_jsonl(folder / "corpus.jsonl", chunks),
        "golden_path": _write_jsonl(folder / "golden.jsonl", golden),
        "pool": _write_pool(folder / "pool.tsv", pairs), "cache": folder / "cache",
    }


def _bert_score(cands: list[str], refs: list, **kwargs) -> np.ndarray:
    return bert_score_reference(resolve_model(), cands, refs, **kwargs)


def _scores(judgments) -> np.ndarray:
    return np.array([[j.P, j.R, j.F] for j in judgments])


def _references(data) -> dict[str, list[str]]:
    return {g["query_id"]: g["reference_answer"] if isinstance(g["reference_answer"], list) else [g["reference_answer"]]
            for g in data["golden"]}


@pytest.mark.slow
@pytest.mark.parametrize("idf, null_sample", [(False, labels.NULL_SAMPLE), (True, labels.NULL_SAMPLE), (False, 0)])
def test_scores_equal_bert_score_on_hundreds_of_real_pairs(data, idf, null_sample):
    """With p (null_sample > 0) the scores come from the scorer that also keeps p's features; without it (--null-sample 0)
    from the plain one: both must equal bert_score."""
    result = semrel.judge(data["corpus"], data["golden_path"], data["pool"], cache=data["cache"], idf=idf, null_sample=null_sample)
    assert {(j.query_id, j.chunk_id) for j in result.judgments} == data["expected_pairs"]
    assert len(result.judgments) >= 250
    assert result.params["layer"] == 6 and result.params["idf"] is idf
    references = _references(data)
    cands = [data["chunks"][j.chunk_id] for j in result.judgments]
    refs = [references[j.query_id] for j in result.judgments]
    extra = {}
    if idf:
        from bert_score.utils import get_idf_dict
        from transformers import AutoTokenizer

        extra["idf"] = get_idf_dict(list(data["chunks"].values()), AutoTokenizer.from_pretrained(resolve_model()), nthreads=0)
    expected = _bert_score(cands, refs, num_layers=6, **extra)
    assert np.abs(_scores(result.judgments) - expected).max() < 1e-5
    assert _scores(result.judgments).std(axis=0).min() > 0.02  # real spread, not a constant


@pytest.mark.slow
@pytest.mark.parametrize("null_sample", [labels.NULL_SAMPLE, 0])
def test_a_text_the_tokenizer_drops_whole_scores_zero_as_in_bert_score(null_sample):
    """A chunk or answer of control or zero-width characters only (str.strip keeps them, the tokenizer drops them):
    bert_score scores it 0, 0, 0 ("Empty candidate sentence detected"). semrel matched the [CLS]/[SEP] left of it, 0.12
    off here (R 0.57 for the chunk '\\x00' against a COVID-QA answer), and for the label R is what counts."""
    from semrel.records import Chunk, GoldenItem

    texts = {**small_corpus.TEXTS, "nul#0": "\x00", "zw#0": "\u200b\u200b", "sep#0": "[SEP]"}
    chunks = [Chunk(i, t, i.split("#")[0], 0, len(t)) for i, t in texts.items()]
    answers = {"q1": ("Cats purr when content.",), "q2": ("\u200b",), "q3": ("\u200b", "Steel boxes go by ship.")}
    golden = [GoldenItem(q, f"question {q}", a, ()) for q, a in answers.items()]
    pool = [(q, c, ("bm25",)) for q in answers for c in ("cats#0", "ships#0", "nul#0", "zw#0", "sep#0")]
    result = semrel.judge(chunks, golden, pool, cache=False, null_sample=null_sample, warn=lambda _: None)
    scores = _scores(result.judgments)
    expected = _bert_score([texts[j.chunk_id] for j in result.judgments], [list(answers[j.query_id]) for j in result.judgments],
                           num_layers=6)
    assert np.isnan(expected[:, 0]).sum() == 2  # '[SEP]' is a token of weight 0: bert_score divides P by 0 (semrel: 0)
    assert np.abs(scores - np.nan_to_num(expected)).max() < 1e-5
    by_pair = dict(zip(((j.query_id, j.chunk_id) for j in result.judgments), scores.tolist()))
    assert by_pair["q1", "nul#0"] == by_pair["q1", "zw#0"] == by_pair["q2", "cats#0"] == [0.0, 0.0, 0.0]
    assert min(by_pair["q1", "cats#0"]) > 0.5 and min(by_pair["q3", "ships#0"]) > 0.5  # the real pairs beside them


@pytest.mark.slow
def test_texts_encoded_in_slices_score_as_in_one(data, monkeypatch):
    """The judge tokenizes and batches a bounded slice of texts at a time; slicing changes no score. The whole run's
    embeddings may come from the module's cache: a cold run encodes them in one slice, as the cache holds them."""
    import semrel.judging.judge

    whole = semrel.judge(data["corpus"], data["golden_path"], data["pool"], cache=data["cache"])
    monkeypatch.setattr(semrel.judging.judge, "ENCODE_SLICE", 7)
    sliced = semrel.judge(data["corpus"], data["golden_path"], data["pool"], cache=False)
    assert [(j.query_id, j.chunk_id) for j in sliced.judgments] == [(j.query_id, j.chunk_id) for j in whole.judgments]
    assert sliced.encoded == whole.encoded + whole.cached > 7 * 5  # many slices, each text once
    assert np.abs(_scores(sliced.judgments) - _scores(whole.judgments)).max() < 1e-6


@pytest.mark.parametrize("cells", [1, 20000])
def test_answers_matched_in_bounded_blocks_score_as_in_one_product(data, monkeypatch, cells):
    """A chunk pooled for many queries is matched against their answers a bounded block at a time
    (MATCH_CELLS); blocks of one query each, or of a few, move no score, feature or p beyond float32
    rounding (BLAS may sum a product's cell in another order with other columns beside it)."""
    import semrel.judging.judge as judge_module

    whole = semrel.judge(data["corpus"], data["golden_path"], data["pool"], cache=data["cache"])
    products = []
    monkeypatch.setattr(judge_module, "MATCH_CELLS", cells)
    monkeypatch.setattr(judge_module, "greedy_match_tokens",
                        lambda *a: products.append(len(a[3])) or greedy_match_tokens(*a))
    blocked = semrel.judge(data["corpus"], data["golden_path"], data["pool"], cache=data["cache"])
    assert len(products) > len({j.chunk_id for j in whole.judgments}) + 25  # chunks matched in several blocks
    assert [(j.query_id, j.chunk_id) for j in blocked.judgments] == [(j.query_id, j.chunk_id) for j in whole.judgments]

    def figures(judgments):
        return np.array([[j.P, j.R, j.F, j.p, *j.features.values()] for j in judgments])
    assert np.abs(figures(blocked.judgments) - figures(whole.judgments)).max() < 1e-5
    assert sum(j.features["own_idf"] > 0 for j in whole.judgments) > 40  # the token bests were compared, not absent


@pytest.mark.slow
def test_lower_layer_equals_bert_score_and_runs_only_those_layers(data):
    subset = data["golden"][:4]
    result = semrel.judge(data["corpus"], [_item(g) for g in subset], None, cache=data["cache"], layer=3)
    references = _references(data)
    expected = _bert_score([data["chunks"][j.chunk_id] for j in result.judgments],
                           [references[j.query_id] for j in result.judgments], num_layers=3)
    assert result.params["layer"] == 3
    assert np.abs(_scores(result.judgments) - expected).max() < 1e-5
    from semrel.encoding.models import load_encoder

    assert len(load_encoder(None, layers=3)[1].encoder.layer) == 3


def _item(g: dict):
    from semrel.records import GoldenItem

    answers = g["reference_answer"]
    return GoldenItem(g["query_id"], g["query"], tuple(answers) if isinstance(answers, list) else (answers,), tuple(g["gold_chunk_ids"]))


@pytest.mark.slow
def test_long_chunk_is_scored_in_windows_and_finds_an_answer_at_its_end(tmp_path, monkeypatch):
    words = _articles(3)[2]["context"].split()
    answer = "Mother-to-child transmission is the main cause of HIV-1 infection in children worldwide."
    chunks = [{"_id": "long", "text": " ".join(words[:1100] + [answer])},  # ~1,500 tokens of real text, answer last
              {"_id": "short", "text": " ".join(words[:150] + [answer])}]
    corpus = _write_jsonl(tmp_path / "corpus.jsonl", chunks)
    golden = _write_jsonl(tmp_path / "golden.jsonl", [{"query_id": "q", "query": "main cause?", "reference_answer": answer,
                                                      "gold_chunk_ids": ["long", "short"]}])
    result = semrel.judge(corpus, golden, None, tmp_path / "j.jsonl", cache=tmp_path / "cache")
    recall = {j.chunk_id: j.R for j in result.judgments}
    assert result.windowed == 1 and result.params["windows"]["windowed_chunks"] == 1
    assert abs(recall["long"] - recall["short"]) < 0.05
    truncated = _bert_score([chunks[0]["text"]], [answer], num_layers=6)[0]  # bert_score cuts at 512 tokens
    assert recall["long"] - truncated[1] > 0.2
    narrow = semrel.judge(corpus, golden, None, window=256, cache=tmp_path / "cache")
    assert abs(narrow.judgments[0].R - recall["short"]) < 0.05 and narrow.params["windows"]["tokens"] == 256

    original = Checkpoint.append  # stopped once the long chunk's row is saved: resumed, it is still counted as windowed

    def stop(self, rows):
        rows = list(rows)
        original(self, rows)
        if any(row["chunk_id"] == "long" for row in rows):
            raise KeyboardInterrupt

    monkeypatch.setattr(Checkpoint, "append", stop)
    with pytest.raises(KeyboardInterrupt):
        semrel.judge(corpus, golden, None, tmp_path / "again.jsonl", cache=tmp_path / "cache")
    monkeypatch.setattr(Checkpoint, "append", original)
    resumed = semrel.judge(corpus, golden, None, tmp_path / "again.jsonl", cache=tmp_path / "cache")
    assert resumed.resumed >= 1 and resumed.windowed == 1 and resumed.params["windows"]["windowed_chunks"] == 1


@pytest.mark.slow
def test_warm_cache_encodes_nothing_and_new_texts_only_once(data, tmp_path):
    first = semrel.judge(data["corpus"], data["golden_path"], data["pool"], cache=data["cache"])
    again = semrel.judge(data["corpus"], data["golden_path"], data["pool"], cache=data["cache"])
    assert again.encoded == 0 and again.cached > 0
    assert np.array_equal(_scores(first.judgments), _scores(again.judgments))
    unseen = next(c for c in data["chunks"] if data["chunks"][c] not in {data["chunks"][j.chunk_id] for j in first.judgments})
    pool = _write_pool(tmp_path / "pool.tsv", [(data["golden"][0]["query_id"], unseen, "bm25")])
    more = semrel.judge(data["corpus"], data["golden_path"], pool, cache=data["cache"])
    assert more.encoded == 1


@pytest.mark.slow
def test_interrupted_run_resumes_without_redoing_finished_pairs(data, tmp_path, monkeypatch):
    output = tmp_path / "judgments.jsonl"
    golden = [_item(g) for g in data["golden"][:6]]
    pool = _write_pool(tmp_path / "pool.tsv", [(g.query_id, c, "bm25") for g in golden for c in list(data["chunks"])[:4]])
    calls = {"n": 0}
    original = Checkpoint.append

    def stop_after_two(self, rows):
        original(self, rows)
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt  # as if the run were killed here

    monkeypatch.setattr(Checkpoint, "append", stop_after_two)
    with pytest.raises(KeyboardInterrupt):
        semrel.judge(data["corpus"], golden, pool, output, cache=False)
    monkeypatch.setattr(Checkpoint, "append", original)
    partial = Path(f"{output}.partial")
    assert partial.exists() and not output.exists()
    finished = len(partial.read_text().splitlines()) - 1
    odd = json.loads(partial.read_text().splitlines()[-1])
    del odd["kind"]  # a row of a damaged file that lacks a key (a KeyError at the resume)
    with open(partial, "a") as handle:
        handle.write(json.dumps({**odd, "i": odd["i"] + 1}) + "\n")
        handle.write('{"kind": "pair", "query_id": "q')  # the line being written when the process died
    resumed = semrel.judge(data["corpus"], golden, pool, output, cache=False)
    assert resumed.resumed == finished > 0
    assert not partial.exists() and output.exists()
    fresh = semrel.judge(data["corpus"], golden, pool, cache=False)
    assert [(j.query_id, j.chunk_id) for j in resumed.judgments] == [(j.query_id, j.chunk_id) for j in fresh.judgments]
    assert np.abs(_scores(resumed.judgments) - _scores(fresh.judgments)).max() < 1e-6
    assert resumed.encoded < fresh.encoded


@pytest.mark.slow
def test_corpus_rescaling_records_its_baseline(data, tmp_path):
    output = tmp_path / "j.jsonl"
    raw = semrel.judge(data["corpus"], data["golden_path"], data["pool"], cache=data["cache"])
    scaled = semrel.judge(data["corpus"], data["golden_path"], data["pool"], output, cache=data["cache"], rescale="corpus",
                          baseline_pairs=40, seed=3)
    baseline = json.loads(Path(f"{output}.manifest.json").read_text())["params"]["baseline"]
    assert baseline["source"] == "corpus" and baseline["pairs"] == 40 and baseline["seed"] == 3
    b = np.array([baseline[k] for k in "PRF"])
    assert 0.05 < b.min() and b.max() < 0.5  # unrelated pairs score low but not zero
    assert np.allclose(_scores(scaled.judgments), (_scores(raw.judgments) - b) / (1 - b), atol=1e-9)
    without_p = semrel.judge(data["corpus"], data["golden_path"], data["pool"], cache=data["cache"], rescale="corpus",
                             baseline_pairs=40, seed=3, null_sample=0)  # the same baseline pairs, no null pairs beside them
    assert np.allclose([without_p.params["baseline"][k] for k in "PRF"], b, atol=1e-6)


def _named_copy(folder: Path, recorded: str | None) -> Path:
    """The default model's files linked into `folder`, its config.json recording `recorded` as _name_or_path (None: none)."""
    folder.mkdir()
    for path in Path(resolve_model()).iterdir():
        if path.name != "config.json":
            (folder / path.name).symlink_to(path)
    config = json.loads((Path(resolve_model()) / "config.json").read_text())
    config.pop("_name_or_path")
    (folder / "config.json").write_text(json.dumps(config if recorded is None else {**config, "_name_or_path": recorded}))
    return folder


@pytest.mark.slow
def test_shipped_baseline_and_recommended_layer_follow_bert_score(data, tmp_path):
    # a local folder named like a model in bert_score's tables, whose config.json says it is that model
    folder = _named_copy(tmp_path / "distilbert-base-uncased", "distilbert-base-uncased")
    golden = [_item(g) for g in data["golden"][:3]]
    raw = semrel.judge(data["corpus"], golden, None, model=str(folder), layer=5, cache=data["cache"])
    scaled = semrel.judge(data["corpus"], golden, None, model=str(folder), rescale="baseline", cache=data["cache"])
    assert scaled.params["layer"] == 5 and "recommended" in scaled.params["layer_source"]
    rows = Path(scaled.params["baseline"]["source"]).read_text().splitlines()
    b = np.array([float(v) for v in rows[1 + 5].split(",")[1:4]])
    assert np.allclose(_scores(scaled.judgments), (_scores(raw.judgments) - b) / (1 - b), atol=1e-9)


def test_a_recommended_layer_the_model_lacks_is_refused_not_made_of_random_weights(data, tmp_path):
    """A 6-layer MiniLM in a folder named bert-base-uncased got bert_score's layer 9 for that name, and the model
    was loaded with three randomly initialised layers: scores that differed between two runs. (Its config.json names
    no model here: one that names MiniLM is looked up by that name, as the test above shows.)"""
    folder = _named_copy(tmp_path / "bert-base-uncased", None)
    golden = [_item(g) for g in data["golden"][:1]]
    with pytest.raises(UsageError, match=r"has layers 0\.\.6, but bert_score recommends layer 9 for bert-base-uncased, the name "
                                         r"it goes by: is it that model\? give layer= to choose one$"):
        semrel.judge(data["corpus"], golden, None, model=str(folder), cache=data["cache"])
    golden_file = _write_jsonl(tmp_path / "golden.jsonl", data["golden"][:1])
    refused = run("judge", "--corpus", data["corpus"], "--golden", golden_file, "--model", folder, "-o", tmp_path / "j.jsonl",
                  "--cache", data["cache"])
    assert refused.exit_code == 2 and refused.stderr.strip().endswith("is it that model? give --layer to choose one"), refused.stderr
    assert semrel.judge(data["corpus"], golden, None, model=str(folder), layer=6, cache=data["cache"]).params["layer"] == 6


def test_the_shipped_model_under_another_name_is_known_by_its_bytes(data, tmp_path):
    """A copy of all-MiniLM-L6-v2 in a folder of its own was warned about as a model p was not fitted for."""
    folder = tmp_path / "mymini"
    folder.symlink_to(resolve_model(), target_is_directory=True)
    golden = [_item(g) for g in data["golden"][:1]]
    heard: list[str] = []
    semrel.judge(data["corpus"], golden, None, model=str(folder), cache=data["cache"], warn=heard.append)
    assert not any("p's coefficients were fitted for" in w for w in heard), heard
    semrel.judge(data["corpus"], golden, None, model=str(folder), layer=5, cache=data["cache"], warn=heard.append)
    assert any(f"were fitted for all-MiniLM-L6-v2, layer 6, without --idf, 512-token windows, not for {folder}, layer 5" in w
               for w in heard), heard


@pytest.mark.parametrize("count, said", [(3, "held 3 pairs"), (1, "held 1 pair"), (0, None)])
def test_a_checkpoint_of_other_settings_is_not_reused_and_the_judge_says_so(data, tmp_path, count, said):
    """A run stopped with one option, then started with another (a mistyped --idf): the checkpoint's pairs were
    dropped without a word. One such pair is said too; a checkpoint of no pair (its header alone) drops nothing."""
    output, golden = tmp_path / "j.jsonl", [_item(g) for g in data["golden"][:1]]
    rows = [{"i": k, "kind": "pair", "query_id": "x", "chunk_id": "y", "P": 0.5, "R": 0.5, "F": 0.5, "windows": 1} for k in range(count)]
    Path(f"{output}.partial").write_text("".join(json.dumps(r) + "\n" for r in [{"fingerprint": "other settings"}, *rows]))
    heard: list[str] = []
    result = semrel.judge(data["corpus"], golden, None, output, cache=data["cache"], warn=heard.append)
    assert result.resumed == 0 and not Path(f"{output}.partial").exists()
    stale = [w for w in heard if "judged from other inputs or settings" in w]
    assert stale == ([f"{output}.partial {said} judged from other inputs or settings (model, layer, idf, window, null sample, "
                      "the texts): none was reused; this run's pairs replaced them"] if said else [])


def test_a_checkpoint_row_is_never_reused_for_another_pair_when_the_pool_lists_them_in_another_order(data, tmp_path, monkeypatch):
    """The fingerprint holds the texts and answers, not the order of the pool: a pool written again with the same pairs
    in another order resumes under it, and a row must serve only its own pair (its pair rescored), never the one now at its
    index. Without the cache, as the interrupted run above: with it warm from another test, the stop came too late to
    leave a row to resume."""
    output, golden = tmp_path / "j.jsonl", [_item(g) for g in data["golden"][:1]]
    texts = {}
    for chunk_id, text in data["chunks"].items():  # three chunks of distinct texts, none of them gold
        if chunk_id not in golden[0].gold_chunk_ids and text not in texts.values():
            texts[chunk_id] = text
    chunks = list(texts)[:3]
    pool = _write_pool(tmp_path / "pool.tsv", [(golden[0].query_id, c, "bm25") for c in chunks])
    original = Checkpoint.append

    def stop(self, rows):  # once the row of the first or the last chunk is written: their indexes swap below
        rows = list(rows)
        original(self, rows)
        if any(row["chunk_id"] in (chunks[0], chunks[-1]) for row in rows):
            raise KeyboardInterrupt

    monkeypatch.setattr(Checkpoint, "append", stop)
    with pytest.raises(KeyboardInterrupt):
        semrel.judge(data["corpus"], golden, pool, output, cache=False)
    monkeypatch.setattr(Checkpoint, "append", original)
    _write_pool(pool, [(golden[0].query_id, c, "bm25") for c in reversed(chunks)])
    resumed = semrel.judge(data["corpus"], golden, pool, output, cache=False)
    fresh = semrel.judge(data["corpus"], golden, pool, cache=False)
    assert resumed.resumed >= 1
    assert [(j.query_id, j.chunk_id) for j in resumed.judgments] == [(j.query_id, j.chunk_id) for j in fresh.judgments]
    # to float rounding (the texts left to encode form other batches): another pair's row would be off by far more
    assert np.abs(_scores(resumed.judgments) - _scores(fresh.judgments)).max() < 1e-6
    assert max(abs(a.p - b.p) for a, b in zip(resumed.judgments, fresh.judgments)) < 1e-6


def test_checkpoint_rows_of_an_older_semrel_are_scored_again(data, tmp_path, monkeypatch):
    """Rows held their scores as JSON numbers until the scores were packed, and their token bests as one list
    per reference answer, special tokens left out, until they became one array of every token: such rows (same
    inputs, same fingerprint) are scored again, neither reused as garbage nor a crash; current rows are reused."""
    output, golden = tmp_path / "j.jsonl", [_item(g) for g in data["golden"][:2]]
    original = Checkpoint.append

    def stop(self, rows):  # once a pool pair's row (token bests and all) is written
        rows = list(rows)
        original(self, rows)
        if any("tok" in row for row in rows):
            raise KeyboardInterrupt

    monkeypatch.setattr(Checkpoint, "append", stop)
    with pytest.raises(KeyboardInterrupt):
        semrel.judge(data["corpus"], golden, None, output, cache=data["cache"])
    monkeypatch.setattr(Checkpoint, "append", original)
    partial = Path(f"{output}.partial")
    header, *rows = [json.loads(line) for line in partial.read_text().splitlines()]
    assert rows and all(len(unpack(row["scores"], "<f8")) == 5 for row in rows)
    packed = partial.read_text()
    older = [{**{k: v for k, v in row.items() if k != "scores"},
              **dict(zip(("P", "R", "F", "Ri", "lex"), unpack(row["scores"], "<f8").tolist()))} for row in rows]
    fresh = semrel.judge(data["corpus"], golden, None, cache=data["cache"])
    listed = [{**row, "tok": [pack(unpack(row["tok"], "<f4")[1:-1], "<f4")]} if "tok" in row else row  # one answer: [CLS] ... [SEP]
              for row in rows]
    for earlier, reusable in ((older, 0), (listed, sum("tok" not in row for row in rows))):  # null pairs' rows hold no token bests
        partial.write_text("".join(json.dumps(row) + "\n" for row in [header, *earlier]))
        again = semrel.judge(data["corpus"], golden, None, output, cache=data["cache"])
        assert again.resumed == reusable and again.judgments[:] == fresh.judgments[:]
    partial.write_text(packed)
    reused = semrel.judge(data["corpus"], golden, None, output, cache=data["cache"])
    assert reused.resumed == len(rows) and reused.judgments[:] == fresh.judgments[:]


def test_each_reference_tokens_best_is_taken_over_every_window_of_the_chunk():
    """greedy_match_tokens: P, R, F per window as greedy_match gives them, and each reference token's best cosine over
    all the chunk's windows (what p's `own` feature reads), negative cosines counted as 0 as bert_score masks them."""
    from semrel.judging.bertscore import greedy_match

    cand = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8], [-1.0, 0.0]])  # two windows: rows 0-1 and 2-3
    ref = np.array([[0.8, 0.6], [-0.6, -0.8], [0.0, 1.0]])  # two references: rows 0-1 and 2
    args = (cand, np.ones(4), np.array([0, 2]), ref, np.ones(3), np.array([0, 2]))
    *scores, best = greedy_match_tokens(*args)
    assert np.allclose(best, [0.96, 0.6, 1.0])  # ref rows 0 and 1 matched best in the second window
    precision = np.array([[(0.8 + 0.6) / 2, (0 + 1) / 2], [(0.96 + 0.6) / 2, (0.8 + 0) / 2]])  # window x reference
    recall = np.array([[(0.8 + 0) / 2, 1.0], [(0.96 + 0.6) / 2, 0.8]])  # ref row 1 against the first window: -0.6 counts 0
    assert np.allclose(scores[0], precision) and np.allclose(scores[1], recall)
    assert np.allclose(scores[2], 2 * precision * recall / (precision + recall))
    assert all(np.array_equal(a, b) for a, b in zip(scores, greedy_match(*args)))
    one_window = greedy_match_tokens(cand[:2], np.ones(2), np.array([0]), ref, np.ones(3), np.array([0, 2]))
    assert np.allclose(one_window[3], [0.8, 0.0, 1.0])  # its own bests


def test_the_layer_is_the_given_one_within_the_model_else_bert_scores_recommendation_else_the_last():
    from semrel.judging.bertscore import default_layer, model_layer, shipped_baseline

    assert model_layer("m", Path("/x/m"), 6, 0) == (0, "given") and model_layer("m", Path("/x/m"), 6, 6) == (6, "given")
    with pytest.raises(UsageError, match=r"^layer=7: model m has layers 0\.\.6$"):
        model_layer("m", Path("/x/m"), 6, 7)
    assert default_layer("m", Path("/x/m"), 6) == (6, "last layer (model not in bert_score's table)")
    assert model_layer("/models/t5-small", Path("/models/t5-small"), 6, None) == (6, "bert_score's recommended layer for t5-small")
    assert default_layer("distilbert-base-uncased", Path("/x/snapshot"), 6) == (5, "bert_score's recommended layer for "
                                                                                     "distilbert-base-uncased")
    folder = Path("/models/distilbert-base-uncased")  # a hub name's snapshot: the name is what bert_score looks up
    b, source = shipped_baseline("distilbert-base-uncased", folder, 6, 6)
    rows = Path(source).read_text().splitlines()[1:]
    assert np.array_equal(b, [float(v) for v in rows[6].split(",")[1:4]]) and len(rows) == 7
    with pytest.raises(UsageError, match=r"distilbert-base-uncased\.tsv: bert_score's baseline for distilbert-base-uncased has "
                                         r"layers 0\.\.6, but model distilbert-base-uncased has layers 0\.\.12: is it that model\? "
                                         r"use rescale='corpus'$"):
        shipped_baseline("distilbert-base-uncased", folder, 6, 12)


def test_a_local_folder_gets_the_baseline_and_layer_its_config_names_before_its_folder_name(data, tmp_path):
    """A folder (or link) named distilbert-base-uncased holding MiniLM got distilbert's baseline and layer, by the folder's
    name, though its config.json names nreimers/MiniLM-L6-H384-uncased; a folder whose config names no model (a clone of
    the hub's files) still goes by its folder's name, as bert_score's tables cannot."""
    from semrel.judging.bertscore import default_layer, shipped_baseline

    minilm = tmp_path / "minilm" / "distilbert-base-uncased"
    minilm.parent.mkdir()
    minilm.symlink_to(resolve_model(), target_is_directory=True)
    with pytest.raises(UsageError, match=r"^bert_score ships no rescaling baseline for nreimers/MiniLM-L6-H384-uncased, the model "
                                         r"its config\.json names \(.*distilbert-base-uncased\); use rescale='corpus'$"):
        semrel.judge(data["corpus"], [_item(data["golden"][0])], None, model=str(minilm), rescale="baseline", cache=data["cache"])
    assert default_layer(str(minilm), minilm, 6) == (6, "last layer (model not in bert_score's table)")  # not distilbert's 5
    for folder in (_named_copy(tmp_path / "mine", "distilbert-base-uncased"), _named_copy(tmp_path / "distilbert-base-uncased", None)):
        b, source = shipped_baseline(str(folder), folder, 5, 6)
        assert Path(source).name == "distilbert-base-uncased.tsv"
        assert np.array_equal(b, [float(v) for v in Path(source).read_text().splitlines()[1 + 5].split(",")[1:4]])
        assert default_layer(str(folder), folder, 6) == (5, "bert_score's recommended layer for distilbert-base-uncased")


def test_a_segment_without_weight_scores_0_and_f_is_0_where_p_and_r_are():
    """A text whose tokens all weigh 0 (idf 0: each is in every corpus chunk) has precision 0, not a mean of nothing;
    F of P = R = 0 is 0, as bert_score fills it."""
    from semrel.judging.bertscore import greedy_match

    cand, ref, first = np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[0.0, 1.0], [1.0, 0.0]]), np.array([0])
    assert np.array_equal(np.stack(greedy_match(cand, np.zeros(2), first, ref, np.ones(2), first)).ravel(), [0.0, 1.0, 0.0])
    assert np.array_equal(np.stack(greedy_match(cand[:1], np.ones(1), first, ref[:1], np.ones(1), first)).ravel(), [0.0, 0.0, 0.0])


def test_a_reference_over_the_window_is_cut_to_its_first_window(tmp_path):
    """A reference answer longer than the window is truncated to its first window, as bert_score truncates at the
    model's limit, whatever order its windows were encoded in: a chunk that is that first window matches it fully."""
    head = " ".join((["the", "dog", "runs", "home"] * 8)[:30])  # 30 tokens: a 32-token window less [CLS] and [SEP]
    tail = " ".join(["ocean", "ships", "carry", "steel"] * 5)
    from semrel.records import Chunk, GoldenItem

    chunks = [Chunk("a#0", head, "a", 0, len(head))]
    golden = [GoldenItem("q1", "Who runs home?", (f"{head} {tail}",), ("a#0",))]
    result = semrel.judge(chunks, golden, None, window=32, null_sample=0, cache=False, warn=lambda _: None)
    assert result.truncated_references == 1
    j = result.judgments[0]
    assert abs(j.R - 1.0) < 1e-5 and abs(j.P - 1.0) < 1e-5


@pytest.mark.slow
def test_texts_at_the_models_limit_score_as_bert_score_and_a_longer_answer_as_its_truncation():
    """510 tokens of text (512 with [CLS] and [SEP]) are one window, scored as bert_score scores them; a chunk one token
    longer is windowed (its best window, the first among them, is at least bert_score's truncation), and an answer of 511
    or 1,500 tokens is cut where bert_score cuts it, counted and warned of."""
    from transformers import AutoTokenizer

    from semrel.records import Chunk, GoldenItem

    tokenizer = AutoTokenizer.from_pretrained(resolve_model())
    words = " ".join(a["context"] for a in _articles(2)).split()

    def text_of(tokens: int) -> str:  # real words, then single-token "the" up to exactly `tokens` of the text's own
        kept: list[str] = []
        while len(tokenizer.tokenize(" ".join(kept + words[len(kept) : len(kept) + 1]))) <= tokens:
            kept.append(words[len(kept)])
        text = " ".join(kept + ["the"] * (tokens - len(tokenizer.tokenize(" ".join(kept)))))
        assert len(tokenizer.tokenize(text)) == tokens
        return text

    article = _articles(3)[2]
    short_chunk, short_answer = " ".join(article["context"].split()[:120]), article["qas"][0]["answers"][0]["text"]
    chunks = {"short": short_chunk, "at510": text_of(510), "at511": text_of(511)}
    answers = {"q": short_answer, "a510": text_of(510), "a511": text_of(511), "a1500": text_of(1500)}
    pairs = [("q", "at510"), ("q", "at511"), ("a510", "short"), ("a511", "short"), ("a1500", "short")]
    heard: list[str] = []
    result = semrel.judge([Chunk(c, t, c, 0, len(t)) for c, t in chunks.items()],
                          [GoldenItem(q, "?", (a,), ()) for q, a in answers.items()], [(q, c, ("bm25",)) for q, c in pairs],
                          null_sample=0, cache=False, warn=heard.append)
    scores = {(j.query_id, j.chunk_id): [j.P, j.R, j.F] for j in result.judgments}
    got = np.array([scores[pair] for pair in pairs])
    expected = _bert_score([chunks[c] for _, c in pairs], [answers[q] for q, _ in pairs], num_layers=6)
    assert result.windowed == 1 and result.truncated_references == 2
    assert any("2 reference answers exceed the 512-token window" in w for w in heard)
    assert np.abs(np.delete(got, 1, axis=0) - np.delete(expected, 1, axis=0)).max() < 1e-5
    assert (got[1] >= expected[1] - 1e-6).all()


def test_texts_are_digested_with_their_boundaries():
    """The checkpoint's fingerprint and the idf table's cache key hash the texts themselves: an edited text,
    or texts cut at another place, give another digest (else a stale checkpoint or idf table is reused)."""
    from semrel.judging.judge import _texts_digest

    digests = {_texts_digest(texts) for texts in (["ab", "c"], ["a", "bc"], ["abc"], ["ab", "d"], ["ab", "c", ""])}
    assert len(digests) == 5
    assert _texts_digest(iter(["ab", "c"])) == _texts_digest(["ab", "c"])


def _run(*args) -> tuple[int, str]:
    result = run(*args)
    return result.exit_code, result.output


def test_cli_writes_judgments_and_a_manifest(data, tmp_path):
    golden = _write_jsonl(tmp_path / "golden.jsonl", data["golden"][:2])
    code, text = _run("judge", "--corpus", data["corpus"], "--golden", golden, "-o", tmp_path / "j.jsonl", "--cache", data["cache"])
    assert code == 0, text
    rows = [json.loads(line) for line in (tmp_path / "j.jsonl").read_text().splitlines()]
    assert rows and set(rows[0]) == {"query_id", "chunk_id", "P", "R", "F", "source", "p", "features"} and rows[0]["source"] == "gold"
    assert 0 <= rows[0]["p"] <= 1 and rows[0]["features"]["with_gold"] == 1.0
    manifest = json.loads((tmp_path / "j.jsonl.manifest.json").read_text())
    assert manifest["params"]["model"] == "all-MiniLM-L6-v2" and manifest["params"]["rescale"] == "none"
    null = manifest["params"]["probability"]["null_sample"]
    n = labels.NULL_SAMPLE
    assert null["size"] == n and null["chunks"] == n
    assert 2 * n - 2 <= null["pairs"] <= 2 * n  # each query x the sample, less its own judged chunk if sampled
    assert [i["sha256"] for i in manifest["inputs"]] and "judged 2 pairs" in text


@pytest.mark.parametrize("case, expected", [
    ("unknown_chunk", "chunk 'no-such-chunk' (query"),
    ("empty_answer", "has an empty reference_answer"),
    ("missing_model", "/no/such/model: no such model folder"),
    ("no_baseline", "ships no rescaling baseline"),
])
def test_bad_input_is_one_clear_line(data, tmp_path, case, expected):
    golden = [dict(g) for g in data["golden"][:2]]
    pool = [(golden[0]["query_id"], next(iter(data["chunks"])), "bm25")]
    args = []
    if case == "unknown_chunk":
        pool.append((golden[0]["query_id"], "no-such-chunk", "bm25"))
    elif case == "empty_answer":
        golden[1]["reference_answer"] = "  "
    elif case == "missing_model":
        args = ["--model", "/no/such/model"]
    else:
        args = ["--rescale", "baseline"]
    code, text = _run("judge", "--corpus", data["corpus"], "--golden", _write_jsonl(tmp_path / "g.jsonl", golden),
                      "--pool", _write_pool(tmp_path / "p.tsv", pool), "-o", tmp_path / "j.jsonl", "--cache", data["cache"], *args)
    assert code != 0 and expected in text
    assert text.count("\n") == 1 and text.startswith("semrel: error: ") and "Traceback" not in text
    assert not (tmp_path / "j.jsonl").exists()


def test_a_question_given_as_its_own_reference_answer_is_warned_about(tmp_path):
    """The judge needs answers; a collection without them (TREC topics, Cranfield) tempts a user to copy
    the question in, which gave labels with no signal (bench/question_as_reference.py)."""
    from semrel.records import Chunk, GoldenItem

    chunks = [Chunk("a#0", "Cats purr when they are content.", "a", 0, 32), Chunk("b#0", "Ships carry steel boxes.", "b", 0, 24)]
    golden = [GoldenItem("q1", "Why do cats  purr?", ("why do cats purr?",), ("a#0",)),
              GoldenItem("q2", "What do ships carry?", ("Steel boxes.",), ("b#0",))]
    with pytest.warns(UserWarning, match="question as the reference"):  # from Python; the CLI prints it
        result = semrel.judge(chunks, golden, [("q1", "b#0", ("bm25",))], cache=tmp_path / "cache", null_sample=0)
    assert [w for w in result.warnings if "question as the reference" in w] == [
        "1 of 2 queries has their question as the reference answer: BERTScore measures how far a chunk restates the "
        "reference, and a question is not restated by what answers it (on Cranfield such labels carried no signal, "
        "docs/judge.md); give real answers"]


def test_answers_too_short_to_match_are_warned_about(tmp_path):
    """'Yes' or a number leaves BERTScore a word to match, which many chunks match alike: on MS MARCO kappa fell to 0.35
    for one-word answers against 0.82 for six words or more (bench/answer_length.py)."""
    from semrel.records import Chunk, GoldenItem

    chunks = [Chunk("a#0", "Cats purr when they are content.", "a", 0, 32), Chunk("b#0", "Ships carry 42 steel boxes.", "b", 0, 27)]
    pool = [("q1", "a#0", ("bm25",)), ("q2", "b#0", ("bm25",))]
    for answers, warned in (({"q1": "Yes", "q2": "42 boxes"}, True), ({"q1": "Yes", "q2": "Ships carry steel boxes across seas."}, True),
                            ({"q1": "Cats purr when content.", "q2": "Ships carry steel boxes."}, False)):
        golden = [GoldenItem(q, f"Question {q}?", (a,), ()) for q, a in answers.items()]
        with pytest.warns(UserWarning) if warned else contextlib.nullcontext():
            result = semrel.judge(chunks, golden, pool, cache=tmp_path / "cache", null_sample=0)
        said = [w for w in result.warnings if "words or fewer" in w]
        assert bool(said) is warned, result.warnings
    assert said == [] and short_answer_warnings({"q1": ("Yes",), "q2": ("No",)}) == [
        "2 of 2 queries have reference answers of 2 words or fewer (e.g. 'Yes' for 'q1'): BERTScore matches a chunk's words to "
        "the answer's, and a word or two is matched by many chunks alike, so their labels agree much less with people (kappa "
        "against the gold, MS MARCO / COVID-QA: one word 0.35 / 0.44, two 0.50 / 0.70, six or more 0.82 / 0.93; docs/judge.md); "
        "write each as a sentence that states the answer ('Yes, aspirin lowers the risk of stroke')"]
    # a few short answers among many (a name, a date) are what MS MARCO holds throughout: under a tenth, no warning
    assert short_answer_warnings({f"q{i}": ("Seattle",) if i == 0 else ("A full sentence of an answer.",) for i in range(11)}) == []
    # Chinese puts no spaces between words: a sentence was one word and warned of, '是的' (yes) is two characters, two words
    assert short_answer_warnings({"q1": ("阿司匹林可以降低中风的风险。",), "q2": ("猫在满足时会发出呼噜声。",)}) == []
    assert short_answer_warnings({"q1": ("是的",), "q2": ("是的",)})[0].startswith("2 of 2 queries have reference answers of 2 words")


@pytest.mark.slow
def test_answers_too_short_to_match_are_kept_in_the_manifest_and_repeated_by_label(tmp_path):
    """The judge said it once, on its stderr; `label` and the top of the report (what `semrel run` leaves to read) said
    nothing, though on a COVID-QA sample of 120 its 24 queries of answers of 2 words or fewer agreed with the gold at
    kappa 0.63 against 0.89 for the rest. The manifest keeps it, and `label` repeats it under any rule."""
    from semrel.records import Chunk, GoldenItem

    chunks = [Chunk("a#0", "Cats purr when they are content.", "a", 0, 32), Chunk("b#0", "Ships carry 42 steel boxes.", "b", 0, 27)]
    golden = [GoldenItem(q, f"Question {q}?", (a,), ()) for q, a in {"q1": "Yes", "q2": "42 boxes"}.items()]
    output = tmp_path / "j.jsonl"
    with pytest.warns(UserWarning, match="2 words or fewer"):
        semrel.judge(chunks, golden, [("q1", "a#0", ("bm25",)), ("q2", "b#0", ("bm25",))], output, cache=tmp_path / "cache", null_sample=0)
    said = short_answer_warnings({"q1": ("Yes",), "q2": ("42 boxes",)})
    assert json.loads((tmp_path / "j.jsonl.manifest.json").read_text())["params"]["answer_warnings"] == said
    for rule in ((), ("--on", "R", "--threshold", "0.7")):
        result = run("label", output, *rule, "-o", tmp_path / "q.txt")
        assert result.exit_code == 0, result.output
        assert f"semrel: warning: {said[0]}" in result.stderr.splitlines(), result.stderr
        assert said[0] in json.loads((tmp_path / "q.txt.manifest.json").read_text())["params"]["warnings"]


def test_queries_an_import_marked_as_unanswered_are_left_out_with_a_warning(tmp_path):
    """MS MARCO, SQuAD 2.0 and BEIR have queries without an answer, which their importers mark no_answer; the
    judge stopped the whole pipeline on them. Now their pairs are not judged and it says so; a blank answer
    the import did not mark is still an error."""
    from semrel.errors import ValidationError
    from semrel.records import Chunk, GoldenItem

    chunks = [Chunk("a#0", "Cats purr when they are content.", "a", 0, 32), Chunk("b#0", "Ships carry steel boxes.", "b", 0, 24)]
    golden = [GoldenItem("q1", "Why do cats purr?", ("Cats purr when content.",), ("a#0",)),
              GoldenItem("q2", "Is it safe?", (), ("b#0",), {"no_answer": True})]
    pool = [("q1", "b#0", ("bm25",)), ("q2", "a#0", ("bm25",))]
    heard: list[str] = []
    result = semrel.judge(chunks, golden, pool, cache=tmp_path / "cache", null_sample=0, warn=heard.append)
    assert [(j.query_id, j.chunk_id) for j in result.judgments] == [("q1", "b#0"), ("q1", "a#0")]  # pool, then gold
    assert heard == ["1 query has no reference answer (marked no_answer by the import, e.g. 'q2'): their pool pairs "
                     "are not judged, so the derived qrels leave them out"]
    assert result.params["unanswered"] == {"queries": 1, "first": ["q2"]}
    with pytest.raises(ValidationError, match="no judged query has a reference answer"):
        semrel.judge(chunks, golden[1:], pool[1:], cache=tmp_path / "cache", null_sample=0)
    unmarked = [golden[0], GoldenItem("q2", "Is it safe?", (), ("b#0",))]
    with pytest.raises(ValidationError, match="'q2' has an empty reference_answer"):
        semrel.judge(chunks, unmarked, pool, cache=tmp_path / "cache", null_sample=0)


@pytest.mark.parametrize("window", [0, 15, 513])
def test_a_window_outside_16_to_the_models_limit_is_refused(tmp_path, window):
    """0 was taken for the default (512) and recorded as 0 in the manifest, while 1 was refused."""
    small_corpus.write_corpus(tmp_path / "corpus.jsonl")
    small_corpus.write_golden(tmp_path / "golden.jsonl", [("q1", "Why do cats purr?", "cats purr when content", ["cats#0"])])
    with pytest.raises(UsageError, match=f"window={window}: must be between 16 and the model's limit of 512 tokens"):
        semrel.judge(tmp_path / "corpus.jsonl", tmp_path / "golden.jsonl", window=window, cache=tmp_path / "cache")


def test_the_judge_counts_its_pass_over_the_corpus(data):
    """A million-chunk corpus was read for 10 s before the judge's first progress line."""
    from helpers import recorder

    seen: list = []
    semrel.judge(data["corpus"], data["golden_path"], data["pool"], cache=data["cache"], steps=recorder(seen), warn=lambda _: None)
    reading = [(label, total, sum(counts)) for label, total, counts in seen if label.startswith("reading ")]
    assert reading == [(f"reading {data['corpus']}", None, sum(1 for line in open(data["corpus"]) if line.strip()))]


@pytest.mark.parametrize("change", ["answer", "chunk text", "overlap", "idf corpus"])
def test_a_checkpoint_is_not_reused_once_an_input_or_setting_its_scores_depend_on_changed(tmp_path, monkeypatch, change):
    """A run stopped once every pair was saved, then started again with one thing changed that moves the scores (a reference
    answer, a judged chunk's text, the windows' overlap, an unjudged chunk's text under idf): no row is reused, the
    scores are a fresh run's, and the judge says the checkpoint was of other inputs."""
    from semrel.records import Chunk, GoldenItem

    def inputs(changed: bool):
        texts = {**small_corpus.TEXTS, "rain#0": " ".join([small_corpus.TEXTS["rain#0"]] * 6)}  # ~90 tokens: windows of 32
        if changed and change == "chunk text":
            texts["rain#0"] = texts["rain#0"].replace("droplets", "drops")
        if changed and change == "idf corpus":
            texts["chess#0"] = "Rain rain rain."  # not judged, but counted in every token's idf
        answer = "Water vapour condenses into drops." if changed and change == "answer" else "Water vapour condenses into droplets."
        chunks = [Chunk(i, t, i.split("#")[0], 0, len(t)) for i, t in texts.items()]
        golden = [GoldenItem("q1", "Why does it rain?", (answer,), ("rain#0",)),
                  GoldenItem("q2", "What do ships carry?", ("Steel boxes.",), ("ships#0",))]
        options = {"window": 32, "overlap": 4 if changed and change == "overlap" else 8, "idf": change == "idf corpus",
                   "null_sample": 0, "cache": False}
        return (chunks, golden, [("q1", "ships#0", ("bm25",)), ("q2", "rain#0", ("bm25",)), ("q1", "bread#0", ("bm25",))]), options

    output, original = tmp_path / "j.jsonl", Checkpoint.append

    written: list[dict] = []

    def stop(self, rows):  # once every pair is written: a run killed before its output, with all it could reuse
        rows = list(rows)
        original(self, rows)
        written.extend(rows)
        if len(written) == 5:
            raise KeyboardInterrupt

    monkeypatch.setattr(Checkpoint, "append", stop)
    args, options = inputs(False)
    with pytest.raises(KeyboardInterrupt):
        semrel.judge(*args, output, **options)
    monkeypatch.setattr(Checkpoint, "append", original)
    saved = len(Path(f"{output}.partial").read_text().splitlines()) - 1
    args, options = inputs(True)
    heard: list[str] = []
    again = semrel.judge(*args, output, warn=heard.append, **options)
    fresh = semrel.judge(*args, **options)
    assert again.resumed == 0 and saved == len(fresh.judgments) == 5
    assert f"{output}.partial held {saved} pairs judged from other inputs or settings" in " ".join(heard)
    assert [(j.query_id, j.chunk_id) for j in again.judgments] == [(j.query_id, j.chunk_id) for j in fresh.judgments]
    assert np.abs(_scores(again.judgments) - _scores(fresh.judgments)).max() < 1e-6
    before = semrel.judge(*inputs(False)[0], **inputs(False)[1])
    assert np.abs(_scores(before.judgments) - _scores(fresh.judgments)).max() > 1e-3  # the change moves a score


@pytest.mark.parametrize("options, message", [
    (["--baseline-pairs", "100"], "--baseline-pairs is the sample of --rescale corpus; it does not apply to --rescale none"),
    (["--rescale", "baseline", "--baseline-pairs", "100"],
     "--baseline-pairs is the sample of --rescale corpus; it does not apply to --rescale baseline"),
    (["--cache", "here", "--no-cache"], "give --cache or --no-cache, not both"),
])
def test_an_option_the_judge_would_not_use_is_refused(tmp_path, monkeypatch, options, message):
    """Each was ignored in silence; from the environment (SEMREL_JUDGE_*) it stays a default for where it applies."""
    small_corpus.write_corpus(tmp_path / "corpus.jsonl")
    small_corpus.write_golden(tmp_path / "golden.jsonl", [("q1", "Why do cats purr?", "cats purr when content", ["cats#0"])])
    (tmp_path / "pool.tsv").write_text("query_id\tchunk_id\tsources\nq1\tcats#0\tgold\n")
    files = ["--corpus", tmp_path / "corpus.jsonl", "--golden", tmp_path / "golden.jsonl", "--pool", tmp_path / "pool.tsv", "-o",
             tmp_path / "j.jsonl"]
    refused = run("judge", *files, *options)
    assert refused.exit_code == 2 and refused.stderr == f"semrel: error: {message}\n"
    assert not (tmp_path / "j.jsonl").exists()
    monkeypatch.setenv("SEMREL_JUDGE_BASELINE_PAIRS", "100")
    monkeypatch.setenv("SEMREL_JUDGE_CACHE_DIR", str(tmp_path / "cache"))
    done = run("judge", *files, "--no-cache", "--null-sample", "0")
    assert done.exit_code == 0, done.output
    assert not (tmp_path / "cache").exists()
