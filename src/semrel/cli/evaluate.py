"""`semrel eval`: metric values of runs on qrels."""

from __future__ import annotations

import click

from ..analysis.ppi import corrected_estimates
from ..errors import UsageError
from ..evaluation.files import evaluate_files
from ..evaluation.render import render_evaluations
from ..formats import read_qrels, read_run
from ..formats.tables import FORMATS
from ..review.adjudicate import reviewed_sample
from .base import SemrelCommand, warn
from .estimate import render_estimates
from .options import measures_option, places_option
from .paths import database_path, input_path


@click.command("eval", cls=SemrelCommand, short_help="Score runs on qrels (trec_eval's semantics).")
@click.argument("qrels", type=input_path(allow_dash=True))
@click.argument("runs", nargs=-1, required=True, type=input_path(allow_dash=True))
@measures_option(help="Measure(s), repeatable or comma-separated; ir_measures and trec_eval names both work: "
                      "nDCG@10 = ndcg_cut.10, RR = recip_rank, AP = map")
@click.option("-q", "--per-query", is_flag=True, help="Also print each query's values.")
@click.option("-l", "--rel-level", default=1, show_default=True, type=int,
              help="Lowest grade that counts as relevant (nDCG uses the graded rel regardless).")
@click.option("-f", "--format", "fmt", type=click.Choice(FORMATS), default="table", show_default=True)
@places_option
@click.option("--reviewed", type=database_path(exists=True, dir_okay=False), metavar="DB",
              help="A review database: show each value next to its estimate corrected by the reviewed random "
                   "sample, with a 95% interval (prediction-powered inference; see `semrel estimate`).")
def eval_command(qrels, runs, measures, per_query, rel_level, fmt, places, reviewed):
    """Score RUNS (TREC run files) on QRELS with trec_eval's exact semantics.

    Queries in QRELS that a run lacks score 0 and count in the mean (trec_eval -c);
    queries only in a run are ignored. Both are reported on stderr.
    """
    if reviewed:
        if per_query or fmt not in ("table", "markdown", "csv", "tsv", "latex", "json"):
            raise UsageError("--reviewed gives one estimate per run and measure: use it without --per-query, "
                             "with --format table, markdown, csv, tsv, latex or json")
        estimates = corrected_estimates(read_qrels(qrels), [read_run(r) for r in runs], measures,
                                        reviewed_sample(reviewed), 0.95, rel_level)
        click.echo(render_estimates(estimates, 0.95, fmt, places), nl=False)
        return
    results = evaluate_files(qrels, runs, measures, rel_level, warn=warn)
    click.echo(render_evaluations(results, fmt, per_query, places), nl=False)
