"""`semrel agree`: label agreement of two qrels files and how they rank systems."""

from __future__ import annotations

import click

from ..analysis import agreement as agreeing
from ..analysis.agreement import AGREE_MEASURES, agreement_table, confusion_text
from ..errors import UsageError
from ..evaluation.files import read_runs
from ..formats import read_qrels
from ..formats.jsonl import json_text
from ..formats.tables import Cell, Table, render
from ..terminal import quantity
from .base import SemrelCommand, warn_in_flags
from .options import measures_option, rel_level_option, seed_option, typed
from .paths import input_path


@click.command("agree", cls=SemrelCommand, short_help='Measure how two qrels agree on labels and rankings.')
@click.argument("ref", type=input_path(exists=True, dir_okay=False, allow_dash=True))
@click.argument("test", type=input_path(exists=True, dir_okay=False, allow_dash=True))
@click.argument("runs", nargs=-1, type=input_path(exists=True, dir_okay=False, allow_dash=True), metavar="[RUN]...")
@measures_option(AGREE_MEASURES, "Measures for the rankings")
@click.option("--unlisted-as-zero", is_flag=True,
              help="Compare every pair either file lists for a shared query, a missing grade counting as 0.")
@click.option("-f", "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@seed_option("Seed of the bootstrap.")
@rel_level_option
@click.option("--groups", is_flag=True,
              help="REF's second column names an assessor (trec_eval's qrels_jg): TEST against each assessor and against "
                   "their majority (ties to the lower grade), and the assessors against each other; rankings use the majority.")
def agree_command(ref, test, runs, measures, unlisted_as_zero, fmt, seed, rel_level, groups):
    """Agreement of TEST with REF (qrels) on the pairs both judged; with RUNs (two or more),
    Kendall's tau between the system rankings each produces and the pairs of systems whose order flips."""
    if not runs and typed("measures"):  # ignored in silence before: there were no rankings to measure
        raise UsageError("-m names the measures of the runs' rankings: give two RUNs or more too")
    if not runs and typed("rel_level"):
        raise UsageError("-l sets what the runs' rankings count as relevant: give two RUNs or more too")
    given = agreeing.assessor_groups(ref) if groups else read_qrels(ref)
    agreed = agreeing.agree(given, read_qrels(test), read_runs(runs) if runs else [], measures, unlisted_as_zero, seed, warn_in_flags,
                            rel_level)
    labels, by_group, rankings = agreed.labels, agreed.groups, agreed.rankings
    if fmt == "json":
        click.echo(json_text({"ref": ref, "test": test, "unlisted_as_zero": unlisted_as_zero, "rel_level": rel_level, **agreed.to_json()}))
        return
    if by_group:
        compared = [(group, test, a) for group, a in by_group.each] + [("majority", test, labels), *by_group.between]
        click.echo(agreement_table(compared))
        click.echo(f"{test} against the majority of {quantity(len(by_group.each), 'assessor')}: kappa {labels.kappa:.3f}; the assessors "
                   f"against each other: mean kappa {by_group.between_mean:.3f} (Light's kappa), the yardstick\n")
    else:
        click.echo(agreement_table([(ref, test, labels)], explain=False))  # label_agreement warned of an undefined kappa
    click.echo(confusion_text("", labels, "majority" if groups else "ref", "test"), nl=False)
    if rankings:
        rows: list[list[Cell]] = [[r.measure, "all tie" if r.all_tie else r.tau, len(r.swapped),
                                   "; ".join(f"{a}/{b}" for a, b in r.swapped)] for r in rankings]
        click.echo("\n" + render(Table(["measure", "kendall tau", "swaps", "swapped pairs"], rows), "table", places=3), nl=False)
