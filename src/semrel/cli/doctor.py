"""`semrel doctor`: what semrel finds on this machine."""

from __future__ import annotations

import click

from ..doctor import diagnose
from ..formats.tables import Table, render
from .base import SemrelCommand


@click.command("doctor", cls=SemrelCommand, short_help='Show versions, the model, the cache and a browser.')
def doctor_command() -> None:
    """Report versions, the default model found, the embedding cache's location and size, the
    SEMREL_* variables set (a model or cache one names is checked: commands use it instead of the
    defaults above), and whether a browser for the tests is present."""
    click.echo(render(Table(["item", "found"], [list(row) for row in diagnose()]), "table"), nl=False)
