"""`semrel pool`: the candidate pairs the judge will score."""

from __future__ import annotations

import click

from ..formats.manifest import write_manifest
from ..formats.pool import write_pool
from ..retrieval.pool import pool_files
from .base import warn


@click.command("pool")
@click.option("--golden", required=True, type=click.Path(allow_dash=True), help="golden.jsonl (queries and gold chunks).")
@click.option("--run", "runs", multiple=True, type=click.Path(allow_dash=True), help="A TREC run (repeatable); named by its file stem.")
@click.option("--depth", default=20, show_default=True, type=int, help="How many of each run's top chunks per query.")
@click.option("-o", "--output", required=True, type=click.Path(allow_dash=True), help="pool.tsv to write ('-' = stdout).")
def pool_command(golden, runs, depth, output):
    """Pool each query's top-DEPTH chunks of every run with its gold chunks, recording the sources of each pair."""
    rows = pool_files(golden, runs, depth, warn=warn)
    count = write_pool(rows, output)
    write_manifest(output, inputs=[golden, *runs], params={"depth": depth, "runs": list(runs)}, rows=count)
    click.echo(f"wrote {count} pairs ({len({q for q, _, _ in rows})} queries) to {output}", err=True)
