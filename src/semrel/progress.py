"""Progress of long work: one convention for the whole library, drawn on stderr by the CLI.

A library function that runs long takes `steps: Steps` and reports through it:

    with steps("encoding chunks", len(texts)) as advance:
        for batch in batches:
            ...
            advance(len(batch))

A step with total 0 only names itself (a stage of a report, say). The default, `no_progress`,
prints nothing, so notebooks stay quiet; the CLI passes `stderr_steps`: counts, rate and time
left on stderr, at most about once a second (every 10 s when stderr is not a terminal), so
stdout stays clean for results. A step of ANNOUNCE or more items also shows its line at once
(`0/11413`): the total is known before the first batch is done (and before a model has loaded).
"""

from __future__ import annotations

import contextlib
import sys
import time
from typing import Callable, ContextManager, Iterable, Iterator, Protocol, TextIO, TypeVar

from .terminal import safe, unfiltered

Advance = Callable[[int], None]
ANNOUNCE = 100


class Steps(Protocol):
    def __call__(self, label: str, total: int | None) -> ContextManager[Advance]: ...


def _ignore(count: int) -> None:
    return None


@contextlib.contextmanager
def no_progress(label: str, total: int | None) -> Iterator[Advance]:
    yield _ignore


@contextlib.contextmanager
def stderr_steps(label: str, total: int | None) -> Iterator[Advance]:
    """Steps drawn on stderr as a ProgressLine (a bare 'semrel: label' line for a step of total 0;
    a count without a total or time left where the total is None: not known before the work is done)."""
    if total is not None and total <= 0:
        sys.stderr.write(f"semrel: {label}\n")
        sys.stderr.flush()
        yield _ignore
        return
    line = ProgressLine(label, total)
    if total is not None and total >= ANNOUNCE:  # an unknown total shows once the work has run a while
        line.show()
    yield line.add
    line.close()


T = TypeVar("T")


def counted(items: Iterable[T], steps: Steps, label: str, every: int = 1000) -> Iterator[T]:
    """`items` passed on, counted as one step of unknown total (a large corpus read as a stream had shown no
    line on stderr), advanced every `every` items so the count costs nothing beside the reading."""
    with steps(label, None) as advance:
        pending = 0
        for item in items:
            yield item
            pending += 1
            if pending == every:
                advance(pending)
                pending = 0
        advance(pending)


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class ProgressLine:
    """A count against a total, with the rate and the time left.

    On a terminal the line is redrawn in place; elsewhere (logs, pipes) a new line is printed
    every `every` seconds, at least 10.
    """

    def __init__(self, label: str, total: int | None, stream: TextIO | None = None, every: float = 1.0):
        self.label, self.total, self.done = label, total, 0
        self.stream = stream or unfiltered(sys.stderr)  # it draws on purpose; its label is made safe in text()
        self.tty = self.stream.isatty()
        self.every = every if self.tty else max(every, 10.0)
        self.started = self.last = time.monotonic()
        self.shown: int | None = None  # the count the last line printed showed
        self.first: tuple[float, int] | None = None  # (when, count) of the first advance: the time left is reckoned from it

    def add(self, count: int = 1) -> None:
        self.done += count
        now = time.monotonic()
        if self.first is None:
            self.first = (now, self.done)
        if now - self.last >= self.every:
            self.show()

    def _pace(self) -> float:
        """Items a second since the first advance, once the work has gone on a second since (else 0: not known yet):
        what came before it (a model loading, a first batch encoding) is no measure of what is left (the judge's
        first estimate had been several times its time)."""
        if self.first is None:
            return 0.0
        seconds, items = time.monotonic() - self.first[0], self.done - self.first[1]
        return items / seconds if seconds >= 1.0 and items > 0 else 0.0

    def text(self) -> str:
        elapsed = max(time.monotonic() - self.started, 1e-9)
        rate = self.done / elapsed
        count = f"{self.done}" if self.total is None else f"{self.done}/{self.total}"
        if not self.done:
            return f"semrel: {safe(self.label)}: {count}"
        parts = [count, f"{rate:.1f}/s"]
        left = 0 if self.total is None else self.total - self.done
        pace = self._pace()
        if pace > 0 and left > 0:
            parts.append(f"ETA {_duration(left / pace)}")
        return f"semrel: {safe(self.label)}: " + ", ".join(parts)

    def show(self, final: bool = False) -> None:
        self.last, self.shown = time.monotonic(), self.done
        if self.tty:
            self.stream.write("\r\033[K" + self.text() + ("\n" if final else ""))
        else:
            self.stream.write(self.text() + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.total is None and self.shown is None:  # work of unknown size done before its first line: nothing to say
            return
        if self.tty or self.shown != self.done:  # in a log, a last line that says it already is not printed twice
            self.show(final=True)
