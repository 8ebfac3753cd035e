"""`semrel run CONFIG.toml` and `semrel init`: the pipeline from one config file."""

from __future__ import annotations

import os

import click

from ..errors import UsageError
from ..formats.files import atomic_writer
from ..pipeline import STEPS, run_pipeline, starter_config


@click.command("run")
@click.argument("config", type=click.Path(dir_okay=False))
@click.option("--dry-run", is_flag=True, help="Only print which steps would run.")
@click.option("--force", multiple=True, type=click.Choice(STEPS), metavar="STEP",
              help=f"Run STEP even when up to date (repeatable; its dependants follow): {', '.join(STEPS)}.")
def run_command(config, dry_run, force):
    """Run the pipeline CONFIG describes (see `semrel init` and docs/run.md), skipping up-to-date steps."""
    summary = run_pipeline(config, dry_run=dry_run, force=tuple(force), echo=lambda line: click.echo(line, err=True))
    width = max(len(name) for name, _, _ in summary)
    click.echo(f"{'step':<{width}}  status     seconds")
    for name, status, seconds in summary:
        click.echo(f"{name:<{width}}  {status:<9}  {seconds:7.2f}")
    click.echo(f"total: {sum(s for _, _, s in summary):.2f}s, {sum(st == 'ran' for _, st, _ in summary)} ran, "
               f"{sum(st == 'skipped' for _, st, _ in summary)} skipped")


@click.command("init")
@click.option("--docs", default="docs", show_default=True, help="Folder of the documents to chunk.")
@click.option("--golden", default="golden.csv", show_default=True, help="The golden QA file.")
@click.option("-o", "--output", default="semrel.toml", show_default=True, type=click.Path(dir_okay=False))
@click.option("--force", is_flag=True, help="Overwrite an existing config.")
def init_command(docs, golden, output, force):
    """Write a commented starter config for `semrel run`."""
    if os.path.exists(output) and not force:
        raise UsageError(f"{output}: already exists (--force overwrites it)")
    with atomic_writer(output) as out:
        out.write(starter_config(output, docs, golden))
    click.echo(f"wrote {output}; run it with: semrel run {output}")
