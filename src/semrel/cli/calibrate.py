"""`semrel calibrate`: the labels fitted to human labels: the judge's probability refitted, or thresholds on a score."""

from __future__ import annotations

import click
import numpy as np

from ..analysis.agreement import WEIGHTS, agreement_table, confusion_text
from ..analysis.calibrate import DEFAULT_FIT, PROBABILITY_FITS, Calibration, ProbabilityCalibration, calibrate_labels, write_fitted
from ..errors import UsageError
from ..formats.jsonl import json_text
from ..formats.judgments import SCORES, given_judgment_columns
from .base import SemrelCommand, warn_in_flags
from .options import seed_option
from .paths import input_path, output_path


@click.command("calibrate", cls=SemrelCommand, short_help='Fit the labels to human labels.')
@click.argument("judgments", type=input_path(exists=True, dir_okay=False))
@click.argument("human", type=input_path(exists=True, dir_okay=False))
@click.option("--on", type=click.Choice(SCORES), default=None,
              help="p: refit the judge's probability (the default when the judgments hold p); P, R or F: fit thresholds on that score.")
@click.option("--fit", type=click.Choice(PROBABILITY_FITS), default=None,
              help="Probability refit: features (every coefficient of the model, each held near the shipped one unless the "
                   "pairs insist; labels then come from the features, not from p), anchored (offset and slope of logit p, the "
                   "slope held near 1), shift (the offset only) or platt (slope and offset, free) "
                   f"[default: {DEFAULT_FIT}; anchored for judgments holding p without its features].")
@click.option("--graded", is_flag=True, help="Probability refit: the calibrated labels are grades 0-3 (as `label --graded`).")
@click.option("--grades", type=click.IntRange(1),
              help="Thresholds on P, R or F: their number (top grade) [default: the human labels' top grade].")
@click.option("--weights", type=click.Choice(WEIGHTS), help="Kappa weights [default: quadratic for grades, none for binary].")
@click.option("--unlisted-as-zero", is_flag=True,
              help="A judged pair of a query the human file holds but does not list counts as grade 0 (for gold-chunk qrels).")
@click.option("--test", type=input_path(exists=True, dir_okay=False),
              help="Human labels to measure the result on; pairs also used to calibrate are left out.")
@click.option("--test-unlisted-as-zero", is_flag=True, help="--unlisted-as-zero for the --test file.")
@click.option("--test-groups", is_flag=True, help="--groups for the --test file: measure against its assessors' majority.")
@click.option("-o", "--output", type=output_path(dir_okay=False, allow_dash=True),
              help="Write the fitted rule as JSON here: `semrel label --calibration FILE`, [label] calibration in `semrel run`, "
                   "and `review start --thresholds FILE` read it.")
@click.option("-f", "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@seed_option("Seed of the bootstrap.")
@click.option("--groups", is_flag=True,
              help="HUMAN's second column names an assessor (trec_eval's qrels_jg, as `agree --groups` reads it): fit to their "
                   "majority grade of each pair (ties to the lower, as `review export` settles reviewers).")
def calibrate_command(judgments, human, on, fit, graded, grades, weights, unlisted_as_zero, test, test_unlisted_as_zero, output, fmt,
                      seed, groups, test_groups):
    """Fit the labels of JUDGMENTS (judgments.jsonl) to HUMAN labels (qrels, e.g. from `semrel review
    export --only-reviewed`, or a golden.jsonl): by default the judge's probability p is refitted on
    the reviewed pairs (grade > 0 = relevant) and the cut moves to the highest expected kappa over
    every judged pair's refitted p; with --on P, R or F, the thresholds on that score maximizing kappa."""
    if output == "-":  # the summary (or --format json) goes to stdout: the two would make one unreadable stream
        raise UsageError("calibrate writes a file for `label --calibration` and `review start --thresholds` to read, and its "
                         "summary to stdout: give -o a file name, not '-'")
    judged, _ = given_judgment_columns(judgments, empty_ok=False)
    result = calibrate_labels(judged, human, on, fit, graded, grades, weights, unlisted_as_zero, test, test_unlisted_as_zero, seed,
                              warn_in_flags, groups=groups, test_groups=test_groups)
    if output:
        write_fitted(result, output, [judgments, human], unlisted_as_zero, seed, judgments, groups)
    if fmt == "json":
        click.echo(json_text(result.to_json()))
    elif isinstance(result, ProbabilityCalibration):
        _probability_summary(result, int((~np.isnan(judged.p)).sum()))
    else:
        _thresholds_summary(result)


def _probability_summary(result: ProbabilityCalibration, judged: int) -> None:
    """The refit, its rule, and the agreement before and after (on the test file's pairs too)."""
    rule = result.rule
    fitted = (f"slope {rule.slope:.3f}, shift {rule.shift:+.3f}" if rule.cuts_on_p
              else "every coefficient moved (the largest move " f"{max(rule.refit or (0.0,), key=abs):+.3f})")
    click.echo(f"p refitted ({result.fit}) on {result.pairs:,} reviewed pairs ({result.relevant:,} relevant): {fitted}; cut {rule.cut:g} "
               f"(the highest expected kappa over the {judged} judged pairs' refitted p); labels: {rule.describe()}, "
               + (f"i.e. p >= {', '.join(f'{t:.3f}' for t in rule.judge_thresholds)} on the judge's p" if rule.cuts_on_p
                  else "p recomputed from each pair's features"))
    rows = [("human", "judge before", result.before), ("human", "judge after", result.after)]
    if result.held_out:
        rows += [("test", "judge before", result.held_out[0]), ("test", "judge after", result.held_out[1])]
    click.echo(agreement_table(rows))
    click.echo("(before/after on the reviewed pairs themselves: the after figure is in-sample; --test measures it on others)")
    click.echo(confusion_text("reviewed pairs, after", result.after, "human", "judge"), nl=False)


def _thresholds_summary(result: Calibration) -> None:
    """The thresholds and their agreement (on the test file's pairs too)."""
    click.echo(f"on {result.on}: thresholds {', '.join(f'{t:g}' for t in result.thresholds)}")
    rows = [("human", "judge", result.agreement)] + ([("test", "judge", result.held_out)] if result.held_out else [])
    click.echo(agreement_table(rows))
    click.echo(confusion_text("calibration pairs", result.agreement, "human", "judge"), nl=False)
    if result.held_out:
        click.echo("\n" + confusion_text("held-out pairs", result.held_out, "test", "judge"), nl=False)
