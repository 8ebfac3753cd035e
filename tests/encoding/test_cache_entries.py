"""The embedding cache's entries without a model: what a key is made of (model, layer, token limit, precision,
text), which entries are given back at which overlap, and that what is read equals what was written."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from encoding_helpers import entry, same
from semrel.encoding import cache as cache_module
from semrel.encoding.cache import EmbeddingCache, text_key
from semrel.encoding.models import ModelInfo
from semrel.judging.judge import TextEncoder


def test_entries_read_back_as_written_and_only_the_keys_asked_for(cache):
    """Vectors, ids or window starts read at another width than written came back as other numbers, or cut short."""
    one, two = entry(12, 1, seed=1), entry(30, 3, seed=2)
    cache.put_many([(b"a" * 32, one), (b"b" * 32, two)], overlap=4)
    found = dict(cache.get_many([b"b" * 32, b"c" * 32, b"a" * 32], overlap=4))
    assert sorted(found) == [b"a" * 32, b"b" * 32]
    assert same(found[b"a" * 32], one) and same(found[b"b" * 32], two) and found[b"b" * 32].windows == 3


def test_a_windowed_entry_is_reused_at_its_own_overlap_only_and_one_window_at_any(cache):
    """A text cut into windows with another overlap has other window starts and vectors: it was reused anyway, or
    (the test turned round) never reused; a text of one window, which no overlap changes, was encoded again."""
    cache.put_many([(b"w" * 32, entry(30, 3)), (b"s" * 32, entry(12, 1))], overlap=4)
    assert sorted(k for k, _ in cache.get_many([b"w" * 32, b"s" * 32], overlap=4)) == [b"s" * 32, b"w" * 32]
    assert [k for k, _ in cache.get_many([b"w" * 32, b"s" * 32], overlap=8)] == [b"s" * 32]


def test_an_entry_encoded_again_at_another_overlap_replaces_the_old_one(cache):
    """The old entry was kept, so the text missed the cache at the new overlap on every later run."""
    cache.put_many([(b"w" * 32, entry(30, 3, seed=1))], overlap=4)
    again = entry(30, 3, seed=2)
    cache.put_many([(b"w" * 32, again)], overlap=8)
    [(_, found)] = cache.get_many([b"w" * 32], overlap=8)
    assert same(found, again) and not list(cache.get_many([b"w" * 32], overlap=4))


def test_every_key_is_looked_up_when_they_span_several_reads(cache, monkeypatch):
    """Keys were read FETCH_ROWS at a time; one lost at each boundary was encoded again on every run."""
    monkeypatch.setattr(cache_module, "FETCH_ROWS", 3)
    keys = [bytes([k]) * 32 for k in range(10)]
    cache.put_many([(k, entry(4, 1, seed=i)) for i, k in enumerate(keys)], overlap=4)
    assert sorted(k for k, _ in cache.get_many(keys, overlap=4)) == keys


def test_token_weights_keep_their_values_and_document_count(cache):
    """The idf table or the count of documents it was made from, read back otherwise than written."""
    weights = np.array([0.0, 1.5, 2.25, 7.0])
    cache.put_weights(b"k" * 32, weights, 1234)
    table, documents = cache.get_weights(b"k" * 32)
    assert table.tolist() == weights.tolist() and documents == 1234
    assert cache.get_weights(b"x" * 32) is None


def test_the_namespace_and_the_text_are_kept_apart_in_a_key():
    """Without a boundary between them, a token limit of 51 with text "2 apples" was the key of limit 512 and " apples"."""
    assert text_key("m|layer=4|limit=51", "2 apples") != text_key("m|layer=4|limit=512", " apples")
    assert text_key("m|layer=4|limit=512", "apples") == text_key("m|layer=4|limit=512", "apples")


class Int8:
    precision = "int8"


@pytest.mark.parametrize("other", [
    {"layer": 5}, {"window": 256}, {"fingerprint": "f" * 32}, {"engine": Int8()},
], ids=["layer", "token limit", "model", "precision"])
def test_a_text_encoded_by_other_judge_settings_has_another_key(other):
    """An entry of another layer, token limit, model or precision was read as this judge's vectors of the text."""
    def namespace(layer: int = 4, window: int = 512, fingerprint: str = "0" * 32, engine=None) -> str:
        info = ModelInfo("m", Path("."), 6, 512, fingerprint)
        encoder = TextEncoder(info, layer, window, 64, None, 4096, **({"engine": engine} if engine else {}))
        return encoder.namespace

    assert text_key(namespace(**other), "the same text") != text_key(namespace(), "the same text")


def test_idf_weights_of_another_corpus_are_not_reused(tmp_path):
    """The idf table was cached under the model alone, so a second corpus was weighted by the first one's counts."""
    from semrel.encoding.models import describe_model

    cache = EmbeddingCache(tmp_path)
    encoder = TextEncoder(describe_model(None), 4, 512, 64, cache, 4096)
    _, first = encoder.weights(True, lambda: ["one chunk"], "digest of corpus a")
    _, second = encoder.weights(True, lambda: ["a chunk", "another", "a third"], "digest of corpus b")
    _, again = encoder.weights(True, lambda: [], "digest of corpus a")  # from the cache: no text read
    cache.close()
    assert (first["idf_documents"], second["idf_documents"], again["idf_documents"]) == (1, 3, 1)


def test_a_row_whose_parts_disagree_is_a_miss_not_a_crash(cache):
    """A row damaged outside semrel (its vectors cut short, or fewer of them than its token ids) crashed the judge with a
    bare ValueError, or was used with vectors given to the wrong tokens; it is now a miss, encoded again and replaced."""
    good = entry(12, 1, seed=3)
    cache.put_many([(b"a" * 32, good), (b"b" * 32, good), (b"c" * 32, good)], overlap=4)
    with cache.db:
        cache.db.execute("UPDATE embeddings SET vectors = substr(vectors, 1, 100) WHERE key = ?", (b"a" * 32,))
        cache.db.execute("UPDATE embeddings SET ids = substr(ids, 1, 40) WHERE key = ?", (b"b" * 32,))
    found = dict(cache.get_many([b"a" * 32, b"b" * 32, b"c" * 32], overlap=4))
    assert sorted(found) == [b"c" * 32] and same(found[b"c" * 32], good)
