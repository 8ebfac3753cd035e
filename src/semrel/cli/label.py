"""`semrel label`: judgments to TREC qrels, binary or graded; no model is loaded."""

from __future__ import annotations

import click

from ..formats.judgments import COMPONENTS
from ..judging.labels import DEFAULT_COMPONENT, DEFAULT_GRADES, DEFAULT_THRESHOLD, parse_thresholds
from .base import SemrelCommand
from .paths import input_path, output_path


@click.command("label", cls=SemrelCommand, short_help='Turn judgments into qrels.')
@click.argument("judgments", type=input_path(allow_dash=True))
@click.option("-o", "--output", required=True, type=output_path(allow_dash=True), help="TREC qrels file to write.")
@click.option("--on", type=click.Choice(COMPONENTS), default=DEFAULT_COMPONENT, show_default=True,
              help="Which BERTScore component is thresholded.")
@click.option("--threshold", type=float, default=None,
              help=f"Binary labels: 1 when the score reaches it [default: {DEFAULT_THRESHOLD}].")
@click.option("--grades", default=None, metavar="T1,T2,...",
              help=f"Graded labels: grade = number of thresholds reached (e.g. {','.join(map(str, DEFAULT_GRADES))}).")
def label_command(judgments, output, on, threshold, grades):
    """Turn JUDGMENTS (judgments.jsonl) into TREC qrels; pairs below every threshold get 0."""
    from ..judging.labels import label

    qrels = label(judgments, output, on=on, threshold=threshold, grades=parse_thresholds(grades) if grades else None)
    relevant = int((qrels.relevance > 0).sum())
    click.echo(f"labelled {len(qrels)} pairs on {on}: {relevant} relevant, {len(qrels) - relevant} not", err=True)
