"""`semrel calibrate`: the thresholds on a judge score that agree best with human labels."""

from __future__ import annotations

import click

from ..analysis.agreement import WEIGHTS
from ..analysis.calibrate import calibrate, graded_agreement, paired_scores, write_calibration
from ..errors import ValidationError
from ..formats.judgments import COMPONENTS, read_judgments
from ..formats.tables import Table, render
from .agreement_view import AGREEMENT_HEADER, agreement_row, confusion_text
from .base import SemrelCommand
from .jsonout import json_text
from .paths import input_path, output_path


@click.command("calibrate", cls=SemrelCommand, short_help='Fit label thresholds to human labels.')
@click.argument("judgments", type=input_path(exists=True, dir_okay=False))
@click.argument("human", type=input_path(exists=True, dir_okay=False))
@click.option("--on", type=click.Choice(COMPONENTS), default="R", show_default=True, help="The score to threshold.")
@click.option("--grades", type=click.IntRange(1), help="Number of thresholds (top grade) [default: the human labels' top grade].")
@click.option("--weights", type=click.Choice(WEIGHTS), help="Kappa weights [default: quadratic for grades, none for binary].")
@click.option("--unlisted-as-zero", is_flag=True,
              help="A judged pair of a query the human file holds but does not list counts as grade 0 (for gold-chunk qrels).")
@click.option("--test", type=input_path(exists=True, dir_okay=False),
              help="Human labels to measure the thresholds on; pairs also used to calibrate are left out.")
@click.option("--test-unlisted-as-zero", is_flag=True, help="--unlisted-as-zero for the --test file.")
@click.option("-o", "--output", type=output_path(dir_okay=False, allow_dash=True),
              help='Write {"on", "thresholds"} as JSON here (read by `semrel label` and `review start --thresholds`).')
@click.option("-f", "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
def calibrate_command(judgments, human, on, grades, weights, unlisted_as_zero, test, test_unlisted_as_zero, output, fmt,
                      seed):
    """Find the thresholds on JUDGMENTS (judgments.jsonl) maximizing kappa with HUMAN labels
    (qrels, e.g. from `semrel review export`, or a golden.jsonl)."""
    judged = read_judgments(judgments)
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
