"""Highlights: the chunk tokens BERTScore matches to the answer, with the real MiniLM model."""

from __future__ import annotations

import json

import pytest

from helpers import assert_one_error
from review_helpers import write_pool
from semrel.cli.review_terminal import highlighted
from semrel.errors import UsageError
from semrel.review.highlight import WINDOW_TOKENS, shades, token_similarities

CHUNK = "To fix a flat tyre, remove the wheel and find the puncture. Patch the inner tube with glue."


def test_answer_words_match_strongest_and_spans_are_the_chunk_tokens():
    spans = token_similarities(CHUNK, ["Patch the inner tube."])
    words = {CHUNK[a:b]: s for a, b, s in spans}
    assert all(0 <= a < b <= len(CHUNK) for a, b, _ in spans)
    assert [CHUNK[a:b] for a, b, _ in spans][:4] == ["To", "fix", "a", "flat"]
    assert min(words["Patch"], words["inner"], words["tube"]) > max(words["wheel"], words["remove"], words["glue"])
    assert 0.8 < words["tube"] <= 1.0 + 1e-6


def test_highlights_are_at_the_layer_the_judge_takes():
    """The judge takes MiniLM's last layer (6; not in bert_score's table); the shading took layer 4."""
    at_default = token_similarities(CHUNK, ["Patch the inner tube."])
    assert at_default == token_similarities(CHUNK, ["Patch the inner tube."], layer=6)
    assert at_default != token_similarities(CHUNK, ["Patch the inner tube."], layer=4)


def test_a_layer_the_model_lacks_is_refused_as_the_judge_refuses_it(tmp_path, cli):
    """review start --layer 99 shaded MiniLM's chunks at some other layer without a word; judge --layer 99 is refused."""
    with pytest.raises(UsageError, match="has layers 0..6"):
        token_similarities(CHUNK, ["Patch the inner tube."], layer=99)
    pool = write_pool(tmp_path / "pool")
    result = cli("review", "start", "--db", str(tmp_path / "r.sqlite"), "--reviewer", "ann", "--layer", "7", "--judgments",
                 pool["judgments"], "--labels", pool["labels"], "--corpus", pool["corpus"], "--golden", pool["golden"],
                 "--thresholds", "0.5", input="1q")
    assert_one_error(result, "--layer 7", "has layers 0..6", code=2)


@pytest.mark.slow
def test_several_answers_take_the_best_match_and_long_chunks_are_not_truncated():
    spans_one = token_similarities(CHUNK, ["Patch the inner tube."])
    spans_two = token_similarities(CHUNK, ["Patch the inner tube.", "Remove the wheel."])
    assert all(two >= one - 1e-6 for (_, _, one), (_, _, two) in zip(spans_one, spans_two))
    long_chunk = "spoke " * (WINDOW_TOKENS * 2) + "patch the tube"
    spans = token_similarities(long_chunk, ["Patch the inner tube."])
    assert len(spans) == WINDOW_TOKENS * 2 + 3
    assert long_chunk[spans[-1][0]:spans[-1][1]] == "tube" and spans[-1][2] > spans[0][2]
    assert token_similarities(CHUNK, [""]) == []


def test_review_start_shows_highlights_without_changing_the_text(tmp_path, cli):
    pool = write_pool(tmp_path / "pool")
    result = cli("review", "start", "--db", str(tmp_path / "r.sqlite"), "--reviewer", "a", "--judgments", pool["judgments"],
                 "--labels", pool["labels"], "--corpus", pool["corpus"], "--golden", pool["golden"], "--thresholds", "0.5",
                 input="q")
    assert result.exit_code == 0, result.output
    first_chunk = json.loads(open(pool["corpus"]).readline())["text"]
    assert first_chunk in result.stdout


def test_only_tokens_above_the_median_are_shaded_and_the_best_most():
    spans = token_similarities(CHUNK, ["Patch the inner tube."])
    text = highlighted(CHUNK, spans)
    shaded = {CHUNK[s.start:s.end]: s.style for s in text.spans}
    assert text.plain == CHUNK
    assert {"Patch", "inner", "tube"} <= set(shaded)
    assert len(shaded) <= len(spans) // 2 + 1
    best = max(spans, key=lambda s: s[2])
    assert shaded[CHUNK[best[0]:best[1]]].bold


def test_the_median_token_is_not_shaded_and_strength_runs_from_it_to_the_best():
    """Only tokens above the median similarity are shaded: the median one itself would get a shade of strength 0."""
    spans = [(0, 2, 0.2), (3, 5, 0.9), (6, 8, 0.5), (9, 11, 0.7), (12, 14, 0.1)]
    assert shades(spans) == [(3, 5, pytest.approx(1.0)), (9, 11, pytest.approx(0.5))]
    assert shades([(0, 2, 0.4), (3, 5, 0.4)]) == [] and shades([]) == []


@pytest.mark.parametrize("answer", ["\u200b", "\x00", "\ufeff\u200d", "\u0301"],
                         ids=["zero-width space", "NUL", "BOM+ZWJ", "combining mark"])
def test_an_answer_the_tokenizer_drops_whole_shades_nothing_rather_than_failing(answer):
    """An answer made only of characters the tokenizer drops has no tokens to match: the max over
    them raised ValueError (a 500 from the review page's /api/highlight, a crash of `review start`)."""
    assert token_similarities(CHUNK, [answer]) == []
    beside = token_similarities(CHUNK, [answer, "Patch the inner tube."])  # the other answer still shades
    alone = token_similarities(CHUNK, ["Patch the inner tube."])
    assert [span[:2] for span in beside] == [span[:2] for span in alone]
    assert [span[2] for span in beside] == pytest.approx([span[2] for span in alone], abs=1e-4)
