"""The records semrel passes between steps.

Qrels and runs are columnar (Arrow arrays plus numpy), because real ones hold millions of
rows; the rest are small frozen dataclasses.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .errors import UsageError


def _strings(values) -> pa.Array:
    array = values if isinstance(values, (pa.Array, pa.ChunkedArray)) else pa.array(list(values), type=pa.string())
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    return array.cast(pa.string()) if array.type != pa.string() else array


def dictionary_codes(values: pa.Array | pa.ChunkedArray) -> tuple[pa.Array, np.ndarray]:
    """(distinct values in order of first appearance, each row's index into them)."""
    encoded = pc.dictionary_encode(values)
    if isinstance(encoded, pa.ChunkedArray):  # the chunks share one dictionary
        if not encoded.num_chunks:
            return pa.array([], type=pa.string()), np.zeros(0, dtype=np.int64)
        return encoded.chunks[0].dictionary, np.concatenate([c.indices.to_numpy() for c in encoded.chunks]).astype(np.int64)
    return encoded.dictionary, encoded.indices.to_numpy().astype(np.int64)


@dataclass(frozen=True, eq=False)
class Qrels:
    """Relevance judgments: one (query, doc, grade) row per judged pair."""

    query_ids: pa.Array | pa.ChunkedArray
    doc_ids: pa.Array | pa.ChunkedArray
    relevance: np.ndarray
    source: str | None = None  # the file read, so errors found later can name its line

    @classmethod
    def from_columns(cls, query_ids, doc_ids, relevance) -> "Qrels":
        return cls(_strings(query_ids), _strings(doc_ids), np.asarray(relevance, dtype=np.int64))

    @classmethod
    def from_dict(cls, judged: Mapping[str, Mapping[str, int]]) -> "Qrels":
        rows = [(q, d, int(r)) for q, docs in judged.items() for d, r in docs.items()]
        return cls.from_columns([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])

    def to_dict(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for q, d, r in zip(self.query_ids.to_pylist(), self.doc_ids.to_pylist(), self.relevance.tolist()):
            out.setdefault(q, {})[d] = r
        return out

    def __len__(self) -> int:
        return len(self.relevance)


@dataclass(frozen=True, eq=False)
class Run:
    """A ranked result list: one (query, doc, score) row per retrieved document.

    Order is given by score (descending, ties by doc id descending, as trec_eval does);
    the rank column of a TREC file is not kept.
    """

    query_ids: pa.Array | pa.ChunkedArray  # chunked as read from a file: no copy into one buffer
    doc_ids: pa.Array | pa.ChunkedArray
    scores: np.ndarray
    name: str = "run"
    source: str | None = None  # the file read, so errors found later can name its line

    @classmethod
    def from_columns(cls, query_ids, doc_ids, scores, name: str = "run") -> "Run":
        return cls(_strings(query_ids), _strings(doc_ids), np.asarray(scores, dtype=np.float64), name)

    @classmethod
    def from_dict(cls, ranked: Mapping[str, Mapping[str, float]], name: str = "run") -> "Run":
        rows = [(q, d, float(s)) for q, docs in ranked.items() for d, s in docs.items()]
        return cls.from_columns([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], name)

    def to_dict(self) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        for q, d, s in zip(self.query_ids.to_pylist(), self.doc_ids.to_pylist(), self.scores.tolist()):
            out.setdefault(q, {})[d] = s
        return out

    def __len__(self) -> int:
        return len(self.scores)


@dataclass(frozen=True)
class Chunk:
    """A passage of a document, with character offsets into that document's (extracted) text.

    `meta` holds where the passage sits in its source, when the source says: `pages` (PDF pages,
    from 1) and `headings` (the path of section headings it starts under: HTML, .docx, Markdown).
    """

    id: str
    text: str
    doc_id: str
    start: int
    end: int
    title: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class GoldenItem:
    """A query with its reference answer(s) and, where known, the chunks that hold the answer."""

    query_id: str
    query: str
    reference_answers: tuple[str, ...]
    gold_chunk_ids: tuple[str, ...] = ()
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def reference_answer(self) -> str:
        return self.reference_answers[0] if self.reference_answers else ""


T = TypeVar("T")


@dataclass(frozen=True)
class QuerySample:
    """Which queries of a golden set to work on: the first `limit`, or `size` drawn at random with
    `seed` (kept in file order), or all. The same file, size and seed always give the same queries,
    so `retrieve --sample 100` and `judge --sample 100` work on one sample."""

    limit: int | None = None
    size: int | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        if self.limit is not None and self.size is not None:
            raise UsageError("give --limit N (the first N queries) or --sample N (N at random), not both")
        for name, value in (("--limit", self.limit), ("--sample", self.size)):
            if value is not None and value < 1:
                raise UsageError(f"{name} must be at least 1, not {value}")

    @property
    def active(self) -> bool:
        return self.limit is not None or self.size is not None

    def apply(self, items: Sequence[T]) -> list[T]:
        if self.limit is not None:
            return list(items[: self.limit])
        if self.size is None or self.size >= len(items):
            return list(items)
        chosen = sorted(random.Random(self.seed).sample(range(len(items)), self.size))
        return [items[i] for i in chosen]

    def describe(self) -> dict[str, Any] | None:
        """The manifest's record (None when every query is used)."""
        if self.limit is not None:
            return {"limit": self.limit}
        if self.size is not None:
            return {"sample": self.size, "seed": self.seed, "rule": "random.Random(seed).sample of positions, file order kept"}
        return None


ALL_QUERIES = QuerySample()


@dataclass(frozen=True)
class Judgment:
    """BERTScore of one candidate chunk against a query's reference answer."""

    query_id: str
    chunk_id: str
    P: float
    R: float
    F: float
    source: str = ""
