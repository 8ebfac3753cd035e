"""Ctrl-C, SIGTERM and SIGHUP: held back where a set of files is put in place, and remembered
while a CLI command runs, so that no file is replaced after one, whatever swallowed its exception.

A core module (signal, threading, os and contextlib only, not even typing), so the console script can install its
handlers as the semrel package starts to load (semrel/__init__.py)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType

INTERRUPTS = ("SIGINT", "SIGTERM", "SIGHUP")
_received: list[int] = []  # signals received inside interrupts_recorded
_depth = [0]


class InterruptedAfterWriting(KeyboardInterrupt):
    """A signal held while a set of files was put in place, delivered once all of them were: the
    command stops, but the files it names are new and whole (the message must not suggest otherwise)."""

    def __init__(self, written: list[str]):
        super().__init__(written)
        self.written = written


def interrupted_message(exc: KeyboardInterrupt) -> str:
    """What a command says when a signal stops it."""
    if isinstance(exc, InterruptedAfterWriting):
        return f"interrupted after {', '.join(exc.written)} had been written in full (new and complete)"
    return "interrupted"


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP arriving inside the block are delivered when it ends, to the
    handlers there were (Python runs handlers in the main thread only: elsewhere nothing is held)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {}
    for name in INTERRUPTS:
        number = getattr(signal, name, None)
        if number is not None:
            previous[number] = signal.signal(number, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler if handler is not None else signal.SIG_DFL)
        if caught:
            handler = previous[caught[0]]
            if callable(handler):  # Python's own handler (KeyboardInterrupt for Ctrl-C), called as the interpreter would
                handler(caught[0], None)
            elif handler != signal.SIG_IGN:
                signal.raise_signal(caught[0])  # the default action, e.g. the end of the process


def _record(signum: int, frame: FrameType | None) -> None:
    _received.append(signum)
    raise KeyboardInterrupt


@contextlib.contextmanager
def interrupts_recorded() -> Iterator[list[int]]:
    """Inside the block (a CLI command) Ctrl-C, SIGTERM and SIGHUP raise KeyboardInterrupt, as Python's
    Ctrl-C does (so temp files are removed and checkpoints kept; SIGTERM and SIGHUP would end the
    process at once), and are remembered: one whose exception a library swallowed (it happens in
    compiled code, e.g. while pandas' modules initialise) still stops every write before it replaces
    a file (check_interrupted). A signal the process was started ignoring stays ignored (nohup).
    Yields the signals received so far (a list that grows)."""
    if threading.current_thread() is not threading.main_thread():
        yield []
        return
    previous = {}
    for name in INTERRUPTS:
        number = getattr(signal, name, None)
        if number is not None and signal.getsignal(number) is not signal.SIG_IGN:
            previous[number] = signal.signal(number, _record)
    _depth[0] += 1
    try:
        yield _received
    finally:
        _depth[0] -= 1
        for number, handler in previous.items():
            signal.signal(number, handler if handler is not None else signal.SIG_DFL)
        if not _depth[0]:
            _received.clear()


def check_interrupted() -> None:
    """Raise KeyboardInterrupt if a signal was received whose exception was swallowed: called before a file is replaced."""
    if _received:
        raise KeyboardInterrupt


def terminated() -> bool:
    """SIGTERM or SIGHUP was received inside the command: the process was told to end (a closed terminal, `kill`), which
    an interactive command must not take as a person's Ctrl-C, its way to quit."""
    return any(signum != signal.SIGINT for signum in _received)


def _stop(signum: int, frame: FrameType | None) -> None:
    _received.append(signum)  # if a bare `except:` in an import swallows the exit, no file is replaced after it
    sys.stderr.write("semrel: error: interrupted\n")
    raise SystemExit(130)


def _exit_now(signum: int, frame: FrameType | None) -> None:
    sys.stderr.write("semrel: error: interrupted\n")
    for stream in (sys.stdout, sys.stderr):  # what the command printed is whole; os._exit flushes nothing
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(130)


def stop_at_exit() -> None:
    """Once the command has returned, Ctrl-C, SIGTERM and SIGHUP end the process at once, with the command's line and
    exit 130: raised in an atexit callback as the interpreter shuts down (torch's, ray's), SystemExit printed a
    traceback and the process exited 0. Everything the command wrote is in place by then. Not after the last atexit
    callback: Python then puts back the default actions and tears its modules down (0.2-0.5 s once pyarrow is loaded),
    and a signal there ends the process by that signal, with no line (a shell still reports 130 for Ctrl-C)."""
    for name in INTERRUPTS:
        number = getattr(signal, name, None)
        if number is not None and signal.getsignal(number) is not signal.SIG_IGN:
            signal.signal(number, _exit_now)


def stop_on_interrupts() -> None:
    """Until a command runs (and installs interrupts_recorded), Ctrl-C, SIGTERM and SIGHUP end the
    process with the line a command gives, exit 130: not a traceback from the middle of an import, nor
    click's "Aborted!" (exit 1), nor a silent end. Nothing has been written yet then. For the console
    script only: it replaces the handlers of the whole process. Ignored signals stay ignored (nohup)."""
    for name in INTERRUPTS:
        number = getattr(signal, name, None)
        if number is not None and signal.getsignal(number) is not signal.SIG_IGN:
            signal.signal(number, _stop)
