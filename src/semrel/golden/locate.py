"""Finding gold chunks: answer spans by character offset, reference contexts by text overlap."""

from __future__ import annotations

import functools
import re
from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Sequence

from ..records import Chunk, GoldenItem

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
    """Matches reference contexts (LlamaIndex rag_dataset) to corpus chunks, read one at a time: the
    contexts are indexed and each chunk is compared with them as it comes (`add`), so no chunk is kept.

    A context often spans several chunks (LlamaIndex cut the documents its own way), so it marks
    every chunk it substantially covers: a chunk that holds it, a chunk it holds (whitespace
    normalised), and a chunk sharing at least COVER of the chunk's word pairs (it lies mostly inside
    the context) or of the context's (it holds most of the context). When none qualifies, the chunk
    with the highest overlap coefficient of word sets, |A & B| / min(|A|, |B|), matches alone if that
    reaches `threshold` (the first such chunk on a tie).
    """

    def __init__(self, contexts: Iterable[str], threshold: float, cover: float = COVER):
        self.threshold = threshold
        self.cover = cover
        self.index = {context: i for i, context in enumerate(dict.fromkeys(contexts))}  # each distinct context once
        self.texts = [_squash(c) for c in self.index]
        tokens = [_tokens(c) for c in self.index]
        self.lengths = [len(t) for t in tokens]
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
        count = len(self.texts)
        self.marked: list[list[str]] = [[] for _ in range(count)]  # chunk ids, in corpus order
        self.found: list[set[tuple[str, ...]]] = [set() for _ in range(count)]  # the context's pairs in marked chunks
        self.held = [False] * count  # a marked chunk holds the whole context
        self.covered = [False] * count  # a marked chunk is covered, not exact
        self.best: list[tuple[float, int, str | None]] = [(0.0, 0, None)] * count  # (overlap, order, chunk id)
        self.order = 0  # minus the chunks added so far: larger for an earlier chunk, which wins a tie

    def add(self, chunk: Chunk) -> None:
        """Compare one chunk with every context (chunks in corpus order: ties go to the first)."""
        text = _squash(chunk.text)
        tokens = _tokens(chunk.text)
        pairs = _pairs(tokens)
        shared_pairs: Counter[int] = Counter()
        for pair in pairs:
            shared_pairs.update(self.pair_postings.get(pair, ()))
        for i, n in shared_pairs.items():
            context = self.texts[i]
            exact = bool(context) and (context in text or bool(text) and text in context)
            covered = n >= self.cover * len(pairs) or n >= self.cover * len(self.pairs[i])
            if exact or covered:
                self.marked[i].append(chunk.id)
                self.found[i] |= pairs & self.pairs[i]
                self.held[i] = self.held[i] or exact and context in text
                self.covered[i] = self.covered[i] or not exact
        words = set(tokens)
        shared: Counter[int] = Counter()
        for word in words:
            shared.update(self.postings.get(word, ()))
        self.order -= 1
        for i, n in shared.items():
            if not self.marked[i]:  # the overlap only counts for a context no chunk covers
                score = n / max(1, min(len(self.words[i]), len(words)))
                if (score, self.order) > self.best[i][:2]:
                    self.best[i] = (score, self.order, chunk.id)

    def match(self, context: str) -> ContextMatch:
        """What `context` (one of those given) matched among the chunks added."""
        i = self.index[context]
        if self.marked[i]:
            score = 1.0 if self.held[i] else len(self.found[i]) / max(1, len(self.pairs[i]))
            return ContextMatch(list(self.marked[i]), "covered" if self.covered[i] else "exact", score, self.lengths[i])
        score, _, chunk_id = self.best[i]
        if chunk_id is not None and score >= self.threshold:
            return ContextMatch([chunk_id], "overlap", score, self.lengths[i])
        return ContextMatch([], "none", score, self.lengths[i])


def answer_ranking(query: str, answers: Sequence[str], chunks: Sequence[tuple[str, str]]) -> list[tuple[str, tuple[bool, int, float]]]:
    """One document's (chunk id, text) pairs, the likeliest source of a reference answer first, each with its key:
    (holds an answer's words in order, case, spacing and punctuation aside; if it does, how many of the question's
    words it shares; the largest share of an answer's word pairs it holds). Document order on a tie."""
    wanted = [f" {' '.join(words)} " for words in (_tokens(a) for a in answers) if words]
    answer_pairs = [p for p in (_pairs(_tokens(a)) for a in answers) if p]
    asked = set(_tokens(query))
    keys = []
    for chunk_id, text in chunks:
        words, joined, pairs = _chunk_words(text)
        holds = any(a in joined for a in wanted)
        share = max((len(a & pairs) / len(a) for a in answer_pairs), default=0.0)
        keys.append((chunk_id, (holds, len(asked.intersection(words)) if holds else 0, share)))
    return sorted(keys, key=lambda pair: pair[1], reverse=True)  # stable: a tie keeps document order


def answer_chunks(query: str, answers: Sequence[str], chunks: Sequence[tuple[str, str]]) -> tuple[list[str], str, float]:
    """Which of one document's (chunk id, text) pairs hold a reference answer, for a golden set that names the
    document an answer came from, not its chunk: 'text', the chunks holding an answer's words in order (where several
    do, as a short answer may, those sharing the most of the question's words); else 'pairs', the one chunk sharing
    the largest share of an answer's word pairs (written answers, generated ones, or one straddling two chunks; the
    first on a tie), that share the score; else 'none' and no chunk, as nothing in the document points to one."""
    ranking = answer_ranking(query, answers, chunks)
    if not ranking:
        return [], "none", 0.0
    best, (holds, asked, share) = ranking[0]
    if holds:
        nearest = {chunk_id for chunk_id, key in ranking if key[:2] == (True, asked)}
        return [chunk_id for chunk_id, _ in chunks if chunk_id in nearest], "text", 1.0
    return ([best], "pairs", share) if share > 0 else ([], "none", 0.0)


def least_shares(items: Iterable[GoldenItem], n: int = 3) -> str:
    """The `n` queries whose gold answer-chunk found by word pairs alone, on the least share ("'q16' 0.08, ..."), or
    '': a share cannot tell a paraphrase from an answer its document lacks (one common pair, 'the filter', is enough),
    so these are the ones worth a look."""
    found = [(how["score"], item.query_id) for item in items for how in (item.meta.get("answer_chunks") or {}).values()
             if isinstance(how, dict) and how.get("how") == "pairs"]
    return ", ".join(f"{query!r} {share:.2f}" for share, query in sorted(found)[:n])


@functools.lru_cache(maxsize=4096)
def _chunk_words(text: str) -> tuple[tuple[str, ...], str, frozenset[tuple[str, ...]]]:
    """A chunk's words, joined between spaces, and word pairs: made once for the many questions one document answers."""
    words = _tokens(text)
    return tuple(words), f" {' '.join(words)} ", frozenset(_pairs(words))
