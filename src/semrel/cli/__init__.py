"""The `semrel` command: a thin click layer over the library (commands load lazily, see base.py)."""

from __future__ import annotations

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
    try:
        from .base import main

        main(prog_name="semrel")
    finally:
        stop_at_exit()
