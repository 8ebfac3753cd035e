"""The `semrel` command: a thin click layer over the library (commands load lazily, see base.py)."""

from .base import main

__all__ = ["main"]
