"""The `semrel` command: a thin click layer over the library."""

from .base import main
from .corpus import corpus_group
from .evaluate import eval_command
from .golden import golden_group
from .review import review_group

main.add_command(eval_command)
main.add_command(corpus_group)
main.add_command(golden_group)
main.add_command(review_group)

__all__ = ["main"]
