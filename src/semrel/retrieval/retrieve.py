"""First-stage retrieval over a chunk corpus: BM25, dense, hybrid (RRF) and dense reranking.

Every method yields, per query, chunk positions with scores that are strictly decreasing, so
the written TREC run ranks exactly as computed: ties are broken by corpus order (the chunk
earlier in corpus.jsonl ranks higher) and then nudged apart by one float step.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Collection, Iterable, Mapping, Sequence

import numpy as np

from ..encoding.engines import LOCAL, Engine
from ..encoding.models import DEFAULT_MODEL
from ..encoding.sentences import sentence_embeddings
from ..errors import UsageError, ValidationError
from ..evaluation.metrics import refuse_repeats
from ..formats.corpus import queries_sha256, read_corpus, read_golden
from ..formats.files import STDIO, display_name, file_digest
from ..formats.manifest import outputs_with_manifests, write_manifest
from ..formats.trec import ranked, read_run, run_name, write_run
from ..progress import Steps, no_progress
from ..records import ALL_QUERIES, Chunk, GoldenItem, QuerySample, Run
from ..terminal import agreeing, quantity
from .corpus import Corpus
from .fusion import RRF_K, FusionSpec, Ranking, fuse_rankings
from .lexical import Analyzer, Bm25Settings, DiskBm25, LexicalStore

if TYPE_CHECKING:
    from ..encoding.vectors import VectorStore

METHODS = ("bm25", "dense", "hybrid")
RERANKERS = ("dense",)
BM25_PARAMS: dict[str, Any] = {"k1": 1.5, "b": 0.75, "method": "lucene", "stopwords": "en", "stemmer": "english"}
"""The defaults; `retrieve --bm25-*` and `[bm25]` in `semrel run` change them (bm25_params)."""
BM25_METHODS = ("lucene", "robertson", "atire", "bm25l", "bm25+")
BM25_STOPWORDS = ("en", "en_plus", "de", "nl", "fr", "es", "pt", "it", "ru", "sv", "no", "zh", "tr", "ko", "da")
SCORE_BUDGET_BYTES = 256 << 20
ROW_BLOCK = 65536
"""Chunk vectors scored at a time: a 1M-chunk store is scanned in blocks, never loaded whole."""

Hits = list[tuple[np.ndarray, np.ndarray]]
"""Per query: (chunk positions, scores), best first, scores strictly decreasing."""


def best_k(positions: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The best `k` by score, ties to the earlier corpus position (float64 scores, not yet nudged apart)."""
    positions = np.asarray(positions, dtype=np.int64)
    scores = np.asarray(scores, dtype=np.float64)
    order = np.lexsort((positions, -scores))[:k]
    return positions[order], scores[order]


def strictly_ranked(positions: np.ndarray, scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The best `k` by score, ties to the earlier corpus position, scores made strictly decreasing."""
    positions, scores = best_k(positions, scores, k)
    for i in range(1, len(scores)):
        if scores[i] >= scores[i - 1]:
            scores[i] = np.nextafter(scores[i - 1], -np.inf)
    return positions, scores


def contenders(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of every score at least the k-th best (all ties with it kept), in O(n)."""
    if k >= len(scores):
        return np.arange(len(scores))
    kth = np.partition(scores, len(scores) - k)[len(scores) - k]
    return np.flatnonzero(scores >= kth)


def search_vectors(
    queries: np.ndarray, vectors: np.ndarray, k: int, rows: np.ndarray | None = None, block: int = ROW_BLOCK
) -> Hits:
    """Exact dot-product top-k per query over corpus positions 0..n-1, whose vector is `vectors[rows[p]]`
    (`vectors[p]` when `rows` is None), scanning `block` positions at a time with a running top-k per
    query: memory stays bounded for any corpus (`vectors` may be a memory map) and the hits equal
    the top k of each query's full score row."""
    n = len(rows) if rows is not None else len(vectors)
    in_place = rows is None or np.array_equal(rows, np.arange(n))
    per_pass = max(1, SCORE_BUDGET_BYTES // (4 * max(1, min(block, n))))
    best = [(np.zeros(0, dtype=np.int64), np.zeros(0))] * len(queries)
    for start in range(0, n, block):
        end = min(start + block, n)  # a store holds other corpora's rows past this one's
        part = np.asarray(vectors[start:end] if rows is None or in_place else vectors[rows[start:end]])
        for first in range(0, len(queries), per_pass):
            for i, row in enumerate(queries[first : first + per_pass] @ part.T, start=first):
                keep = contenders(row, k)
                best[i] = best_k(np.concatenate([best[i][0], keep + start]), np.concatenate([best[i][1], row[keep]]), k)
    return [strictly_ranked(positions, scores, k) for positions, scores in best]


def idle_setting(method: str | None, rerank: str | None, given: Iterable[str]) -> tuple[str, str] | None:
    """The first of the settings `given` ("model", "bm25_k1", ...) that would change nothing here, and whose it
    is: each was once ignored in silence. `method` None is a first stage made already."""
    for name in given:
        if name == "model" and method == "bm25" and rerank is None:
            return name, "the dense encoder"
        if name.startswith("bm25_") and method not in ("bm25", "hybrid"):
            return name, "BM25's"
    return None


def bm25_params(k1: float | None = None, b: float | None = None, method: str | None = None, stemmer: str | None = None,
                stopwords: str | None = None) -> dict[str, Any]:
    """BM25_PARAMS with the given values over them, checked. `stemmer`: a PyStemmer algorithm
    (english = Snowball English, porter = Porter's original) or none; `stopwords`: a bm25s list
    (en, de, fr, ...), none, or a file of one word per line (recorded with its sha256)."""
    params = dict(BM25_PARAMS)
    given = {"k1": k1, "b": b, "method": method, "stemmer": stemmer, "stopwords": stopwords}
    params.update({key: value for key, value in given.items() if value is not None})
    problem = bm25_problem(params)
    if problem:
        key, what = problem
        raise UsageError(f"bm25_{key}={params[key]!r}: {what}")
    words = params["stopwords"]
    if stopwords_file(words):
        if not os.path.isfile(words):
            raise UsageError(f"bm25_stopwords={words!r}: no such file; give none, a list name ({', '.join(BM25_STOPWORDS)}) or a "
                             "file of words")
        params["stopwords"] = {"file": words, "sha256": file_digest(words)["sha256"]}
    return params


def stopwords_file(words: Any) -> bool:
    """Whether a stopwords value names a file of words (read, so an input of what uses it), not a bm25s list or none."""
    return isinstance(words, str) and words not in (*BM25_STOPWORDS, "none")


def bm25_problem(params: Mapping[str, Any]) -> tuple[str, str] | None:
    """(key, what to give) for the first value of k1, b, method and stemmer that BM25 cannot take;
    None when all can (nan and inf included: a k1 of nan gave every query an empty run)."""
    import Stemmer

    k1, b = params.get("k1"), params.get("b")
    if k1 is not None and not (math.isfinite(k1) and k1 >= 0):
        return "k1", "give a finite number, 0 or more"
    if b is not None and not 0 <= b <= 1:
        return "b", "give a number from 0 to 1"
    if params.get("method") is not None and params["method"] not in BM25_METHODS:
        return "method", f"choose one of {', '.join(BM25_METHODS)}"
    if params.get("stemmer") not in (None, "none") and params["stemmer"] not in Stemmer.algorithms():
        return "stemmer", f"none or a PyStemmer algorithm ({', '.join(Stemmer.algorithms())})"
    return None


class Bm25Index:
    """BM25 over the corpus's texts, indexed in memory (bm25s) with `params` (bm25_params; default BM25_PARAMS:
    Lucene variant, English stopwords, Snowball English stemmer). Texts are made terms as the on-disk index makes
    them (lexical.Analyzer: bm25s' tokens, CJK ones as bigrams), and bm25s indexes and scores those terms."""

    def __init__(self, corpus: Corpus, params: Mapping[str, Any] = BM25_PARAMS):
        import bm25s

        self.analyzer = Analyzer(Bm25Settings.of(params))
        self._size = len(corpus)
        self._index = bm25s.BM25(k1=params["k1"], b=params["b"], method=params["method"])
        self._index.index([self.analyzer.terms(t) for t in corpus.texts(np.arange(len(corpus)))], show_progress=False)

    def search(self, queries: Sequence[str], k: int) -> Hits:
        """Top-k per query; chunks scoring 0 (no query word) are left out, so a run may hold fewer."""
        rows = []
        for query in queries:
            ids = self._index.get_tokens_ids(self.analyzer.terms(query))
            rows.append(self._index.get_scores_from_ids(ids) if ids else np.zeros(self._size, dtype=np.float32))
        return bm25_hits(rows, k)


def bm25_hits(rows: Iterable[np.ndarray], k: int) -> Hits:
    """Top-k of each query's BM25 score row, chunks scoring 0 (no query word) left out."""
    hits: Hits = []
    for scores in rows:
        matched = np.flatnonzero(scores > 0)  # ranking only these is top_k of the whole row, zeros dropped
        keep = contenders(scores[matched], k)
        hits.append(strictly_ranked(matched[keep], scores[matched[keep]], k))
    return hits


class StoredBm25:
    """BM25 over an on-disk index (lexical.DiskBm25): the same hits as Bm25Index over the same chunks."""

    def __init__(self, index: DiskBm25, steps: Steps = no_progress):
        self.index, self.steps = index, steps

    def search(self, queries: Sequence[str], k: int) -> Hits:
        with self.steps("bm25: queries", len(queries)) as advance:
            hits: Hits = []
            for query in queries:
                hits += bm25_hits([self.index.scores(query)], k)
                advance(1)
        return hits


def embed(texts: Sequence[str], label: str, model: str | None, steps: Steps, engine: Engine = LOCAL) -> np.ndarray:
    """Sentence embeddings of `texts`, reporting progress under `label`; `engine` runs the model."""
    with steps(label, len(texts)) as advance:
        return sentence_embeddings(list(texts), model, advance, engine)


def chunk_vectors(
    corpus: Corpus, positions: np.ndarray, label: str, model: str | None, steps: Steps, engine: Engine,
    store: VectorStore | None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """(vectors, row of each of the ascending `positions`): from the vector store, which is asked for the texts
    only of the chunks it lacks, or (no store) encoded here and held in memory, row i for position i (rows None)."""
    if store is None:
        return embed(corpus.texts(positions), label, model, steps, engine), None
    rows = store.rows_for(corpus.keys[positions], lambda at: corpus.iter_texts(positions[at]), label, steps, engine)
    return store.vectors(), rows


class DenseIndex:
    """Normalised chunk embeddings (in memory, or memory-mapped from a VectorStore); search is exact
    cosine top-k, a block of chunks and of queries at a time (search_vectors)."""

    def __init__(self, corpus: Corpus, model: str | None = None, steps: Steps = no_progress,
                 engine: Engine = LOCAL, store: VectorStore | None = None):
        self.model, self.steps, self.engine = model, steps, engine
        positions = np.arange(len(corpus))
        self._vectors, self._rows = chunk_vectors(corpus, positions, "encoding chunks", model, steps, engine, store)

    def search(self, queries: Sequence[str], k: int, steps: Steps | None = None) -> Hits:
        query_vectors = embed(queries, "encoding queries", self.model, steps or self.steps, self.engine)
        return search_vectors(query_vectors, self._vectors, k, self._rows)


def fuse(rankings: Sequence[Hits], k: int, rrf_k: int = RRF_K, spec: FusionSpec | None = None) -> Hits:
    """Fused hits (fusion.py; default reciprocal rank fusion: a chunk scores sum(1 / (rrf_k + rank)) over
    the rankings that hold it), the best `k` per query, ties to the earlier corpus position."""
    spec = spec or FusionSpec("rrf", rrf_k=rrf_k)
    queries = len(rankings[0]) if rankings else 0
    arrays = []
    for hits in rankings:
        lengths = np.array([len(positions) for positions, _ in hits], dtype=np.int64)
        query = np.repeat(np.arange(queries, dtype=np.int64), lengths)
        positions = np.concatenate([p for p, _ in hits]).astype(np.int64) if queries else np.zeros(0, dtype=np.int64)
        scores = np.concatenate([s for _, s in hits]).astype(np.float64) if queries else np.zeros(0)
        arrays.append(Ranking(query, positions, np.arange(len(query)) - np.repeat(np.cumsum(lengths) - lengths, lengths), scores))
    documents = 1 + max((int(r.doc.max()) for r in arrays if len(r.doc)), default=0)
    query, position, score = fuse_rankings(arrays, spec, documents)
    bounds = np.searchsorted(query, np.arange(queries + 1))
    return [strictly_ranked(position[a:b], score[a:b], k) for a, b in zip(bounds[:-1], bounds[1:])]


def rerank_hits(
    first: Hits, corpus: Corpus, queries: Sequence[str], depth: int, model: str | None = None,
    steps: Steps = no_progress, engine: Engine = LOCAL, store: VectorStore | None = None,
) -> Hits:
    """Order each query's top-`depth` first-stage chunks by dense cosine; only those chunks are encoded (and their
    texts read only where the store lacks them)."""
    candidates = [positions[:depth] for positions, _ in first]
    needed = np.unique(np.concatenate(candidates)) if candidates else np.zeros(0, dtype=np.int64)
    vectors, stored = chunk_vectors(corpus, needed, "encoding candidates", model, steps, engine, store)
    query_vectors = embed(queries, "encoding queries", model, steps, engine)
    rows = {int(p): r for r, p in zip(stored if stored is not None else range(len(needed)), needed)}
    reranked: Hits = []
    for query_vector, positions in zip(query_vectors, candidates):
        scores = vectors[[rows[int(p)] for p in positions]] @ query_vector if len(positions) else np.zeros(0)
        reranked.append(strictly_ranked(positions, scores, depth))
    return reranked


def hits_from_run(run: Run, query_ids: Sequence[str], corpus_ids: Sequence[str], corpus_path: str,
                  warn: Callable[[str], None] | None = None, golden_ids: Collection[str] | None = None) -> Hits:
    """A run file's ranking as hits for `query_ids`; a chunk id the corpus lacks, or one listed twice for a query, is an
    error, a query it lacks has no hits, and queries the golden set lacks (`golden_ids`, where a sample of it is
    reranked) are left out and reported through `warn`, as `semrel pool` reports them. Positions are looked up for the
    run's chunks only, so memory follows the run, not the corpus."""
    refuse_repeats(run)  # a chunk listed twice was reranked into the run twice, which eval then refused
    ordered = ranked(run)
    docs = ordered.doc_ids.to_pylist()
    named = set(docs)
    position = {chunk_id: p for p, chunk_id in enumerate(corpus_ids) if chunk_id in named}
    by_query: dict[str, list[tuple[int, float]]] = {}
    for q, d, s in zip(ordered.query_ids.to_pylist(), docs, ordered.scores.tolist()):
        if d not in position:
            raise ValidationError(
                f"run {run.name}: chunk {d!r} (query {q!r}) is not in {corpus_path}; "
                "rerank a run made from the same corpus"
            )
        by_query.setdefault(q, []).append((position[d], s))
    unknown = sorted(set(by_query) - set(query_ids if golden_ids is None else golden_ids))  # not those a sample left out
    if not set(by_query) & set(query_ids):  # an empty rerank, written with exit 0, would score 0 everywhere
        found = (f"its queries (e.g. {unknown[0]!r}) are none of the golden set's" if unknown
                 else "none of its queries is sampled" if by_query else "it holds no rows")
        raise ValidationError(f"run {run.name}: nothing to rerank: {found}; rerank a run of the golden set's queries")
    if warn and unknown:
        warn(f"{quantity(len(unknown), 'query')} of run {run.name} {agreeing(len(unknown), 'are')} not in the golden set and "
             f"{agreeing(len(unknown), 'are')} left out (e.g. {unknown[0]!r})")
    empty = (np.zeros(0, dtype=np.int64), np.zeros(0))
    return [
        (np.array([p for p, _ in by_query[q]], dtype=np.int64), np.array([s for _, s in by_query[q]]))
        if q in by_query else empty
        for q in query_ids
    ]


def hits_to_run(hits: Hits, query_ids: Sequence[str], corpus: Corpus, name: str) -> Run:
    rows = [(q, corpus.ids[p], s) for q, (positions, scores) in zip(query_ids, hits) for p, s in zip(positions.tolist(), scores.tolist())]
    return Run.from_columns([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], name)


@dataclass(frozen=True)
class RetrievalSpec:
    """What to retrieve: a first stage (a method, or an existing run) and an optional reranker."""

    method: str | None = "bm25"
    k: int = 100
    rerank: str | None = None
    rerank_depth: int = 100
    first_stage_run: str | None = None
    model: str | None = None
    engine: Engine = field(default=LOCAL, compare=False)  # where the encoder runs; the run does not depend on it
    bm25: Mapping[str, Any] = field(default_factory=lambda: dict(BM25_PARAMS))

    @property
    def dense(self) -> bool:
        """Whether the run needs chunk vectors."""
        return self.method in ("dense", "hybrid") or self.rerank is not None

    def check(self) -> None:
        if self.k <= 0:
            raise UsageError(f"k={self.k}: give a positive number of chunks per query")
        if self.rerank_depth <= 0:
            raise UsageError(f"rerank_depth={self.rerank_depth}: give a positive number")
        if self.first_stage_run and self.method:
            raise UsageError("give --method or --run (a first-stage run to rerank), not both")
        if self.first_stage_run and not self.rerank:
            raise UsageError("--run is the first stage of a rerank; add --rerank dense")
        if not self.first_stage_run and self.method not in METHODS:
            raise UsageError(f"unknown method {self.method!r}; choose one of {', '.join(METHODS)}")
        if self.rerank and self.rerank not in RERANKERS:
            raise UsageError(f"unknown reranker {self.rerank!r}; choose one of {', '.join(RERANKERS)}")

    def params(self) -> dict:
        """The manifest's record of how the run was made."""
        return {
            "method": self.method, "k": self.k, "first_stage_run": self.first_stage_run,
            "rerank": self.rerank, "rerank_depth": self.rerank_depth if self.rerank else None,
            "model": self.model or DEFAULT_MODEL, "bm25": dict(self.bm25), "rrf_k": RRF_K,
            "ties": "corpus order, then scores nudged to be strictly decreasing",
            "engine": self.engine.params(),
        }


def first_stage(
    spec: RetrievalSpec, corpus: Corpus, queries: Sequence[str], k: int, steps: Steps, store: VectorStore | None,
    bm25: DiskBm25 | None = None,
) -> Hits:
    rankings = []
    if spec.method in ("bm25", "hybrid"):
        rankings.append((Bm25Index(corpus, spec.bm25) if bm25 is None else StoredBm25(bm25, steps)).search(queries, k))
    if spec.method in ("dense", "hybrid"):
        rankings.append(DenseIndex(corpus, spec.model, steps, spec.engine, store).search(queries, k))
    return rankings[0] if len(rankings) == 1 else fuse(rankings, k)


def retrieve(
    corpus: Corpus, items: Sequence[GoldenItem], spec: RetrievalSpec, name: str,
    corpus_path: str = "corpus", steps: Steps = no_progress, warn: Callable[[str], None] | None = None,
    store: VectorStore | None = None, bm25: DiskBm25 | None = None, golden_ids: Collection[str] | None = None,
) -> Run:
    """The run of `spec` for the golden set's queries over `corpus` (`items`; `golden_ids`: all of its queries where
    `items` are a sample); `warn` hears of queries left empty.
    Dense vectors come from `store` (encoding only the chunks it lacks), or are encoded in memory;
    BM25 searches `bm25` (an on-disk index of these chunks) when given, else indexes them in memory."""
    spec.check()
    if not len(corpus):
        raise ValidationError(f"{corpus_path}: the corpus has no chunks")
    query_ids, queries = [i.query_id for i in items], [i.query for i in items]
    depth = max(spec.k, spec.rerank_depth) if spec.rerank else spec.k
    if spec.first_stage_run:
        hits = hits_from_run(read_run(spec.first_stage_run), query_ids, corpus.ids, corpus_path, warn, golden_ids)
    else:
        hits = first_stage(spec, corpus, queries, depth, steps, store, bm25)
    if spec.rerank:
        reranked = rerank_hits(hits, corpus, queries, spec.rerank_depth, spec.model, steps, spec.engine, store)
        hits = [(p[: spec.k], s[: spec.k]) for p, s in reranked]
    warn_empty(hits, query_ids, warn)
    return hits_to_run(hits, query_ids, corpus, name)


def warn_blank(items: Sequence[GoldenItem], golden_name: str, warn: Callable[[str], None] | None) -> None:
    """One warning, before any method runs, naming the queries that are empty or only spaces: bm25 finds no chunk
    for them and dense ranks chunks against an empty text, without a word; `golden validate` calls them errors."""
    blank = [item.query_id for item in items if item.blank]
    if warn and blank:
        shown = ", ".join(repr(q) for q in blank[:3]) + (", ..." if len(blank) > 3 else "")
        them, their = ("them", "their") if len(blank) > 1 else ("it", "its")
        warn(f"{golden_name}: {len(blank):,} of {quantity(len(items), 'query')} {agreeing(len(blank), 'are')} empty or blank ({shown}): "
             f"there is nothing to retrieve for {them} (bm25 finds no chunk, dense ranks chunks against empty text); give {them} "
             f"{their} text (`semrel golden validate` lists {them})")


def warn_empty(hits: Hits, query_ids: Sequence[str], warn: Callable[[str], None] | None) -> None:
    empty = [q for q, (positions, _) in zip(query_ids, hits) if not len(positions)]
    if warn and empty:
        warn(f"{len(empty):,} of {quantity(len(query_ids), 'query')} got no chunks (e.g. {empty[0]!r}); they will score 0")


def check_gold_listed(items: Sequence[GoldenItem], holds: Callable[[Sequence[str]], np.ndarray], golden_name: str,
                      corpus_name: str, warn: Callable[[str], None] | None) -> None:
    """Refuse a golden set none of whose gold chunks the corpus lists (one made for another corpus: its runs could only
    score 0, and `judge` refuses the pair), before anything is encoded; warn where some are missing (another chunking
    shares the `#0` ids), since no run over this corpus can find them. `holds(ids)`: which ids the corpus lists."""
    gold = sorted({chunk_id for item in items for chunk_id in item.gold_chunk_ids})
    if not gold:
        return
    missing = [chunk_id for chunk_id, listed in zip(gold, holds(gold)) if not listed]
    if not missing:
        return
    where = (f"is it the corpus {golden_name} was made for (the same documents, chunked with the same --size and --overlap)? "
             f"`semrel golden validate {golden_name} --corpus {corpus_name}` lists them")
    if len(missing) == len(gold):
        raise ValidationError(f"{golden_name}: none of its {quantity(len(gold), 'gold chunk id')} is in {corpus_name} "
                              f"(e.g. {gold[0]!r}): a run over it would score 0; {where}")
    if warn:
        warn(f"{golden_name}: {len(missing):,} of its {quantity(len(gold), 'gold chunk id')} {agreeing(len(missing), 'are')} not in "
             f"{corpus_name} (e.g. {missing[0]!r}): no run over it can find them; {where}")


def retrieve_indexed(index: DiskBm25, items: Sequence[GoldenItem], k: int, name: str, steps: Steps = no_progress,
                     warn: Callable[[str], None] | None = None) -> Run:
    """The BM25 run over an on-disk index alone: the corpus is never read into memory, chunk ids come from the index."""
    query_ids = [i.query_id for i in items]
    hits = StoredBm25(index, steps).search([i.query for i in items], k)
    warn_empty(hits, query_ids, warn)
    positions = np.unique(np.concatenate([p for p, _ in hits])) if hits else np.zeros(0, dtype=np.int64)
    ids = dict(zip(positions.tolist(), index.chunk_ids(positions)))
    rows = [(q, ids[p], s) for q, (found, scores) in zip(query_ids, hits) for p, s in zip(found.tolist(), scores.tolist())]
    return Run.from_columns([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows], name)


def retrieval_stores(
    spec: RetrievalSpec, corpus: str | os.PathLike | Sequence[Chunk], cache: str | os.PathLike | None = None, use_cache: bool = True,
) -> tuple[VectorStore | None, LexicalStore | None]:
    """The persisted indexes a retrieval uses, under `cache` (default: the user cache dir): the dense
    vector store when the run needs chunk vectors, the on-disk BM25 indexes for bm25 and hybrid over a
    corpus file (not stdin, not chunks in memory); neither without `use_cache`. `semrel retrieve` and
    `semrel.retrieve` both open them here."""
    if not use_cache:
        return None, None
    from ..encoding.cache import default_cache_dir
    from ..encoding.vectors import VectorStore

    folder = cache or default_cache_dir()
    store = VectorStore(folder, spec.model, spec.engine.precision) if spec.dense else None
    lexical = None
    if spec.method in ("bm25", "hybrid") and isinstance(corpus, (str, os.PathLike)) and str(corpus) != STDIO:
        lexical = LexicalStore(folder, spec.bm25)
    return store, lexical


def corpus_file(path: str | os.PathLike, spec: RetrievalSpec, store: VectorStore | None, bm25: DiskBm25 | None) -> Corpus:
    """The corpus file streamed for its ids and text keys (Corpus.read), or read whole where the run reads every
    text anyway (BM25 indexed in memory, chunks encoded without a store) or cannot read it twice (stdin)."""
    every_text = (spec.method in ("bm25", "hybrid") and bm25 is None) or (spec.method in ("dense", "hybrid") and store is None)
    return Corpus.of_chunks(read_corpus(path)) if every_text or str(path) == STDIO else Corpus.read(path)


def retrieve_files(
    corpus: str | os.PathLike | Sequence[Chunk], golden: str | os.PathLike | Sequence[GoldenItem], spec: RetrievalSpec,
    output: str | os.PathLike | None, steps: Steps = no_progress, warn: Callable[[str], None] | None = None,
    store: VectorStore | None = None, sample: QuerySample = ALL_QUERIES, lexical: LexicalStore | None = None,
    name: str | None = None,
) -> Run:
    """Retrieve for the queries of the golden set (those of `sample`) and, with `output`, write the run
    there with its manifest. The run is named `name`, else after `output`, else after the method.

    `corpus` and `golden` are files, or records already read (checked by the caller; only files are the
    manifest's inputs). With `lexical`, BM25 (bm25 and hybrid) searches the corpus file's on-disk index,
    built or grown as needed; a plain bm25 run then never holds the corpus in memory, and with the vector
    store too a run holds the chunks' ids and text keys, not their texts (corpus_file). stdin is indexed
    in memory."""
    spec.check()
    name = name or (run_name(output) if output is not None and str(output) != STDIO else spec.method or "rerank")
    every = read_golden(golden) if isinstance(golden, (str, os.PathLike)) else golden
    items = sample.apply(every)
    golden_ids = {i.query_id for i in every} if sample.active else None
    warn_blank(items, display_name(golden) if isinstance(golden, (str, os.PathLike)) else "golden", warn)
    path = corpus if isinstance(corpus, (str, os.PathLike)) else None
    bm25 = None
    if lexical is not None and spec.method in ("bm25", "hybrid") and path is not None and str(path) != STDIO:
        bm25 = lexical.index(path, steps)
    names = (display_name(golden) if isinstance(golden, (str, os.PathLike)) else "golden",
             display_name(corpus) if isinstance(corpus, (str, os.PathLike)) else "corpus")
    if bm25 is not None and spec.method == "bm25" and not spec.rerank:
        check_gold_listed(items, bm25.holds, *names, warn)
        run = retrieve_indexed(bm25, items, spec.k, name, steps, warn)
    else:
        chunks = corpus_file(corpus, spec, store, bm25) if isinstance(corpus, (str, os.PathLike)) else Corpus.of_chunks(corpus)
        check_gold_listed(items, chunks.holds, *names, warn)
        run = retrieve(chunks, items, spec, name, str(corpus) if path is not None else "corpus", steps, warn, store, bm25, golden_ids)
    if output is None:
        return run
    params = spec.params()
    if sample.active:
        params["queries"] = {**(sample.describe() or {}), "kept": len(items)}
    if store is not None:
        params["vector_store"] = {"folder": str(store.folder), "encoded": store.encoded, "reused": store.reused,
                                  "repeated": store.repeated}
    if bm25 is not None:
        params["bm25_index"] = bm25.info()
    inputs = [p for p in (corpus, golden, spec.first_stage_run) if isinstance(p, (str, os.PathLike))]
    with outputs_with_manifests([output]) as staged:
        write_run(run, staged[output])
        read = {str(golden): {"queries_sha256": queries_sha256(every)}} if isinstance(golden, (str, os.PathLike)) \
            and str(golden) != STDIO else None  # all a run reads of its golden set: verify compares it
        write_manifest(output, inputs=inputs, params=params, rows=len(run), staged=staged, holds="run", parts=read)
    return run
