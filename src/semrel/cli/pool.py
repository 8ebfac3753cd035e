"""`semrel pool`: the candidate pairs the judge will score."""

from __future__ import annotations

import click

from ..retrieval.pool import pool_files
from ..terminal import quantity
from .base import SemrelCommand, warn
from .paths import input_path, output_path


@click.command("pool", cls=SemrelCommand, short_help="Pool the runs' top chunks for judging.")
@click.argument("runs", nargs=-1, type=input_path(allow_dash=True), metavar="[RUN]...")
@click.option("--golden", required=True, type=input_path(allow_dash=True), metavar="GOLDEN", help="golden.jsonl (queries and gold chunks).")
@click.option("--depth", default=20, show_default=True, type=click.IntRange(min=1), help="How many of each run's top chunks per query.")
@click.option("-o", "--output", required=True, type=output_path(allow_dash=True), help="pool.tsv to write ('-' = stdout).")
@click.option("--corpus", type=input_path(exists=True, dir_okay=False), default=None,
              help="corpus.jsonl: a run's chunks it does not list (misspelt, another chunking's) are left out, with a warning, "
                   "instead of stopping the judge, which has no text for them.")
def pool_command(golden, runs, depth, output, corpus):
    """Pool each query's top-DEPTH chunks of every RUN (TREC runs, named by file stem) with its gold
    chunks, recording the sources of each pair."""
    rows = pool_files(golden, runs, depth, output, warn=warn, corpus=corpus)
    click.echo(f"wrote {quantity(len(rows), 'pair')} ({quantity(len({q for q, _, _ in rows}), 'query')}) to {output}", err=True)
