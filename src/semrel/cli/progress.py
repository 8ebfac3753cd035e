"""Progress bars on stderr for the library's `steps(label, total)` reporting."""

from __future__ import annotations

import contextlib
import sys
from typing import Iterator

import click

from ..retrieval.retrieve import Advance


def stderr_bar(label: str, total: int):
    """A click progress bar on stderr (a single line when stderr is not a terminal)."""
    return click.progressbar(length=total, label=label, file=sys.stderr)


@contextlib.contextmanager
def stderr_steps(label: str, total: int) -> Iterator[Advance]:
    """The library's `steps(label, total)` hook, drawn as a stderr_bar."""
    with stderr_bar(label, total) as bar:
        yield bar.update
