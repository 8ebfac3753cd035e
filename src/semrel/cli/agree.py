"""`semrel agree`: label agreement of two qrels files and how they rank systems."""

from __future__ import annotations

import click

from ..analysis.agreement import AGREEMENT_HEADER, agreement_row, confusion_text, label_agreement, ranking_agreement
from ..evaluation.files import read_runs
from ..formats import read_qrels
from ..formats.jsonl import json_text
from ..formats.tables import Cell, Table, render
from .base import SemrelCommand, warn_in_flags
from .options import measures_option
from .paths import input_path

AGREE_MEASURES = ("nDCG@10", "AP", "RR", "P@10")


@click.command("agree", cls=SemrelCommand, short_help='Measure how two qrels agree on labels and rankings.')
@click.argument("ref", type=input_path(exists=True, dir_okay=False, allow_dash=True))
@click.argument("test", type=input_path(exists=True, dir_okay=False, allow_dash=True))
@click.argument("runs", nargs=-1, type=input_path(exists=True, dir_okay=False, allow_dash=True), metavar="[RUN]...")
@measures_option(AGREE_MEASURES, "Measures for the rankings")
@click.option("--unlisted-as-zero", is_flag=True,
              help="Compare every pair either file lists for a shared query, a missing grade counting as 0.")
@click.option("-f", "--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the bootstrap.")
def agree_command(ref, test, runs, measures, unlisted_as_zero, fmt, seed):
    """Agreement of TEST with REF (qrels) on the pairs both judged; with RUNs (two or more),
    Kendall's tau between the system rankings each produces and the pairs of systems whose order flips."""
    ref_qrels, test_qrels = read_qrels(ref), read_qrels(test)
    labels = label_agreement(ref_qrels, test_qrels, unlisted_as_zero, seed=seed, warn=warn_in_flags)
    rankings = ranking_agreement(ref_qrels, test_qrels, read_runs(runs), measures, warn=warn_in_flags) if runs else []
    if fmt == "json":
        click.echo(json_text({"ref": ref, "test": test, "unlisted_as_zero": unlisted_as_zero, "labels": labels.to_json(),
                              "rankings": [r.to_json() for r in rankings]}))
        return
    click.echo(render(Table(AGREEMENT_HEADER, [agreement_row(ref, test, labels)]), "table", places=3))
    click.echo(confusion_text("", labels, "ref", "test"), nl=False)
    if rankings:
        rows: list[list[Cell]] = [[r.measure, "all tie" if r.all_tie else r.tau, len(r.swapped),
                                   "; ".join(f"{a}/{b}" for a, b in r.swapped)] for r in rankings]
        click.echo("\n" + render(Table(["measure", "kendall tau", "swaps", "swapped pairs"], rows), "table", places=3), nl=False)
