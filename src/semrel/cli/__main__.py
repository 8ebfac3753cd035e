"""`python -m semrel.cli`: the same as the `semrel` command."""

from . import main

main(prog_name="semrel")
