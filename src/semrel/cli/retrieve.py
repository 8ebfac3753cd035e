"""`semrel retrieve`: a TREC run for the golden set's queries over a chunk corpus."""

from __future__ import annotations

import click

from ..encoding.engines import make_engine
from ..encoding.models import DEFAULT_MODEL
from ..errors import UsageError
from ..progress import stderr_steps
from ..retrieval.retrieve import (
    BM25_METHODS,
    BM25_PARAMS,
    BM25_STOPWORDS,
    METHODS,
    RERANKERS,
    RRF_K,
    RetrievalSpec,
    bm25_params,
    idle_setting,
    retrieval_stores,
    retrieve_files,
)
from ..terminal import quantity
from .base import SemrelCommand, warn
from .options import engine_options, one_cache_choice, query_sample, sample_options, typed
from .paths import FolderPath, input_path, output_path


@click.command("retrieve", cls=SemrelCommand, short_help='Retrieve chunks for every query (a TREC run).')
@click.option("--corpus", required=True, type=input_path(allow_dash=True), help="corpus.jsonl (chunks).")
@click.option("--golden", required=True, type=input_path(allow_dash=True), help="golden.jsonl (queries).")
@click.option("--method", type=click.Choice(METHODS), default=None,
              help=f"First stage [default: bm25]. hybrid = reciprocal rank fusion (k={RRF_K}) of bm25 and dense.")
@click.option("-k", "k", default=100, show_default=True, type=int, help="Chunks per query in the run.")
@click.option("--rerank", type=click.Choice(RERANKERS), default=None, help="Rerank the first stage's top chunks.")
@click.option("--rerank-depth", default=100, show_default=True, type=int, help="How many first-stage chunks to rerank.")
@click.option("--run", "first_stage_run", type=input_path(allow_dash=True), default=None,
              help="An existing TREC run to rerank instead of running --method.")
@click.option("--model", default=None, show_envvar=True,
              help=f"Dense encoder: local folder or Hugging Face name [default: {DEFAULT_MODEL}].")
@click.option("-o", "--output", required=True, type=output_path(allow_dash=True), help="The TREC run to write ('-' = stdout).")
@engine_options
@click.option("--cache", "cache_dir", type=FolderPath(), default=None,
              help="Folder of the persisted indexes: the BM25 index (built once per corpus, grown with it) and the dense "
                   "vector store (chunk vectors kept per model, so a chunk is encoded once) [default: the user cache dir].")
@click.option("--no-cache", is_flag=True, help="Index and encode the chunks in memory; neither read nor write the cache.")
@click.option("--bm25-k1", type=float, default=None, help=f"BM25 term saturation [default: {BM25_PARAMS['k1']}].")
@click.option("--bm25-b", type=float, default=None, help=f"BM25 length normalisation, 0..1 [default: {BM25_PARAMS['b']}].")
@click.option("--bm25-method", type=click.Choice(BM25_METHODS), default=None,
              help=f"BM25 variant (bm25s; the on-disk index scores lucene, robertson, atire) [default: {BM25_PARAMS['method']}].")
@click.option("--bm25-stemmer", default=None, metavar="NAME",
              help=f"none, or a PyStemmer algorithm: english (Snowball), porter, german, ... [default: {BM25_PARAMS['stemmer']}].")
@click.option("--bm25-stopwords", default=None, metavar="LIST|FILE",
              help=f"none, a list ({', '.join(BM25_STOPWORDS)}) or a file of one word per line [default: {BM25_PARAMS['stopwords']}].")
@sample_options
def retrieve_command(corpus, golden, method, k, rerank, rerank_depth, first_stage_run, model, output, engine, ray_address,
                     ray_workers, device, precision, cache_dir, no_cache, bm25_k1, bm25_b, bm25_method, bm25_stemmer,
                     bm25_stopwords, limit, sample_size, sample_seed):
    """Retrieve chunks for every query of a golden set and write a TREC run (with a manifest).

    Scores strictly decrease within a query: ties go to the chunk earlier in the corpus. --engine
    ray runs the dense encoder on a Ray cluster (bm25 does not use it); the run is the same. The
    --bm25-* settings (bm25 and hybrid) are recorded in the run's manifest.
    """
    first = method or (None if first_stage_run else "bm25")
    # each was ignored in silence where it does not apply; from the environment (SEMREL_RETRIEVE_*) it is a default for where it does
    one_cache_choice(no_cache)
    if rerank is None and typed("rerank_depth"):
        raise UsageError("--rerank-depth goes with --rerank: it is how many first-stage chunks are reranked")
    idle = idle_setting(first, rerank, [name for name in ("model", *(f"bm25_{n}" for n in BM25_PARAMS)) if typed(name)])
    if idle:
        name, whose = idle
        where = (f"--method {first}" + (" without --rerank dense" if first == "bm25" else "") if first
                 else "--run (a first stage made already)")
        raise UsageError(f"--{name.replace('_', '-')} is {whose}; it does not apply to {where}")
    spec = RetrievalSpec(first, k, rerank, rerank_depth, first_stage_run, model,
                         make_engine(engine, ray_address, ray_workers, device, precision),
                         bm25_params(bm25_k1, bm25_b, bm25_method, bm25_stemmer, bm25_stopwords))
    spec.check()
    store, lexical = retrieval_stores(spec, corpus, cache_dir, use_cache=not no_cache)
    sample = query_sample(limit, sample_size, sample_seed)
    run = retrieve_files(corpus, golden, spec, output, steps=stderr_steps, warn=warn, store=store, sample=sample, lexical=lexical)
    if lexical is not None and lexical.last is not None:
        index = lexical.last
        click.echo(f"bm25 index: {quantity(index.built, 'chunk')} indexed, {index.reused:,} reused from {index.folder}", err=True)
    if store is not None:
        repeated = f" ({quantity(store.repeated, 'chunk')} repeating another's text, encoded once)" if store.repeated else ""
        click.echo(f"chunk vectors: {store.encoded:,} encoded{repeated}, {store.reused:,} from the vector store {store.folder}", err=True)
    click.echo(f"wrote {quantity(len(run), 'row')} ({quantity(len(set(run.query_ids.to_pylist())), 'query')}) to {output}", err=True)
