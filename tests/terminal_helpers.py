"""A semrel command at a pseudo-terminal: keys are read raw, as a person's are (piped keys never exercise click.getchar,
escape sequences, Ctrl-C/Ctrl-D as bytes, or the line editing of a prompt)."""

from __future__ import annotations

import os
import signal
import sys
import termios
import time
from pathlib import Path
from typing import Callable, Sequence

import semrel

SRC = str(Path(semrel.__file__).resolve().parents[1])


def resize(fd: int, rows: int, columns: int) -> None:
    """Set the terminal's window size, as a person resizing the window does (the kernel sends SIGWINCH)."""
    import fcntl
    import struct

    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))


def _reading_raw(fd: int) -> bool:
    """The terminal is in raw mode: the command waits for a key (on Linux the master reports the slave's settings)."""
    try:
        return not termios.tcgetattr(fd)[3] & termios.ICANON
    except termios.error:
        return False


def at_a_terminal(command: list[str], keys: Sequence[bytes | Callable[[int], object]], ready: bytes | Sequence[bytes],
                  job_control: bool = False, size: tuple[int, int] | None = None) -> tuple[int, str]:
    """Run `command` with a pseudo-terminal as its stdin and stdout, pressing each of `keys` once `ready` (one cue for
    all, or one per key) is shown since the key before; (exit code, what it showed). With `job_control`, as a job of
    a shell that has it (`set -m`) and brings it back once with `fg` after it stops (Ctrl-Z): alone, the command
    leads its session, and the kernel discards a stop signal sent to such a process group. `size`: the window's rows
    and columns at the start; a callable among `keys` is called with the terminal (e.g. `resize(fd, 24, 80)`) and the
    next key follows on the same cue.

    A key pressed before the command reads it raw is lost (click's raw mode flushes input typed ahead), so after the
    cue it waits, a few seconds at most, for raw mode; text for a line prompt (cooked mode) goes after that wait."""
    import pty
    import select

    cues = [ready] * len(keys) if isinstance(ready, bytes) else list(ready)
    pid, fd = pty.fork()
    if pid == 0:  # the child: exec at once, so nothing of pytest runs here
        argv = [sys.executable, "-c", "from semrel.cli import main; main()", *command]
        if job_control:
            argv = ["/bin/bash", "-c", 'set -m; "$@"; fg', "bash", *argv]
        environment = {**os.environ, "PYTHONPATH": SRC, "COLUMNS": "100"}
        if size is not None:  # the window's size, not COLUMNS and LINES, which rich would keep to
            resize(0, *size)
            environment = {k: v for k, v in environment.items() if k not in ("COLUMNS", "LINES")}
        os.execve(argv[0], argv, environment)
    shown, pressed, since = b"", 0, 0
    while True:
        while pressed < len(keys) and callable(keys[pressed]) and cues[pressed] in shown[since:]:
            keys[pressed](fd)
            pressed += 1
        if pressed < len(keys) and cues[pressed] in shown[since:]:
            time.sleep(0.3)  # the prompt is printed before the terminal is put in raw mode to read a key
            deadline = time.monotonic() + 3
            while not _reading_raw(fd) and time.monotonic() < deadline:
                time.sleep(0.05)
            since = len(shown)
            os.write(fd, keys[pressed])  # type: ignore[arg-type]
            pressed += 1
        if not select.select([fd], [], [], 60)[0]:
            os.kill(pid, signal.SIGKILL)
            raise AssertionError(f"no output for 60 s: {shown.decode(errors='replace')[-500:]}")
        try:
            data = os.read(fd, 65536)
        except OSError:  # the child closed the terminal
            data = b""
        if not data:
            break
        shown += data
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), shown.decode(errors="replace")
