"""`semrel doctor`: what semrel finds on this machine."""

from __future__ import annotations

import os
import sys

import click

from ..doctor import diagnose, problems
from ..formats.files import LIMITS
from ..formats.tables import Table, render
from ..terminal import quantity
from .base import SemrelCommand, command_variables
from .run_config import config_variables, folders_in_out

TEST_VARIABLES = ("SEMREL_DATA", "SEMREL_SCREENSHOTS")  # the tests' (and bench's) shared data folder, `make screenshots`


@click.command("doctor", cls=SemrelCommand, short_help='Show versions, the model, the cache and a browser.')
def doctor_command() -> None:
    """Report versions, the default model found, the embedding cache's location and size, where the
    docs that messages cite (docs/*.md) are, the SEMREL_* variables set (a model or cache one names is
    checked: commands use it instead of the defaults above; one that nothing reads, a misspelt name, is
    marked UNUSED), and whether a browser for the tests is present. Exits 1 where a finding is MISSING, UNUSABLE,
    DAMAGED, UNREADABLE or UNUSED (a command would stop on it, or not see a setting), so a setup script can check with it."""
    rows = diagnose(known=known_variables(), in_out=folders_in_out(os.environ))
    click.echo(render(Table(["item", "found"], [list(row) for row in rows]), "table"), nl=False)
    if found := problems(rows):
        click.echo(f"semrel doctor: {quantity(len(found), 'problem')}: {', '.join(found)}", err=True)
        sys.exit(1)


def known_variables() -> set[str]:
    """Every SEMREL_* variable semrel reads: each command's options (click's SEMREL_<COMMAND>_<OPTION>, at any depth, and
    the variables an option names itself), `semrel run`'s config keys, the size limits and the tests' own."""
    return command_variables() | config_variables() | {variable for variable, _ in LIMITS} | set(TEST_VARIABLES)
