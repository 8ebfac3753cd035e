"""`python -m semrel`: the same as the `semrel` command."""

from .cli import start

start()
