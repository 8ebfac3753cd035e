"""Audit tests (hand-made mutation testing of judging/judge.py and fill.py) for what the other judging tests left unpinned.

Each test here failed with a mutant of those files that every older test let through: which chunks make the null and
idf samples (seeded hash order, blank chunks left out, each query's judged chunks left out) and what the manifest says
of them; the corpus baseline's pairs (no judged pair, their mean alone); the idf sample in the checkpoint's fingerprint;
the window in the embedding cache's namespace and the corpus in the idf table's key; the limits on window and overlap
and the default overlap; a blank answer among several, a whole-number option, too few unrelated pairs, baseline_pairs=0
and a sampled pool's unknown query refused; blank chunks, joined sources, no_answer with an answer, answers that are
their question in another case; the seconds and texts of the null sample; the manifest's inputs, rows, sample and
truncated answers; an output over the streamed corpus refused up front; the checkpoint closed when a run ends; and a
fill's model check, records (depth, earlier fills, inputs) and resume; a resumed run's count of truncated reference
answers; and the errors for a judged chunk the corpus lacks or repeats and for a pooled query the golden set lacks.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import semrel
import small_corpus
from helpers import ok, run
from semrel.errors import Interrupted, SemrelError, UsageError, ValidationError
from semrel.formats.manifest import read_manifest
from semrel.interrupts import InterruptedAfterWriting
from semrel.judging import fill as fill_module
from semrel.judging import judge as judge_module
from semrel.judging.checkpoint import Checkpoint, unpack
from semrel.records import Chunk, GoldenItem, QuerySample

pytestmark = [
    # p's warnings about these tiny fixtures, tested where they are the point
    pytest.mark.filterwarnings("ignore:.* lie beyond the development sets p was fitted on"),
    pytest.mark.filterwarnings("ignore:p's coefficients were fitted for"),
    pytest.mark.filterwarnings("ignore:.* no probability p"),
    pytest.mark.filterwarnings("ignore:.* reference answers of 2 words or fewer"),
]

LONG_RAIN = " ".join([small_corpus.TEXTS["rain#0"]] * 6)  # ~90 tokens: several windows of 32


def _chunks(texts: dict[str, str] = small_corpus.TEXTS) -> list[Chunk]:
    return [Chunk(i, t, i.split("#")[0], 0, len(t)) for i, t in texts.items()]


def _golden() -> list[GoldenItem]:
    return [GoldenItem("q1", "Why do cats purr?", ("Cats purr when they are content.",), ("cats#0",)),
            GoldenItem("q2", "What do ships carry?", ("Steel boxes across the ocean.",), ("ships#0",))]


def _scores(result) -> np.ndarray:
    return np.array([[j.P, j.R, j.F] for j in result.judgments])


def _seeded_order(seed: int, chunk_ids) -> list[str]:
    """Chunk ids by the 8-byte blake2b of "seed\\0id", smallest first: the order the manifest names for the samples."""
    def value(chunk_id: str) -> int:
        return int.from_bytes(hashlib.blake2b(f"{seed}\0{chunk_id}".encode(), digest_size=8).digest(), "big")
    return sorted(chunk_ids, key=value)


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("audit-cache") / "cache"



@pytest.fixture
def checkpointed(monkeypatch) -> list[dict]:
    """Every row the judge appends to its checkpoint, as written."""
    rows: list[dict] = []
    original = Checkpoint.append

    def keep(self, saved):
        saved = list(saved)
        rows.extend(saved)
        original(self, saved)

    monkeypatch.setattr(Checkpoint, "append", keep)
    return rows

def test_null_and_idf_samples_are_the_smallest_seeded_hashes_of_the_non_blank_chunks(tmp_path, checkpointed):
    """The null sample is the `null_sample` non-blank chunks of smallest blake2b(seed\\0id), each query paired with those
    its pool does not hold; the idf sample is the first 1000 of the same order. A corpus of more than 1000 chunks, with a
    blank chunk whose hash is below every other, tells those orders, sizes and exclusions apart."""
    seed = 5
    texts = {**small_corpus.TEXTS, **{f"n{k}#0": f"Note {k} about item {k}." for k in range(1100)}}
    lowest = _seeded_order(seed, texts)[0]
    blank = next(f"blank{k}#0" for k in range(100_000) if _seeded_order(seed, [f"blank{k}#0", lowest])[0] != lowest)
    texts[blank] = "   "
    first = _seeded_order(seed, [c for c in texts if c != blank])[:3]
    golden = _golden()
    pool = [("q1", first[0], ("bm25",))]  # judged for q1: not q1's null chunk, still q2's
    judged = {"q1": {"cats#0", first[0]}, "q2": {"ships#0"}}
    expected = {(q, c) for q in ("q1", "q2") for c in first if c not in judged[q]}
    result = semrel.judge(_chunks(texts), golden, pool, tmp_path / "j.jsonl", null_sample=3, seed=seed, cache=False,
                          warn=lambda _: None)
    assert {(r["query_id"], r["chunk_id"]) for r in checkpointed if r["kind"] == "null"} == expected
    record = result.params["probability"]
    assert record["null_sample"]["chunks"] == 3 and record["null_sample"]["pairs"] == len(expected)
    assert record["null_sample"]["seed"] == seed and record["idf_sample"]["seed"] == seed
    assert record["null_sample"]["texts_only_for_null"] == len(set(first) - {first[0], "cats#0", "ships#0"})
    assert record["idf_sample"]["chunks"] == 1000
    assert result.params["pairs"] == len(result.judgments) == 3
    assert (result.scored, result.resumed, result.null_pairs) == (3 + len(expected), 0, len(expected))


def test_the_corpus_baseline_pairs_no_judged_pair(tmp_path, checkpointed):
    """--rescale corpus rescales by unrelated pairs: none of them is a pooled or gold pair, even where every other
    (query, chunk) pair of the corpus is needed to make up the count."""
    texts = {**small_corpus.TEXTS, **{f"n{k}#0": f"Note {k} about item {k}." for k in range(20)}}
    pool = [("q1", "bread#0", ("bm25",))]
    related = {("q1", "bread#0"), ("q1", "cats#0"), ("q2", "ships#0")}
    result = semrel.judge(_chunks(texts), _golden(), pool, tmp_path / "j.jsonl", rescale="corpus", baseline_pairs=49, null_sample=0,
                          cache=False)
    baseline = [(r["query_id"], r["chunk_id"]) for r in checkpointed if r["kind"] == "baseline"]
    assert len(baseline) == len(set(baseline)) == 49 and not set(baseline) & related  # 2 x 26 pairs, less the 3 judged
    assert result.params["baseline"]["pairs"] == 49 and result.scored == 3 + 49
    mean = np.mean([unpack(r["scores"], "<f8")[:3] for r in checkpointed if r["kind"] == "baseline"], axis=0)  # of those pairs alone
    assert [result.params["baseline"][k] for k in "PRF"] == pytest.approx(mean.tolist(), abs=1e-12)


def test_a_checkpoint_is_not_reused_once_the_idf_sample_of_p_changed(tmp_path, monkeypatch):
    """p's idf weights are counted on the idf sample (every non-blank chunk of a small corpus): an unjudged chunk outside
    the null sample, edited, moves p though no judged or null text changed. The checkpoint of the run before must not be
    reused, else its pairs keep the old p."""
    golden = _golden()
    order = _seeded_order(0, small_corpus.TEXTS)
    null = [c for c in order if c not in ("cats#0", "ships#0")][:2]
    other = next(c for c in order if c not in {"cats#0", "ships#0", *null})
    changed = {**small_corpus.TEXTS, other: "Cats purr. Steel boxes cross the ocean. Cats purr when content."}
    output = tmp_path / "j.jsonl"

    def killed_before_the_output(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(judge_module, "write_judgments", killed_before_the_output)
    with pytest.raises(KeyboardInterrupt):  # every pair saved in the checkpoint, no output
        semrel.judge(_chunks(), golden, None, output, null_sample=2, cache=False, warn=lambda _: None)
    monkeypatch.undo()
    before = semrel.judge(_chunks(), golden, None, null_sample=2, cache=False, warn=lambda _: None)
    fresh = semrel.judge(_chunks(changed), golden, None, null_sample=2, cache=False, warn=lambda _: None)
    again = semrel.judge(_chunks(changed), golden, None, output, null_sample=2, cache=False, warn=lambda _: None)
    assert max(abs(a.p - b.p) for a, b in zip(before.judgments, fresh.judgments)) > 1e-6  # the edit moves p
    assert again.resumed == 0
    assert [j.p for j in again.judgments] == pytest.approx([j.p for j in fresh.judgments], abs=1e-9)


def test_a_warm_cache_of_another_window_is_not_read_for_this_one(tmp_path):
    """Vectors cached for 512-token windows are one window of a 90-token chunk; read for 32-token windows they would give
    the scores of the wider window."""
    texts = {**small_corpus.TEXTS, "rain#0": LONG_RAIN}
    golden = [GoldenItem("q1", "Why does it rain?", ("Water vapour condenses into droplets.",), ("rain#0",))]
    semrel.judge(_chunks(texts), golden, None, null_sample=0, cache=tmp_path / "cache")
    narrow = semrel.judge(_chunks(texts), golden, None, window=32, null_sample=0, cache=tmp_path / "cache")
    cold = semrel.judge(_chunks(texts), golden, None, window=32, null_sample=0, cache=False)
    assert narrow.windowed == 1 and narrow.encoded >= 1
    assert np.abs(_scores(narrow) - _scores(cold)).max() < 1e-6


def test_the_idf_table_of_another_corpus_is_not_read_from_the_cache(tmp_path):
    """The idf table is cached under the corpus's texts: a corpus with one unjudged chunk edited gets its own table."""
    golden = [GoldenItem("q1", "Why does it rain?", ("Water vapour condenses into droplets.",), ("rain#0",))]
    edited = {**small_corpus.TEXTS, "chess#0": "Rain rain rain."}
    first = semrel.judge(_chunks(), golden, None, idf=True, null_sample=0, cache=tmp_path / "cache")
    warm = semrel.judge(_chunks(edited), golden, None, idf=True, null_sample=0, cache=tmp_path / "cache")
    cold = semrel.judge(_chunks(edited), golden, None, idf=True, null_sample=0, cache=False)
    assert np.abs(_scores(first) - _scores(cold)).max() > 1e-3  # the edit moves the scores
    assert np.array_equal(_scores(warm), _scores(cold))
    assert warm.params["idf"] is True and warm.params["idf_documents"] == len(edited)


def test_window_and_overlap_limits_and_the_default_overlap(cache):
    """A window of 16 tokens and an overlap of 0 are allowed, an overlap of half the window is not; the overlap defaults
    to a quarter of the window, 128 of the model's 512."""
    golden = _golden()[:1]
    narrow = semrel.judge(_chunks(), golden, None, window=16, overlap=0, null_sample=0, cache=cache)
    assert (narrow.params["windows"]["tokens"], narrow.params["windows"]["overlap"]) == (16, 0)
    assert narrow.params["options"]["window"] == 16 and narrow.windowed == 1  # cats#0: 15 tokens over 14
    assert semrel.judge(_chunks(), golden, None, window=32, null_sample=0, cache=cache).params["windows"]["overlap"] == 8
    assert semrel.judge(_chunks(), golden, None, null_sample=0, cache=cache).params["windows"]["overlap"] == 128
    with pytest.raises(UsageError, match=r"^overlap=16: must be 0 or more and under half the 32-token window$"):
        semrel.judge(_chunks(), golden, None, window=32, overlap=16, null_sample=0, cache=cache)
    assert semrel.judge(_chunks(), golden, None, window=32, overlap=15, null_sample=0, cache=cache).params["windows"]["overlap"] == 15


def test_a_corpus_too_small_for_its_baseline_is_told_in_the_options_typed(tmp_path):
    corpus = small_corpus.write_corpus(tmp_path / "corpus.jsonl")
    golden = small_corpus.write_golden(tmp_path / "golden.jsonl", [("q1", "Why do cats purr?", "Cats purr.", ["cats#0"])])
    result = run("judge", "--corpus", corpus, "--golden", golden, "--rescale", "corpus", "--baseline-pairs", "40", "--null-sample", "0",
                 "--no-cache", "-o", tmp_path / "j.jsonl")
    assert (result.exit_code, result.stderr) == (2, "semrel: error: only 5 unrelated (chunk, reference) pairs found; the corpus is "
                                                    "too small for --rescale corpus, use --rescale none\n")

def test_bad_options_and_answers_are_refused_before_any_scoring():
    golden = _golden()
    blank_second = [GoldenItem("q1", "Why do cats purr?", ("Cats purr.", "  "), ("cats#0",))]
    with pytest.raises(ValidationError, match="query 'q1' has an empty reference_answer"):
        semrel.judge(_chunks(), blank_second, None, null_sample=0, cache=False)
    with pytest.raises(UsageError, match=r"^only 5 unrelated \(chunk, reference\) pairs found; the corpus is too small for "
                                         r"rescale='corpus', use rescale='none'$"):  # it said --rescale to semrel.judge
        semrel.judge(_chunks(), golden[:1], None, rescale="corpus", baseline_pairs=40, null_sample=0, cache=False)
    with pytest.raises(UsageError, match="baseline_pairs=0: rescale='corpus' needs 1 or more unrelated pairs"):
        semrel.judge(_chunks(), golden, None, rescale="corpus", baseline_pairs=0, null_sample=0, cache=False)
    with pytest.raises(TypeError, match=r"^layer: give a whole number, not float$"):
        semrel.judge(_chunks(), golden, None, layer=2.5, null_sample=0, cache=False)
    with pytest.raises(SemrelError, match="query 'zz' is not in golden set"):  # a sample leaves out known queries only
        semrel.judge(_chunks(), golden, [("q2", "cats#0", ("bm25",)), ("zz", "cats#0", ("bm25",))], sample=QuerySample(limit=1),
                     null_sample=0, cache=False)


def test_blank_chunks_score_0_sources_are_joined_and_unjudged_queries_need_no_answer(cache):
    """A blank chunk scores 0, 0, 0 (bert_score's fill); a pair's sources are its runs, sorted and joined by commas, with
    `gold` for a gold chunk; a query with no pair to judge may have a blank answer; a query the import marked no_answer
    but that has an answer is judged."""
    texts = {**small_corpus.TEXTS, "blank#0": "  "}
    golden = [GoldenItem("q1", "Why do cats purr?", ("Cats purr when they are content.",), ("cats#0", "blank#0")),
              GoldenItem("q2", "What do ships carry?", ("Ships carry steel boxes.",), ("ships#0",), {"no_answer": True}),
              GoldenItem("q3", "Unasked?", ("",), ())]
    pool = [("q1", "cats#0", ("dense",)), ("q1", "ships#0", ("dense", "bm25"))]
    heard: list[str] = []
    result = semrel.judge(_chunks(texts), golden, pool, null_sample=0, cache=cache, warn=heard.append)
    got = {(j.query_id, j.chunk_id): j for j in result.judgments}
    assert list(got) == [("q1", "cats#0"), ("q1", "ships#0"), ("q1", "blank#0"), ("q2", "ships#0")]
    assert (got["q1", "blank#0"].P, got["q1", "blank#0"].R, got["q1", "blank#0"].F) == (0.0, 0.0, 0.0)
    assert [j.source for j in got.values()] == ["dense,gold", "bm25,dense", "gold", "gold"]
    assert got["q2", "ships#0"].R > 0.5 and "unanswered" not in result.params and heard == []


def test_an_answer_that_is_its_question_in_other_case_is_warned_about(cache):
    """Question and answer are compared casefolded, each side: the same words capitalised alike are still the question."""
    golden = [GoldenItem("q1", "Why do cats purr?", ("Why do cats purr?",), ("cats#0",))]
    heard: list[str] = []
    semrel.judge(_chunks(), golden, None, null_sample=0, cache=cache, warn=heard.append)
    assert [w for w in heard if "question as the reference" in w] and len(heard) == 1


def test_seconds_for_null_texts_count_only_texts_the_null_sample_alone_needs():
    """Every null chunk here is also judged for the other query: no text is encoded for the null sample alone, so it
    costs no seconds and no text; each pair of the query whose pool holds the whole corpus has no null pair."""
    golden = _golden()
    pool = [("q1", c, ("bm25",)) for c in small_corpus.TEXTS]
    heard: list[str] = []
    result = semrel.judge(_chunks(), golden, pool, null_sample=6, cache=False, warn=heard.append)
    null = result.params["probability"]["null_sample"]
    assert (null["pairs"], null["texts_only_for_null"], null["seconds_for_null_texts"]) == (5, 0, 0.0)
    assert result.params["probability"]["pairs_without_null"] == 6


def test_the_manifest_records_inputs_rows_sample_and_truncated_answers(tmp_path):
    """The manifest lists the pool among the inputs, the rows written, the query sample and how many reference answers
    were cut to the window; the checkpoint's own cache setting (none) is recorded too."""
    corpus = small_corpus.write_corpus(tmp_path / "corpus.jsonl")
    long_answer = " ".join(["Water vapour condenses into droplets heavy enough to fall."] * 5)
    golden = small_corpus.write_golden(tmp_path / "golden.jsonl", [("q1", "Why does it rain?", long_answer, ["rain#0"]),
                                                                    ("q2", "What do ships carry?", "Steel boxes.", ["ships#0"])])
    pool = tmp_path / "pool.tsv"
    pool.write_text("query_id\tchunk_id\tsources\nq1\tcats#0\tbm25\nq2\tbread#0\tbm25\n")
    output = tmp_path / "j.jsonl"
    result = semrel.judge(corpus, golden, pool, output, window=32, null_sample=0, cache=False, sample=QuerySample(limit=1),
                          warn=lambda _: None)
    manifest = read_manifest(output)
    assert [Path(i["path"]).name for i in manifest["inputs"]] == ["corpus.jsonl", "golden.jsonl", "pool.tsv"]
    assert manifest["rows"] == len(result.judgments) == 2 == len(output.read_text().splitlines())
    params = manifest["params"]
    assert params["queries"] == {"limit": 1, "kept": 1}
    assert params["truncated_references"] == result.truncated_references == 1
    assert params["cache"] is None and params["options"]["use_cache"] is False


def test_an_output_over_the_corpus_is_refused_before_any_work(tmp_path):
    """The corpus is streamed later, not read up front: it must still count as an input, so that judgments written over it
    are refused before the work and its checkpoint, and the corpus stays as it was."""
    corpus = small_corpus.write_corpus(tmp_path / "corpus.jsonl")
    before = corpus.read_bytes()
    with pytest.raises(SemrelError, match="corpus.jsonl"):
        semrel.judge(corpus, _golden(), None, corpus, null_sample=0, cache=False)
    assert corpus.read_bytes() == before and not Path(f"{corpus}.partial").exists()


def test_an_output_in_a_folder_not_made_yet_is_written_there_as_every_command_writes(tmp_path, cache):
    """Every output's folder is made; the judge's checkpoint was opened first, in the missing folder, so the run
    failed ('j.jsonl.partial: No such file or directory') after loading the model and reading the inputs."""
    output = tmp_path / "new" / "deeper" / "j.jsonl"
    result = semrel.judge(_chunks(), _golden(), None, output, null_sample=0, cache=cache)
    assert len(output.read_text().splitlines()) == len(result.judgments) > 0


def test_the_checkpoint_is_closed_when_a_run_ends_or_is_interrupted(tmp_path, monkeypatch, cache):
    """Closing the checkpoint fsyncs it: rows only flushed may be lost with the machine, so every run closes it."""
    closed: list[Checkpoint] = []
    close = Checkpoint.close
    monkeypatch.setattr(Checkpoint, "close", lambda self: closed.append(self) or close(self))
    semrel.judge(_chunks(), _golden(), None, tmp_path / "j.jsonl", null_sample=0, cache=cache)
    assert len(closed) == 1
    monkeypatch.setattr(Checkpoint, "append", lambda self, rows: (_ for _ in ()).throw(KeyboardInterrupt))
    with pytest.raises(KeyboardInterrupt):
        semrel.judge(_chunks(), _golden(), None, tmp_path / "k.jsonl", null_sample=0, cache=cache)
    assert len(closed) == 2


# fill


def test_judgments_whose_manifest_names_no_model_are_refused(tmp_path):
    for name, params in (("j.jsonl", {"layer": 6}), ("q.qrels", {"rule": "p"})):
        (tmp_path / name).write_text("")
        (tmp_path / f"{name}.manifest.json").write_text(json.dumps({"params": params}))
    with pytest.raises(ValidationError, match=r"j\.jsonl has no current manifest: the judge's settings are unknown"):
        fill_module.judge_settings(tmp_path / "q.qrels", tmp_path / "j.jsonl")


@pytest.fixture(scope="module")
def small_fill(tmp_path_factory, cache):
    """Judgments and qrels of a one-pair-a-query pool over the six-chunk corpus, and two runs with holes."""
    f = tmp_path_factory.mktemp("fill-audit")
    small_corpus.write_corpus(f / "corpus.jsonl")
    small_corpus.write_golden(f / "golden.jsonl", [("q1", "Why do cats purr?", "Cats purr when they are content.", ["cats#0"]),
                                                    ("q2", "What do ships carry?", "Steel boxes across the ocean.", ["ships#0"])])
    (f / "pool.tsv").write_text("query_id\tchunk_id\tsources\nq1\tbread#0\tbm25\nq2\train#0\tbm25\n")
    ok("judge", "--corpus", f / "corpus.jsonl", "--golden", f / "golden.jsonl", "--pool", f / "pool.tsv", "-o", f / "j.jsonl",
       "--cache", cache)
    ok("label", f / "j.jsonl", "-o", f / "j.qrels", "--threshold", "0.6")
    (f / "one.run").write_text("q1 Q0 chess#0 1 3.0 one\nq1 Q0 volcano#0 2 2.0 one\nq2 Q0 cats#0 1 3.0 one\n")
    (f / "two.run").write_text("q1 Q0 rain#0 1 3.0 two\nq2 Q0 bread#0 1 3.0 two\n")
    return f


def test_each_fill_is_recorded_with_its_depth_after_the_fills_before(small_fill, tmp_path):
    f = small_fill
    for name in ("j.jsonl", "j.jsonl.manifest.json", "j.qrels", "j.qrels.manifest.json"):
        (tmp_path / name).write_bytes((f / name).read_bytes())
    common = ["--judgments", tmp_path / "j.jsonl", "--corpus", f / "corpus.jsonl", "--golden", f / "golden.jsonl"]
    ok("fill", tmp_path / "j.qrels", f / "one.run", *common, "--depth", "2", "-o", tmp_path / "a.qrels")
    ok("fill", tmp_path / "a.qrels", f / "two.run", *common, "--depth", "1", "-o", tmp_path / "b.qrels")
    fills = read_manifest(tmp_path / "j.jsonl")["fills"]
    assert [(r["params"]["depth"], r["params"]["pairs"]) for r in fills] == [(2, 3), (1, 2)]
    qrels = read_manifest(tmp_path / "b.qrels")
    assert [(r["depth"], r["holes"], r["judged"]) for r in qrels["params"]["filled"]] == [(2, 3, 3), (1, 2, 2)]
    assert [Path(i["path"]).name for i in qrels["inputs"]] == ["a.qrels", "j.jsonl", "two.run"]


def test_an_interrupted_fill_resumes_from_its_checkpoint(small_fill, tmp_path, monkeypatch):
    f = small_fill
    for name in ("j.jsonl", "j.jsonl.manifest.json", "j.qrels", "j.qrels.manifest.json"):
        (tmp_path / name).write_bytes((f / name).read_bytes())
    args = dict(qrels=tmp_path / "j.qrels", runs=[f / "one.run"], judgments=tmp_path / "j.jsonl", corpus=f / "corpus.jsonl",
                golden=f / "golden.jsonl")
    original = Checkpoint.append

    def stop(self, rows):
        original(self, rows)
        raise KeyboardInterrupt

    monkeypatch.setattr(Checkpoint, "append", stop)
    partial = f"{tmp_path / 'j.jsonl'}.fill.partial"
    kept = f"^interrupted; judged holes are kept in {re.escape(partial)}; run the same fill again to resume$"
    with pytest.raises(Interrupted, match=kept):
        fill_module.fill(**args, depth=2)  # what was kept, as semrel.fill and `semrel fill` both say it
    monkeypatch.undo()
    assert Path(partial).exists()
    result = fill_module.fill(**args, depth=2)
    assert result.resumed >= 1 and len(result.holes) == 3
    assert not Path(f"{tmp_path / 'j.jsonl'}.fill.partial").exists()



def _fill_args(small_fill: Path, tmp_path: Path) -> dict:
    for name in ("j.jsonl", "j.jsonl.manifest.json", "j.qrels", "j.qrels.manifest.json"):
        (tmp_path / name).write_bytes((small_fill / name).read_bytes())
    return dict(qrels=tmp_path / "j.qrels", runs=[small_fill / "one.run"], judgments=tmp_path / "j.jsonl",
                corpus=small_fill / "corpus.jsonl", golden=small_fill / "golden.jsonl", depth=2)


def test_a_fill_interrupted_after_the_judgments_says_to_run_the_fill_again(small_fill, tmp_path, monkeypatch):
    """semrel.fill said 'run the same command again' to a Python caller, who ran no command."""
    args = _fill_args(small_fill, tmp_path)

    def interrupted_after_the_judgments(*_args):
        raise InterruptedAfterWriting([str(args["judgments"])])

    monkeypatch.setattr(fill_module, "_fill", interrupted_after_the_judgments)
    with pytest.raises(Interrupted) as raised:
        semrel.fill(**args)
    assert str(raised.value) == (f"interrupted after {args['judgments']} took the judged holes (new and complete), before the filled "
                                 "qrels: run the same fill again (it judges nothing twice)")


def test_a_fill_whose_judgments_changed_meanwhile_says_to_run_the_fill_again(small_fill, tmp_path, monkeypatch):
    args = _fill_args(small_fill, tmp_path)

    def read_then_another_fill_appends(path, *rest, read=fill_module.read_judgment_columns):
        rows = read(path, *rest)
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(Path(path).read_text().splitlines()[-1] + "\n")
        return rows

    monkeypatch.setattr(fill_module, "read_judgment_columns", read_then_another_fill_appends)
    with pytest.raises(SemrelError) as raised:
        semrel.fill(**args)
    assert str(raised.value) == (f"{args['judgments']} changed while this fill ran (another fill or judge of it finished meanwhile): "
                                 "nothing was appended, so none of its rows is lost; run the same fill again")

def test_a_resumed_run_records_and_warns_about_truncated_answers_as_a_fresh_one(tmp_path, monkeypatch):
    long_answer = " ".join(["Water vapour condenses into droplets heavy enough to fall."] * 5)
    golden = [GoldenItem("q1", "Why does it rain?", (long_answer,), ("rain#0",))]
    output = tmp_path / "j.jsonl"
    fresh = semrel.judge(_chunks(), golden, None, window=32, null_sample=0, cache=False, warn=lambda _: None)

    def killed_before_the_output(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(judge_module, "write_judgments", killed_before_the_output)
    with pytest.raises(KeyboardInterrupt):  # every pair saved in the checkpoint, no output
        semrel.judge(_chunks(), golden, None, output, window=32, null_sample=0, cache=False, warn=lambda _: None)
    monkeypatch.undo()
    heard: list[str] = []
    resumed = semrel.judge(_chunks(), golden, None, output, window=32, null_sample=0, cache=False, warn=heard.append)
    assert resumed.resumed == 1 and fresh.truncated_references == fresh.params["truncated_references"] == 1
    assert read_manifest(output)["params"]["truncated_references"] == 1
    assert heard == fresh.warnings


def test_a_corpus_missing_a_judged_chunk_or_repeating_one_is_refused_naming_where(tmp_path):
    """A gold chunk the corpus lacks is named with its query; a pooled one also with the runs that pooled it; a judged
    chunk id that the corpus repeats is named with both its lines. Each is refused before any scoring."""
    corpus = small_corpus.write_corpus(tmp_path / "corpus.jsonl")
    golden = [GoldenItem("q1", "Why do cats purr?", ("Cats purr when they are content.",), ("cats#9",))]
    with pytest.raises(ValidationError, match=r"^golden set: 1 gold chunk id is not in the corpus \(first: 'cats#9' of query 'q1'\)"):
        semrel.judge(corpus, golden, None, null_sample=0, cache=False)
    pool = [("q2", "ships#0", ("bm25",)), ("q2", "ships#7", ("bm25", "dense"))]
    with pytest.raises(SemrelError, match=r"^pool: chunk 'ships#7' \(query 'q2', pooled from runs 'bm25', 'dense'\) is not in "
                                          r".*corpus\.jsonl; pool runs retrieved over this corpus"):
        semrel.judge(corpus, _golden(), pool, null_sample=0, cache=False)
    with pytest.raises(SemrelError, match=r"^pool: query 'q7' is not in golden set; pool and golden set must come from the same"):
        semrel.judge(corpus, _golden(), [("q7", "ships#0", ("bm25",))], null_sample=0, cache=False)
    repeated = tmp_path / "repeated.jsonl"
    repeated.write_text(corpus.read_text() + json.dumps({"_id": "cats#0", "title": "", "text": "again"}) + "\n")
    with pytest.raises(SemrelError, match=r"repeated\.jsonl:7: chunk id 'cats#0' already used on line 1"):
        semrel.judge(repeated, _golden(), None, null_sample=0, cache=False)
    unjudged = tmp_path / "unjudged.jsonl"  # a repeat of a chunk nobody judges is not looked for (the corpus is streamed)
    unjudged.write_text(corpus.read_text() + json.dumps({"_id": "chess#0", "title": "", "text": "again"}) + "\n")
    assert len(semrel.judge(unjudged, _golden(), None, null_sample=0, cache=False).judgments) == 2


def test_a_golden_set_of_another_chunking_is_refused_by_its_answer_spans():
    """Gold ids of another chunking of the same documents exist in this corpus too ('doc#0'), naming other text: COVID-QA
    imported at --size 500 and judged against the --size 150 corpus was judged with exit 0, 7 of its 8 gold chunks not
    holding the answer. The answer spans the import records say so: most gold chunks misplaced is an error, before any
    scoring; a few (a chunk picked by hand) a warning, the pairs judged as before."""
    texts = {"doc#0": "Cats purr when they are content. ", "doc#1": "Ships carry steel boxes across the ocean."}
    chunks, start = [], 0
    for chunk_id, text in texts.items():
        chunks.append(Chunk(chunk_id, text, "doc", start, start + len(text)))
        start += len(text)

    def item(query_id: str, gold: str, span: list[int]) -> GoldenItem:
        return GoldenItem(query_id, "What?", ("Cats purr when they are content.",), (gold,), {"doc_id": "doc", "answer_spans": [span]})

    other = [item("q1", "doc#0", [40, 60]), item("q2", "doc#1", [0, 20])]  # each answer in the other chunk
    with pytest.raises(ValidationError, match=r"^golden set: 2 gold chunks of 2 lie outside their query's answer \(meta\.answer_spans; "
                                              r"first: 'doc#0' of query 'q1', characters 0-33 of document 'doc'\): is corpus the "
                                              r"corpus this golden set was imported with"):
        semrel.judge(chunks, other, None, null_sample=0, cache=False)
    heard: list[str] = []
    mixed = [item("q1", "doc#0", [0, 20]), item("q2", "doc#1", [40, 60]), item("q3", "doc#0", [40, 60])]
    result = semrel.judge(chunks, mixed, None, null_sample=0, cache=False, warn=heard.append)
    assert [(j.query_id, j.chunk_id) for j in result.judgments] == [("q1", "doc#0"), ("q2", "doc#1"), ("q3", "doc#0")]
    assert heard[0].startswith("golden set: 1 gold chunk of 3 lies outside its query's answer (meta.answer_spans; first: 'doc#0' "
                               "of query 'q3'")
    # the span's document is not the chunk's
    elsewhere = [GoldenItem("q1", "What?", ("Cats purr.",), ("doc#0",), {"doc_id": "other", "answer_spans": [[0, 20]]})]
    with pytest.raises(ValidationError, match="1 gold chunk of 1 lies outside its query's answer"):
        semrel.judge(chunks, elsewhere, None, null_sample=0, cache=False)
    merged = [replace(other[0], meta={**other[0].meta, "duplicates_removed": ["q9"]})]  # gold of a near-duplicate: its own span
    assert len(semrel.judge(chunks, merged, None, null_sample=0, cache=False).judgments) == 1
