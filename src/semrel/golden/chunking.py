"""Chunking documents into passages with stable ids and character offsets.

A chunk is a window of whole words (or whole sentences) of its document: `text` is always
`document[start:end]`, ids are `<doc_id>#<n>` counted from 0, and the same documents and
settings give the same chunks, so gold chunk ids survive a re-run.
"""

from __future__ import annotations

import os
import re
from array import array
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable, Iterator, Sequence

import numpy as np

from ..cjk import WORD
from ..errors import UsageError, ValidationError
from ..formats.corpus import write_corpus
from ..formats.files import STDIO
from ..formats.manifest import outputs_with_manifests, write_manifest
from ..progress import Steps, no_progress
from ..records import Chunk
from .documents import Document, DocumentReport, iter_documents, read_documents, sanitise_id

__all__ = ["ChunkSettings", "Document", "UNITS", "chunk_document", "chunk_documents", "chunk_files", "read_documents",
           "sanitise_id"]

UNITS = ("words", "tokens")

# A sentence ends at . ! or ? (possibly followed by closing quotes or brackets) before whitespace, at a
# full-width 。！？ (no space follows them), and at a blank line (headings and list items have no full stop),
# whatever the line breaks: \n, \r\n or \r.
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*(?=\s)|[\u3002\uff01\uff1f][\"')\]\u300d\u300f\uff09]*"
                           r"|(?:\r\n|\r(?!\n)|\n)[ \t]*(?:\r\n|\r(?!\n)|\n)")


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
            raise UsageError("give size= (chunks of N words) or whole= (one chunk per document), not both")
        if self.unit not in UNITS:
            raise UsageError(f"unit= must be one of {', '.join(UNITS)}, not {self.unit!r}")
        if self.size is not None and self.size < 1:
            raise UsageError(f"size= must be at least 1, not {self.size}")
        if self.overlap < 0 or self.size is not None and self.overlap >= self.size:
            raise UsageError(f"overlap= must be at least 0 and less than size= ({self.overlap} given)")
        idle = [name for name, given in (("overlap", self.overlap), ("sentences", self.sentences),
                                         ("unit", self.unit != "words")) if given]
        if self.size is None and idle:  # it was accepted, did nothing, and went into the manifest as if it had
            kept = "whole= keeps each document as one chunk" if self.whole else "without size= each document is one chunk"
            raise UsageError(f"{idle[0]}= only applies to chunks of size= words or tokens: {kept}")
        if self.model is not None and self.unit != "tokens":  # it was ignored in silence, and recorded in the manifest
            raise UsageError("model= is the tokenizer that counts unit='tokens': give unit='tokens' too, or leave model= out")

    def describe(self) -> dict:
        described = asdict(self)
        if not self.whole:
            del described["whole"]  # as manifests before --whole recorded it
        return described


# ---------------------------------------------------------------- cutting
#
# A document is cut with a few integer arrays (where each word starts, cumulative costs), never a
# Python object per word: a 100 MB document of 17 million words would need gigabytes of them.
# Word ends are found again with the regex where a chunk ends, so they need no array either.

TOKENIZE_BLOCK = 1 << 20  # characters of a long document tokenized at once (see _word_costs)


def _integers(values: Iterable[int], bound: int) -> np.ndarray:
    """Non-negative integers below `bound` as a compact array (4 bytes each while they fit)."""
    kind = "i" if bound < 2**31 - 1 else "q"
    packed = array(kind, values)
    return np.frombuffer(packed, dtype=np.int32 if kind == "i" else np.int64) if packed else np.zeros(0, dtype=np.int64)


def _word_starts(text: str) -> np.ndarray:
    return _integers((m.start() for m in WORD.finditer(text)), len(text))


def _word_end(text: str, start: int) -> int:
    match = WORD.match(text, start)
    return match.end() if match else start


def _token_blocks(text: str, starts: np.ndarray) -> list[tuple[int, int]]:
    """(start, end) of the pieces a long text is tokenized in: each after the first starts one
    character before a word (its whitespace, which tokenizers such as RoBERTa's attach to the
    word), so every word is tokenized as it would be in the whole text."""
    cuts = [0]
    for target in range(TOKENIZE_BLOCK, len(text), TOKENIZE_BLOCK):
        index = int(np.searchsorted(starts, target))
        if index < len(starts) and int(starts[index]) - 1 > cuts[-1]:
            cuts.append(int(starts[index]) - 1)
    return list(zip(cuts, cuts[1:] + [len(text)]))


def _word_costs(text: str, starts: np.ndarray, tokenizer) -> np.ndarray:
    """Tokens per word: each token counts in the first word ending after its first character (the
    last word for a token past them all); a word without a token of its own costs 1."""
    ends = _integers((m.end() for m in WORD.finditer(text)), len(text) + 1)
    costs = np.zeros(len(starts), dtype=np.int64)
    for begin, finish in _token_blocks(text, starts):
        offsets = tokenizer(text[begin:finish], add_special_tokens=False, return_offsets_mapping=True,
                            verbose=False)["offset_mapping"]
        spans = np.asarray(offsets, dtype=np.int64).reshape(-1, 2)
        token_starts = spans[spans[:, 1] > spans[:, 0], 0] + begin
        words = np.minimum(np.searchsorted(ends, token_starts, side="right"), len(starts) - 1)
        costs += np.bincount(words, minlength=len(starts))
    return np.maximum(costs, 1)


@dataclass(frozen=True)
class Units:
    """The pieces a chunk boundary may not cut (words, or sentences that fit a chunk), as arrays:
    where each starts, the index of its last word (None: unit i is word i) and the cumulative
    cost before each (None: every unit costs 1)."""

    starts: np.ndarray
    last_words: np.ndarray | None
    before: np.ndarray | None


def _sentence_units(text: str, starts: np.ndarray, before: np.ndarray | None, limit: int) -> Units:
    """Words grouped into sentences; a sentence costing more than `limit` stays as words."""
    count = len(starts)
    ends = _integers((m.end() for m in _SENTENCE_END.finditer(text)), len(text) + 1)
    # a word belongs to the sentence after every end at or before its start
    bounds = np.unique(np.concatenate([[0], np.searchsorted(starts, ends, side="left"), [count]]).astype(np.int64))
    first, stop = bounds[:-1], bounds[1:]
    cost = (stop - first) if before is None else before[stop] - before[first]
    whole = cost <= limit
    sizes = np.where(whole, 1, stop - first)
    opening = np.repeat(first, sizes)
    offset = np.arange(int(sizes.sum()), dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    unit_first = opening + np.where(np.repeat(whole, sizes), 0, offset)
    unit_last = np.where(np.repeat(whole, sizes), np.repeat(stop - 1, sizes), unit_first)
    unit_before = np.concatenate([unit_first, [count]]) if before is None else np.concatenate([before[unit_first], before[-1:]])
    return Units(starts[unit_first], unit_last, unit_before)


def _windows(count: int, size: int, overlap: int, before: np.ndarray | None) -> Iterator[tuple[int, int]]:
    """(first, last+1) unit indices of each chunk: as many units as fit in `size`; the next chunk
    starts early enough to repeat at most `overlap` of this one's cost, but always reaches further.
    `before[i]` is the cost of units 0..i-1 (None: each unit costs 1)."""

    def extent(first: int) -> int:
        if before is None:
            return min(first + size, count)
        return max(min(int(np.searchsorted(before, before[first] + size, side="right")) - 1, count), first + 1)

    first = 0
    while first < count:
        last = extent(first)
        yield first, last
        if last == count:
            return
        if before is None:
            following = max(first + 1, last - overlap)
        else:
            following = max(first + 1, int(np.searchsorted(before, before[last] - overlap, side="left")))
        while following < last and extent(following) <= last:
            following += 1
        first = following


def cut_spans(text: str, settings: ChunkSettings, tokenizer=None) -> Iterator[tuple[int, int]]:
    """(start, end) character offsets of each chunk of `text`: whole words, or whole sentences."""
    starts = _word_starts(text)
    if not len(starts):
        return
    if settings.size is None:
        yield int(starts[0]), _word_end(text, int(starts[-1]))
        return
    before = None
    if tokenizer is not None:
        before = np.concatenate([[0], np.cumsum(_word_costs(text, starts, tokenizer))])
    units = _sentence_units(text, starts, before, settings.size) if settings.sentences else Units(starts, None, before)
    for a, b in _windows(len(units.starts), settings.size, settings.overlap, units.before):
        last_word = b - 1 if units.last_words is None else int(units.last_words[b - 1])
        yield int(units.starts[a]), _word_end(text, int(starts[last_word]))


def iter_chunks(doc: Document, settings: ChunkSettings, tokenizer=None) -> Iterator[Chunk]:
    """The chunks of one document, one at a time (with `whole`: one chunk keeping the document's id);
    a document with no text gives none."""
    if settings.whole:
        starts = _word_starts(doc.text)
        if len(starts):
            s, e = int(starts[0]), _word_end(doc.text, int(starts[-1]))
            yield Chunk(id=doc.id, text=doc.text[s:e], doc_id=doc.id, start=s, end=e, title=doc.title, meta=doc.meta_of(s, e))
        return
    for n, (s, e) in enumerate(cut_spans(doc.text, settings, tokenizer)):
        yield Chunk(id=f"{doc.id}#{n}", text=doc.text[s:e], doc_id=doc.id, start=s, end=e, title=doc.title,
                    meta=doc.meta_of(s, e))


def chunk_document(doc: Document, settings: ChunkSettings, tokenizer=None) -> list[Chunk]:
    """The chunks of one document; a document with no text gives none."""
    return list(iter_chunks(doc, settings, tokenizer))


def _tokenizer(settings: ChunkSettings):
    if settings.unit == "tokens" and settings.size is not None:
        from ..encoding.models import load_encoder

        return load_encoder(settings.model)[0]
    return None


def iter_document_chunks(documents: Iterable[Document], count: int | None, settings: ChunkSettings,
                         steps: Steps = no_progress) -> Iterator[Chunk]:
    """Chunks of every document in order, one at a time (`count` documents, for the progress line;
    None when not known before they are read); tokens are counted with the model's tokenizer."""
    tokenizer = _tokenizer(settings)
    with steps("chunking", count) as advance:
        for doc in documents:
            yield from iter_chunks(doc, settings, tokenizer)
            advance(1)


def chunk_documents(
    documents: Sequence[Document], settings: ChunkSettings, steps: Steps = no_progress
) -> list[Chunk]:
    """Chunks of every document in order; tokens are counted with the model's tokenizer."""
    return list(iter_document_chunks(documents, len(documents), settings, steps))


def chunk_files(inputs: Sequence[str], output: str | os.PathLike, settings: ChunkSettings, steps: Steps = no_progress,
                exclude: Sequence[str] = ()) -> tuple[int, int, DocumentReport]:
    """Chunk the documents of `inputs` into `output` (corpus.jsonl) with its manifest:
    (documents, chunks, what was read and skipped).

    Documents are read, cut and written one at a time, so memory is a small multiple of the longest
    document (a file's, or a JSONL corpus's line), whatever the corpus's size."""
    for folder in (i for i in inputs if os.path.isdir(i) and str(output) != STDIO):
        inside = Path(os.path.realpath(output))
        if inside.is_relative_to(os.path.realpath(folder)) and not any(
                part.startswith(".") for part in inside.relative_to(os.path.realpath(folder)).parts):  # hidden files are not read
            raise UsageError(f"{output}: inside the documents folder {folder}, whose files are all read: the next run would "
                             "read the corpus as documents (or as a BEIR folder's corpus.jsonl, and write over it); write it "
                             "outside the folder, or under a hidden name (nothing was written)")
    report = DocumentReport()
    count = 0

    def counted() -> Iterator[Document]:
        nonlocal count
        for doc in iter_documents(inputs, report, exclude):
            count += 1
            yield doc
        if not count:  # an empty corpus.jsonl would only fail later, in import, retrieve or judge (the writer drops it)
            skipped = "; ".join(report.skip_lines())
            raise ValidationError(f"no document with text to chunk in {', '.join(map(str, inputs))}"
                                  + (f" ({skipped})" if skipped else "") + "; nothing was written")

    with outputs_with_manifests([output]) as staged:
        rows = write_corpus(iter_document_chunks(counted(), None, settings, steps), staged[output])
        params = {**settings.describe(), **({"exclude": list(exclude)} if exclude else {}), "documents": report.params()}
        write_manifest(output, inputs=inputs, params=params, rows=rows, staged=staged)
    return count, rows, report
