"""The `semrel` command: a thin click layer over the library."""

from .base import main
from .corpus import corpus_group
from .evaluate import eval_command
from .golden import golden_group
from .pick import pick_command
from .pool import pool_command
from .retrieve import retrieve_command

golden_group.add_command(pick_command)
for command in (eval_command, corpus_group, golden_group, retrieve_command, pool_command):
    main.add_command(command)

__all__ = ["main"]
