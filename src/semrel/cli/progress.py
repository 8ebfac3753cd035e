"""Progress bars on stderr for the library's `steps(label, total)` reporting."""

from __future__ import annotations

import contextlib
import sys
from typing import Iterator

import click

from ..retrieve import Advance


@contextlib.contextmanager
def stderr_steps(label: str, total: int) -> Iterator[Advance]:
    """A click progress bar on stderr (a single line when stderr is not a terminal)."""
    with click.progressbar(length=total, label=label, file=sys.stderr) as bar:
        yield bar.update
