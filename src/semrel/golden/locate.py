"""Finding gold chunks: answer spans by character offset, reference contexts by text overlap."""

from __future__ import annotations

import re
from collections import Counter
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


class ContextMatcher:
    """Matches reference contexts (LlamaIndex rag_dataset) to corpus chunks.

    A chunk matches exactly when it contains the context or the context contains it (whitespace
    normalised). Otherwise the chunk with the highest overlap coefficient of word sets,
    |A & B| / min(|A|, |B|), matches if that reaches `threshold`.
    """

    def __init__(self, chunks: Sequence[Chunk], threshold: float):
        self.chunks = chunks
        self.threshold = threshold
        self.texts = [_squash(c.text) for c in chunks]
        self.words = [set(_tokens(c.text)) for c in chunks]
        self.postings: dict[str, list[int]] = {}
        for i, words in enumerate(self.words):
            for word in words:
                self.postings.setdefault(word, []).append(i)

    def match(self, context: str) -> tuple[list[str], str, float]:
        """(chunk ids, 'exact' | 'overlap' | 'none', best overlap score)."""
        squashed = _squash(context)
        words = set(_tokens(context))
        shared: Counter[int] = Counter()
        for word in words:
            shared.update(self.postings.get(word, ()))
        exact = [
            self.chunks[i].id for i in sorted(shared)
            if squashed and (squashed in self.texts[i] or self.texts[i] and self.texts[i] in squashed)
        ]
        if exact:
            return exact, "exact", 1.0
        scored = [(n / max(1, min(len(words), len(self.words[i]))), -i) for i, n in shared.items()]
        if not scored:
            return [], "none", 0.0
        score, neg_index = max(scored)
        if score >= self.threshold:
            return [self.chunks[-neg_index].id], "overlap", score
        return [], "none", score
