"""The `semrel` command: a thin click layer over the library."""

from .agree import agree_command
from .base import main
from .calibrate import calibrate_command
from .corpus import corpus_group
from .estimate import estimate_command
from .evaluate import eval_command
from .golden import golden_group
from .review import review_group

main.add_command(eval_command)
main.add_command(corpus_group)
main.add_command(golden_group)
main.add_command(review_group)
main.add_command(calibrate_command)
main.add_command(agree_command)
main.add_command(estimate_command)

__all__ = ["main"]
