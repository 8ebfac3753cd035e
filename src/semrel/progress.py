"""Progress of long work on stderr: counts, rate and time left, at most about once a second."""

from __future__ import annotations

import sys
import time
from typing import TextIO


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class ProgressLine:
    """Named counters against totals; the rate and ETA follow the counter named `main`.

    On a terminal the line is redrawn in place; elsewhere (logs, pipes) a new line is printed
    every `every` seconds.
    """

    def __init__(self, label: str, totals: dict[str, int], main: str, stream: TextIO | None = None, every: float = 1.0):
        self.label, self.totals, self.main = label, dict(totals), main
        self.done = {name: 0 for name in totals}
        self.stream = stream or sys.stderr
        self.every = every if self.stream.isatty() else max(every, 10.0)
        self.started = self.last = time.monotonic()

    def add(self, name: str, count: int = 1) -> None:
        self.done[name] += count
        if time.monotonic() - self.last >= self.every:
            self.show()

    def text(self) -> str:
        elapsed = max(time.monotonic() - self.started, 1e-9)
        parts = [f"{name} {self.done[name]}/{self.totals[name]}" for name in self.totals]
        rate = self.done[self.main] / elapsed
        left = self.totals[self.main] - self.done[self.main]
        parts.append(f"{rate:.1f} {self.main}/s")
        if rate > 0 and left > 0:
            parts.append(f"ETA {_duration(left / rate)}")
        return f"{self.label}: " + ", ".join(parts)

    def show(self, final: bool = False) -> None:
        self.last = time.monotonic()
        if self.stream.isatty():
            self.stream.write("\r\033[K" + self.text() + ("\n" if final else ""))
        else:
            self.stream.write(self.text() + "\n")
        self.stream.flush()

    def close(self) -> None:
        self.show(final=True)
