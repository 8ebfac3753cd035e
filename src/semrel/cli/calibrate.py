"""`semrel calibrate`: the labels fitted to human labels: the judge's probability refitted, or thresholds on a score."""

from __future__ import annotations

import click

from ..analysis.agreement import WEIGHTS
from ..analysis.calibrate import (
    DEFAULT_FIT,
    PROBABILITY_FITS,
    Probabilities,
    calibrate,
    calibrate_probability,
    graded_agreement,
    paired_probabilities,
    paired_scores,
    write_calibration,
    write_probability_calibration,
)
from ..errors import UsageError, ValidationError
from ..formats.judgments import SCORES, read_judgments
from ..formats.tables import Table, render
from ..judging.labels import ProbabilityRule, has_features
from .agreement_view import AGREEMENT_HEADER, agreement_row, confusion_text
from .base import SemrelCommand, warn
from .jsonout import json_text
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
@click.option("-o", "--output", type=output_path(dir_okay=False, allow_dash=True),
              help="Write the fitted rule as JSON here: `semrel label --calibration FILE`, [label] calibration in `semrel run`, "
                   "and `review start --thresholds FILE` read it.")
@click.option("-f", "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
def calibrate_command(judgments, human, on, fit, graded, grades, weights, unlisted_as_zero, test, test_unlisted_as_zero, output, fmt,
                      seed):
    """Fit the labels of JUDGMENTS (judgments.jsonl) to HUMAN labels (qrels, e.g. from `semrel review
    export --only-reviewed`, or a golden.jsonl): by default the judge's probability p is refitted on
    the reviewed pairs (grade > 0 = relevant) and the cut moves to the highest expected kappa over
    every judged pair's refitted p; with --on P, R or F, the thresholds on that score maximizing kappa."""
    if output == "-":  # the summary (or --format json) goes to stdout: the two would make one unreadable stream
        raise UsageError("calibrate writes a file for `label --calibration` and `review start --thresholds` to read, and its "
                         "summary to stdout: give -o a file name, not '-'")
    judged = read_judgments(judgments)
    with_p = [j for j in judged if j.p is not None]  # a query with no null sample has none: `label` labels its pairs on R
    if on is None:
        on = "p" if with_p else "R"
        if on == "R":
            warn("the judgments hold no probability p (written by an older semrel judge): fitting thresholds on R instead")
    if on != "p":
        if graded:
            raise UsageError("--graded applies to the probability refit; with --on P, R or F give --grades N")
        return _thresholds(judged, judgments, human, on, grades, weights, unlisted_as_zero, test, test_unlisted_as_zero, output,
                           fmt, seed)
    if grades is not None or weights is not None:
        raise UsageError("--grades and --weights apply to thresholds on P, R or F (--on); the probability refit takes --graded")
    if fit is None:
        fit = DEFAULT_FIT if has_features(with_p) else "anchored"
        if fit != DEFAULT_FIT:
            warn("the judgments hold p without the features it came from (an older semrel judge): refitting p's slope and "
                 "offset (--fit anchored); re-run `semrel judge` for a refit of every coefficient")
    paired = paired_probabilities(judged, human, unlisted_as_zero, warn)
    result = calibrate_probability(Probabilities.of(judged, paired.pairs), paired.grades, fit, graded=graded, seed=seed,
                                   judged=Probabilities.of(with_p))
    held_out = None
    if test:
        rest = paired_probabilities(judged, test, test_unlisted_as_zero).without(set(paired.pairs))
        if not rest.pairs:
            raise ValidationError(f"{test}: no judged pair is left once the calibration pairs are set aside")
        target = rest.grades if graded else (rest.grades > 0).astype(int)
        tested = Probabilities.of(judged, rest.pairs)
        held_out = [graded_agreement(scores, target, list(thresholds), "quadratic" if graded else "none", seed=seed)
                    for scores, thresholds in (tested.scored(r) for r in (ProbabilityRule(graded), result.rule))]
    if output:
        write_probability_calibration(result, output, [judgments, human], {"unlisted_as_zero": unlisted_as_zero, "seed": seed})
    if fmt == "json":
        extra = {"test": {"before": held_out[0].to_json(), "after": held_out[1].to_json()}} if held_out else {}
        click.echo(json_text({**result.to_json(), **extra}))
        return
    rule = result.rule
    fitted = (f"slope {rule.slope:.3f}, shift {rule.shift:+.3f}" if rule.cuts_on_p
              else "every coefficient moved (the largest move " f"{max(rule.refit or (0.0,), key=abs):+.3f})")
    click.echo(f"p refitted ({fit}) on {result.pairs} reviewed pairs ({result.relevant} relevant): {fitted}; cut {rule.cut:g} "
               f"(the highest expected kappa over the {len(with_p)} judged pairs' refitted p); labels: {rule.describe()}, "
               + (f"i.e. p >= {', '.join(f'{t:.3f}' for t in rule.judge_thresholds)} on the judge's p" if rule.cuts_on_p
                  else "p recomputed from each pair's features"))
    rows = [agreement_row("human", "judge before", result.before), agreement_row("human", "judge after", result.after)]
    if held_out:
        rows += [agreement_row("test", "judge before", held_out[0]), agreement_row("test", "judge after", held_out[1])]
    click.echo(render(Table(AGREEMENT_HEADER, rows), "table", places=3))
    click.echo("(before/after on the reviewed pairs themselves: the after figure is in-sample; --test measures it on others)")
    click.echo(confusion_text("reviewed pairs, after", result.after, "human", "judge"), nl=False)



def _thresholds(judged, judgments, human, on, grades, weights, unlisted_as_zero, test, test_unlisted_as_zero, output, fmt, seed):
    """Thresholds on P, R or F (or p) maximizing kappa with the human labels."""
    paired = paired_scores(judged, human, on, unlisted_as_zero)
    count = grades or max(1, int(paired.grades.max()) if len(paired.grades) else 1)
    result = calibrate(paired.scores, paired.grades, count, weights, on, seed=seed)
    held_out = None
    if test:
        rest = paired_scores(judged, test, on, test_unlisted_as_zero).without(set(paired.pairs))
        if not rest.pairs:
            raise ValidationError(f"{test}: no judged pair is left once the calibration pairs are set aside")
        held_out = graded_agreement(rest.scores, rest.grades, result.thresholds, result.agreement.weights, seed=seed)
    if output:
        write_calibration(result, output, [judgments, human], len(paired.pairs),
                          {"unlisted_as_zero": unlisted_as_zero, "seed": seed})
    if fmt == "json":
        click.echo(json_text({**result.to_json(), **({"test": held_out.to_json()} if held_out else {})}))
        return
    click.echo(f"on {on}: thresholds {', '.join(f'{t:g}' for t in result.thresholds)}")
    rows = [agreement_row("human", "judge", result.agreement)]
    rows += [agreement_row("test", "judge", held_out)] if held_out else []
    click.echo(render(Table(AGREEMENT_HEADER, rows), "table", places=3))
    click.echo(confusion_text("calibration pairs", result.agreement, "human", "judge"), nl=False)
    if held_out:
        click.echo("\n" + confusion_text("held-out pairs", held_out, "test", "judge"), nl=False)

