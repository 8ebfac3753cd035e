"""`semrel verify`: derived files against their manifests."""

from __future__ import annotations

import dataclasses
import json
import sys

import click

from ..encoding.models import describe_model
from ..errors import SemrelError, UsageError
from ..formats.manifest import check_manifests, derived_files
from ..progress import stderr_steps
from ..terminal import quantity
from .base import SemrelCommand
from .paths import input_path


def _fingerprints(model: str) -> tuple[str, ...] | None:
    """The fingerprints of a model's files now (semrel's, and the stamp older versions recorded); None if not found."""
    try:
        info = describe_model(model)
    except SemrelError:
        return None
    return (info.fingerprint, info.stamped_fingerprint)


@click.command("verify", cls=SemrelCommand, short_help="Check derived files against their manifests.")
@click.argument("files", nargs=-1, required=True, type=input_path(exists=True), metavar="FILE...")
@click.option("-f", "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def verify_command(files, fmt):
    """Check each FILE (or FILE.manifest.json; in a folder, each file with a manifest) against the manifest beside
    it: whether FILE changed since it was written; each input that changed (sha256; a folder by its files), is
    missing, or moved with FILE; a model whose files changed (judge, golden split, dedup, pick); the versions of
    semrel, torch, transformers and bert-score that differ from those installed now; a FILE without a manifest. One
    line per finding, and for a FILE with one, the commands that made it, to run again. Exit 1 if anything differs."""
    named = list(dict.fromkeys(name for given in files for name in derived_files(given)))  # `out/*` names a file and its manifest
    if not named:
        raise UsageError(f"{files[0]}: no file with a manifest in it (a folder's derived files are those with one)")
    unique = []
    with stderr_steps("checking manifests", len(named)) as advance:
        for checked in check_manifests(named, _fingerprints):
            unique.append(checked)
            advance(1)
    if fmt == "json":
        click.echo(json.dumps([{**dataclasses.asdict(c), "changed": c.changed} for c in unique], indent=2))
    for one in unique if fmt == "text" else ():
        for finding in one.findings:
            click.echo(f"{one.file}: {finding.message}".replace("\n", "\\n"))  # one line each: a path may hold a newline
        if one.changed and one.rerun:
            click.echo(f"{one.file}: to make it again: {' ; '.join(one.rerun)}")
        elif not one.findings:
            click.echo(f"{one.file}: as its manifest records")
    unknown = sum(any(f.kind in ("no manifest", "unreadable manifest") for f in c.findings) for c in unique)
    changed = sum(c.changed for c in unique) - unknown
    click.echo(f"{quantity(len(unique), 'file')}: {changed:,} changed since written, {unknown:,} without a readable manifest, "
               f"{len(unique) - changed - unknown:,} as recorded", err=True)
    if changed or unknown:
        sys.exit(1)
