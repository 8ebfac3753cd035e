"""Audit tests (hand-made mutation testing of judging/bertscore.py, probability.py and checkpoint.py) for what the
other judging tests left unpinned.

Each test here failed with a mutant of those files that every older test let through: the idf table's document
count, the manifest's token_rows_held_at_most, own_idf's float32 margin, a damaged checkpoint row's token bests,
the p of a pair with a non-finite feature, a checkpoint whose first line is JSON but no object, a stale checkpoint's
header, and scores that a warm embedding cache must give bit for bit. Three bugs it found, fixed: for a reference
answer of special tokens only (a zero-width space), numpy's divide warning leaked from PoolFeatures.compute, and the
judge counted its pairs (which have no p) beyond the fitted range and blamed their missing p on a small corpus.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

import semrel
import small_corpus
from helpers import file_size_limit
from semrel.errors import SemrelError
from semrel.judging import labels
from semrel.judging.bertscore import idf_table
from semrel.judging.checkpoint import Checkpoint
from semrel.judging.probability import PoolFeatures


def test_idf_table_counts_each_document_once_and_reports_how_many():
    """idf = log((N+1)/(df+1)) as bert_score's get_idf_dict: a token twice in one text counts once, an unseen token
    gets log(N+1), a token in every text (as [CLS]/[SEP]) 0; N is what the manifest records as idf_documents."""
    cls, sep = 101, 102
    table, documents = idf_table(iter([[cls, 5, 7, 5, sep], [cls, 7, sep], [cls, 9, sep]]), 200)
    assert documents == 3
    assert table.shape == (200,) and table.dtype == np.float64
    assert table[5] == pytest.approx(np.log(4 / 2), abs=1e-15)  # in one text, though twice there
    assert table[7] == pytest.approx(np.log(4 / 3), abs=1e-15)
    assert table[0] == table[199] == pytest.approx(np.log(4), abs=1e-15)
    assert table[cls] == table[sep] == 0.0


def test_token_rows_held_at_most_is_the_most_held_at_once():
    """The manifest's token_rows_held_at_most (PoolFeatures.peak) counts the rows of every query's table held at the same
    time, each table dropped once its query's last pair is in: queries one after another hold one table at a time,
    interleaved they hold both."""
    work = [("q", "a", ()), ("q", "b", ()), ("q", "c", ()), ("s", "x", ()), ("s", "y", ())]
    weights = [np.array([1.0, 1.0])]
    for order, peak in (([0, 1, 2, 3, 4], 3), ([0, 3, 1, 4, 2], 5)):
        pool = PoolFeatures(work, {})
        for i in order:
            pool.add(i, np.array([0.5, 0.5], dtype=np.float32), weights, 10, 10.0)
        assert (pool.peak, pool.held, pool.tokens) == (peak, 0, {}), order


def test_own_idf_margin_is_taken_in_float32_where_float32_rounds_down():
    """test_probability's margin test holds with a best of 0.8125, where the float32 best - OWN_MARGIN rounds up: it
    passes in float64 too. With 0.5 it rounds down (0.47999999 < 0.48), so a token at the float32 margin is the chunk's
    own only when the table is float32, as the checkpoint keeps the token bests and as a fresh run compares them."""
    top = np.float32(0.5)
    at_margin = (np.array([top], dtype=np.float32) - labels.OWN_MARGIN)[0]
    assert float(at_margin) < float(top) - labels.OWN_MARGIN  # the case the older test does not reach
    weights = [np.array([1.0, 3.0])]
    pool = PoolFeatures([("q", "a", ()), ("q", "b", ()), ("q", "c", ())], {})
    for i, bests in enumerate(([top, 0.9], [at_margin, 0.5], [np.nextafter(at_margin, np.float32(0)), 0.5])):
        pool.add(i, np.array(bests, dtype=np.float32), weights, 10, 10.0)
    assert pool.own.tolist() == [1.0, 0.25, 0.0]


@pytest.mark.parametrize("damage", [{"tok": "AAAA*AAA"}, {"tok": "AAAA"}, {"tokens": "ten"}, {"ref_tokens": "many"}])
def test_a_checkpoint_row_with_damaged_token_bests_is_rescored_not_a_crash(damage):
    """A row whose token bests are not pack's base64 (a character dropped in, bytes that are no whole float32) or whose
    counts are no numbers is refused, so the pair is rescored, as a damaged score is (test_judge_stream), not a resume
    stopped by binascii.Error or ValueError (which restore must catch beside KeyError and TypeError)."""
    work, weights = [("q", "a", ()), ("q", "b", ())], [np.array([1.0, 1.0], dtype=np.float32)]
    pool = PoolFeatures(work, {})
    row = {**pool.row(0, np.array([0.9, 0.2], dtype=np.float32), weights, 10, 10.0), **damage}
    pool = PoolFeatures(work, {})
    assert not pool.restore(0, row) and pool.left == [2] and not pool.tokens
    assert pool.restore(0, pool.row(0, np.array([0.9, 0.2], dtype=np.float32), weights, 10, 10.0))  # undamaged: taken


def _reference_of_special_tokens_only() -> tuple[np.ndarray, np.ndarray]:
    """compute() of a query whose reference has no token but the special ones (ref_tokens 0, as an answer of a
    zero-width space gives: str.strip keeps it, the tokenizer drops it), and of one with no null chunk."""
    work = [("q", "a", ()), ("q", "b", ()), ("s", "c", ())]
    pool = PoolFeatures(work, {"q": True, "s": True})
    pool.add(0, np.zeros(2, dtype=np.float32), [np.zeros(2, dtype=np.float32)], 12, 0.0)
    pool.add(1, np.zeros(2, dtype=np.float32), [np.zeros(2, dtype=np.float32)], 30, 0.0)
    pool.add(2, np.array([0.0, 0.7, 0.0], dtype=np.float32), [np.array([0.0, 1.5, 0.0], dtype=np.float32)], 8, 1.0)
    scores = np.array([[0.1, 0.0, 0.0, 0.0, 0.0], [0.2, 0.0, 0.0, 0.0, 0.0], [0.5, 0.7, 0.6, 0.7, 1.0]])
    null = np.array([[0.1, 0.0, 0.0, 0.0, 0.0], [0.05, 0.0, 0.0, 0.0, 0.0]])
    return pool.compute(scores, null, ["q", "q"])


def test_a_pair_with_a_feature_that_is_no_number_has_no_p():
    """lenratio is log(0) = -inf for a reference of special tokens only: every other feature is finite, and p held at
    the fitted range's edge would be a probability made up for a pair R = 0 says nothing about. Its p is NaN (the
    judgment holds none). A query with no null chunk has every feature that reads the null NaN, not a finite
    standing against a null mean of 0."""
    features, p = _reference_of_special_tokens_only()
    lenratio = labels.FEATURES.index("lenratio")
    assert features[:2, lenratio].tolist() == [-np.inf, -np.inf]
    assert np.isfinite(np.delete(features[:2], lenratio, axis=1)).all()
    assert np.isfinite(labels.probability(features[:2, :-1], True)).all()  # what p would be without the rule
    assert np.isnan(p[:2]).all()
    null_read = [labels.FEATURES.index(f) for f in ("relR_idf", "R_idf_max", "F_max", "P_max", "lexR_rel")]
    assert np.isnan(features[2, null_read]).all() and np.isnan(p[2])
    assert features[2, labels.FEATURES.index("own_idf")] == 1.0 and features[2, lenratio] == pytest.approx(np.log(1 / 8))


def test_a_reference_of_special_tokens_only_raises_no_numpy_warning():
    """semrel.judge with the answer '\\u200b' printed 'RuntimeWarning: divide by zero encountered in log' from
    probability.py, and under `python -W error` stopped the whole judge."""
    work = [("q", "a", ())]
    pool = PoolFeatures(work, {"q": True})
    pool.add(0, np.zeros(2, dtype=np.float32), [np.zeros(2, dtype=np.float32)], 12, 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _, p = pool.compute(np.array([[0.1, 0.0, 0.0, 0.0, 0.0]]), np.array([[0.1, 0.0, 0.0, 0.0, 0.0]]), ["q"])
    assert np.isnan(p[0])


@pytest.mark.parametrize("header", ["[1]", "3", '"fp"', "null"])
def test_a_first_line_that_is_json_but_no_object_is_another_runs_checkpoint(tmp_path, header):
    """A first line that parses but is no JSON object (a damaged or foreign file) holds no fingerprint: nothing is
    reused, its rows are counted as stale, and the first append starts the file again with this run's header, where
    reading it as an object would stop the run with AttributeError."""
    path = tmp_path / "run.partial"
    path.write_text(f'{header}\n{{"i": 0}}\n{{"i": 1}}\n')
    checkpoint = Checkpoint(path, "fp")
    assert (checkpoint.saved, checkpoint.stale, list(checkpoint.rows())) == (0, 2, [])
    checkpoint.append([{"i": 7}])
    checkpoint.close()
    assert path.read_text() == '{"fingerprint": "fp"}\n{"i": 7}\n'


def test_rows_appended_over_a_stale_checkpoint_resume_under_this_runs_fingerprint(tmp_path):
    """A checkpoint of other settings is replaced from its first byte, header included: the rows this run appends must
    be found by the next run with the same settings. Kept after the old header, they would be stale again, and every
    pair judged once more after each stop."""
    path = tmp_path / "run.partial"
    path.write_text('{"fingerprint": "other"}\n{"i": 0}\n{"i": 1}\n{"i": 2}\n')
    checkpoint = Checkpoint(path, "fp")
    assert (checkpoint.saved, checkpoint.stale) == (0, 3)
    checkpoint.append([{"i": 5}])
    checkpoint.close()  # as if killed here
    again = Checkpoint(path, "fp")
    assert (again.saved, again.stale, list(again.rows())) == (1, 0, [{"i": 5}])
    assert [json.loads(line) for line in path.read_text().splitlines()] == [{"fingerprint": "fp"}, {"i": 5}]



def test_a_full_disk_while_the_checkpoint_grows_names_it_and_keeps_the_rows_before(tmp_path):
    """A write to the checkpoint held open failed with an OSError naming no file, which the CLI reported as
    'stdout: No space left on device'; the error names the checkpoint and says the run resumes from it."""
    path = tmp_path / "j.jsonl.partial"
    checkpoint = Checkpoint(path, "fp")
    checkpoint.append([{"i": 0}])
    with file_size_limit(4096), pytest.raises(SemrelError) as caught:
        try:
            checkpoint.append([{"i": i, "pad": "x" * 100} for i in range(1, 100)])
        finally:
            checkpoint.close()
    assert str(caught.value) == (f"{path}: cannot write (file too large for this system or its limits); the rows finished "
                                 "before are kept in it, and the same command run again resumes from them")
    again = Checkpoint(path, "fp")
    assert list(again.rows())[0] == {"i": 0} and again.saved >= 1

@pytest.mark.slow
def test_a_cold_and_a_warm_cache_give_the_same_scores_bit_for_bit_and_bert_scores(tmp_path):
    """A run that computes the weight table and one that reads it from the cache must score alike to the last bit (the
    cache stores float64, so a table made in float32 gave the cold run other last bits: test_warm_cache's first run is
    only cold when it runs alone). Both equal bert_score.score."""
    from bert_score_reference import bert_score_reference
    from semrel.encoding.models import resolve_model
    from semrel.records import Chunk, GoldenItem

    chunks = [Chunk(i, t, i.split("#")[0], 0, len(t)) for i, t in small_corpus.TEXTS.items()]
    answers = {"q1": "Cats purr when content.", "q2": "Steel boxes go by container ship between ports.",
               "q3": "Water vapour condenses into heavy droplets."}
    golden = [GoldenItem(q, f"question {q}", (a,), ()) for q, a in answers.items()]
    pool = [(q, c.id, ("bm25",)) for q in answers for c in chunks[:4]]  # the other two chunks are every query's null
    runs = []
    for _ in range(2):
        runs.append(semrel.judge(chunks, golden, pool, cache=tmp_path / "cache", warn=lambda _: None))
    cold, warm = runs
    assert cold.encoded > 0 and warm.encoded == 0
    scores = [np.array([[j.P, j.R, j.F, j.p] for j in r.judgments], dtype=np.float64) for r in runs]
    assert [(j.query_id, j.chunk_id) for j in cold.judgments] == [(j.query_id, j.chunk_id) for j in warm.judgments]
    assert np.isfinite(scores[0]).all() and np.array_equal(scores[0], scores[1])
    texts = {c.id: c.text for c in chunks}
    expected = bert_score_reference(resolve_model(), [texts[j.chunk_id] for j in cold.judgments],
                                    [answers[j.query_id] for j in cold.judgments], num_layers=6)
    assert np.abs(scores[0][:, :3] - expected).max() < 1e-5


@pytest.fixture(scope="module")
def special_only():
    """The judge with one answer of a zero-width space (str.strip keeps it, the tokenizer drops it: [CLS] [SEP] alone)
    beside a real one, on the six-chunk corpus: the first query's two pairs have no p, though four chunks are its null."""
    from semrel.records import Chunk, GoldenItem

    chunks = [Chunk(i, t, i.split("#")[0], 0, len(t)) for i, t in small_corpus.TEXTS.items()]
    golden = [GoldenItem("q1", "Why do cats purr?", ("\u200b",), ("cats#0",)),
              GoldenItem("q2", "What do ships carry?", ("Steel boxes.",), ("ships#0",))]
    heard: list[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # numpy's divide warning leaked from PoolFeatures.compute
        result = semrel.judge(chunks, golden, [("q1", "ships#0", ("bm25",))], cache=False, warn=heard.append)
    without_p = [(j.query_id, j.chunk_id) for j in result.judgments if j.p is None]
    assert without_p == [("q1", "ships#0"), ("q1", "cats#0")] and result.params["probability"]["null_sample"]["pairs"] == 4 + 5
    return result, heard


@pytest.mark.slow
def test_pairs_without_p_are_not_counted_beyond_the_fitted_range(special_only):
    """outside_range leaves a pair without a null sample out ('no p, not beyond'); a pair without p for a reference
    of special tokens only was counted as beyond (by lenratio), and the warning said p holds at the edge for it."""
    result, _ = special_only
    beyond = result.params["probability"]["beyond_fitted_range"]
    assert beyond["by_feature"]["lenratio"] == 0, beyond


@pytest.mark.slow
def test_pairs_without_p_are_not_blamed_on_a_small_corpus_when_their_query_has_null_chunks(special_only):
    """The query's null holds four chunks; its pairs lack p because its reference has no token to weigh, yet the
    warning said its query had no corpus chunk outside its pool (the corpus is too small)."""
    result, heard = special_only
    assert not any("the corpus is too small" in w for w in heard), heard
    assert "2 pairs have no probability p: a feature of their query is no number, as for a reference answer of no token" in " ".join(heard)
    assert (result.params["probability"]["pairs_without_p"], result.params["probability"]["pairs_without_null"]) == (2, 0)
