"""The `semrel` command: a thin click layer over the library."""

from .base import main
from .evaluate import eval_command
from .judge import judge_command, label_command

main.add_command(eval_command)
main.add_command(judge_command)
main.add_command(label_command)

__all__ = ["main"]
