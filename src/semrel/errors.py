"""Errors a user can act on: the CLI prints them as one line and exits non-zero."""

from __future__ import annotations

import numbers
import warnings
from typing import Any, Callable, Iterable, Mapping


class SemrelError(Exception):
    """Base of every error the CLI turns into one clear line (exit code 1)."""

    exit_code = 1


class FormatError(SemrelError):
    """A file is not in the expected format; names the file and, where known, the line."""

    def __init__(self, path: str, message: str, line: int | None = None, hint: str | None = None):
        self.path = str(path)
        self.line = line
        self.message = message
        self.hint = hint
        where = f"{self.path}:{line}" if line is not None else self.path
        text = f"{where}: {message}"
        if hint:
            text += f" ({hint})"
        super().__init__(text)


class ValidationError(SemrelError):
    """Input parsed but is inconsistent (duplicate ids, unknown chunks, bad options)."""


class UsageError(SemrelError):
    """An option or argument combination that cannot work."""

    exit_code = 2


class Interrupted(SemrelError):
    """Ctrl-C during long work: what was kept and how to go on (exit code 130, as shells report SIGINT)."""

    exit_code = 130


def first_line(exc: BaseException) -> str:
    """A library's message, to put inside semrel's one-line error: its first line (its name, if it has none)."""
    return (str(exc).splitlines() or [type(exc).__name__])[0]


def tell(messages: Iterable[str], warn: Callable[[str], None] | None, stacklevel: int = 2) -> None:
    """Each message to `warn` (the CLI prints it), or without it as a Python warning from the caller's
    line (stacklevel counts from the function calling this), so a library caller loses none."""
    for message in messages:
        if warn is not None:
            warn(message)
        else:
            warnings.warn(message, stacklevel=stacklevel + 1)


def check_kind(name: str, value: Any, kinds: tuple[type, ...], what: str, required: bool = False) -> None:
    """The Python API's TypeError naming the argument, unless `value` is one of `kinds` (a bool is no
    number) or None where the argument may be left unset (not `required`): a wrong kind is refused
    before any work, not found deep inside it."""
    if value is None and required:
        raise TypeError(f"{name}: give {what}, not None")
    if value is not None and (not isinstance(value, kinds) or isinstance(value, bool) and bool not in kinds):
        raise TypeError(f"{name}: give {what}, not {type(value).__name__}")


def check_flags(**flags: Any) -> None:
    """Flags of the Python API are True or False: "no" or 0.5 would be taken as true or false silently."""
    for name, value in flags.items():
        check_kind(name, value, (bool,), "True or False", required=True)


def check_seed(seed: Any) -> None:
    """A seed of the Python API: a whole number, 0 or more (numpy's generators refuse a negative one)."""
    check_kind("seed", seed, (numbers.Integral,), "a whole number", required=True)
    if seed < 0:
        raise UsageError(f"seed={seed}: give 0 or more")


def check_list(name: str, value: Any, kinds: tuple[type, ...], what: str, each: str) -> list | None:
    """A list argument of the Python API (None stays None) as a list: an iterable, not text or a mapping
    (TypeError: give `what`), of `kinds` (TypeError: give `each`), so "0.3,0.7" is not taken letter by letter."""
    if value is None:
        return None
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise TypeError(f"{name}: give {what}, not {type(value).__name__}")
    values = list(value)
    for item in values:
        check_kind(name, item, kinds, each, required=True)  # None is no item
    return values


def check_warn(warn: Any) -> None:
    """`warn=` of the Python API: a callable taking one message, checked before the work, not after it."""
    if warn is not None and not callable(warn):
        raise TypeError(f"warn: give a function taking one message, not {type(warn).__name__}")
