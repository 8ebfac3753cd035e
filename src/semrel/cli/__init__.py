"""The `semrel` command: a thin click layer over the library (commands load lazily, see base.py)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import main

__all__ = ["main", "start"]


def __getattr__(name: str) -> Any:
    """`main`, the click group, is imported on first use, so that start() can catch a Ctrl-C that lands while it loads."""
    if name == "main":
        from .base import main

        return main
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def start() -> None:
    """The `semrel` console script. A Ctrl-C while the command's modules load, before any handler is
    in place, ends as one inside a command does (one line, exit 130), not in a traceback."""
    try:
        from .base import main
    except KeyboardInterrupt:
        sys.stderr.write("semrel: error: interrupted\n")
        raise SystemExit(130) from None
    main(prog_name="semrel")
