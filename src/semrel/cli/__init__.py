"""The `semrel` command: a thin click layer over the library."""

from .base import main
from .evaluate import eval_command

main.add_command(eval_command)

__all__ = ["main"]
