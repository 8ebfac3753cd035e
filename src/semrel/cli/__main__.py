"""`python -m semrel.cli`: the same as the `semrel` command."""

from . import start

start()
