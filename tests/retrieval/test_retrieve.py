"""Retrieval through the real CLI on small corpora written here, checked against independent computations."""

from __future__ import annotations

import contextlib
import json
import re

import numpy as np
import pytest

from helpers import assert_one_error, run, write
from semrel.encoding.models import resolve_model
from semrel.errors import UsageError
from semrel.formats.trec import read_run
from semrel.records import GoldenItem, Run
from semrel.retrieval.retrieve import RRF_K, bm25_params, fuse, hits_from_run, strictly_ranked, warn_blank
from small_corpus import TEXTS, write_corpus, write_golden

QUERIES = {
    "q1": "why does sourdough bread rise slowly",
    "q2": "which chess piece is the most powerful",
    "q3": "how do volcanoes erupt",
}


@pytest.fixture(autouse=True)
def user_cache(tmp_path, monkeypatch):
    """Dense runs keep chunk vectors in the user cache dir by default: one of the test's own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    return tmp_path / "user-cache"


def write_inputs(tmp_path):
    corpus = write_corpus(tmp_path / "corpus.jsonl")
    golden = write_golden(tmp_path / "golden.jsonl", [(q, t, "x", []) for q, t in QUERIES.items()])
    return str(corpus), str(golden)


def retrieve(tmp_path, name, *options):
    corpus, golden = write_inputs(tmp_path)
    out = tmp_path / f"{name}.run"
    result = run("retrieve", "--corpus", corpus, "--golden", golden, "-o", out, *options)
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert ("encoding" in result.stderr) == (name != "bm25")
    return out, read_run(out).to_dict()


def ranking(per_query: dict[str, float]) -> list[str]:
    return sorted(per_query, key=lambda d: -per_query[d])


def lines_strictly_decreasing(path) -> bool:
    by_query: dict[str, list[float]] = {}
    for line in open(path):
        q, _, _, _, score, _ = line.split()
        by_query.setdefault(q, []).append(float(score))
    return all(all(a > b for a, b in zip(s, s[1:])) for s in by_query.values())


def test_bm25_ranks_the_matching_chunk_first_and_writes_a_manifest(tmp_path):
    out, run = retrieve(tmp_path, "bm25", "--method", "bm25", "-k", "3")
    assert {q: ranking(d)[0] for q, d in run.items()} == {"q1": "bread#0", "q2": "chess#0", "q3": "volcano#0"}
    assert lines_strictly_decreasing(out)
    assert all(len(d) <= 3 and min(d.values()) > 0 for d in run.values())
    manifest = json.loads((tmp_path / "bm25.run.manifest.json").read_text())
    assert manifest["params"]["method"] == "bm25" and manifest["params"]["k"] == 3
    assert manifest["rows"] == sum(len(d) for d in run.values())
    assert out.read_text().split("\n")[0].endswith(" bm25")


def test_queries_without_results_are_reported_and_stdout_takes_the_run(tmp_path):
    corpus = write_corpus(tmp_path / "corpus.jsonl")
    golden = write_golden(tmp_path / "golden.jsonl", [("q1", "the and of it", "x", []), ("q2", "ocean ports", "x", []),
                                                      ("q3", "xylophone", "x", [])])
    result = run("retrieve", "--corpus", corpus, "--golden", golden, "-o", "-")
    assert result.exit_code == 0, result.output
    assert "2 of 3 queries got no chunks (e.g. 'q1')" in result.stderr  # the first of them
    assert [line.split()[:4] for line in result.stdout.splitlines()] == [["q2", "Q0", "ships#0", "1"]]
    assert not (tmp_path / "-.manifest.json").exists()


BLANK = "{golden}: 2 of 3 queries are empty or blank ('q1', 'q3'): there is nothing to retrieve for them (bm25 finds no " \
    "chunk, dense ranks chunks against empty text); give them their text (`semrel golden validate` lists them)"


@pytest.mark.slow
@pytest.mark.parametrize("method", [("--method", "bm25"), ("--method", "dense"), ("--method", "hybrid"),
                                    ("--method", "bm25", "--rerank", "dense"), ("--method", "bm25", "--no-cache")])
def test_blank_queries_are_named_once_whichever_the_method(tmp_path, method):
    """Dense ranked every chunk for an empty query without a word (bm25 only said it got no chunks, not why), where
    `golden validate` calls such a query an error. Every method now names them in one warning, before it runs."""
    corpus = write_corpus(tmp_path / "corpus.jsonl")
    golden = write_golden(tmp_path / "golden.jsonl", [("q1", "", "x", []), ("q2", "ocean ports", "x", []), ("q3", " \t ", "x", [])])
    result = run("retrieve", "--corpus", corpus, "--golden", golden, "-o", tmp_path / "r.run", *method)
    assert result.exit_code == 0, result.output
    assert [line for line in result.stderr.splitlines() if "empty or blank" in line] == [f"semrel: warning: {BLANK.format(golden=golden)}"]
    assert "ships#0" in read_run(tmp_path / "r.run").to_dict()["q2"]


def test_one_blank_query_is_one_in_the_warning(tmp_path):
    """'1 of 3 queries is empty or blank ('q1'): there is nothing to retrieve for them ... give them their text'."""
    golden = write_golden(tmp_path / "golden.jsonl", [("q1", "", "x", []), ("q2", "ocean ports", "x", []), ("q3", "ships", "x", [])])
    result = run("retrieve", "--corpus", write_corpus(tmp_path / "corpus.jsonl"), "--golden", golden, "-o", tmp_path / "r.run")
    assert f"{golden}: 1 of 3 queries is empty or blank ('q1'): there is nothing to retrieve for it (bm25 finds no chunk, " \
           "dense ranks chunks against empty text); give it its text (`semrel golden validate` lists it)" in result.stderr


def brute_force_cosine(texts: list[str], queries: list[str]) -> np.ndarray:
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(resolve_model(), device="cpu")
    chunks = model.encode(texts, normalize_embeddings=True, convert_to_numpy=True)
    return model.encode(queries, normalize_embeddings=True, convert_to_numpy=True) @ chunks.T


@pytest.mark.slow
def test_dense_equals_brute_force_cosine_with_sentence_transformers(tmp_path):
    out, run = retrieve(tmp_path, "dense", "--method", "dense", "-k", "4")
    expected = brute_force_cosine(list(TEXTS.values()), list(QUERIES.values()))
    ids = list(TEXTS)
    for row, q in zip(expected, QUERIES):
        order = np.argsort(-row)[:4]
        assert ranking(run[q]) == [ids[i] for i in order]
        assert np.allclose([run[q][ids[i]] for i in order], row[order], atol=1e-5)
    assert lines_strictly_decreasing(out)


@pytest.mark.slow
def test_long_texts_are_cut_where_sentence_transformers_cuts_them():
    """all-MiniLM-L6-v2's sentence_bert_config.json says 256 tokens; semrel cut at the model's 512, so a
    chunk past 256 tokens got another vector (cosines moved by up to 0.145 on Cranfield)."""
    from semrel.encoding.sentences import sentence_embeddings

    long = " ".join(f"{word} of the bicycle chain wears at {n} kilometres" for n, word in enumerate(["grit"] * 60))
    texts = [long, "Cats purr when they are content."]
    assert len(long.split()) > 400
    expected = brute_force_cosine(texts, texts)
    ours = sentence_embeddings(texts)
    assert np.allclose(ours @ ours.T, expected, atol=1e-5)


@pytest.mark.slow
def test_hybrid_is_reciprocal_rank_fusion_of_the_bm25_and_dense_runs(tmp_path):
    _, bm25 = retrieve(tmp_path, "bm25", "--method", "bm25", "-k", "6")
    _, dense = retrieve(tmp_path, "dense", "--method", "dense", "-k", "6")
    _, hybrid = retrieve(tmp_path, "hybrid", "--method", "hybrid", "-k", "6")
    for q in QUERIES:
        expected: dict[str, float] = {}
        for first in (bm25[q], dense[q]):
            for rank, doc in enumerate(ranking(first), start=1):
                expected[doc] = expected.get(doc, 0.0) + 1 / (RRF_K + rank)
        assert set(hybrid[q]) == set(expected)
        assert all(hybrid[q][d] == pytest.approx(expected[d], abs=1e-12) for d in expected)


def test_fusion_values_by_hand_with_ties_broken_by_corpus_order():
    ranks = [(np.array([0, 1]), np.array([9.0, 8.0])), (np.array([1, 2]), np.array([0.9, 0.8]))]
    (positions, scores), = fuse([[ranks[0]], [ranks[1]]], k=10)
    assert positions.tolist() == [1, 0, 2]
    assert scores.tolist() == [1 / 62 + 1 / 61, 1 / 61, 1 / 62]
    (positions, scores), = fuse([[(np.array([3]), np.array([1.0]))], [(np.array([2]), np.array([1.0]))]], k=10)
    assert positions.tolist() == [2, 3]
    assert scores[0] == 1 / 61 and scores[1] == np.nextafter(1 / 61, 0)


def test_strictly_ranked_breaks_ties_by_position_and_cuts_at_k():
    positions, scores = strictly_ranked(np.array([5, 2, 7, 1]), np.array([0.5, 0.5, 0.9, 0.5]), k=3)
    assert positions.tolist() == [7, 1, 2]
    assert scores[0] == 0.9 and scores[1] == 0.5 and 0.5 > scores[2] > 0.4999999


@pytest.mark.slow
def test_rerank_orders_only_the_first_stage_candidates_by_dense_cosine(tmp_path):
    corpus, golden = write_inputs(tmp_path)
    first = tmp_path / "first.run"
    candidates = {"q1": ["rain#0", "ships#0", "bread#0"], "q2": ["cats#0", "chess#0", "rain#0"]}
    first.write_text("".join(
        f"{q} Q0 {d} {r} {10 - r} first\n" for q, docs in candidates.items() for r, d in enumerate(docs, start=1)
    ))
    out = tmp_path / "reranked.run"
    result = run("retrieve", "--corpus", corpus, "--golden", golden, "--run", first, "--rerank", "dense",
                     "--rerank-depth", "2", "-o", out)
    assert result.exit_code == 0, result.output
    reranked = read_run(out).to_dict()
    assert set(reranked) == {"q1", "q2"}
    ids = list(TEXTS)
    cosine = brute_force_cosine(list(TEXTS.values()), list(QUERIES.values()))
    for row, q in enumerate(["q1", "q2"]):
        top = candidates[q][:2]
        assert set(reranked[q]) == set(top)
        assert ranking(reranked[q]) == sorted(top, key=lambda d: -cosine[row, ids.index(d)])
    assert ranking(reranked["q2"])[0] == "chess#0"
    manifest = json.loads((tmp_path / "reranked.run.manifest.json").read_text())
    assert [i["path"] for i in manifest["inputs"]] == [corpus, golden, str(first)]  # the first stage is read: an input
    assert manifest["params"]["rerank_depth"] == 2 and manifest["params"]["first_stage_run"] == str(first)
    result = run("retrieve", "--corpus", corpus, "--golden", golden, "--run", first, "--rerank", "dense", "--rerank-depth", "2", "-o", "-")
    assert result.exit_code == 0, result.output
    assert {line.split()[-1] for line in result.stdout.splitlines()} == {"rerank"}  # no method, no file: named rerank


def test_rerank_of_the_methods_own_output_keeps_its_candidates(tmp_path):
    _, bm25 = retrieve(tmp_path, "bm25", "--method", "bm25", "-k", "2")
    _, reranked = retrieve(tmp_path, "bm25-dense", "--method", "bm25", "-k", "2", "--rerank", "dense", "--rerank-depth", "2")
    assert {q: set(d) for q, d in reranked.items()} == {q: set(d) for q, d in bm25.items()}


@pytest.mark.parametrize("first_run, message", [("", "it holds no rows"),
                                                ("elsewhere Q0 bread#0 1 9 first\n", "its queries (e.g. 'elsewhere') are none")],
                         ids=["empty", "unknown queries"])
def test_a_first_stage_run_without_candidates_is_refused_with_or_without_the_cache(tmp_path, first_run, message):
    """It reranked to an empty run, written with exit 0 under two warnings, which then scored 0 everywhere."""
    corpus, golden = write_inputs(tmp_path)
    first = write(tmp_path / "first.run", first_run)
    for cache in (["--no-cache"], ["--cache", str(tmp_path / "cache")]):  # refused before anything is encoded
        out = tmp_path / "reranked.run"
        result = run("retrieve", "--corpus", corpus, "--golden", golden, "--run", first, "--rerank", "dense", *cache, "-o", out)
        assert_one_error(result, f"run first: nothing to rerank: {message}")
        assert not out.exists()


@pytest.mark.parametrize("options, code, message", [
    (["-k", "0"], 2, "-k 0: give a positive number of chunks per query"),
    (["--rerank", "dense", "--rerank-depth", "-1"], 2, "--rerank-depth -1: give a positive number"),
    (["--rerank", "dense", "--rerank-depth", "0"], 2, "--rerank-depth 0: give a positive number"),
    (["--run", "first.run"], 2, "add --rerank dense"),
    (["--run", "first.run", "--rerank", "dense", "--method", "bm25"], 2, "not both"),
    (["--run", "first.run", "--rerank", "dense"], 1, "chunk 'nowhere#3' (query 'q1') is not in"),
    (["--run", "missing.run", "--rerank", "dense"], 1, "missing.run: no such file"),
])
def test_bad_input_gives_one_clear_line(tmp_path, monkeypatch, options, code, message):
    monkeypatch.chdir(tmp_path)
    corpus, golden = write_inputs(tmp_path)
    (tmp_path / "first.run").write_text("q1 Q0 bread#0 1 2.0 x\nq1 Q0 nowhere#3 2 1.0 x\n")
    result = run("retrieve", "--corpus", corpus, "--golden", golden, "-o", "out.run", *options)
    assert result.exit_code == code
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.output
    assert not (tmp_path / "out.run").exists()


@pytest.mark.parametrize("options, message", [
    (["--rerank-depth", "5"], "--rerank-depth goes with --rerank: it is how many first-stage chunks are reranked"),
    (["--model", "x"], "--model is the dense encoder; it does not apply to --method bm25 without --rerank dense"),
    (["--method", "dense", "--bm25-k1", "2"], "--bm25-k1 is BM25's; it does not apply to --method dense"),
    (["--run", "first.run", "--rerank", "dense", "--bm25-stemmer", "none"],
     "--bm25-stemmer is BM25's; it does not apply to --run (a first stage made already)"),
    (["--cache", "here", "--no-cache"], "give --cache or --no-cache, not both"),
])
def test_an_option_that_does_not_apply_is_refused(tmp_path, monkeypatch, options, message):
    """Each was ignored in silence: the run was written as if it had not been given."""
    monkeypatch.chdir(tmp_path)
    corpus, golden = write_inputs(tmp_path)
    (tmp_path / "first.run").write_text("q1 Q0 bread#0 1 2.0 x\n")
    result = run("retrieve", "--corpus", corpus, "--golden", golden, "-o", "out.run", *options)
    assert result.exit_code == 2 and result.stderr == f"semrel: error: {message}\n"
    assert not (tmp_path / "out.run").exists()


def test_options_from_the_environment_are_defaults_for_where_they_apply(tmp_path, monkeypatch):
    """SEMREL_RETRIEVE_MODEL (a per-machine encoder), a cache folder, a rerank depth or BM25 setting: a bm25 run with
    --no-cache goes on without them."""
    for variable, value in (("MODEL", "x"), ("CACHE_DIR", str(tmp_path / "c")), ("RERANK_DEPTH", "5"), ("BM25_K1", "2")):
        monkeypatch.setenv(f"SEMREL_RETRIEVE_{variable}", value)
    retrieve(tmp_path, "bm25", "--no-cache")


def test_bm25_bounds_are_taken_as_given_and_a_stopwords_value_neither_a_list_nor_a_file_is_refused(tmp_path):
    """k1 0 (term frequency ignored) and b 0 or 1 are BM25's own bounds: refused, or a 0 dropped for the default, the run
    would not be the one asked for. A misspelt list name is no file of words either: said so, with the lists."""
    assert bm25_params(k1=0.0, b=0.0) == {"k1": 0.0, "b": 0.0, "method": "lucene", "stopwords": "en", "stemmer": "english"}
    assert bm25_params(b=1.0)["b"] == 1.0
    with pytest.raises(UsageError, match=r"^bm25_stopwords='enn': no such file; give none, a list name \(en, en_plus, de, .*\) "
                                         r"or a file of words$"):
        bm25_params(stopwords="enn")


def test_missing_corpus_and_broken_golden_are_one_line_errors(tmp_path):
    corpus, golden = write_inputs(tmp_path)
    result = run("retrieve", "--corpus", tmp_path / "nope.jsonl", "--golden", golden, "-o", tmp_path / "x.run")
    assert result.exit_code == 1 and result.output.strip() == f"semrel: error: {tmp_path / 'nope.jsonl'}: no such file (check the path)"
    (tmp_path / "link.jsonl").symlink_to(tmp_path / "moved.jsonl")  # the file a link names was moved away
    result = run("retrieve", "--corpus", tmp_path / "link.jsonl", "--golden", golden, "-o", tmp_path / "x.run")
    assert result.exit_code == 1 and result.output.strip() == \
        f"semrel: error: {tmp_path / 'link.jsonl'}: a link to {tmp_path / 'moved.jsonl'}, which does not exist (check the link)"
    (tmp_path / "golden.jsonl").write_text('{"query_id": "q1", "query": "a"}\n{"query_id": "q2"\n')
    result = run("retrieve", "--corpus", corpus, "--golden", golden, "-o", tmp_path / "x.run")
    assert result.exit_code == 1 and f"{golden}:2: invalid JSON" in result.output


def test_retrieve_and_judge_work_on_the_same_sample_of_queries(tmp_path):
    corpus = write_corpus(tmp_path / "corpus.jsonl")
    rows = [(f"q{n}", f"question {n} about {w}", f"{w} answer", [f"{w}#0"]) for n, w in
            enumerate(["cats", "ships", "bread", "volcano", "chess", "rain"] * 2)]
    golden = write_golden(tmp_path / "golden.jsonl", rows)
    ran = {}
    for name, options in (("limit", ["--limit", "2"]), ("sample", ["--sample", "4", "--sample-seed", "7"]),
                          ("again", ["--sample", "4", "--sample-seed", "7"])):
        out = tmp_path / f"{name}.run"
        result = run("retrieve", "--corpus", corpus, "--golden", golden, "-k", "2", "-o", out, *options)
        assert result.exit_code == 0, result.output
        ran[name] = set(read_run(out).to_dict())
    assert ran["limit"] == {"q0", "q1"} and len(ran["sample"]) == 4 and ran["again"] == ran["sample"]
    manifest = json.loads((tmp_path / "sample.run.manifest.json").read_text())
    assert manifest["params"]["queries"] == {"sample": 4, "seed": 7, "kept": 4,
                                             "rule": "random.Random(seed).sample of positions, file order kept"}
    assert run("pool", tmp_path / "limit.run", "--golden", golden, "--depth", "2", "-o", tmp_path / "pool.tsv").exit_code == 0
    # judge the full pool on the same sample: only those queries are judged
    result = run("judge", "--corpus", corpus, "--golden", golden, "--pool", tmp_path / "pool.tsv", "--sample", "4",
                 "--sample-seed", "7", "--cache", tmp_path / "cache", "-o", tmp_path / "j.jsonl")
    assert result.exit_code == 0, result.output
    judged = {json.loads(line)["query_id"] for line in (tmp_path / "j.jsonl").read_text().splitlines()}
    assert judged == ran["sample"]


def test_dense_retrieval_reports_its_progress_on_stderr(tmp_path):
    from semrel.encoding.vectors import VectorStore
    from semrel.records import Chunk
    from semrel.retrieval.corpus import Corpus
    from semrel.retrieval.retrieve import DenseIndex

    texts = {f"c{n}#0": f"{TEXTS[k]} Note {n}." for n, k in enumerate(list(TEXTS) * 25)}  # 150 chunks
    corpus = write_corpus(tmp_path / "corpus.jsonl", texts)
    golden = write_golden(tmp_path / "golden.jsonl", [("q1", "bread", "x", [])])
    result = run("retrieve", "--corpus", corpus, "--golden", golden, "--method", "dense", "--cache", tmp_path / "cache",
                 "-o", tmp_path / "d.run")
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    # shown as soon as the step starts (the total), then at the end with the rate, as the judge's line
    first = lines.index("semrel: encoding chunks: 0/150")
    assert re.fullmatch(r"semrel: encoding chunks: 150/150, [\d.]+/s", lines[first + 1]), lines
    # the vector store reports through the steps it is given, batch by batch
    calls: list = []

    @contextlib.contextmanager
    def steps(label, total):
        calls.append((label, total))
        yield lambda n: calls.append(n)

    chunks = [Chunk(i, t + " again", i, 0, len(t)) for i, t in texts.items()]
    store = VectorStore(tmp_path / "cache2", None)
    DenseIndex(Corpus.of_chunks(chunks), None, steps, store=store)
    assert calls[0] == ("encoding chunks", 150) and sum(calls[1:]) == 150 and len(calls) > 2


def test_bm25_settings_are_options_and_go_in_the_manifest(tmp_path):
    corpus = write_corpus(tmp_path / "corpus.jsonl")
    golden = write_golden(tmp_path / "golden.jsonl", [("q1", "erupting volcanoes", "x", []), ("q2", "the queen", "x", [])])

    def bm25(name, *options):
        out = tmp_path / f"{name}.run"
        result = run("retrieve", "--corpus", corpus, "--golden", golden, "-o", out, *options)
        assert result.exit_code == 0, result.output
        return read_run(out).to_dict(), json.loads((tmp_path / f"{name}.run.manifest.json").read_text())["params"]["bm25"]

    default, recorded = bm25("default")
    assert recorded == {"k1": 1.5, "b": 0.75, "method": "lucene", "stopwords": "en", "stemmer": "english"}
    assert list(default["q1"]) == ["volcano#0"]  # stemmed: erupting ~ erupts, volcanoes ~ volcano
    unstemmed, recorded = bm25("plain", "--bm25-stemmer", "none")
    assert "q1" not in unstemmed and recorded["stemmer"] == "none"
    stop = write(tmp_path / "stop.txt", "# Terrier-like\nthe\nqueen\n")
    tuned, recorded = bm25("tuned", "--bm25-k1", "1.2", "--bm25-b", "0.5", "--bm25-stemmer", "porter", "--bm25-stopwords", stop)
    assert recorded["k1"] == 1.2 and recorded["b"] == 0.5 and recorded["stemmer"] == "porter"
    assert recorded["stopwords"]["file"] == str(stop) and len(recorded["stopwords"]["sha256"]) == 64
    assert "q2" not in tuned  # both its words are stopwords now
    assert tuned["q1"]["volcano#0"] != default["q1"]["volcano#0"]  # k1 and b change the score
    assert_one_error(run("retrieve", "--corpus", corpus, "--golden", golden, "--bm25-b", "2", "-o", tmp_path / "x.run"),
                     "--bm25-b", code=2)
    for k1 in ("nan", "inf"):  # every query got an empty run, with exit 0
        assert_one_error(run("retrieve", "--corpus", corpus, "--golden", golden, "--bm25-k1", k1, "-o", tmp_path / "x.run"),
                         f"--bm25-k1 {k1}: give a finite number, 0 or more", code=2)
    assert_one_error(run("retrieve", "--corpus", corpus, "--golden", golden, "--bm25-stemmer", "klingon", "-o", tmp_path / "x.run"),
                     "--bm25-stemmer", "porter", code=2)


def test_a_bm25_run_records_no_reranker_and_no_vector_store_and_shows_its_query_progress(tmp_path):
    _, found = retrieve(tmp_path, "bm25", "--method", "bm25", "-k", "2")  # --rerank-depth without --rerank is refused now
    params = json.loads((tmp_path / "bm25.run.manifest.json").read_text())["params"]
    assert params["rerank"] is None and params["rerank_depth"] is None and params["model"] == "all-MiniLM-L6-v2"
    assert "vector_store" not in params and params["bm25_index"]["built"] == 6
    result = run("retrieve", "--corpus", tmp_path / "corpus.jsonl", "--golden", tmp_path / "golden.jsonl", "-k", "2",
                 "-o", tmp_path / "again.run")
    assert result.exit_code == 0 and read_run(tmp_path / "again.run").to_dict() == found
    assert "chunk vectors" not in result.stderr  # bm25 has none
    assert re.search(r"^semrel: bm25: queries: 3/3, [\d.]+/s$", result.stderr, re.MULTILINE), result.stderr


@pytest.mark.slow
def test_rerank_takes_rerank_depth_candidates_and_keeps_k(tmp_path):
    """bm25 ranks cats#0 first for this query and bread#0 second; dense cosine ranks bread#0 first of bm25's top 3, so a
    rerank to -k 1 from --rerank-depth 3 keeps bread#0 alone (a first stage cut at -k keeps cats#0)."""
    corpus = write_corpus(tmp_path / "corpus.jsonl")
    golden = write_golden(tmp_path / "golden.jsonl", [("q1", "when yeast is content", "x", [])])
    result = run("retrieve", "--corpus", corpus, "--golden", golden, "--method", "bm25", "-k", "3", "-o", tmp_path / "b.run")
    assert result.exit_code == 0, result.output
    assert ranking(read_run(tmp_path / "b.run").to_dict()["q1"]) == ["cats#0", "bread#0", "volcano#0"]
    result = run("retrieve", "--corpus", corpus, "--golden", golden, "--method", "bm25", "-k", "1", "--rerank", "dense",
                 "--rerank-depth", "3", "-o", tmp_path / "r.run")
    assert result.exit_code == 0, result.output
    (cosine,) = brute_force_cosine([TEXTS["bread#0"]], ["when yeast is content"])
    reranked = read_run(tmp_path / "r.run").to_dict()
    assert list(reranked["q1"]) == ["bread#0"] and reranked["q1"]["bread#0"] == pytest.approx(cosine[0], abs=1e-5)


def test_the_queries_a_first_stage_run_has_beyond_the_golden_set_are_warned_of_by_the_least():
    """As `semrel pool` says it: the count, and the least id as the example (not a set's order, which the hash seed moves)."""
    heard: list[str] = []
    first = Run.from_dict({"q1": {"bread#0": 1.0}, **{f"x{n:03d}": {"bread#0": 1.0} for n in range(100, 0, -1)}}, "first")
    hits = hits_from_run(first, ["q1", "q2"], list(TEXTS), "corpus.jsonl", heard.append)
    assert [(p.tolist(), s.tolist()) for p, s in hits] == [([2], [1.0]), ([], [])]
    assert heard == ["100 queries of run first are not in the golden set and are left out (e.g. 'x001')"]


def test_the_blank_query_warning_lists_three_in_full():
    heard: list[str] = []
    warn_blank([GoldenItem(q, " ", ("x",)) for q in ("q1", "q2", "q3")], "g.jsonl", heard.append)
    assert len(heard) == 1 and heard[0].startswith("g.jsonl: 3 of 3 queries are empty or blank ('q1', 'q2', 'q3'): there is")


@pytest.mark.parametrize("cache", [["--no-cache"], ["--cache", "cache"]])
def test_a_golden_set_whose_gold_chunks_are_none_of_the_corpus_is_refused_and_some_missing_are_warned_of(tmp_path, monkeypatch, cache):
    """A golden set of another corpus (another import) was retrieved for with exit 0: every run scored 0. With the
    on-disk index (bm25 never reads the corpus's ids) the ids are looked up by their hashes."""
    monkeypatch.chdir(tmp_path)
    corpus = write_corpus(tmp_path / "corpus.jsonl")
    other = write_golden(tmp_path / "other.jsonl", [("q1", QUERIES["q1"], "x", ["1547#1"]), ("q2", QUERIES["q2"], "x", ["22#0"])])
    result = run("retrieve", "--corpus", corpus.name, "--golden", other.name, "-o", "out.run", *cache)
    assert result.exit_code == 1 and "Traceback" not in result.output
    error = result.stderr.strip().splitlines()[-1]  # after the index's progress, which the check reads
    assert error.startswith("semrel: error: other.jsonl: none of its 2 gold chunk ids is in corpus.jsonl (e.g. '1547#1'): "
                            "a run over it would score 0; "), error
    assert error.endswith("`semrel golden validate other.jsonl --corpus corpus.jsonl` lists them"), error
    assert not (tmp_path / "out.run").exists()
    some = write_golden(tmp_path / "some.jsonl", [("q1", QUERIES["q1"], "x", ["bread#0", "bread#1"]), ("q2", QUERIES["q2"], "x", [])])
    result = run("retrieve", "--corpus", corpus.name, "--golden", some.name, "-o", "out.run", *cache)
    assert result.exit_code == 0, result.output
    assert "semrel: warning: some.jsonl: 1 of its 2 gold chunk ids is not in corpus.jsonl (e.g. 'bread#1'): no run over it can find them" \
        in result.stderr
    assert read_run(tmp_path / "out.run").to_dict()["q1"]["bread#0"] > 0
