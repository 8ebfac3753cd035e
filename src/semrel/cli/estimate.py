"""`semrel estimate`: run metrics on derived qrels, corrected by a reviewed random sample."""

from __future__ import annotations

import click

from ..analysis.ppi import ESTIMATE_FORMATS, corrected_estimates, render_estimates
from ..evaluation.files import read_runs
from ..formats import read_qrels
from ..review.adjudicate import reviewed_sample
from .base import SemrelCommand, warn
from .options import adjudicate_option, measure_option, places_option, rel_level_option
from .paths import database_path, input_path


@click.command("estimate", cls=SemrelCommand, short_help='Correct derived-label metrics by reviewed pairs.')
@click.argument("qrels", type=input_path(exists=True, dir_okay=False))
@click.argument("runs", nargs=-1, required=True, type=input_path(exists=True, dir_okay=False))
@click.option("--reviewed", required=True, type=database_path(exists=True, dir_okay=False), help="The review database.")
@measure_option
@adjudicate_option
@click.option("--confidence", type=click.FloatRange(0.5, 0.999), default=0.95, show_default=True)
@rel_level_option
@click.option("-f", "--format", "fmt", type=click.Choice(ESTIMATE_FORMATS), default="table", show_default=True)
@places_option
def estimate_command(qrels, runs, reviewed, measures, adjudicate, confidence, rel_level, fmt, places):
    """Each RUN's metrics on QRELS (derived labels) next to prediction-powered estimates corrected
    by the human grades of the review's random sample, with a confidence interval."""
    estimates = corrected_estimates(read_qrels(qrels), read_runs(runs), measures, reviewed_sample(reviewed, adjudicate), confidence,
                                    rel_level, warn)
    click.echo(render_estimates(estimates, confidence, fmt, places), nl=False)

