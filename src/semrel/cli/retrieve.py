"""`semrel retrieve`: a TREC run for the golden set's queries over a chunk corpus."""

from __future__ import annotations

import click

from ..engines import make_engine
from ..formats.trec import write_run
from ..manifest import write_manifest
from ..retrieve import METHODS, RERANKERS, RRF_K, RetrievalSpec, retrieve_files
from .base import warn
from .engine import engine_options
from .progress import stderr_steps


@click.command("retrieve")
@click.option("--corpus", required=True, type=click.Path(allow_dash=True), help="corpus.jsonl (chunks).")
@click.option("--golden", required=True, type=click.Path(allow_dash=True), help="golden.jsonl (queries).")
@click.option("--method", type=click.Choice(METHODS), default=None,
              help=f"First stage [default: bm25]. hybrid = reciprocal rank fusion (k={RRF_K}) of bm25 and dense.")
@click.option("-k", "k", default=100, show_default=True, type=int, help="Chunks per query in the run.")
@click.option("--rerank", type=click.Choice(RERANKERS), default=None, help="Rerank the first stage's top chunks.")
@click.option("--rerank-depth", default=100, show_default=True, type=int, help="How many first-stage chunks to rerank.")
@click.option("--run", "first_stage_run", type=click.Path(allow_dash=True), default=None,
              help="An existing TREC run to rerank instead of running --method.")
@click.option("--model", default=None, help="Dense encoder: local folder or Hugging Face name [default: all-MiniLM-L6-v2].")
@click.option("-o", "--output", required=True, type=click.Path(allow_dash=True), help="The TREC run to write ('-' = stdout).")
@engine_options
def retrieve_command(corpus, golden, method, k, rerank, rerank_depth, first_stage_run, model, output, engine, ray_address, ray_workers):
    """Retrieve chunks for every query of a golden set and write a TREC run (with a manifest).

    Scores strictly decrease within a query: ties go to the chunk earlier in the corpus. --engine
    ray runs the dense encoder on a Ray cluster (bm25 does not use it); the run is the same.
    """
    spec = RetrievalSpec(method or (None if first_stage_run else "bm25"), k, rerank, rerank_depth, first_stage_run, model,
                         make_engine(engine, ray_address, ray_workers))
    run = retrieve_files(corpus, golden, spec, output, steps=stderr_steps, warn=warn)
    write_run(run, output)
    inputs = [corpus, golden] + ([first_stage_run] if first_stage_run else [])
    write_manifest(output, inputs=inputs, params=spec.params(), rows=len(run))
    click.echo(f"wrote {len(run)} rows ({len(set(run.query_ids.to_pylist()))} queries) to {output}", err=True)
