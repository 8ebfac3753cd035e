"""Fixtures of the embedding cache's and the vector store's tests: a cache in a temporary folder, and a stand-in
encoder whose vector tells each text back (encoding_helpers.vector_of)."""

from __future__ import annotations

import numpy as np
import pytest

from encoding_helpers import vector_of
from semrel.encoding import vectors as store_module
from semrel.encoding.cache import EmbeddingCache


@pytest.fixture
def cache(tmp_path):
    opened = EmbeddingCache(tmp_path)
    yield opened
    opened.close()


@pytest.fixture
def encoded(monkeypatch) -> list[list[str]]:
    """The texts the stand-in encoder was given, one list per call."""
    calls: list[list[str]] = []

    def fake(texts, model=None, advance=None, engine=None):
        calls.append(list(texts))
        return np.array([vector_of(t) for t in texts], dtype=np.float32)

    monkeypatch.setattr(store_module, "sentence_embeddings", fake)
    return calls
