"""The BERTScore judge: each pooled (query, chunk) pair scored against the query's reference answer.

Candidate = chunk text, reference = reference answer. Scores equal bert_score.score(cands, refs,
model_type, num_layers, idf) to float precision; they are faster to get because every unique
text is encoded once, in length-sorted batches, through only the layers used (or read from the
embedding cache), and each chunk is matched against all its queries' references in one matrix
product and dropped as soon as its pairs are scored.

Several reference answers: the pair keeps the best of P, R and F over them, each separately,
as bert_score does with multiple references.

Long chunks: a chunk over the model's token limit (or a smaller `window`) is cut into windows of
that many tokens that overlap by `overlap` tokens. Each window is a candidate of its own (its P and R against the
reference, computed exactly as for a short chunk) and the chunk keeps the best window for each
of P, R and F separately. So an answer anywhere in a long chunk is found, and recall stays close
to what the answer scores in a short chunk (with all-MiniLM-L6-v2, windows of 256 tokens, its
training length, track short chunks more closely than its 512-token limit). A reference answer
over the window is truncated to it, as bert_score does at the limit, and counted for a warning.
"""

from __future__ import annotations

import contextlib
import hashlib
import heapq
import itertools
import json
import numbers
import os
import time
from collections import Counter, defaultdict
from collections.abc import Sequence as SequenceABC
from dataclasses import asdict, dataclass, field
from functools import cached_property
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from ..cjk import count_words
from ..encoding.cache import EmbeddingCache, Encoded, default_cache_dir, text_key
from ..encoding.encode import normalised_tokens, token_windows
from ..encoding.engines import LOCAL, Engine, as_engine
from ..encoding.models import DEFAULT_MODEL, ModelInfo, describe_model, load_tokenizer
from ..errors import SemrelError, UsageError, ValidationError, check_flags, check_kind, check_warn, tell
from ..formats.corpus import corpus_records, given_golden, iter_corpus, misplaced_gold, repeated_id, require_known_chunks
from ..formats.files import STDIO, check_outputs, guarded, note_input, prepare_output, rewrite_lock
from ..formats.judgments import write_judgments
from ..formats.manifest import outputs_with_manifests, write_manifest
from ..formats.pool import given_pool, pool_error
from ..progress import Advance, Steps, counted, no_progress
from ..records import ALL_QUERIES, Chunk, GoldenItem, Judgment, QuerySample
from ..terminal import agreeing, quantity
from . import labels
from .bertscore import greedy_match, greedy_match_tokens, idf_table, model_layer, plain_weights, rescale, shipped_baseline
from .checkpoint import Checkpoint, pack, unpack
from .probability import PoolFeatures, idf_sample, null_pairs

Pair = tuple[str, str, tuple[str, ...]]
# Texts tokenized and batched at a time: ~120 MB of token lists for 200-token chunks, and few
# enough slices that --engine ray (one Ray Data job, workers loading the model, per slice) stays cheap.
ENCODE_SLICE = 16384
RESCALE_MODES = ("none", "baseline", "corpus")


@dataclass(frozen=True)
class JudgeOptions:
    """How pairs are scored; every field is recorded in the manifest."""

    model: str | None = None
    layer: int | None = None  # None: bert_score's recommended layer for the model, else its last
    idf: bool = False  # idf weights from the corpus chunks
    rescale: str = "none"  # none | baseline (bert_score's shipped file) | corpus (unrelated pairs of this corpus)
    window: int | None = None  # tokens per window of a long chunk (with [CLS]/[SEP]); None: the model's limit
    overlap: int | None = None  # tokens shared by consecutive windows; None: a quarter of the window
    baseline_pairs: int = 500  # unrelated (chunk, reference) pairs for --rescale corpus
    seed: int = 0
    cache_dir: str | None = None  # None: the user cache dir
    use_cache: bool = True
    max_tokens: int = 4096  # tokens per encoder batch: bigger batches are no faster on CPU and cost memory
    null_sample: int = labels.NULL_SAMPLE  # corpus chunks scored against every query for p; 0: no p

    def __post_init__(self) -> None:
        for name in ("layer", "window", "overlap", "baseline_pairs", "seed", "max_tokens", "null_sample"):
            # a float or text here failed in transformers or numpy
            check_kind(name, getattr(self, name), (numbers.Integral,), "a whole number")
        check_kind("rescale", self.rescale, (str,), f"one of {', '.join(RESCALE_MODES)}", required=True)


@dataclass
class JudgeResult:
    """What `judge` returns: the judgments, and the counts the command prints and the manifest records (so a caller
    sees what was encoded, cached, resumed or windowed, as the command's user does)."""

    judgments: Sequence[Judgment]  # a Judgments view: built row by row from score arrays
    params: dict[str, Any]  # how they were made, for the manifest
    encoded: int = 0  # texts run through the model by this call
    cached: int = 0  # texts read from the embedding cache
    windowed: int = 0  # chunks longer than the model's limit, scored in windows
    truncated_references: int = 0  # reference answers longer than the limit, truncated as bert_score does
    resumed: int = 0  # pairs taken from an interrupted run's checkpoint
    scored: int = 0  # pairs scored by this call (resumed + scored = pairs + baseline pairs + null pairs)
    null_pairs: int = 0  # (query, null chunk) pairs behind p (judging.probability)
    warnings: list[str] = field(default_factory=list)

    def __repr__(self) -> str:  # a notebook shows the counts, not the params and warnings in full
        return (f"JudgeResult({quantity(len(self.judgments), 'judgment')}; {self.encoded} texts encoded, {self.cached} cached, "
                f"{self.resumed} pairs resumed, {self.null_pairs} null pairs; {quantity(len(self.warnings), 'warning')})")


def _digest(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def _texts_digest(texts: Iterable[str]) -> str:
    """sha256 of texts, each after its byte length: for many long texts, where _digest would first
    JSON-escape them all (the idf sample's escaping was an eighth of what p cost a 40-question judge
    beyond its null pairs)."""
    hasher = hashlib.sha256()
    for text in texts:
        data = text.encode()
        hasher.update(len(data).to_bytes(8, "big") + data)
    return hasher.hexdigest()


class TextEncoder:
    """Encoded texts for one model and layer: from the cache when there, else through the model."""

    def __init__(self, info: ModelInfo, layer: int, window: int, overlap: int, cache: EmbeddingCache | None, max_tokens: int,
                 engine: Engine = LOCAL):
        self.info, self.layer, self.window, self.overlap, self.cache = info, layer, window, overlap, cache
        self.max_tokens, self.engine = max_tokens, engine
        # vectors of another precision never mix with exact ones (exact keeps the namespace it always had)
        precision = getattr(engine, "precision", "exact")
        self.namespace = f"{info.fingerprint}|layer={layer}|limit={window}" + ("" if precision == "exact" else f"|precision={precision}")
        self.encoded = self.cached = 0

    @cached_property
    def tokenizer(self):
        return load_tokenizer(str(self.info.folder))

    @cached_property
    def specials(self) -> tuple[list[int], list[int]]:
        """The special tokens the tokenizer puts before and after a text ([CLS], [SEP] for BERT)."""
        inner = self.tokenizer("a", add_special_tokens=False)["input_ids"]
        outer = self.tokenizer("a", add_special_tokens=True)["input_ids"]
        at = next(i for i in range(len(outer)) if outer[i : i + len(inner)] == inner)
        return outer[:at], outer[at + len(inner) :]

    def with_specials(self, ids: Sequence[int]) -> list[int]:
        before, after = self.specials
        return [*before, *ids, *after]

    @cached_property
    def prefix_space(self) -> bool:
        """Whether bert_score's sent_encode puts a space before each text for this model.

        sent_encode asks tokenizers of the GPT-2 and RoBERTa classes (in transformers 5 also BART's,
        Longformer's, LED's) for add_prefix_space=True, on the tokenizer loaded with use_fast=False.
        Slow tokenizers (transformers 4) honour the request, so the first word gets its leading-space
        token ('ĠThe'); transformers 5 ignores it, so the tokenizer's own setting stands. Asking that
        tokenizer the same question for one word tells which holds; one it cannot load: no space added.
        """
        import transformers

        slow_class = getattr(transformers, type(self.tokenizer).__name__.removesuffix("Fast"), None)
        if not (isinstance(slow_class, type) and issubclass(slow_class, (transformers.GPT2Tokenizer, transformers.RobertaTokenizer))):
            return False
        try:
            slow = transformers.AutoTokenizer.from_pretrained(str(self.info.folder), use_fast=False, trust_remote_code=False)
        except (OSError, ValueError):
            return False
        asked = slow.encode("a", add_special_tokens=False, add_prefix_space=True)
        spaced, plain = self.tokenizer([" a", "a"], add_special_tokens=False)["input_ids"]
        return asked == spaced != plain

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids without special tokens, of each text as bert_score's sent_encode reads it: stripped,
        then (see prefix_space) led by a space unless empty. A long text's later windows start mid-text."""
        space = " " if self.prefix_space else ""
        texts = [space + s if (s := t.strip()) else "" for t in texts]
        return self.tokenizer(texts, add_special_tokens=False, verbose=False)["input_ids"]

    def weights(self, idf: bool, corpus_texts: Callable[[], Iterable[str]], corpus_digest: str) -> tuple[np.ndarray, dict[str, Any]]:
        """Weight per token id (idf of the corpus chunks, or 1 with [CLS]/[SEP] at 0) and how it was made.

        idf reads `corpus_texts()` as a stream, in blocks, counting documents per token without
        keeping them; `corpus_digest` (of the texts) keys the table in the cache.
        """
        key = bytes.fromhex(_digest(self.info.fingerprint, "idf", corpus_digest) if idf else _digest(self.info.fingerprint, "plain"))
        found = self.cache.get_weights(key) if self.cache else None
        if found is None:
            tokenizer = self.tokenizer
            size = max(len(tokenizer), tokenizer.vocab_size)
            if idf:
                blocks = (self.token_ids(block) for block in _blocks(corpus_texts(), 1024))
                found = idf_table((self.with_specials(ids) for block in blocks for ids in block), size)
            else:
                found = plain_weights(size, (tokenizer.cls_token_id, tokenizer.sep_token_id)), 0
            if self.cache:
                self.cache.put_weights(key, *found)
        table, documents = found
        return table, ({"idf": True, "idf_source": "corpus chunks", "idf_documents": documents} if idf else {"idf": False})

    def encode(self, texts: Sequence[str]) -> Iterator[tuple[int, Encoded]]:
        """(position in `texts`, Encoded) for each text, in slices of ENCODE_SLICE texts so that token
        lists and batches held at once stay bounded however large the pool is."""
        for begin in range(0, len(texts), ENCODE_SLICE):
            for i, entry in self._encode_slice(texts[begin : begin + ENCODE_SLICE]):
                yield begin + i, entry

    def _encode_slice(self, texts: Sequence[str]) -> Iterator[tuple[int, Encoded]]:
        """Cached texts first, the rest as their length-sorted batches finish."""
        keys = [text_key(self.namespace, t) for t in texts]
        position = {k: i for i, k in enumerate(keys)}
        pending = set(range(len(texts)))
        if self.cache:
            for key, entry in self.cache.get_many(keys, self.overlap):
                pending.discard(position[key])
                self.cached += 1
                yield position[key], entry
        yield from self._run_model(sorted(pending), texts, keys)

    def _run_model(self, todo: list[int], texts: Sequence[str], keys: list[bytes]) -> Iterator[tuple[int, Encoded]]:
        if not todo:
            return
        size = self.window - sum(len(s) for s in self.specials)
        windows: list[tuple[int, list[int]]] = []
        for i, ids in zip(todo, self.token_ids([texts[i] for i in todo])):
            windows.extend((i, self.with_specials(w)) for w in token_windows(ids, size, self.overlap))
        left = Counter(i for i, _ in windows)
        parts: dict[int, list[tuple[int, np.ndarray]]] = defaultdict(list)
        encoded = [w for _, w in windows]
        for batch, vectors in self.engine.run(encoded, str(self.info.folder), self.layer, self.max_tokens, normalised_tokens):
            done: list[tuple[int, Encoded]] = []
            for row, k in enumerate(batch):
                i, ids = windows[k]
                parts[i].append((k, vectors[row, : len(ids)].copy()))
                left[i] -= 1
                if left[i] == 0:
                    done.append((i, _assemble(sorted(parts.pop(i), key=lambda part: part[0]), windows)))
            if self.cache and done:
                self.cache.put_many(((keys[i], entry) for i, entry in done), self.overlap)
            for i, entry in done:
                self.encoded += 1
                yield i, entry


def _assemble(pieces: list[tuple[int, np.ndarray]], windows: list[tuple[int, list[int]]]) -> Encoded:
    """One text's windows (window index, vectors), in order, stacked into one Encoded."""
    lengths = [len(v) for _, v in pieces]
    return Encoded(
        np.concatenate([windows[k][1] for k, _ in pieces]).astype(np.int32),
        np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64),
        np.concatenate([v for _, v in pieces]),
    )


def _blocks(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    iterator = iter(items)
    while block := list(itertools.islice(iterator, size)):
        yield block


def first_window(entry: Encoded) -> tuple[Encoded, bool]:
    """A reference cut to its first window (bert_score's truncation), and whether anything was cut."""
    if entry.windows == 1:
        return entry, False
    end = int(entry.starts[1])
    return Encoded(entry.ids[:end], entry.starts[:1], entry.vectors[:end]), True


def build_pairs(golden: Sequence[GoldenItem], pairs: Iterable[Pair], names: Mapping[str, str]) -> list[Pair]:
    """Pool pairs grouped by query in golden order, with each query's gold chunks added (source `gold`).

    Equal ids and source lists are stored once, so the list costs little more than a pointer a pair.
    """
    shared: dict[Any, Any] = {}
    by_query: dict[str, dict[str, set[str]]] = {g.query_id: {} for g in golden}
    for query_id, chunk_id, sources in pairs:
        if query_id not in by_query:
            raise pool_error(names["pool"], f"query {query_id!r} is not in {names['golden']}; "
                             "pool and golden set must come from the same queries", query_id)
        by_query[query_id].setdefault(shared.setdefault(chunk_id, chunk_id), set()).update(sources)
    for item in golden:
        for chunk_id in item.gold_chunk_ids:
            by_query[item.query_id].setdefault(shared.setdefault(chunk_id, chunk_id), set()).add("gold")
    return [(q, c, shared.setdefault(key := tuple(sorted(s)), key)) for q, found in by_query.items() for c, s in found.items()]


def require_known(golden: Sequence[GoldenItem], work: Sequence[Pair], known: set[str], names: Mapping[str, str]) -> None:
    """Every gold and pooled chunk id must be in the corpus; the first one that is not is the error."""
    require_known_chunks(golden, known, names["golden"])
    for query_id, chunk_id, sources in work:
        if chunk_id not in known:
            named = [repr(s) for s in sources if s != "gold"]
            found = f", pooled from run{'s' * (len(named) > 1)} {', '.join(named)}" if named else ""
            raise pool_error(names["pool"], f"chunk {chunk_id!r} (query {query_id!r}{found}) is not in {names['corpus']}; "
                             "pool runs retrieved over this corpus", query_id, chunk_id)


def placed_gold(golden: Sequence[GoldenItem], places: Mapping[str, tuple[str, int, int]], names: Mapping[str, str]) -> list[str]:
    """Gold chunks that do not hold their query's recorded answer span: most of them is a golden set made for another
    chunking of these documents (its ids exist here too, naming other text), an error; a few, a warning (a chunk picked by
    hand may hold the answer in other words)."""
    misplaced, checked = misplaced_gold(golden, places)
    if not misplaced:
        return []
    q, c = misplaced[0]
    doc, start, end = places[c]
    n = len(misplaced)
    said = (f"{names['golden']}: {quantity(n, 'gold chunk')} of {checked:,} {agreeing(n, 'lie')} outside {'its' if n == 1 else 'their'} "
            f"query's answer (meta.answer_spans; first: {c!r} of query {q!r}, characters {start}-{end} of document {doc!r})")
    if 2 * len(misplaced) >= checked:
        raise ValidationError(f"{said}: is {names['corpus']} the corpus this golden set was imported with (the same documents, "
                              "chunked with the same --size and --overlap)? judge with that corpus, or import the golden set again")
    return [f"{said}: their pairs are judged as gold all the same; check them with `semrel golden pick` if they were not picked by hand"]


def reference_answers(golden: Sequence[GoldenItem], queries: set[str], golden_name: str) -> dict[str, tuple[str, ...]]:
    """Each judged query's reference answers; a missing or blank one is an error."""
    answers: dict[str, tuple[str, ...]] = {}
    for item in golden:
        if item.query_id not in queries:
            continue
        if not item.reference_answers or any(not a.strip() for a in item.reference_answers):
            raise ValidationError(f"{golden_name}: query {item.query_id!r} has an empty reference_answer; "
                                  "the judge scores chunks against it, so fill it in or drop the query")
        answers[item.query_id] = item.reference_answers
    return answers


def _seeded_hasher(seed: int) -> Callable[[str], int]:
    """A chunk id's 8-byte blake2b of "seed\0id", as an int; the seed's prefix is hashed once."""
    prefix = hashlib.blake2b(f"{seed}\0".encode(), digest_size=8)

    def value(chunk_id: str) -> int:
        hasher = prefix.copy()
        hasher.update(chunk_id.encode())
        return int.from_bytes(hasher.digest(), "big")
    return value


@dataclass
class CorpusScan:
    """What one pass over the corpus keeps: the texts of the chunks the work needs, never all of them."""

    texts: dict[str, str]  # chunk id -> text, for the judged chunks and the baseline candidates
    candidates: list[tuple[int, str]]  # (seeded hash, chunk id) of baseline candidates, smallest hash first
    chunks: int  # chunks read
    digest: str  # sha256 of every chunk text in order (what idf weights depend on)
    places: dict[str, tuple[str, int, int]] = field(default_factory=dict)  # judged chunk id -> (doc_id, start, end)


def scan_corpus(corpus: Iterable[tuple[int, Chunk]], needed: set[str], candidates: int, seed: int, name: str, digest: bool) -> CorpusScan:
    """One streaming pass: texts of the `needed` chunks, plus the `candidates` non-blank chunks with
    the smallest seeded hash of their id (a uniform sample, the same whatever the corpus order)."""
    texts: dict[str, str] = {}
    places: dict[str, tuple[str, int, int]] = {}
    lines: dict[str, int] = {}
    heap: list[tuple[int, str, str]] = []  # (-hash, id, text): the largest kept hash on top
    hasher, hashed = hashlib.sha256(), _seeded_hasher(seed)
    count = 0
    for line, chunk in corpus:
        count += 1
        if digest:
            hasher.update(chunk.text.encode() + b"\0")
        if chunk.id in needed:
            if chunk.id in lines:
                raise repeated_id(name, chunk.id, lines[chunk.id], line)
            lines[chunk.id] = line
            texts[chunk.id] = chunk.text
            places[chunk.id] = (chunk.doc_id, chunk.start, chunk.end)
        if candidates and chunk.text and not chunk.text.isspace():  # not blank, and no copy of the text made to find out
            entry = (-hashed(chunk.id), chunk.id, chunk.text)
            if len(heap) < candidates:
                heapq.heappush(heap, entry)
            elif entry > heap[0]:
                heapq.heapreplace(heap, entry)
    ranked = sorted((-h, c, t) for h, c, t in heap)
    texts.update((c, t) for _, c, t in ranked)
    return CorpusScan(texts, [(h, c) for h, c, _ in ranked], count, hasher.hexdigest(), places)


def baseline_sample(candidates: Sequence[tuple[int, str]], queries: Sequence[str], related: set[tuple[str, str]], count: int,
                    seed: int) -> list[tuple[str, str]]:
    """`count` (query, chunk) pairs, none of them pooled or gold: unrelated pairs.

    Candidates are chunks in seeded-hash order; each gets its own seeded order of the queries.
    Round r pairs every candidate with its r-th query, so a big corpus gives `count` distinct
    chunks and a small one reuses chunks with other queries. Deterministic for a seed.
    """
    rounds = min(len(queries), 2 * -(-count // max(len(candidates), 1)) + 8)
    orders = [np.random.default_rng([seed, h]).permutation(len(queries))[:rounds] for h, _ in candidates]
    chosen: list[tuple[str, str]] = []
    for r in range(rounds):
        for (_, chunk_id), order in zip(candidates, orders):
            pair = (queries[order[r]], chunk_id)
            if len(chosen) < count and pair not in related:
                chosen.append(pair)
    if len(chosen) < min(count, 10):
        raise UsageError(f"only {len(chosen)} unrelated (chunk, reference) pairs found; "
                         "the corpus is too small for rescale='corpus', use rescale='none'")
    return chosen


_FIRST, _ONE = np.zeros(1, dtype=np.int64), np.array([0, 1])  # a lone answer's starts and bounds
# floats in one product of a chunk with stacked answers (and in the stack): 1 MiB. A chunk pooled for
# every query (the null sample's are) made 32 MiB products; freeing one raises glibc's mmap and trim
# thresholds to its size, and the heap then kept up to twice that free but resident. On covid150's
# larger pool the judge with p peaks 4% above the same pairs without p at 1 MiB (4 MiB: 7%,
# 256 KiB: 3%), at 0.97 of the CPU that unbounded products take (256 KiB: 0.99).
MATCH_CELLS = 1 << 18


@dataclass
class Stacked:
    """The reference answers of a group's queries stacked for one matrix product with the chunk."""

    texts: list[str]  # the answers, query by query
    vectors: np.ndarray
    weights: np.ndarray  # each answer token's weight
    starts: np.ndarray  # each answer's first row
    bounds: np.ndarray  # each query's first answer, then the count of answers


class PairScorer:
    """Scores (query, chunk) pairs: references encoded once up front, chunks streamed and dropped."""

    def __init__(self, encoder: TextEncoder, weights: np.ndarray, answers: Mapping[str, tuple[str, ...]], advance: Advance,
                 plain: np.ndarray):
        self.encoder, self.weights, self.answers, self.advance = encoder, weights, answers, advance
        self.plain = plain  # bert_score's weights without idf: 0 for the special tokens, 1 for the rest
        self.references: dict[str, Encoded] = {}
        self.reference_weights: dict[str, np.ndarray] = {}
        self.rows: dict[str, int] = {}  # per query: its answers' token rows
        self.truncated = 0
        self.tokenless_references: set[str] = set()  # scored 0, 0, 0 against every chunk, as bert_score does

    def load_references(self, texts: Sequence[str]) -> None:
        for i, entry in self.encoder.encode(texts):
            self.references[texts[i]], cut = first_window(entry)
            self.reference_weights[texts[i]] = self.weights[self.references[texts[i]].ids]
            self.truncated += cut
            if self.tokenless(self.references[texts[i]]):
                self.tokenless_references.add(texts[i])

    def tokenless(self, entry: Encoded) -> bool:
        """Whether a text holds no token but the ones the tokenizer adds (only control or zero-width characters, which it
        drops): bert_score scores such a candidate or reference 0, 0, 0 ("Empty ... sentence detected"). A text of its own
        special tokens ('[SEP]') is not one. The length is asked of the tokenizer only for a text with no token of weight."""
        return entry.windows == 1 and not self.plain[entry.ids].any() and len(entry.ids) == sum(map(len, self.encoder.specials))

    def _blocks(self, queries: Iterable[str], chunk: np.ndarray) -> Iterator[list[str]]:
        """`queries` in runs whose stacked answers, and their product with `chunk`'s token rows, hold
        at most MATCH_CELLS floats (a query over that alone is a run of its own). An answer's scores
        are those of one product to float32 rounding: BLAS may sum a cell in another order beside
        other columns, as it always could beside the answers of whichever queries pooled the chunk."""
        width, cells = max(chunk.shape), 0
        block: list[str] = []
        for query in queries:
            if query not in self.rows:
                self.rows[query] = sum(len(self.references[a].ids) for a in self.answers[query])
            size = width * self.rows[query]
            if block and cells + size > MATCH_CELLS:
                yield block
                block, cells = [], 0
            block.append(query)
            cells += size
        yield block

    def _matched(self, entry: Encoded, queries: Sequence[str], match: Callable[..., tuple[np.ndarray, ...]]
                 ) -> Iterator[tuple[list[str], Stacked, tuple[np.ndarray, ...]]]:
        """(block, its stacked answers, `match` of the chunk against them) for each block of `queries`'
        distinct queries: one home for the bounded loop that both scorers run."""
        chunk_weights = self.weights[entry.ids]
        for block in self._blocks(dict.fromkeys(queries), entry.vectors):
            stacked = self._stack(block)
            scores = match(entry.vectors, chunk_weights, entry.starts, stacked.vectors, stacked.weights, stacked.starts)
            if self.tokenless_references:  # its R and F are 0 already (no weight); P, the chunk's match to [CLS]/[SEP], is not
                scores[0][:, [k for k, a in enumerate(stacked.texts) if a in self.tokenless_references]] = 0.0
            yield block, stacked, scores

    def _stack(self, queries: list[str]) -> Stacked:
        """The answers of `queries`, stacked; one query with one answer (most chunks) takes the answer's
        arrays as loaded, uncopied."""
        texts = [a for q in queries for a in self.answers[q]]
        if len(texts) == 1:
            return Stacked(texts, self.references[texts[0]].vectors, self.reference_weights[texts[0]], _FIRST, _ONE)
        lengths = [len(self.references[a].ids) for a in texts]
        return Stacked(texts, np.concatenate([self.references[a].vectors for a in texts]),
                       np.concatenate([self.reference_weights[a] for a in texts]), np.cumsum([0] + lengths[:-1]),
                       np.cumsum([0] + [len(self.answers[q]) for q in queries]))

    @staticmethod
    def _per_query(scores: Sequence[np.ndarray], stacked: Stacked, table: np.ndarray | None = None) -> np.ndarray:
        """(queries, 3): the best P, R, F over the chunk's windows and each query's answers (each taken
        on its own); with `table` (answers, 3 + k), whose last k columns hold more per-answer scores, P, R, F
        fill its first three and the result is (queries, 3 + k), each query's best of those columns too."""
        if table is None:
            return np.maximum.reduceat(np.stack(scores, axis=-1).max(axis=0), stacked.bounds[:-1], axis=0)
        np.stack(scores, axis=-1).max(axis=0, out=table[:, :3])
        return np.maximum.reduceat(table, stacked.bounds[:-1], axis=0)

    def score(self, by_text: Mapping[str, list[int]], query_of: Callable[[int], str]) -> Iterator[tuple[list[int], np.ndarray, int]]:
        """(task numbers, their P, R, F as rows, windows) per chunk text, as each is scored."""
        for text in [t for t in by_text if not t.strip()]:  # nothing to match: bert_score gives 0, 0, 0
            yield self._done(by_text[text], np.zeros((len(by_text[text]), 3)), 1)
        texts = [t for t in by_text if t.strip()]
        for i, entry in self.encoder.encode(texts):
            group = by_text[texts[i]]
            if self.tokenless(entry):
                yield self._done(group, np.zeros((len(group), 3)), 1)
                continue
            queries = [query_of(k) for k in group]
            best: dict[str, np.ndarray] = {}
            for block, stacked, scores in self._matched(entry, queries, greedy_match):
                best.update(zip(block, self._per_query(scores, stacked)))
            yield self._done(group, np.array([best[q] for q in queries]), entry.windows)

    def _done(self, group: list[int], scores: np.ndarray, windows: int) -> tuple[list[int], np.ndarray, int]:
        self.advance(len(group))
        return group, scores, windows


class FeatureScorer(PairScorer):
    """A PairScorer that also hands over what p needs: for every task its idf-weighted R and the
    idf-weighted share of the reference's tokens whose id the chunk holds (a fourth and fifth score
    column: the vectors' near matches and the exact ones), and for the tasks numbered below `wanted`
    (the pool's pairs) each reference token's best cosine over the chunk (the tokens of the query's
    reference answers one after another, as stacked) and their idf weights (one array per answer, 0
    for the special tokens), the chunk's token count and the query's mean reference length. P, R and
    F come from the same product and arithmetic as PairScorer's."""

    def __init__(self, encoder: TextEncoder, weights: np.ndarray, answers: Mapping[str, tuple[str, ...]], advance: Advance,
                 plain: np.ndarray, idf: np.ndarray, wanted: int):
        super().__init__(encoder, weights, answers, advance, plain)
        self.wanted = wanted
        # per token id: its idf in p's sample, 0 for the special tokens, rounded to float32 as the checkpoint keeps it
        self.idf = (idf * (plain > 0)).astype(np.float32).astype(np.float64)
        self.lengths: dict[str, int] = {}  # per reference text: how many of its tokens are not special
        # per reference text: its token ids as numpy's index type (int32 ones are cast per index), their idf and
        # the divisor of its idf-weighted means (the idf's sum, 1 where that is 0), made once, not per chunk
        self.idf_of: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self.token_idf: dict[str, np.ndarray] = {}  # per reference text: its tokens' idf (float32)
        self.per_query: dict[str, tuple[int, list[np.ndarray], float]] = {}  # see _query
        # 1 for the token ids the chunk being scored holds: one table set and cleared per chunk (a fresh zeroed one
        # per chunk cost a 30 KB memset each, counted byte by byte by valgrind's rep stosb, bench/judge_p_cost.py);
        # float64, as the idf it multiplies, so the product casts nothing
        self.held = np.zeros(len(idf))

    def load_references(self, texts: Sequence[str]) -> None:
        super().load_references(texts)
        for text, entry in self.references.items():  # the special tokens are found from `plain`, without loading the tokenizer
            ids = entry.ids.astype(np.intp)
            idf = self.idf[ids]
            total = np.add.reduceat(idf, _FIRST)
            self.idf_of[text] = ids, idf, np.where(total > 0, total, 1.0)  # total 0: weights all 0
            self.lengths[text], self.token_idf[text] = int(np.count_nonzero(self.plain[ids])), idf.astype(np.float32)

    def score_features(self, by_text: Mapping[str, list[int]], query_of: Callable[[int], str]
                       ) -> Iterator[tuple[list[int], np.ndarray, int, dict[int, tuple[np.ndarray, list[np.ndarray], int, float]]]]:
        """(task numbers, their P, R, F, idf-weighted R and exact-token share as rows, windows,
        {wanted task: (token bests, their idf, chunk tokens, reference tokens)})."""
        for text in [t for t in by_text if not t.strip()]:
            yield self._unmatched(by_text[text], query_of)
        texts = [t for t in by_text if t.strip()]
        for n, entry in self.encoder.encode(texts):
            group = by_text[texts[n]]
            if self.tokenless(entry):
                yield self._unmatched(group, query_of)
                continue
            queries = [query_of(k) for k in group]
            wanted = {i: q for i, q in zip(group, queries) if i < self.wanted}
            wanted_queries = set(wanted.values())
            chunk_ids = entry.ids.astype(np.intp)
            chunk_tokens = int(np.count_nonzero(self.plain[chunk_ids])) if wanted else 0
            best: dict[str, np.ndarray] = {}
            kept: dict[str, tuple[np.ndarray, list[np.ndarray], int, float]] = {}
            held = self.held
            held[chunk_ids] = 1.0
            for block, stacked, (*scores, tokens) in self._matched(entry, queries, greedy_match_tokens):
                ids, idf, divisor = self._reference_idf(stacked)  # exact matches (held) beside the vectors' best ones (tokens)
                table = np.empty((len(stacked.starts), 5))
                self._idf_means(tokens, held[ids], idf, divisor, stacked.starts, table[:, 3:])
                best.update(zip(block, self._per_query(scores, stacked, table)))
                if wanted_queries:
                    firsts = stacked.starts[stacked.bounds[:-1]].tolist() if len(block) > 1 else [0]  # each query's first row
                    for q, first in zip(block, firsts):
                        if q in wanted_queries:  # the query's rows of `tokens`, a view: PoolFeatures.add copies them
                            span, weights, length = self._query(q)
                            kept[q] = (tokens[first : first + span], weights, chunk_tokens, length)
            held[chunk_ids] = 0.0
            yield (*self._done(group, np.array([best[q] for q in queries]), entry.windows), {i: kept[q] for i, q in wanted.items()})

    def _unmatched(self, group: list[int], query_of: Callable[[int], str]
                   ) -> tuple[list[int], np.ndarray, int, dict[int, tuple[np.ndarray, list[np.ndarray], int, float]]]:
        """A chunk with nothing to match (blank, or no token but the special ones): 0, 0, 0, and no token matches."""
        extra = {}
        for i in group:
            if i < self.wanted:
                span, weights, length = self._query(query_of(i))
                extra[i] = (np.zeros(span, np.float32), weights, 0, length)
        return (*self._done(group, np.zeros((len(group), 5)), 1), extra)

    @staticmethod
    def _idf_means(tokens: np.ndarray, exact: np.ndarray, idf: np.ndarray, divisor: np.ndarray, starts: np.ndarray,
                   out: np.ndarray) -> None:
        """Into `out` (answers, 2): the idf-weighted means over each answer's tokens (answers from `starts`, each
        answer's `divisor`; weighted_mean's arithmetic) of the token bests, the idf-weighted recall, and of the
        tokens whose id the chunk holds (`exact`, 1 or 0), the exact-token share lexR_rel reads."""
        weighted = np.empty((len(idf), 2))
        np.multiply(tokens, idf, out=weighted[:, 0])
        np.multiply(exact, idf, out=weighted[:, 1])
        np.divide(np.add.reduceat(weighted, starts, axis=0), divisor[:, None], out=out)

    def _reference_idf(self, stacked: Stacked) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The stacked answers' token ids, their idf and each answer's divisor (see idf_of)."""
        texts = stacked.texts
        if len(texts) == 1:
            return self.idf_of[texts[0]]
        ids, idf, divisor = zip(*(self.idf_of[a] for a in texts))
        return np.concatenate(ids), np.concatenate(idf), np.concatenate(divisor)

    def _query(self, query: str) -> tuple[int, list[np.ndarray], float]:
        """The query's rows in a stack (its answers' tokens), its references' token idf, and their mean count
        of tokens that are not special: what PoolFeatures.add takes beside the token bests and the chunk's
        token count (made once a query)."""
        if query not in self.per_query:
            answers = self.answers[query]
            self.per_query[query] = (sum(len(self.references[a].ids) for a in answers), [self.token_idf[a] for a in answers],
                                     float(np.mean([self.lengths[a] for a in answers])))
        return self.per_query[query]


class Judgments(SequenceABC):
    """Judgments made on access from the pairs and a (pairs, 3) score array: a row of floats a
    pair in memory instead of an object, and streamed when written."""

    def __init__(self, work: Sequence[Pair], scores: np.ndarray, probability: np.ndarray | None = None,
                 features: np.ndarray | None = None):
        self.work, self.scores = work, scores
        self.probability, self.features = probability, features  # p (NaN: none) and (pairs, FEATURES + with_gold)

    def __len__(self) -> int:
        return len(self.work)

    def __repr__(self) -> str:
        return f"Judgments({quantity(len(self), 'pair')})"

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[k] for k in range(len(self))[index]]
        query_id, chunk_id, sources = self.work[index]
        p, r, f = (float(v) for v in self.scores[index])
        chance = None if self.probability is None or not np.isfinite(self.probability[index]) else float(self.probability[index])
        named = None
        if chance is not None and self.features is not None:
            named = dict(zip((*labels.FEATURES, labels.WITH_GOLD_FLAG), (float(v) for v in self.features[index])))
        return Judgment(query_id, chunk_id, p, r, f, source=",".join(sources), p=chance, features=named)


def _saved_scores(row: Mapping[str, Any], columns: int) -> np.ndarray | None:
    """A checkpoint row's score columns (P, R, F, and p's when it is computed), or None where the row has
    not that many (a run without p, or one of an older semrel, whose rows held them as JSON numbers)."""
    try:
        values = unpack(row["scores"], "<f8")
    except (KeyError, TypeError, ValueError):
        return None
    return values if len(values) == columns else None


def choose_layer(info: ModelInfo, layer: int | None) -> tuple[int, str]:
    """The layer the judge reads (the given one, which the model must have, else its default) and where it came from."""
    return model_layer(info.name, info.folder, info.num_layers, layer)


def judge_pairs(
    corpus: Callable[[], Iterable[tuple[int, Chunk]]],
    golden: Sequence[GoldenItem],
    pairs: Iterable[Pair],
    options: JudgeOptions = JudgeOptions(),
    checkpoint: str | None = None,
    steps: Steps = no_progress,
    names: Mapping[str, str] | None = None,
    engine: Engine = LOCAL,
) -> JudgeResult:
    """Judgments of the pool pairs plus every gold pair, in query order; see the module docstring.

    `corpus()` yields (line number, Chunk) and is read as a stream (twice for idf weights not in
    the cache): only the texts of judged chunks, of the baseline sample and of p's null and idf
    samples are kept, so memory follows the pool, not the corpus. `checkpoint` names an
    append-only file of finished pairs: a run killed halfway and started again with the same
    inputs and options scores only the pairs it lacks. `names` label the inputs in error
    messages. `engine` runs the model (judgments do not depend on it).
    """
    names = {"corpus": "corpus", "golden": "golden set", "pool": "pool", **(names or {})}
    if options.rescale not in RESCALE_MODES:
        raise UsageError(f"rescale={options.rescale!r}: choose one of {', '.join(RESCALE_MODES)}")
    if options.rescale == "corpus" and not (isinstance(options.baseline_pairs, int) and options.baseline_pairs >= 1):
        raise UsageError(f"baseline_pairs={options.baseline_pairs!r}: rescale='corpus' needs 1 or more unrelated pairs to rescale by")
    info = describe_model(options.model)
    layer, layer_source = choose_layer(info, options.layer)
    window = options.window if options.window is not None else info.max_length  # 0 is refused below, not the default
    if not 16 <= window <= info.max_length:
        raise UsageError(f"window={window!r}: must be between 16 and the model's limit of {info.max_length} tokens")
    overlap = window // 4 if options.overlap is None else options.overlap
    if not 0 <= overlap < window // 2:
        raise UsageError(f"overlap={overlap!r}: must be 0 or more and under half the {window}-token window")
    work = build_pairs(golden, pairs, names)
    unanswered = {g.query_id for g in golden if g.meta.get("no_answer") and not any(a.strip() for a in g.reference_answers)}
    skipped = [q for q in dict.fromkeys(q for q, _, _ in work) if q in unanswered]
    if skipped:  # the import marked them (MS MARCO, SQuAD 2.0 and BEIR have such queries): nothing to judge against
        work = [pair for pair in work if pair[0] not in unanswered]
        if not work:
            raise ValidationError(f"{names['golden']}: no judged query has a reference answer (each is marked no_answer); the "
                                  "judge scores chunks against one: score the runs on the gold qrels, or give answers")
    if not work:  # an empty judgments.jsonl would label nothing and score every run 0
        raise ValidationError(f"{names['pool']}: nothing to judge: the pool holds no pair and {names['golden']} no gold chunk")
    shipped = shipped_baseline(info.name, info.folder, layer, info.num_layers) if options.rescale == "baseline" else None
    if options.rescale == "baseline" and shipped is None:
        raise UsageError(f"bert_score ships no rescaling baseline for {info.name}; use rescale='corpus' (or none)")
    sampling = options.baseline_pairs if options.rescale == "corpus" else 0
    if options.null_sample < 0:
        raise UsageError(f"null_sample={options.null_sample!r}: give 0 (no probability p) or more chunks")
    candidates = max(sampling, options.null_sample, labels.IDF_SAMPLE if options.null_sample else 0)  # in seeded-hash order
    scan = scan_corpus(counted(corpus(), steps, f"reading {names['corpus']}"), {c for _, c, _ in work}, candidates,
                       options.seed, names["corpus"], options.idf)
    require_known(golden, work, set(scan.texts), names)
    gold_notes = placed_gold(golden, scan.places, names)
    answers = reference_answers(golden, {q for q, _, _ in work}, names["golden"])
    baseline_pairs: list[tuple[str, str]] = []
    queries = [g.query_id for g in golden if g.query_id in answers]
    if sampling:
        baseline_pairs = baseline_sample(scan.candidates[:sampling], queries, {(q, c) for q, c, _ in work}, sampling, options.seed)
    null: list[tuple[str, str]] = []  # (query, null chunk) pairs behind p
    if options.null_sample:
        judged: dict[str, set[str]] = defaultdict(set)
        for q, c, _ in work:
            judged[q].add(c)
        null = null_pairs(queries, scan.candidates[: options.null_sample], judged)
    used = {c for _, c, _ in work} | {c for _, c in baseline_pairs} | {c for _, c in null}
    null_start = len(work) + len(baseline_pairs)

    def task(i: int) -> tuple[str, str, str]:
        if i < len(work):
            return ("pair", *work[i][:2])
        return ("baseline", *baseline_pairs[i - len(work)]) if i < null_start else ("null", *null[i - null_start])

    total = null_start + len(null)
    with_gold = {g.query_id: bool(g.gold_chunk_ids) for g in golden}
    features = PoolFeatures(work, with_gold) if options.null_sample else None
    cache = EmbeddingCache(options.cache_dir or default_cache_dir()) if options.use_cache else None
    encoder = TextEncoder(info, layer, window, overlap, cache, options.max_tokens, engine)
    weights, weights_info = encoder.weights(options.idf, lambda: (c.text for _, c in corpus()), scan.digest)
    idf_texts = idf_sample(scan.candidates, scan.texts) if features else []
    idf_key = _texts_digest(idf_texts)
    fingerprint = _digest(encoder.namespace, overlap, weights_info, scan.digest if options.idf else None,
                          _texts_digest(itertools.chain.from_iterable((c, scan.texts[c]) for c in sorted(used))),
                          _digest(*sorted(answers.items())), baseline_pairs,
                          *([options.null_sample, _digest(null), idf_key] if features else []))
    saved = Checkpoint(checkpoint, fingerprint) if checkpoint else None
    width = 5 if features else 3  # P, R, F, and with p the idf-weighted R and the exact-token share
    scores = np.zeros((total, width))
    windows = np.zeros(total, dtype=np.int32)
    done = np.zeros(total, dtype=bool)
    for row in saved.rows() if saved else ():
        i, restored = row.get("i"), _saved_scores(row, width)
        if isinstance(i, int) and 0 <= i < total and not done[i] and restored is not None \
                and task(i) == (row.get("kind"), row.get("query_id"), row.get("chunk_id")) \
                and (features is None or i >= len(work) or features.restore(i, row)):
            scores[i], windows[i], done[i] = restored, row["windows"], True
    todo = np.flatnonzero(~done)
    resumed, scored = total - len(todo), 0
    null_seconds = 0.0

    by_text: dict[str, list[int]] = defaultdict(list)
    for i in todo.tolist():
        by_text[scan.texts[task(i)[2]]].append(i)
    # every judged query's references, resumed ones too: their truncation is counted and warned of as in a fresh run (a
    # resume recorded 0); they come from the embedding cache where it is kept
    reference_texts = sorted({a for i in range(total) for a in answers[task(i)[1]]})
    with contextlib.ExitStack() as stack:
        advance = stack.enter_context((steps if len(todo) else no_progress)("judging pairs", len(todo)))
        # the plain table is in the cache beside any idf table, so a cached run still loads no tokenizer or torch
        plain = weights if not options.idf else encoder.weights(False, lambda: (), "")[0]
        scorer = PairScorer(encoder, weights, answers, advance, plain) if features is None else FeatureScorer(
            encoder, weights, answers, advance, plain, encoder.weights(True, lambda: idf_texts, idf_key)[0], len(work))
        if saved:
            stack.callback(saved.close)
        if cache:
            stack.callback(cache.close)
        scorer.load_references(reference_texts)
        results: Iterable[tuple[list[int], np.ndarray, int, dict]]
        if isinstance(scorer, FeatureScorer):
            results = scorer.score_features(by_text, lambda i: task(i)[1])
        else:
            results = ((group, best, count, {}) for group, best, count in scorer.score(by_text, lambda i: task(i)[1]))
        clock = time.perf_counter()
        for group, best, count, extra in results:
            scores[group], windows[group] = best, count
            scored += len(group)
            now = time.perf_counter()
            if group[0] >= null_start:  # a text only the null sample needs: its encoding and matching are p's cost
                null_seconds += now - clock
            clock = now
            if extra:  # only a FeatureScorer fills it, and only when features are wanted
                assert features is not None
                for i, values in extra.items():
                    features.add(i, *values)
            if saved:
                saved.append({"i": i, **dict(zip(("kind", "query_id", "chunk_id"), task(i))), "scores": pack(row, "<f8"), "windows": count,
                              **(features.row(i, *extra[i]) if features is not None and i in extra else {})}
                             for i, row in zip(group, best))

    baseline: np.ndarray | None = None
    baseline_info: dict[str, object] = {}  # how the baseline was made, when there is one
    if shipped is not None:
        baseline, baseline_info = shipped[0], {"source": shipped[1], "layer": layer}
    elif sampling:
        baseline = scores[len(work):null_start, :3].mean(axis=0)
        baseline_info = {"source": "corpus", "pairs": len(baseline_pairs), "seed": options.seed}
    final = rescale(scores[: len(work), :3], baseline) if baseline is not None else scores[: len(work), :3]
    chance = table = None
    if features is not None:  # from the raw scores: p does not depend on --rescale
        table, chance = features.compute(scores[: len(work)], scores[null_start:], [q for q, _ in null])
    windowed = len({work[i][1] for i in np.flatnonzero(windows[: len(work)] > 1).tolist()})
    params = {
        "model": info.name, "model_folder": str(info.folder), "model_fingerprint": info.fingerprint,
        "layer": layer, "layer_source": layer_source, **weights_info,
        "rescale": options.rescale,
        "baseline": None if baseline is None else {**dict(zip("PRF", (float(v) for v in baseline))), **baseline_info},
        "windows": {"tokens": window, "model_limit": info.max_length, "overlap": overlap, "windowed_chunks": windowed,
                    "rule": "each window scored as a candidate; best window kept for P, R, F separately"},
        "multiple_references": "best reference kept for P, R, F separately (as bert_score)",
        "truncated_references": scorer.truncated,
        "pairs": len(work), "cache": str(cache.path) if cache else None,
        "options": asdict(options), "engine": engine.params(), "precision": getattr(engine, "precision", "exact"),
    }
    probability_notes: list[str] = []
    if features is not None and chance is not None:
        null_texts = {scan.texts[c] for _, c in null} - {scan.texts[c] for c in {c for _, c, _ in work} | {c for _, c in baseline_pairs}}
        assert table is not None
        params["probability"] = probability_params(options, info.name, layer, window, with_gold, queries, null, chance, table,
                                                   len(null_texts), null_seconds, features.peak, len(idf_texts))
        probability_notes = probability_warnings(params["probability"], info, layer, options, window)
    result = JudgeResult(Judgments(work, final, chance, table), params, encoder.encoded, encoder.cached, windowed, scorer.truncated,
                         resumed, scored, len(null))
    result.warnings.extend(gold_notes + probability_notes)
    if skipped:
        result.params["unanswered"] = {"queries": len(skipped), "first": skipped[:5]}
        result.warnings.append(f"{quantity(len(skipped), 'query', 'have')} no reference answer "
                               "(marked no_answer by the import, e.g. "
                               f"{skipped[0]!r}): their pool pairs are not judged, so the derived qrels leave them out")
    if saved and saved.stale > 0:
        result.warnings.append(f"{checkpoint} held {quantity(saved.stale, 'pair')} judged from other inputs or "
                               "settings (model, layer, idf, window, null sample, the texts): none was reused; this run's pairs "
                               "replaced them")
    questions = {item.query_id: " ".join(item.query.casefold().split()) for item in golden}
    echoed = sum(any(" ".join(a.casefold().split()) == questions.get(q) for a in refs) for q, refs in answers.items())
    answer_notes: list[str] = []  # kept in the manifest too, so that `label` and the report repeat them: they bear on every label
    if echoed:
        answer_notes.append(f"{echoed} of {quantity(len(answers), 'query')} {agreeing(echoed, 'have')} their question as the "
                            "reference answer: BERTScore "
                            "measures how far a chunk restates the reference, and a question is not restated by what answers "
                            "it (on Cranfield such labels carried no signal, docs/judge.md); give real answers")
    answer_notes += short_answer_warnings(answers)
    result.warnings.extend(answer_notes)
    result.params["answer_warnings"] = answer_notes
    if scorer.truncated:
        result.warnings.append(f"{quantity(scorer.truncated, 'reference answer', 'exceed')} the {window}-token window "
                               f"and {agreeing(scorer.truncated, 'were')} truncated to it (as bert_score does at the model's limit)")
    return result


SHORT_ANSWER = (2, 0.1)  # answers of at most 2 words, on at least a tenth of the queries


def short_answer_warnings(answers: Mapping[str, Sequence[str]]) -> list[str]:
    """Answers too short to match ('Yes', '42'): BERTScore matches a chunk's words to the answer's, and a word or two is
    matched by many chunks alike. Labelled at the default, such queries agreed far less with the gold (bench/answer_length.py,
    docs/judge.md "Short answers"), which the user mends by writing the answer out, not by a cut."""
    words, share = SHORT_ANSWER
    short = [q for q, refs in answers.items() if refs and max(count_words(a) for a in refs) <= words]  # '是的' is two
    if not short or len(short) < share * len(answers):
        return []
    return [f"{len(short)} of {quantity(len(answers), 'query')} {agreeing(len(short), 'have')} reference answers of {words} words "
            f"or fewer (e.g. {answers[short[0]][0]!r} for {short[0]!r}): BERTScore matches a chunk's words to the answer's, and a "
            "word or two is matched by many chunks alike, so their labels agree much less with people (kappa against the gold, "
            "MS MARCO / COVID-QA: one word 0.35 / 0.44, two 0.50 / 0.70, six or more 0.82 / 0.93; docs/judge.md); write each "
            "as a sentence that states the answer ('Yes, aspirin lowers the risk of stroke')"]


def probability_params(options: JudgeOptions, model: str, layer: int, window: int, with_gold: Mapping[str, bool],
                       queries: Sequence[str], null: Sequence[tuple[str, str]], chance: np.ndarray, table: np.ndarray,
                       null_texts: int, null_seconds: float, peak: int, idf_chunks: int) -> dict[str, Any]:
    """The manifest's record of p: the null and idf samples, what the null cost, the pairs beyond the fitted range (of those
    with p), the pairs without p (of them, those whose query has no null chunk), and the model."""
    scored = np.isfinite(chance)
    without_null = int(np.sum(np.isnan(table[:, labels.FEATURES.index("R_idf_max")])))
    return {
        "rule": "semrel.judging.labels: p = sigmoid(intercept + b . features), coefficients by with_gold",
        "null_sample": {"size": options.null_sample, "seed": options.seed, "chunks": len({c for _, c in null}),
                        "pairs": len(null), "texts_only_for_null": null_texts, "seconds_for_null_texts": round(null_seconds, 3),
                        "selection": "non-blank chunks with the smallest blake2b hash of seed\\0chunk_id, "
                                     "minus each query's judged chunks"},
        "idf_sample": {"size": labels.IDF_SAMPLE, "seed": options.seed, "chunks": idf_chunks,
                       "selection": "the same order, first chunks; idf = log((N+1)/(df+1)) as bert_score's"},
        "queries": len(queries), "queries_with_gold": sum(bool(with_gold.get(q)) for q in queries),
        "pairs_without_p": int(np.sum(~scored)), "pairs_without_null": without_null, "token_rows_held_at_most": peak,
        "beyond_fitted_range": labels.beyond_range(labels.outside_range(table[scored, :-1], table[scored, -1] > 0)),
        "fitted_settings": {"model": "all-MiniLM-L6-v2", "layer": 6, "idf": False, "window": 512},
        "settings": {"model": model, "layer": layer, "idf": options.idf, "window": window},
        "model": labels.model_params(),
    }


def _is_shipped(info: ModelInfo) -> bool:
    """Whether the model is the one p was fitted with: by name, or by its files' bytes (a copy of it elsewhere)."""
    if info.name == DEFAULT_MODEL:
        return True
    try:
        return info.fingerprint == describe_model(None).fingerprint
    except SemrelError:  # the default model's package is not installed
        return False


def probability_warnings(record: Mapping[str, Any], info: ModelInfo, layer: int, options: JudgeOptions, window: int) -> list[str]:
    """Where p rests on an assumption the data may not meet, or was fitted under other settings."""
    model, limit = info.name, info.max_length
    notes = []
    if record["queries"] and not record["queries_with_gold"]:
        notes.append("the golden set lists no gold chunks: p then rests on each query's best judged chunk being relevant, "
                     "which retrieval alone does not ensure; review about 100 pairs and run `semrel calibrate` before trusting "
                     "the labels (docs/judge.md, 'Label quality')")
    if n := record["pairs_without_null"]:
        notes.append(f"{quantity(n, 'pair', 'have')} no probability p: {'its query has' if n == 1 else 'their queries have'} no corpus "
                     "chunk outside their pool to compare with (the corpus is too small); `semrel label` labels such judgments "
                     "on R instead")
    if n := record["pairs_without_p"] - record["pairs_without_null"]:
        notes.append(f"{quantity(n, 'pair', 'have')} no probability p: a feature of {'its' if n == 1 else 'their'} query is no "
                     "number, as for a reference answer of no token the model reads (only zero-width or control characters); "
                     "fix the answer, or `semrel label` labels such judgments on R instead")
    beyond = labels.beyond_range_note(record["beyond_fitted_range"], "review about 100 pairs and run `semrel calibrate` on them")
    notes += [beyond] if beyond else []
    if not _is_shipped(info) or layer != 6 or options.idf or window != min(512, limit):
        notes.append(f"p's coefficients were fitted for all-MiniLM-L6-v2, layer 6, without --idf, {min(512, limit)}-token windows, "
                     f"not for {model}, layer {layer}{', idf' if options.idf else ''}, {window}-token windows; they held with "
                     "all-mpnet-base-v2, with layer 4 and with --idf (kappa within 0.02 on three development sets; docs/judge.md, "
                     "'Another judge model'), but check them on your data: review about 100 pairs and run `semrel calibrate` on them")
    return notes


@guarded
def judge(
    corpus: str | os.PathLike | Iterable[Chunk],
    golden: str | os.PathLike | Iterable[GoldenItem],
    pool: str | os.PathLike | Iterable[Pair] | None = None,
    output: str | os.PathLike | None = None,
    *,
    model: str | None = None,
    layer: int | None = None,
    idf: bool = False,
    rescale: str = "none",
    window: int | None = None,
    overlap: int | None = None,
    baseline_pairs: int = 500,
    seed: int = 0,
    null_sample: int = labels.NULL_SAMPLE,
    cache: str | os.PathLike | bool | None = None,
    steps: Steps = no_progress,
    engine: Engine | str = LOCAL,
    sample: QuerySample | int = ALL_QUERIES,
    warn: Callable[[str], None] | None = None,
) -> JudgeResult:
    """Score chunks against reference answers with BERTScore (the Python side of `semrel judge`).

    Inputs are file paths or records (Chunk, GoldenItem, (query_id, chunk_id, sources) tuples);
    without a pool only the gold pairs are judged. A corpus file is streamed, never loaded
    whole. With `output`, judgments.jsonl is written atomically (row by row) with its manifest,
    and an interrupted run resumes from `<output>.partial`.
    `cache`: a folder, None for the user cache dir, False for none. `engine`: where the model runs
    (a name, "local" or "ray", or engines.make_engine(...)); judgments are the same on every engine. `sample`: judge only those
    queries of the golden set (pool pairs of the others are left out). `warn` receives each warning
    (also kept in the result's `warnings`); without it they are Python warnings. A file given as
    `output` that is also read is refused, as in the CLI.
    """
    engine = as_engine(engine)
    check_warn(warn)
    check_flags(idf=idf)
    check_kind("cache", cache, (str, os.PathLike, bool), "a folder, or False for no cache")
    check_kind("model", model, (str, os.PathLike), "a model name or folder")  # else "expected str, bytes or os.PathLike object"
    check_kind("output", output, (str, os.PathLike), "a file path")
    chunks: Callable[[], Iterable[tuple[int, Chunk]]]
    if isinstance(corpus, (str, os.PathLike)) and str(corpus) != STDIO:
        chunks, corpus_name = (lambda: iter_corpus(corpus)), str(corpus)
    else:  # records, or stdin: read once, kept for the second pass of --idf
        if isinstance(corpus, (str, os.PathLike)):
            records, corpus_name = list(iter_corpus(corpus)), str(corpus)
        else:
            records, corpus_name = list(enumerate(corpus_records(corpus), start=1)), "corpus"
        chunks = records.__iter__
    items, golden_file = given_golden(golden)
    pairs, pool_file = given_pool(pool or ())
    sample = QuerySample.of(sample)
    if sample.active:
        every = {item.query_id for item in items}
        items = sample.apply(items)
        kept = {item.query_id for item in items}
        pairs = [pair for pair in pairs if pair[0] in kept or pair[0] not in every]  # an unknown query is still an error
    options = JudgeOptions(
        model=None if model is None else str(model), layer=layer, idf=idf, rescale=rescale, window=window, overlap=overlap,
        baseline_pairs=baseline_pairs, seed=seed,
        null_sample=null_sample, cache_dir=None if cache in (None, True, False) else str(cache), use_cache=cache is not False,
    )
    partial = f"{output}.partial" if output is not None and str(output) != STDIO else None
    if isinstance(corpus, (str, os.PathLike)):
        note_input(corpus)  # streamed later: an output over it (or its manifest) is refused now, before the work and its checkpoint
    check_outputs(output)
    if partial:  # its folder is made now, as every output's is, not found missing by the checkpoint after the model loads
        prepare_output(str(output))
    result = judge_pairs(chunks, items, pairs, options, partial, steps,
                         {"corpus": corpus_name, "golden": str(golden_file or "golden set"), "pool": str(pool_file or "pool")}, engine)
    if sample.active:
        result.params["queries"] = {**(sample.describe() or {}), "kept": len(items)}
    if output is not None:
        write_judged(result, output, [v for v in (corpus, golden, pool) if isinstance(v, (str, os.PathLike))], partial, steps)
    tell(result.warnings, warn, stacklevel=3)  # past @guarded's wrapper, to the caller's line
    return result


def write_judged(result: JudgeResult, output: str | os.PathLike, inputs: Sequence[str | os.PathLike], partial: str | None,
                 steps: Steps = no_progress) -> None:
    """judgments.jsonl and its manifest, as one unit (the checkpoint `partial` goes with them), under the lock `semrel
    fill` holds from its check to its rename (files.rewrite_lock): a fill of the old file renaming just after this write
    put the old rows and its holes back over the new judgments."""
    with rewrite_lock(output, steps) if str(output) != STDIO else contextlib.nullcontext(), \
            outputs_with_manifests([output], superseded=[partial] if partial else []) as staged:
        write_judgments(result.judgments, staged[output])
        write_manifest(output, inputs=inputs, params=result.params, rows=len(result.judgments), staged=staged)
