"""`semrel fill`: judge the unjudged chunks runs rank in their top k, with the settings the qrels were derived with."""

from __future__ import annotations

from typing import Sequence

import click

from ..progress import stderr_steps
from ..terminal import quantity
from .base import SemrelCommand, warn
from .options import cache_choice, embedding_cache_options
from .paths import input_path, output_path

FILL_CACHE = "the judge's, as the judgments' manifest records it (none if it used none), where found; else the user cache dir"


def fill_and_report(qrels: str, runs: Sequence[str], judgments: str, corpus: str, golden: str, depth: int,
                    output: str | None = None, cache: str | bool | None = None):
    """Fill the holes (judging.fill), then tell on stderr how many and each run's Judged@depth before and after."""
    from ..judging.fill import fill

    result = fill(qrels, runs, judgments=judgments, corpus=corpus, golden=golden, depth=depth, output=output, cache=cache,
                  steps=stderr_steps, warn=warn)
    record = result.params
    click.echo(f"filled {quantity(record['holes'], 'hole')} in the runs' top {depth}: {record['judged']} judged now, "
               f"{record['from_judgments']} already in {judgments}; {result.relevant} relevant"
               + (f" ({result.resumed} resumed)" if result.resumed else ""), err=True)
    for name, before in result.judged_before.items():
        click.echo(f"Judged@{depth} {name}: {before:.4f} before, {result.judged_after[name]:.4f} after", err=True)
    return result


@click.command("fill", cls=SemrelCommand, short_help="Judge the unjudged chunks in runs' top k (holes of derived qrels).")
@click.argument("qrels", type=input_path(exists=True, dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=input_path(exists=True, dir_okay=False))
@click.option("--judgments", required=True, type=input_path(exists=True, dir_okay=False),
              help="judgments.jsonl the qrels were labelled from; the new judgments are appended to it.")
@click.option("--corpus", required=True, type=input_path(exists=True, dir_okay=False), help="corpus.jsonl the judgments were made from.")
@click.option("--golden", required=True, type=input_path(exists=True, dir_okay=False), help="golden.jsonl (reference answers).")
@click.option("--depth", type=click.IntRange(min=1), default=10, show_default=True, help="Fill each run's top DEPTH chunks per query.")
@click.option("-o", "--output", required=True, type=output_path(), help="The completed qrels to write (with a manifest).")
@embedding_cache_options(FILL_CACHE)
def fill_command(qrels, runs, judgments, corpus, golden, depth, output, cache_dir, no_cache):
    """Judge the holes of QRELS in the top DEPTH of RUNS and write the completed qrels.

    A hole is a chunk a run ranks in its top DEPTH for a query of QRELS that QRELS do not judge
    (a run that did not contribute to the pool). Each is judged with the model, layer, idf, windows,
    rescaling and precision of JUDGMENTS and labelled with the rule QRELS record (both read from their
    manifests; other settings are refused), appended to JUDGMENTS (the judge's embedding cache is
    reused unless --cache or --no-cache says otherwise; an interrupted fill resumes). Prints how many
    holes were filled and each run's Judged@DEPTH before and after.
    """
    fill_and_report(qrels, runs, judgments, corpus, golden, depth, output, cache_choice(cache_dir, no_cache))
    click.echo(f"wrote {output}", err=True)
