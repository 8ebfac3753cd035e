"""The vector store's files without a model: a stand-in encoder gives each text a vector of its own, so the
tests see which texts are encoded again, which row each key maps to, and what a damaged store is refused for."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from encoding_helpers import vector_of
from helpers import file_size_limit
from semrel.encoding import vectors as store_module
from semrel.encoding.vectors import VectorStore, text_keys
from semrel.errors import SemrelError
from semrel.progress import no_progress


def rows_for(store: VectorStore, texts: list[str]) -> np.ndarray:
    keys = text_keys(texts)
    return store.rows_for(keys, lambda at: [texts[i] for i in at], "vectors", no_progress)


def test_rows_map_each_text_to_its_own_vector_and_new_texts_append_in_corpus_order(tmp_path, encoded):
    """A key's row taken from the sorted keys, not the store's order, or new rows numbered in key order rather than
    the order they are appended in, gave a text another text's vector."""
    first = ["banana", "kiwi", "mango", "apple"]  # their keys unsorted: store order is not key order
    store = VectorStore(tmp_path)
    rows = rows_for(store, first)
    assert rows.tolist() == [0, 1, 2, 3] and encoded == [first]
    again = ["fig", "banana", "kiwi", "date", "fig", "apple", "cherry"]
    rows = rows_for(store, again)
    assert encoded[1] == ["fig", "date", "cherry"]  # each missing text once, in the order it first appears
    assert rows.tolist() == [4, 0, 1, 5, 4, 3, 6]
    assert store.vectors()[rows].tolist() == [vector_of(t) for t in again]
    assert (store.encoded, store.reused, store.repeated) == (7, 3, 1)  # fig's second time is no vector from the store


def test_a_store_of_one_row_is_found_and_read(tmp_path, encoded):
    """The last key of the sorted store was never found (re-encoded every run), and one row read as none."""
    store = VectorStore(tmp_path)
    rows_for(store, ["zebra"])
    fresh = VectorStore(tmp_path)
    assert rows_for(fresh, ["zebra"]).tolist() == [0] and len(encoded) == 1
    assert fresh.vectors().tolist() == [vector_of("zebra")]


def test_rows_a_killed_run_appended_past_the_manifest_are_cut_before_new_rows(tmp_path, encoded):
    """Bytes past the committed count were kept, so the next rows went after them and read back as the killed run's garbage."""
    store = VectorStore(tmp_path)
    rows_for(store, ["one"])
    for name, junk in (("vectors.f32", 12), ("keys.bin", 16)):
        with open(store.folder / name, "ab") as handle:
            handle.write(b"\xff" * junk)
    fresh = VectorStore(tmp_path)
    assert rows_for(fresh, ["two", "one"]).tolist() == [1, 0]
    assert fresh.vectors().tolist() == [vector_of("one"), vector_of("two")]
    assert (fresh.folder / "keys.bin").stat().st_size == 2 * 16


def test_vectors_cut_at_another_length_get_a_folder_of_their_own(tmp_path, monkeypatch):
    """Vectors of the same model cut at 512 tokens (before 2026-12-01) and at 256 shared a folder, and were mixed."""
    now = VectorStore(tmp_path)
    info = store_module.describe_model(None)
    monkeypatch.setattr(store_module, "describe_model", lambda model: dataclasses.replace(info, sentence_length=512))
    older = VectorStore(tmp_path)
    assert older.folder != now.folder and older.folder.parent == now.folder.parent


def test_a_store_shorter_than_its_manifest_is_refused(tmp_path, encoded):
    """Rows the manifest counts but the file lacks were read as zeros or past the end of the file."""
    store = VectorStore(tmp_path)
    rows_for(store, ["one", "two", "three"])
    vectors = store.folder / "vectors.f32"
    vectors.write_bytes(vectors.read_bytes()[:-4])
    with pytest.raises(SemrelError, match="shorter than"):
        rows_for(VectorStore(tmp_path), ["one"])


def test_a_store_of_another_model_is_refused(tmp_path, encoded):
    """A store.json naming another fingerprint (a folder copied or renamed) was trusted: its vectors are another model's."""
    store = VectorStore(tmp_path)
    rows_for(store, ["one"])
    manifest = store.folder / "store.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "fingerprint": "0" * 32}))
    with pytest.raises(SemrelError, match="made with another model"):
        rows_for(VectorStore(tmp_path), ["one"])


def test_vectors_of_another_width_are_refused(tmp_path, monkeypatch):
    """An encoder giving 3-dim vectors to a store of 2-dim rows appended them, and every later row was read skewed."""
    widths = iter([2, 3])
    monkeypatch.setattr(store_module, "sentence_embeddings",
                        lambda texts, *args: np.ones((len(texts), next(widths)), dtype=np.float32))
    store = VectorStore(tmp_path)
    rows_for(store, ["one"])
    with pytest.raises(SemrelError, match="3-dim vectors, the store holds 2"):
        rows_for(store, ["two"])
    assert (store.folder / "vectors.f32").stat().st_size == 2 * 4


def test_texts_that_changed_while_read_are_refused(tmp_path, encoded):
    """Texts read back that are not the ones whose keys were missing were encoded under the missing keys."""
    store = VectorStore(tmp_path)
    keys = text_keys(["one", "two"])
    with pytest.raises(SemrelError, match="changed while they were read"):
        store.rows_for(keys, lambda at: ["one", "TWO"], "vectors", no_progress)
    assert not encoded


def test_an_encoder_of_another_precision_is_refused(tmp_path, encoded):
    """Exact vectors asked of an int8 encoder went into the exact store, where they mix with exact ones."""
    class Int8:
        precision = "int8"

    store = VectorStore(tmp_path)
    with pytest.raises(SemrelError, match="holds exact vectors; the encoder runs at int8"):
        store.rows_for(text_keys(["one"]), lambda at: ["one"], "vectors", no_progress, Int8())  # type: ignore[arg-type]
    assert VectorStore(tmp_path, precision="int8").folder != store.folder


def test_a_full_disk_while_vectors_are_appended_names_the_file_and_keeps_the_committed_rows(tmp_path, encoded):
    """An append to vectors.f32 failed with an OSError naming no file, which the CLI reported as 'stdout: No space left
    on device'; the error names the store's file, and the rows committed before are found by the next run."""
    store = VectorStore(tmp_path)
    rows_for(store, ["apple"])
    with file_size_limit(64), pytest.raises(SemrelError) as caught:
        rows_for(store, [f"text {i}" for i in range(20)])
    assert str(caught.value) == (f"{store.folder / 'vectors.f32'}: cannot write (file too large for this system or its limits); "
                                 "what it held before is kept; pass cache='DIR' or cache=False")
    again = VectorStore(tmp_path)
    assert rows_for(again, ["apple", "kiwi"]).tolist() == [0, 1] and encoded[-1] == ["kiwi"]
