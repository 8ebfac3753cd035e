"""Chunking documents into passages with stable ids and character offsets.

A chunk is a window of whole words (or whole sentences) of its document: `text` is always
`document[start:end]`, ids are `<doc_id>#<n>` counted from 0, and the same documents and
settings give the same chunks, so gold chunk ids survive a re-run.
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass
from typing import Iterable, Sequence

from ..errors import UsageError
from ..formats.corpus import write_corpus
from ..formats.manifest import write_manifest
from ..progress import Steps, no_progress
from ..records import Chunk
from .documents import Document, DocumentReport, read_documents, read_documents_report, sanitise_id

__all__ = ["ChunkSettings", "Document", "UNITS", "chunk_document", "chunk_documents", "chunk_files", "read_documents",
           "sanitise_id"]

UNITS = ("words", "tokens")

_WORD = re.compile(r"\S+")
# A sentence ends at . ! or ? (possibly followed by closing quotes or brackets) before whitespace,
# and at a blank line (headings and list items have no full stop).
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*(?=\s)|\n[ \t]*\n")


@dataclass(frozen=True)
class ChunkSettings:
    """How documents are cut: `size` None keeps each document as one chunk `<doc_id>#0`; `whole`
    keeps it as one chunk whose id is the document id (so document qrels name it)."""

    size: int | None = None
    overlap: int = 0
    unit: str = "words"
    sentences: bool = False
    model: str | None = None
    whole: bool = False

    def __post_init__(self) -> None:
        if self.whole and self.size is not None:
            raise UsageError("give --size (chunks of N words) or --whole (one chunk per document), not both")
        if self.unit not in UNITS:
            raise UsageError(f"--unit must be one of {', '.join(UNITS)}, not {self.unit!r}")
        if self.size is not None and self.size < 1:
            raise UsageError(f"--size must be at least 1, not {self.size}")
        if self.overlap < 0 or self.size is not None and self.overlap >= self.size:
            raise UsageError(f"--overlap must be at least 0 and less than --size ({self.overlap} given)")

    def describe(self) -> dict:
        described = asdict(self)
        if not self.whole:
            del described["whole"]  # as manifests before --whole recorded it
        return described


# ---------------------------------------------------------------- cutting


@dataclass(frozen=True)
class Unit:
    """The smallest piece a chunk boundary may not cut: a word or a sentence, with its cost."""

    start: int
    end: int
    cost: int


def _word_costs(text: str, words: list[re.Match], tokenizer) -> list[int]:
    """Tokens per word (each token counted in the word its first character falls in)."""
    if tokenizer is None:
        return [1] * len(words)
    offsets = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)["offset_mapping"]
    costs = [0] * len(words)
    index = 0
    for start, end in offsets:
        if end <= start:
            continue
        while index + 1 < len(words) and words[index].end() <= start:
            index += 1
        costs[index] += 1
    return [max(c, 1) for c in costs]


def _sentence_units(text: str, words: list[Unit], limit: int) -> list[Unit]:
    """Words grouped into sentences; a sentence costing more than `limit` stays as words."""
    ends = [m.end() for m in _SENTENCE_END.finditer(text)]
    units: list[Unit] = []
    group: list[Unit] = []
    boundary = 0

    def close() -> None:
        if sum(w.cost for w in group) > limit:
            units.extend(group)
        elif group:
            units.append(Unit(group[0].start, group[-1].end, sum(w.cost for w in group)))
        group.clear()

    for word in words:
        while boundary < len(ends) and ends[boundary] <= word.start:
            boundary += 1
            close()
        group.append(word)
    close()
    return units


def _windows(units: Sequence[Unit], size: int, overlap: int) -> Iterable[tuple[int, int]]:
    """(first, last+1) unit indices of each chunk: as many units as fit in `size`; the next chunk
    starts early enough to repeat at most `overlap` of this one's cost, but always reaches further."""

    def extent(first: int) -> int:
        last, total = first, 0
        while last < len(units) and (last == first or total + units[last].cost <= size):
            total += units[last].cost
            last += 1
        return last

    first = 0
    while first < len(units):
        last = extent(first)
        yield first, last
        if last == len(units):
            return
        following, repeated = last, 0
        while following - 1 > first and repeated + units[following - 1].cost <= overlap:
            following -= 1
            repeated += units[following].cost
        while following < last and extent(following) <= last:
            following += 1
        first = following


def chunk_document(doc: Document, settings: ChunkSettings, tokenizer=None) -> list[Chunk]:
    """The chunks of one document; a document with no text gives none."""
    words = list(_WORD.finditer(doc.text))
    if not words:
        return []
    if settings.whole:
        s, e = words[0].start(), words[-1].end()
        return [Chunk(id=doc.id, text=doc.text[s:e], doc_id=doc.id, start=s, end=e, title=doc.title, meta=doc.meta_of(s, e))]
    if settings.size is None:
        spans = [(words[0].start(), words[-1].end())]
    else:
        costs = _word_costs(doc.text, words, tokenizer)
        units = [Unit(m.start(), m.end(), c) for m, c in zip(words, costs)]
        if settings.sentences:
            units = _sentence_units(doc.text, units, settings.size)
        spans = [(units[a].start, units[b - 1].end) for a, b in _windows(units, settings.size, settings.overlap)]
    return [
        Chunk(id=f"{doc.id}#{n}", text=doc.text[s:e], doc_id=doc.id, start=s, end=e, title=doc.title, meta=doc.meta_of(s, e))
        for n, (s, e) in enumerate(spans)
    ]


def chunk_documents(
    documents: Sequence[Document], settings: ChunkSettings, steps: Steps = no_progress
) -> list[Chunk]:
    """Chunks of every document in order; tokens are counted with the model's tokenizer."""
    tokenizer = None
    if settings.unit == "tokens" and settings.size is not None:
        from ..encoding.models import load_encoder

        tokenizer = load_encoder(settings.model)[0]
    chunks: list[Chunk] = []
    with steps("chunking", len(documents)) as advance:
        for doc in documents:
            chunks.extend(chunk_document(doc, settings, tokenizer))
            advance(1)
    return chunks


def chunk_files(inputs: Sequence[str], output: str | os.PathLike, settings: ChunkSettings, steps: Steps = no_progress,
                exclude: Sequence[str] = ()) -> tuple[int, int, DocumentReport]:
    """Chunk the documents of `inputs` into `output` (corpus.jsonl) with its manifest:
    (documents, chunks, what was read and skipped)."""
    documents, report = read_documents_report(inputs, exclude)
    rows = write_corpus(chunk_documents(documents, settings, steps), output)
    params = {**settings.describe(), **({"exclude": list(exclude)} if exclude else {}), "documents": report.params()}
    write_manifest(output, inputs=inputs, params=params, rows=rows)
    return len(documents), rows, report
