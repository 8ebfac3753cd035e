"""The bad-input catalogue's bookkeeping and its way of running semrel in a fenced-off process.

Every case of tests/cli/test_bad_input_catalogue.py (and the hostile-input tests beside it) is
recorded here: refused cleanly (one `semrel: error:` line, exit code 1 or 2, no traceback, no
temp file, its inputs byte-identical), or accepted (odd but valid input giving the right result).
tests/conftest.py prints the counts at the end of the run.

Cases that could hurt the machine (a device, a FIFO, a decompression bomb, a full disk) run in a
subprocess under resource limits: an address-space limit (RLIMIT_AS), a file-size limit
(RLIMIT_FSIZE, with SIGXFSZ ignored so the write fails instead of killing), and a timeout.
"""

from __future__ import annotations

import hashlib
import os
import resource
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import semrel
from helpers import message_lines

SRC = str(Path(semrel.__file__).resolve().parents[1])


@dataclass
class Tally:
    tried: int = 0
    refused: int = 0
    accepted: int = 0
    tracebacks: int = 0
    modified: int = 0
    failures: list[str] = field(default_factory=list)

    def record(self, name: str, refused: bool, traceback: bool = False, modified: bool = False) -> None:
        self.tried += 1
        self.refused += refused and not traceback
        self.accepted += not refused
        self.tracebacks += traceback
        self.modified += modified
        if traceback or modified:
            self.failures.append(name)

    def line(self) -> str:
        return (f"bad-input catalogue: {self.tried} inputs tried, {self.refused} refused cleanly, {self.accepted} accepted, "
                f"{self.tracebacks} tracebacks, {self.modified} inputs modified")


TALLY = Tally()


def digests(folder: Path) -> dict[str, str]:
    """sha256 of every regular file under `folder` (links and special files by their target's name)."""
    found = {}
    for path in sorted(folder.rglob("*")):
        name = str(path.relative_to(folder))
        if path.is_symlink():
            found[name] = "-> " + os.readlink(path)
        elif path.is_file():
            found[name] = hashlib.sha256(path.read_bytes()).hexdigest()
        elif not path.is_dir():
            found[name] = "special"
    return found


MEASURE = """
import resource, subprocess, sys
code = subprocess.run(sys.argv[1:]).returncode
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)
sys.exit(code)
"""


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str  # without the measuring line
    rss_mb: float
    timed_out: bool = False


def fenced(args: list[str], cwd: Path, memory_gb: float = 3.0, file_bytes: int | None = None, timeout: float = 60,
           stdin: int | None = subprocess.DEVNULL, stdout: int | None = subprocess.PIPE, env: dict | None = None) -> Outcome:
    """`semrel ARGS` in `cwd` as a grandchild under the limits; its peak RSS is what its parent sees
    in RUSAGE_CHILDREN."""

    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (int(memory_gb * 2**30),) * 2)
        if file_bytes is not None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_bytes, file_bytes))

    command = [sys.executable, "-c", MEASURE, sys.executable, "-m", "semrel", *args]
    environment = {**os.environ, "PYTHONPATH": SRC, **(env or {})}
    process = subprocess.Popen(command, cwd=cwd, env=environment, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE,
                               preexec_fn=limits, start_new_session=True)
    try:
        out, err_bytes = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)  # semrel itself runs as a grandchild: the whole group goes
        out, err_bytes = process.communicate()
        return Outcome(-1, "", err_bytes.decode(errors="replace"), 0.0, timed_out=True)
    err = err_bytes.decode("utf-8", "replace").rstrip("\n").split("\n")
    rss = int(err.pop()) / 1024 if err and err[-1].isdigit() else 0.0
    text = out.decode("utf-8", "replace") if out is not None else ""
    return Outcome(process.returncode, text, "\n".join(err).strip(), rss)



def refused_cleanly(name: str, outcome: Outcome, before: dict[str, str], after: dict[str, str], *fragments: str,
                    codes: tuple[int, ...] = (1, 2)) -> str:
    """Record and check a refusal: one `semrel: error:` line holding every fragment, an exit code
    in `codes`, no traceback or interpreter noise, and the folder's files as they were (no input
    touched, no output or temp file left). Progress lines ('semrel: chunking: 0/500') may come before it."""
    lines = message_lines(outcome.stderr)
    traceback = "Traceback" in outcome.stderr or "Exception ignored" in outcome.stderr
    modified = any(after.get(k) != v for k, v in before.items())
    TALLY.record(name, refused=True, traceback=traceback, modified=modified)
    assert not outcome.timed_out, f"{name}: timed out"
    assert not traceback, outcome.stderr
    assert outcome.code in codes, (outcome.code, outcome.stderr)
    assert len(lines) == 1 and lines[0].startswith("semrel: error: "), outcome.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    assert not modified, f"{name}: an input changed"
    assert after == before, f"{name}: files left behind: {sorted(set(after) - set(before))}"
    return lines[0]
