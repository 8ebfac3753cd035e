"""`semrel label`: judgments to TREC qrels, binary or graded; no model is loaded."""

from __future__ import annotations

import click

from ..formats.judgments import SCORES
from ..judging.labels import CUT, DEFAULT_COMPONENT, DEFAULT_GRADES, DEFAULT_THRESHOLD, GRADE_CUTS, parse_thresholds
from ..terminal import quantity
from .base import SemrelCommand
from .paths import input_path, output_path


@click.command("label", cls=SemrelCommand, short_help='Turn judgments into qrels.')
@click.argument("judgments", type=input_path(allow_dash=True))
@click.option("-o", "--output", required=True, type=output_path(allow_dash=True), help="TREC qrels file to write.")
@click.option("--graded", is_flag=True,
              help=f"Grades 0-3 from the probability p (cuts {', '.join(f'{c:g}' for c in GRADE_CUTS)}) instead of binary labels.")
@click.option("--calibration", type=input_path(exists=True, dir_okay=False),
              help="The file `semrel calibrate -o` wrote: its refitted probability (or thresholds) set the labels.")
@click.option("--on", type=click.Choice(SCORES), default=None,
              help=f"Score --threshold/--grades apply to [default: {DEFAULT_COMPONENT}]. Alone, P, R or F labels by that score "
                   f"at {DEFAULT_THRESHOLD} (--graded: {','.join(map(str, DEFAULT_GRADES))}) instead of by p.")
@click.option("--threshold", type=float, default=None,
              help=f"Binary labels on a score instead: 1 when --on reaches it (e.g. {DEFAULT_THRESHOLD} on R).")
@click.option("--grades", default=None, metavar="T1,T2,...",
              help="Graded labels on a score instead: grade = number of thresholds --on reaches "
                   f"(e.g. {','.join(map(str, DEFAULT_GRADES))}).")
def label_command(judgments, output, graded, calibration, on, threshold, grades):
    """Turn JUDGMENTS (judgments.jsonl) into TREC qrels, one row per judged pair (0 = not relevant).

    By default a pair is relevant when the judge's probability p reaches {cut}; pairs without p
    (an older semrel judge, or a query with no null sample) are labelled R >= {threshold} instead. --threshold/--grades put
    thresholds on one score (--on) instead; --calibration applies `semrel calibrate`'s refit.
    Labels that look wrong (gold chunks left out, queries with nothing relevant) are warned about
    on stderr, with what to do.
    """
    from ..judging.labels import label_with_rule
    from .base import warn

    result = label_with_rule(judgments, output, on=on, threshold=threshold, grades=parse_thresholds(grades) if grades is not None else None,
                             graded=graded, calibration=calibration)
    for message in result.warnings:
        warn(message)
    counts = result.grade_counts.tolist()
    if len(counts) > 2:  # graded: the count per grade, as "relevant" would take grade 1, below the binary cut, for relevant
        tally = f"grades 0-{len(counts) - 1}: {', '.join(f'{n:,}' for n in counts)}"
    else:
        tally = f"{counts[1]:,} relevant, {counts[0]:,} not"
    click.echo(f"labelled {quantity(len(result.qrels), 'pair')} by {result.rule.describe()}: {tally}", err=True)


label_command.help = (label_command.help or "").format(cut=CUT, threshold=DEFAULT_THRESHOLD)
