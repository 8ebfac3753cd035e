"""Checksums that find bytes damaged on disk in the embedding cache and the dense vector store.

A bit flipped inside a stored vector keeps every length, so the checks on a row's parts (cache._entry) and on the
files' sizes (VectorStore._load) let it through: the judge scored a text with other vectors, and dense retrieval ranked
a chunk by another vector, without a word. Bits are flipped in the files themselves, as bit rot leaves them (SQLite
reads such a page as it is). Files made before the checksums were kept read as they did, with nothing encoded again.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from encoding_helpers import entry, same, vector_of
from semrel.encoding.cache import EmbeddingCache, text_key
from semrel.encoding.models import describe_model
from semrel.encoding.vectors import VectorStore, text_keys
from semrel.errors import SemrelError
from semrel.judging.judge import TextEncoder
from semrel.progress import no_progress

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


def old_put(path: Path, rows: list[tuple[bytes, int | None, np.ndarray]]) -> None:
    """Rows written as semrel before checksums wrote them: into the embeddings table alone."""
    db = sqlite3.connect(path)
    db.executescript(OLD_SCHEMA.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS"))
    with db:
        db.executemany("INSERT OR REPLACE INTO embeddings VALUES (?, ?, ?, ?, ?, ?)",
                       [(key, overlap, 8, e.ids.tobytes(), e.starts.tobytes(), e.vectors.tobytes()) for key, overlap, e in rows])
    db.close()


def test_a_cache_file_made_before_checksums_is_read_as_it_is_and_its_rows_gain_one_when_written_again(tmp_path):
    """Rows of a file the old code wrote (no checksums) are read without encoding anything again, and a row written again
    carries a checksum that catches a flipped bit."""
    old, windowed = entry(12, 1, seed=5), entry(30, 3, seed=6)
    old_put(tmp_path / "embeddings.sqlite", [(A, None, old), (B, 4, windowed)])
    cache = EmbeddingCache(tmp_path)
    found = dict(cache.get_many([A, B], overlap=4))
    assert same(found[A], old) and same(found[B], windowed)
    assert cache.db.execute("SELECT count(*) FROM checksums").fetchone() == (0,)
    cache.put_many([(A, old)], overlap=4)
    assert [key for key, in cache.db.execute("SELECT key FROM checksums")] == [A]
    flipped_in_file(cache, A, "vectors", 4 * 37 + 3)
    again = EmbeddingCache(tmp_path)
    assert [k for k, _ in again.get_many([A, B], overlap=4)] == [B]
    again.close()


def test_a_row_that_semrel_before_checksums_replaces_is_a_miss_and_the_file_stays_one_it_writes(tmp_path):
    """Caches are shared between installs: a version before checksums still writes the file (a crc column broke its
    INSERT), and a row it replaces, not matching the crc kept for the text, is a miss rather than trusted or wrong."""
    first, other = entry(12, 1, seed=7), entry(12, 1, seed=8)
    cache = EmbeddingCache(tmp_path)
    cache.put_many([(A, first), (B, first)], overlap=4)
    cache.close()
    old_put(tmp_path / "embeddings.sqlite", [(A, None, other)])  # as that version encoded it again (its float rounding, say)
    cache = EmbeddingCache(tmp_path)
    assert [k for k, _ in cache.get_many([A, B], overlap=4)] == [B]
    cache.put_many([(A, first)], overlap=4)
    assert same(dict(cache.get_many([A], overlap=4))[A], first)
    cache.close()


def test_a_bit_flipped_in_a_stored_weight_table_is_a_miss(tmp_path):
    """The idf weights had no checksum: one weight's exponent flipped on disk (2.77 read as 5.55) moved p of 5 of 90 pairs."""
    weights = np.linspace(0.5, 3.0, 500)
    cache = EmbeddingCache(tmp_path)
    cache.put_weights(A, weights, 31)
    cache.put_weights(B, weights[::-1].copy(), 31)
    [(blob,)] = cache.db.execute("SELECT weights FROM weights WHERE key = ?", (A,)).fetchall()
    cache.close()
    flip_where_held(cache.path, blob, 8 * 200 + 6)  # a float64's exponent
    cache = EmbeddingCache(tmp_path)
    assert cache.get_weights(A) is None and cache.get_weights(B)[1] == 31
    cache.put_weights(A, weights, 31)  # computed again: replaced and read
    assert np.array_equal(cache.get_weights(A)[0], weights)
    cache.close()


def test_a_damaged_page_of_the_cache_file_is_one_error_naming_it(tmp_path):
    """SQLite reading a page it cannot make sense of raised 'database disk image is malformed' from inside the judge's
    loop: a 52-line traceback."""
    cache = EmbeddingCache(tmp_path)
    cache.put_many([(bytes([k]) * 32, entry(3000, 1, seed=k)) for k in range(4)], overlap=4)  # pages of B-tree beyond the first
    cache.close()
    data = bytearray(cache.path.read_bytes())
    data[65536:65536 + 64] = b"\xff" * 64  # a page header
    cache.path.write_bytes(bytes(data))
    cache = EmbeddingCache(tmp_path)
    with pytest.raises(SemrelError) as caught:
        list(cache.get_many([bytes([k]) * 32 for k in range(4)], overlap=4))
    assert re.fullmatch(rf"{re.escape(str(cache.path))}: the embedding cache failed \(.+\); it is only a cache: delete it to build it "
                        r"afresh, or pass cache='DIR' or cache=False", str(caught.value))
    cache.close()


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


# --- the vector store ------------------------------------------------------------------------------------------------

def rows_for(store: VectorStore, texts: list[str]) -> np.ndarray:
    return store.rows_for(text_keys(texts), lambda at: [texts[i] for i in at], "vectors", no_progress)


def flip_row(store: VectorStore, row: int) -> None:
    """Flip a bit of the exponent of row `row`'s first number in vectors.f32."""
    with open(store.folder / "vectors.f32", "r+b") as handle:
        handle.seek(row * store.dim * 4 + 3)
        byte = handle.read(1)[0]
        handle.seek(-1, 1)
        handle.write(bytes([byte ^ 0x01]))


def test_a_bit_flipped_in_a_stored_vector_is_one_error_naming_the_folder_and_the_way_on(tmp_path, encoded):
    """The piece's checksums follow each commit and a killed run's leftovers (cut before new rows go after them): every
    piece reads. A flipped bit in a row was read as its vector; it is refused before anything is encoded, by a run that
    reads that piece only: a run over other rows reads on."""
    store = VectorStore(tmp_path)
    rows_for(store, ["one", "two"])
    for name, junk in (("vectors.f32", 12), ("keys.bin", 16)):  # a run killed between appending rows and committing them
        with open(store.folder / name, "ab") as handle:
            handle.write(b"\xff" * junk)
    rows_for(VectorStore(tmp_path), ["three", "four"])
    fresh = VectorStore(tmp_path)
    assert rows_for(fresh, ["four", "one", "three", "two"]).tolist() == [3, 0, 2, 1] and len(encoded) == 2
    assert fresh.vectors().tolist() == [vector_of(t) for t in ["one", "two", "three", "four"]]
    flip_row(store, 3)
    assert rows_for(VectorStore(tmp_path), ["two"]).tolist() == [1]
    folder = re.escape(str(store.folder))
    with pytest.raises(SemrelError, match=rf"^{folder}: rows 2 to 3 are damaged .*; delete {folder} to rebuild it, or pass "
                                          r"cache='DIR' or cache=False$"):
        rows_for(VectorStore(tmp_path), ["four", "five"])
    assert len(encoded) == 2


def test_a_store_made_before_checksums_reads_as_it_is_and_checks_the_rows_appended_to_it(tmp_path, encoded):
    """A store.json without pieces (as the old code wrote it) is read without encoding anything again; rows appended
    after it get a piece of their own, which finds a flipped bit, while the older rows are trusted as before."""
    store = VectorStore(tmp_path)
    rows_for(store, ["one", "two"])
    manifest = store.folder / "store.json"
    meta = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({k: v for k, v in meta.items() if k != "pieces"}))
    assert rows_for(VectorStore(tmp_path), ["two", "one", "three"]).tolist() == [1, 0, 2] and len(encoded) == 2
    assert [first for first, _ in json.loads(manifest.read_text())["pieces"]] == [2]
    flip_row(store, 2)
    with pytest.raises(SemrelError, match="rows 2 to 2 are damaged"):
        rows_for(VectorStore(tmp_path), ["three"])
    assert rows_for(VectorStore(tmp_path), ["one", "two"]).tolist() == [0, 1]
