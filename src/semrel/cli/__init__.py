"""The `semrel` command: a thin click layer over the library."""

from .base import main
from .evaluate import eval_command
from .pick import pick_command
from .pool import pool_command
from .retrieve import retrieve_command

main.add_command(eval_command)
main.add_command(retrieve_command)
main.add_command(pool_command)
main.add_command(pick_command)  # to move under `semrel golden` at merge

__all__ = ["main"]
