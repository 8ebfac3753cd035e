"""The `semrel` command: a thin click layer over the library (commands load lazily, see base.py)."""

from __future__ import annotations

import errno
import io
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import main

__all__ = ["main", "start"]


def __getattr__(name: str) -> Any:
    """`main`, the click group, is imported on first use, so that start() sets its handlers before it loads."""
    if name == "main":
        from .base import main

        return main
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def start() -> None:
    """The `semrel` console script. A Ctrl-C while the command's modules load ends as one inside a
    command does (one line, exit 130), not in a traceback (see interrupts.stop_on_interrupts)."""
    from ..interrupts import stop_at_exit, stop_on_interrupts

    stop_on_interrupts()
    _closed_stdout_fails()
    try:
        from .base import main

        main(prog_name="semrel")
    finally:
        stop_at_exit()


class _ClosedStdout(io.TextIOBase):
    """stdout as `semrel ... >&-` leaves it: writing to it fails as a write to a closed descriptor does."""

    encoding = "utf-8"

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "closed (the command was started with >&-), so its results had nowhere to go", "stdout")


def _closed_stdout_fails() -> None:
    """`semrel ... >&-`: Python leaves sys.stdout None, click then dropped the results without a word and the final
    flush was an AttributeError traceback; and the next file opened took descriptor 1. /dev/null now holds the
    descriptor, and writing results fails in one line (a command that writes only files runs as usual)."""
    if sys.stdout is not None:
        return
    try:
        os.fstat(1)
    except OSError:
        null = os.open(os.devnull, os.O_WRONLY)
        if null != 1:
            os.dup2(null, 1)
            os.close(null)
    sys.stdout = _ClosedStdout()
