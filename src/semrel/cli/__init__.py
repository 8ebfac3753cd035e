"""The `semrel` command: a thin click layer over the library."""

from .base import main
from .compare import compare_command, lift_command
from .corpus import corpus_group
from .evaluate import eval_command
from .golden import golden_group
from .report import report_command

main.add_command(eval_command)
main.add_command(corpus_group)
main.add_command(golden_group)
main.add_command(compare_command)
main.add_command(lift_command)
main.add_command(report_command)

__all__ = ["main"]
