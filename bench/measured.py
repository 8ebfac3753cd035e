"""One child process's wall time, peak RSS and output: each benchmark figure comes from its own process."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

SEMREL = [sys.executable, "-c", "from semrel.cli import main; main()"]
"""The command line of this checkout's semrel, in this interpreter (no console script needed on PATH)."""


@dataclass
class Measured:
    seconds: float
    peak_mb: float  # the child's own peak RSS (os.wait4), not the parent's
    stdout: str
    stderr: str
    cpu_seconds: float = 0.0  # user + system CPU of the child: on a shared machine, steadier than wall time


def measured(command: list[str], cwd: str | os.PathLike | None = None, memory_cap: int | None = None, check: bool = True
             ) -> Measured:
    """Run `command` to the end; output goes through temporary files, so neither pipe can fill and block. A failure
    stops the bench, unless `check` is False (a failure is what is measured).

    `memory_cap` (bytes) limits the child's address space (RLIMIT_AS): on a shared machine a step that
    would outgrow it fails alone instead of pushing everything else out of memory."""

    def cap() -> None:
        if memory_cap:
            resource.setrlimit(resource.RLIMIT_AS, (memory_cap, memory_cap))

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=err, cwd=cwd, preexec_fn=cap if memory_cap else None)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0), err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if process.returncode and check:
        raise SystemExit(f"{' '.join(map(str, command))} failed with exit code {process.returncode}:\n{stderr[-2000:]}")
    return Measured(seconds, usage.ru_maxrss / 1024, stdout, stderr, usage.ru_utime + usage.ru_stime)
