"""The command reference (docs/commands.md), generated from the commands' own --help.

`python -m semrel.cli.reference > docs/commands.md` regenerates it; a test keeps it in sync.
"""

from __future__ import annotations

import click

from . import main

WIDTH = 100


def _sections(command: click.Command, name: str, parent: click.Context | None) -> list[str]:
    """This command's help and, for a group, its subcommands', as `semrel ... --help` prints them."""
    context = command.make_context(name, [], parent=parent, resilient_parsing=True, terminal_width=WIDTH)
    sections = [f"\n## `{context.command_path}`\n\n```\n{command.get_help(context)}\n```\n"]
    if isinstance(command, click.Group):
        for sub in sorted(command.commands):
            sections += _sections(command.commands[sub], sub, context)
    return sections


def command_reference() -> str:
    """Markdown: one section per command with its --help text."""
    header = ("# Command reference\n\nGenerated from `--help` by `python -m semrel.cli.reference`; "
              "a test keeps it in sync with the code.\n")
    return header + "".join(_sections(main, "semrel", None))


if __name__ == "__main__":
    click.echo(command_reference(), nl=False)
