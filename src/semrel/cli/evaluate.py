"""`semrel eval`: metric values of runs on qrels."""

from __future__ import annotations

import click

from ..evaluation import evaluate_files
from ..measures import DEFAULT_MEASURES
from ..tables import FORMATS, render_evaluations
from .base import warn


@click.command("eval")
@click.argument("qrels", type=click.Path(allow_dash=True))
@click.argument("runs", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option("-m", "--measure", "measures", multiple=True, metavar="NAME",
              help=f"Measure(s), repeatable or comma-separated [default: {','.join(DEFAULT_MEASURES)}]. "
                   "ir_measures and trec_eval names both work: nDCG@10 = ndcg_cut.10, RR = recip_rank, AP = map.")
@click.option("-q", "--per-query", is_flag=True, help="Also print each query's values.")
@click.option("-l", "--rel-level", default=1, show_default=True, type=int,
              help="Lowest grade that counts as relevant (nDCG uses the graded rel regardless).")
@click.option("-f", "--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
@click.option("--places", default=4, show_default=True, type=click.IntRange(0, 17), help="Decimals shown.")
def eval_command(qrels, runs, measures, per_query, rel_level, fmt, places):
    """Score RUNS (TREC run files) on QRELS with trec_eval's exact semantics.

    Queries in QRELS that a run lacks score 0 and count in the mean (trec_eval -c);
    queries only in a run are ignored. Both are reported on stderr.
    """
    results = evaluate_files(qrels, runs, measures, rel_level, warn=warn)
    click.echo(render_evaluations(results, fmt, per_query, places), nl=False)
