"""`python -m semrel`: the same as the `semrel` command."""

from .cli import main

main(prog_name="semrel")
