"""Finding gold chunks: answer spans by character offset, reference contexts by text overlap."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

from ..records import Chunk

_TOKEN = re.compile(r"\w+")
_SPACE = re.compile(r"\s+")


def find_answer(context: str, answer: str, offset: int | None) -> tuple[int, int] | None:
    """(start, end) of `answer` in `context`: at `offset` if it is there, else the occurrence
    nearest to it (offsets in real data drift by a few characters); None when absent.

    Surrounding whitespace of the answer is ignored; so are differences in whitespace inside it.
    """
    text = answer.strip()
    if not text:
        return None
    offset = 0 if offset is None else offset
    for shift in (0, 1, -1):
        if context.startswith(text, offset + shift) and offset + shift >= 0:
            return offset + shift, offset + shift + len(text)
    hits = [m.span() for m in re.finditer(re.escape(text), context)]
    if not hits:
        flexible = r"\s+".join(re.escape(part) for part in text.split())
        hits = [m.span() for m in re.finditer(flexible, context)]
    return min(hits, key=lambda span: (abs(span[0] - offset), span[0])) if hits else None


def chunks_holding(chunks: Sequence[Chunk], start: int, end: int) -> list[str]:
    """Ids of the chunks (of one document) that hold the whole span [start, end); when none
    does (the span straddles a boundary), the one chunk holding most of it."""
    whole = [c.id for c in chunks if c.start <= start and end <= c.end]
    if whole:
        return whole
    overlaps = [(min(end, c.end) - max(start, c.start), -i) for i, c in enumerate(chunks)]
    best, neg_index = max(overlaps, default=(0, 0))
    return [chunks[-neg_index].id] if best > 0 else []


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower())


def _squash(text: str) -> str:
    return _SPACE.sub(" ", text).strip()


COVER = 0.5
"""A context marks a chunk when at least this share of the chunk's word pairs, or of the context's, are shared."""


def _pairs(tokens: list[str]) -> set[tuple[str, ...]]:
    """Word bigrams (a lone word for a one-word text): order-aware, so common words alone do not match."""
    return set(zip(tokens, tokens[1:])) if len(tokens) > 1 else {tuple(tokens)} if tokens else set()


@dataclass(frozen=True)
class ContextMatch:
    """The chunks one reference context marks, and how: 'exact' (a chunk holds the context, or the
    context holds the chunks), 'covered' (word-pair coverage, see ContextMatcher), 'overlap' (the one
    best chunk by word overlap) or 'none'. `score`: share of the context's word pairs in the marked
    chunks (overlap: the overlap coefficient)."""

    ids: list[str]
    how: str
    score: float
    words: int  # words in the context

    def meta(self) -> dict:
        return {"how": self.how, "score": round(self.score, 4), "chunks": len(self.ids)}


class ContextMatcher:
    """Matches reference contexts (LlamaIndex rag_dataset) to corpus chunks.

    A context often spans several chunks (LlamaIndex cut the documents its own way), so it marks
    every chunk it substantially covers: a chunk that holds it, a chunk it holds (whitespace
    normalised), and a chunk sharing at least COVER of the chunk's word pairs (it lies mostly inside
    the context) or of the context's (it holds most of the context). When none qualifies, the chunk
    with the highest overlap coefficient of word sets, |A & B| / min(|A|, |B|), matches alone if that
    reaches `threshold`.
    """

    def __init__(self, chunks: Sequence[Chunk], threshold: float, cover: float = COVER):
        self.chunks = chunks
        self.threshold = threshold
        self.cover = cover
        self.texts = [_squash(c.text) for c in chunks]
        tokens = [_tokens(c.text) for c in chunks]
        self.words = [set(t) for t in tokens]
        self.pairs = [_pairs(t) for t in tokens]
        self.postings: dict[str, list[int]] = {}
        for i, words in enumerate(self.words):
            for word in words:
                self.postings.setdefault(word, []).append(i)
        self.pair_postings: dict[tuple[str, ...], list[int]] = {}
        for i, pairs in enumerate(self.pairs):
            for pair in pairs:
                self.pair_postings.setdefault(pair, []).append(i)

    def match(self, context: str) -> ContextMatch:
        squashed = _squash(context)
        tokens = _tokens(context)
        words, pairs = set(tokens), _pairs(tokens)
        shared_pairs: Counter[int] = Counter()
        for pair in pairs:
            shared_pairs.update(self.pair_postings.get(pair, ()))
        exact = {i for i in shared_pairs if squashed and (squashed in self.texts[i] or self.texts[i] and self.texts[i] in squashed)}
        covered = {i for i, n in shared_pairs.items()
                   if n >= self.cover * len(self.pairs[i]) or n >= self.cover * len(pairs)}
        marked = sorted(exact | covered)
        if marked:
            held = any(squashed in self.texts[i] for i in exact)  # one chunk holds the whole context
            union = set().union(*(self.pairs[i] for i in marked)) & pairs
            score = 1.0 if held else len(union) / max(1, len(pairs))
            how = "exact" if covered <= exact else "covered"
            return ContextMatch([self.chunks[i].id for i in marked], how, score, len(tokens))
        shared: Counter[int] = Counter()
        for word in words:
            shared.update(self.postings.get(word, ()))
        scored = [(n / max(1, min(len(words), len(self.words[i]))), -i) for i, n in shared.items()]
        if not scored:
            return ContextMatch([], "none", 0.0, len(tokens))
        score, neg_index = max(scored)
        if score >= self.threshold:
            return ContextMatch([self.chunks[-neg_index].id], "overlap", score, len(tokens))
        return ContextMatch([], "none", score, len(tokens))
