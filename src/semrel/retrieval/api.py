"""`semrel.fuse`, `semrel.retrieve` and `semrel.pool`: the Python side of `semrel fuse`, `semrel retrieve` and `semrel pool`.

Thin over fusion.py, retrieve.py and pool.py, which the commands call too: the same spec, the same checks
and messages, the same run or pool. Runs come in any form `semrel.evaluate` takes them in; a corpus and a
golden set as files or as records; fuse and retrieve return the public `semrel.Run` (with `from_file`),
pool the pairs `semrel.judge` takes.
"""

from __future__ import annotations

import numbers
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Callable, Union

from ..encoding.engines import LOCAL, Engine, as_engine
from ..errors import UsageError, check_kind, check_list, check_warn, tell
from ..evaluation.api import Run as PublicRun
from ..evaluation.api import RunLike, as_runs
from ..formats.corpus import corpus_records, golden_records
from ..formats.files import guarded
from ..formats.pool import PoolRow
from ..progress import Steps, no_progress
from ..records import ALL_QUERIES, Chunk, GoldenItem, QuerySample, Run, as_float, check_run_name
from .fusion import METHODS as FUSION_METHODS
from .fusion import RRF_K, FusionSpec, fuse_runs
from .pool import pool_files
from .retrieve import METHODS as RETRIEVAL_METHODS
from .retrieve import RetrievalSpec, bm25_params, idle_setting, retrieval_stores, retrieve_files

PathLike = Union[str, os.PathLike]


def _public(run: Run) -> PublicRun:
    return PublicRun(run.query_ids, run.doc_ids, run.scores, run.name)


def fuse(runs: Iterable[RunLike] | Mapping[str, RunLike], method: str = "rrf", *, rrf_k: int | None = None, norm: str | None = None,
         weights: Sequence[float] | None = None, depth: int | None = None, name: str = "fused",
         warn: Callable[[str], None] | None = None) -> PublicRun:
    """One run from several (the Python side of `semrel fuse`): the same fusion, the same numbers.

    runs: two or more, as `evaluate` takes several (a list, or `{name: run}`; each a Run,
        `{query: {doc: score}}`, a DataFrame or a TREC run file).
    method: rrf (sum of 1 / (k + rank)), combsum, combmnz or wsum (see semrel.retrieval.fusion).
    rrf_k: rrf's k (default 60). norm: the per-query score normalisation of the score methods (none,
        minmax, zscore, sum; default minmax). weights: wsum's, one per run in the order given
        (default equal). depth: keep each query's top `depth` fused documents (default all).
    Returns a `semrel.Run` named `name`. Bad values are UsageErrors naming the argument. A run with no
    rows is reported to `warn`, else as a Python warning.
    """
    check_warn(warn)
    check_kind("method", method, (str,), f"a name ({', '.join(FUSION_METHODS)})", required=True)
    check_kind("norm", norm, (str,), "a name (none, minmax, zscore, sum)")
    check_kind("rrf_k", rrf_k, (numbers.Integral,), "a whole number")
    check_kind("depth", depth, (numbers.Integral,), "a whole number of documents per query")
    check_run_name(name, required=False)
    weights = check_list("weights", weights, (numbers.Real,), "one number per run, e.g. [0.3, 0.7]", "numbers, one per run")
    if rrf_k is not None and method != "rrf":  # the command cannot tell a default --rrf-k from a given one; Python can
        raise UsageError(f"rrf_k={rrf_k!r} is rrf's k; it does not apply to method={method!r}")
    _, loaded, _ = as_runs(runs)
    given = list(loaded)
    spec = FusionSpec(method, norm, None if weights is None else tuple(as_float(w) for w in weights),
                      RRF_K if rrf_k is None else int(rrf_k), None if depth is None else int(depth))
    notes: list[str] = []
    fused = fuse_runs(given, spec, "fused" if name is None else name, notes.append)
    tell(notes, warn, stacklevel=2)
    return _public(fused)


@guarded
def retrieve(
    corpus: PathLike | Iterable[Chunk],
    golden: PathLike | Iterable[GoldenItem],
    method: str = "bm25",
    *,
    k: int = 100,
    model: str | None = None,
    output: PathLike | None = None,
    bm25_k1: float | None = None,
    bm25_b: float | None = None,
    bm25_method: str | None = None,
    bm25_stemmer: str | None = None,
    bm25_stopwords: PathLike | None = None,
    cache: PathLike | bool | None = None,
    engine: Engine | str = LOCAL,
    sample: QuerySample | int = ALL_QUERIES,
    name: str | None = None,
    steps: Steps = no_progress,
    warn: Callable[[str], None] | None = None,
) -> PublicRun:
    """A run for the golden set's queries over a chunk corpus (the Python side of `semrel retrieve`).

    corpus: a corpus.jsonl or a list of Chunk; golden: a golden.jsonl or a list of GoldenItem.
    method: bm25, dense or hybrid (reciprocal rank fusion of the two); k: chunks per query.
    model: the dense encoder (default MiniLM, as the command's). bm25_k1, bm25_b, bm25_method,
    bm25_stemmer, bm25_stopwords: the command's --bm25-* (recorded in the manifest).
    cache: as the command's, the persisted indexes (the BM25 index of a corpus file, the dense
    chunk vectors) live in the user cache dir; give a folder, or False for neither (`--no-cache`).
    engine: where the dense encoder runs ("local", "ray" or engines.make_engine(...)).
    sample: only those queries (as `--limit`/`--sample`). With `output`, the run is written there
    atomically with its manifest, as the command writes it (an input is never written over); the
    run is named `name`, else after `output`, else after the method. Blank queries and queries left
    without chunks are reported to `warn`, else as Python warnings.
    """
    check_warn(warn)
    check_kind("method", method, (str,), f"a name ({', '.join(RETRIEVAL_METHODS)})", required=True)
    check_kind("k", k, (numbers.Integral,), "a whole number of chunks per query", required=True)
    check_kind("model", model, (str, os.PathLike), "a model name or folder")
    check_kind("output", output, (str, os.PathLike), "a file path")
    check_kind("cache", cache, (str, os.PathLike, bool), "a folder, or False for no cache")
    sample = QuerySample.of(sample)
    check_run_name(name, required=False)
    for option, value, kinds, what in (("bm25_k1", bm25_k1, (numbers.Real,), "a number"), ("bm25_b", bm25_b, (numbers.Real,), "a number"),
                                       ("bm25_method", bm25_method, (str,), "a name"), ("bm25_stemmer", bm25_stemmer, (str,), "a name"),
                                       ("bm25_stopwords", bm25_stopwords, (str, os.PathLike), "a list name or a file")):
        check_kind(option, value, kinds, what)
    settings = {"model": None if model is None else str(model), "bm25_k1": bm25_k1, "bm25_b": bm25_b, "bm25_method": bm25_method,
                "bm25_stemmer": bm25_stemmer, "bm25_stopwords": bm25_stopwords}
    idle = idle_setting(method, None, [name for name, value in settings.items() if value is not None])
    if idle:  # as fuse refuses rrf_k with combsum: a setting that changes nothing
        raise UsageError(f"{idle[0]}={settings[idle[0]]!r} is {idle[1]}; it does not apply to method={method!r}")
    engine = as_engine(engine)
    bm25 = bm25_params(None if bm25_k1 is None else float(bm25_k1), None if bm25_b is None else float(bm25_b), bm25_method,
                       bm25_stemmer, None if bm25_stopwords is None else str(bm25_stopwords))
    spec = RetrievalSpec(method, int(k), model=None if model is None else str(model), engine=engine, bm25=bm25)
    spec.check()
    chunks = corpus if isinstance(corpus, (str, os.PathLike)) else corpus_records(corpus)
    items = golden if isinstance(golden, (str, os.PathLike)) else golden_records(golden)
    folder = None if isinstance(cache, bool) else cache
    store, lexical = retrieval_stores(spec, chunks, folder, use_cache=cache is not False)
    notes: list[str] = []
    run = retrieve_files(chunks, items, spec, output, steps, notes.append, store, sample, lexical, name)
    tell(notes, warn, stacklevel=3)  # past @guarded's wrapper, to the caller's line
    return _public(run)


@guarded
def pool(runs: Iterable[RunLike] | Mapping[str, RunLike], golden: PathLike | Iterable[GoldenItem], *, depth: int = 20,
         output: PathLike | None = None, corpus: PathLike | None = None, warn: Callable[[str], None] | None = None) -> list[PoolRow]:
    """The pairs to judge (the Python side of `semrel pool`): per query of the golden set, each run's top `depth`
    chunks and the query's gold chunks, as sorted (query_id, chunk_id, sources) tuples, sources the names of the
    runs that retrieved the chunk and `gold`: the pool `semrel.judge` takes.

    runs: as `evaluate` takes several (a list, or `{name: run}`; each a Run, `{query: {doc: score}}`, a
    DataFrame or a TREC run file, named as `evaluate` names them); an empty list pools the gold chunks alone.
    golden: a golden.jsonl or a list of GoldenItem. With `output`, the pool is written there as pool.tsv
    atomically with its manifest, as the command writes it. corpus: a corpus.jsonl (`--corpus`): a run's chunks it
    does not list (misspelt, another chunking's) are left out, with a warning, where the judge would stop on them.
    A run's queries the golden set lacks, and a run that adds no pair, are reported to `warn`, else as Python warnings.
    """
    check_warn(warn)
    check_kind("depth", depth, (numbers.Integral,), "a whole number of chunks per run and query", required=True)
    check_kind("output", output, (str, os.PathLike), "a file path")
    check_kind("corpus", corpus, (str, os.PathLike), "a corpus.jsonl path")
    items = golden if isinstance(golden, (str, os.PathLike)) else golden_records(golden)
    loaded = [] if isinstance(runs, (list, tuple, Mapping)) and not runs else list(as_runs(runs)[1])
    notes: list[str] = []
    rows = pool_files(items, loaded, int(depth), output, notes.append, corpus=corpus)
    tell(notes, warn, stacklevel=3)  # past @guarded's wrapper, to the caller's line
    return rows
