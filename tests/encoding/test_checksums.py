"""Checksums that find bytes damaged on disk in the embedding cache.

A bit flipped inside a stored vector keeps every length, so the checks on a row's parts (cache._entry) let it through:
the judge scored a text with other vectors, without a word. Bits are flipped in the file itself, as bit rot leaves it
(SQLite reads such a page as it is). Files made before the checksums were kept read as they did, with nothing encoded
again.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from encoding_helpers import entry, same
from semrel.encoding.cache import EmbeddingCache, text_key
from semrel.encoding.models import describe_model
from semrel.judging.judge import TextEncoder

A, B = b"a" * 32, b"b" * 32


def flip_where_held(path: Path, blob: bytes, at: int) -> None:
    """Flip a bit of byte `at` of `blob` where the file `path` holds it (found by the 16 bytes around it, once)."""
    data = bytearray(path.read_bytes())
    around = blob[at - 8 : at + 8]
    where = data.find(around)
    assert where >= 0 and data.find(around, where + 1) < 0
    data[where + 8] ^= 0x01
    path.write_bytes(bytes(data))


def flipped_in_file(cache: EmbeddingCache, key: bytes, part: str, at: int) -> None:
    """Close `cache` (its WAL is checkpointed into the file) and flip a bit of byte `at` of the row's `part` on disk."""
    [(blob,)] = cache.db.execute(f"SELECT {part} FROM embeddings WHERE key = ?", (key,)).fetchall()
    cache.close()
    flip_where_held(cache.path, blob, at)


# --- the embedding cache ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("part, at", [("vectors", 4 * 37 + 3), ("ids", 4 * 7)], ids=["a vector's exponent", "a token id"])
def test_a_bit_flipped_in_a_stored_row_is_a_miss_and_the_row_written_again_is_read(tmp_path, part, at):
    """A vector with another exponent (twice or half the value) or another token id was read as the entry."""
    good = entry(12, 1, seed=3)
    cache = EmbeddingCache(tmp_path)
    cache.put_many([(A, good), (B, entry(12, 1, seed=4))], overlap=4)
    flipped_in_file(cache, A, part, at)
    cache = EmbeddingCache(tmp_path)
    assert [k for k, _ in cache.get_many([A, B], overlap=4)] == [B]
    cache.put_many([(A, good)], overlap=4)  # encoded again: the row is replaced and read
    assert same(dict(cache.get_many([A], overlap=4))[A], good)
    cache.close()


OLD_SCHEMA = """
CREATE TABLE embeddings (
    key BLOB PRIMARY KEY, overlap INTEGER, dim INTEGER NOT NULL,
    ids BLOB NOT NULL, starts BLOB NOT NULL, vectors BLOB NOT NULL
);
CREATE TABLE weights (key BLOB PRIMARY KEY, documents INTEGER NOT NULL, weights BLOB NOT NULL);
"""


def test_a_cache_file_made_before_checksums_is_read_as_it_is_and_its_rows_gain_one_when_written_again(tmp_path):
    """Rows of a file the old code wrote (no crc column) are read without encoding anything again; the column is added
    on open, and a row written again carries a checksum that catches a flipped bit."""
    old, windowed = entry(12, 1, seed=5), entry(30, 3, seed=6)
    db = sqlite3.connect(tmp_path / "embeddings.sqlite")
    db.executescript(OLD_SCHEMA)
    with db:
        db.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?, ?, ?)",
                       [(key, overlap, 8, e.ids.tobytes(), e.starts.tobytes(), e.vectors.tobytes())
                        for key, overlap, e in ((A, None, old), (B, 4, windowed))])
    db.close()
    cache = EmbeddingCache(tmp_path)
    found = dict(cache.get_many([A, B], overlap=4))
    assert same(found[A], old) and same(found[B], windowed)
    assert cache.db.execute("SELECT key, crc FROM embeddings ORDER BY key").fetchall() == [(A, None), (B, None)]
    cache.put_many([(A, old)], overlap=4)
    assert [key for key, crc in cache.db.execute("SELECT key, crc FROM embeddings ORDER BY key") if crc is not None] == [A]
    flipped_in_file(cache, A, "vectors", 4 * 37 + 3)
    again = EmbeddingCache(tmp_path)
    assert [k for k, _ in again.get_many([A, B], overlap=4)] == [B]
    again.close()


@pytest.mark.slow
def test_a_text_whose_cached_vector_lost_a_bit_is_encoded_again_as_a_fresh_run_encodes_it(tmp_path):
    """The judge's encoder (real MiniLM) over a cache file with one bit flipped on disk in a text's vectors: that text is
    encoded again, its entry equals what a run without a cache computes, and the replaced row is read next time."""
    texts = ["The cat sat on the mat.", "Retrieval evaluation scores each chunk against the query with token embeddings."]
    info = describe_model(None)

    def encoder(cache: EmbeddingCache | None) -> TextEncoder:
        return TextEncoder(info, 4, 512, 64, cache, 4096)

    fresh = dict(encoder(None).encode(texts))
    cache = EmbeddingCache(tmp_path)
    first = encoder(cache)
    list(first.encode(texts))
    largest = int(np.abs(fresh[1].vectors).argmax())  # its exponent's last bit: half or twice the value
    flipped_in_file(cache, text_key(first.namespace, texts[1]), "vectors", 4 * largest + 3)
    cache = EmbeddingCache(tmp_path)
    second = encoder(cache)
    again = dict(second.encode(texts))
    assert (second.encoded, second.cached) == (1, 1)
    for i in range(len(texts)):
        assert np.array_equal(again[i].ids, fresh[i].ids) and np.array_equal(again[i].starts, fresh[i].starts)
        np.testing.assert_allclose(again[i].vectors, fresh[i].vectors, atol=1e-5)
    third = encoder(cache)
    list(third.encode(texts))
    assert (third.encoded, third.cached) == (0, 2)
    cache.close()
