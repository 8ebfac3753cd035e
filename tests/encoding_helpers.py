"""Helpers shared by the embedding cache's and the vector store's tests, which run without a model: entries made up
from a seed, and the vector the stand-in encoder (tests/encoding/conftest.py) gives a text."""

from __future__ import annotations

import numpy as np

from semrel.encoding.cache import Encoded


def entry(tokens: int, windows: int, seed: int = 0) -> Encoded:
    rng = np.random.default_rng(seed)
    return Encoded(rng.integers(0, 30000, tokens, dtype=np.int32), np.arange(windows, dtype=np.int64) * 5,
                   rng.standard_normal((tokens, 8), dtype=np.float32))


def same(a: Encoded, b: Encoded) -> bool:
    return all(np.array_equal(x, y) and x.dtype == y.dtype for x, y in ((a.ids, b.ids), (a.starts, b.starts), (a.vectors, b.vectors)))


def vector_of(text: str) -> list[float]:
    """A vector that tells the text back: its length and the code of its first letter."""
    return [float(len(text)), float(ord(text[0]))]
