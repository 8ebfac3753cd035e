"""`semrel report`: one self-contained HTML page of everything given."""

from __future__ import annotations

import click

from ..analysis.lift import TOP_QUERIES
from ..errors import UsageError
from ..evaluation.files import baseline_name
from ..formats.files import STDIO
from ..formats.judgments import SCORES
from ..formats.manifest import read_params
from ..judging.labels import parse_thresholds
from ..progress import stderr_steps
from ..report.html import ReportInputs, read_agreement, read_sensitivity, write_report
from .base import SemrelCommand, warn
from .options import (
    adjudicate_option,
    comparison_options,
    lift_options,
    measure_option,
    places_option,
    rel_level_option,
    stat_settings,
    typed,
)
from .paths import database_path, input_path, output_path


def _thresholds(threshold: float | None, grades: str | None) -> tuple[float, ...]:
    if threshold is not None and grades:
        raise UsageError("give --threshold (binary labels) or --grades (graded), not both")
    if threshold is not None:
        return (threshold,)
    return parse_thresholds(grades) if grades is not None else ()  # as `label` reads them: --grades '' is refused, not none


@click.command("report", cls=SemrelCommand, short_help='Write the HTML report.')
@click.argument("qrels", required=False, type=input_path(allow_dash=True))
@click.argument("runs", nargs=-1, type=input_path(allow_dash=True))
@click.option("-o", "--output", required=True, type=output_path(allow_dash=True), help="report.html to write.")
@click.option("--title", default="semrel report", show_default=True)
@click.option("--gold-qrels", type=input_path(allow_dash=True),
              help="Qrels of the gold chunks (or a golden.jsonl): the runs' metrics on them beside those on QRELS (the derived labels).")
@click.option("--golden", type=input_path(allow_dash=True), help="golden.jsonl: its stats, and which judged pairs are gold.")
@click.option("--corpus", type=input_path(allow_dash=True),
              help="corpus.jsonl: its stats beside the golden set's (with --golden); the chunk ids the runs should name (a "
                   "run's chunks it does not list, misspelt or another chunking's, are warned of at the top).")
@click.option("--judgments", type=input_path(allow_dash=True), help="judgments.jsonl: the distribution of judge scores.")
@click.option("--on", type=click.Choice(SCORES),
              help="Score the judge-score plots show: p (the judge's probability), P, R or F [default: that of the rule in the "
                   "qrels' manifest, else R]. The metrics stay on QRELS as labelled; options other than that rule are warned about.")
@click.option("--threshold", type=float,
              help="A threshold to draw on those plots and the sensitivity curves [default: the rule's in the qrels' manifest].")
@click.option("--grades", metavar="T1,T2,...", help="Thresholds to draw, as --threshold, for graded labels.")
@lift_options
@click.option("--top", type=click.IntRange(min=0), default=TOP_QUERIES, show_default=True, help="Queries gained and lost to list.")
@click.option("--sensitivity", type=input_path(allow_dash=True),
              help="Rows threshold,run,measure,value (CSV/TSV with that header, or JSON Lines): the sensitivity curves.")
@click.option("--agreement", type=input_path(allow_dash=True),
              help="JSON object of agreement figures: what `semrel agree -f json` or `semrel review stats -f json` prints.")
@click.option("--reviewed", type=database_path(exists=True, dir_okay=False), metavar="DB",
              help="A review database: the runs' metrics corrected by its random sample, as `semrel estimate` gives them "
                   "(intervals at 1 - --alpha, which must then lie from 0.001 to 0.5).")
@adjudicate_option
@measure_option
@comparison_options
@rel_level_option
@places_option
def report_command(qrels, runs, output, title, gold_qrels, golden, corpus, judgments, on, threshold, grades, base, reranked, depth,
                   top, sensitivity, agreement, reviewed, adjudicate, measures, baseline, all_pairs, correction, test, permutations,
                   bootstrap, seed, alpha, rel_level, places):
    """Write one HTML page (no network needed to open it) with the judge signature at the top (the judge's
    settings and the rule that made QRELS' labels, as their manifest records it) and,
    as far as the inputs allow: golden-set stats, judge score distributions, the metric table of
    QRELS and RUNS with significance marks, the lift of --reranked over --base, threshold
    sensitivity curves, agreement figures (as `semrel agree -f json` writes them: kappa, the
    confusion matrix and the runs' ranking on each qrels) and the metrics corrected by a review (--reviewed)."""
    if base is None and typed("top"):  # ignored in silence before
        raise UsageError("--top lists the queries the lift gains and loses: give --base and --reranked too")
    if typed("adjudicate") and not reviewed:  # it settles the review's grades: without one it would do nothing
        raise UsageError("--adjudicate settles the reviewers' grades of --reviewed: give --reviewed DB")
    tests = [name for name in ("test", "permutations", "bootstrap", "seed", "alpha", "correction") if typed(name)]
    if tests and len(runs) < 2 and base is None and not (reviewed and tests == ["alpha"]):  # likewise: nothing is tested
        raise UsageError(f"--{tests[0]} sets the paired tests between runs (two or more) or of --reranked against --base; "
                         "this report tests none")
    curves = (read_params(sensitivity) if sensitivity else None) or {}
    inputs = ReportInputs(
        qrels=qrels, runs=runs, gold_qrels=gold_qrels, measures=measures, baseline=baseline_name(baseline, runs) if runs else baseline,
        all_pairs=all_pairs,
        settings=stat_settings(test, permutations, bootstrap, seed, alpha, correction), rel_level=rel_level,
        golden=golden, corpus=corpus, judgments=judgments, on=on, thresholds=_thresholds(threshold, grades),
        base=base, reranked=reranked, depth=depth, top=top, title=title, places=places,
        sensitivity=read_sensitivity(sensitivity) if sensitivity else (),
        sensitivity_on=curves.get("on") if isinstance(curves.get("on"), str) else None,
        sensitivity_at=float(curves["at"]) if isinstance(curves.get("at"), (int, float)) else None,
        agreement=read_agreement(agreement) if agreement else None, reviewed=reviewed, adjudicate=adjudicate,
    )
    write_report(inputs, output, warn, stderr_steps, extra_inputs=[p for p in (sensitivity, agreement) if p])
    if output != STDIO:  # with -o - stdout is the page itself: its path appended would end the HTML with '-'
        click.echo(output)
