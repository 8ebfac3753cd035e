"""One child process's wall time, peak RSS and output: each benchmark figure comes from its own process."""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from dataclasses import dataclass


@dataclass
class Measured:
    seconds: float
    peak_mb: float  # the child's own peak RSS (os.wait4), not the parent's
    stdout: str
    stderr: str
    cpu_seconds: float = 0.0  # user + system time of the child (all its threads): steadier than wall time on a busy machine


def measured(command: list[str], cwd: str | os.PathLike | None = None) -> Measured:
    """Run `command` to the end; output goes through temporary files, so neither pipe can fill and block."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=err, cwd=cwd)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0), err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if process.returncode:
        raise SystemExit(f"{' '.join(map(str, command))} failed with exit code {process.returncode}:\n{stderr[-2000:]}")
    return Measured(seconds, usage.ru_maxrss / 1024, stdout, stderr, usage.ru_utime + usage.ru_stime)
