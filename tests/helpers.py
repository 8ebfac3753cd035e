"""Helpers shared by the corpus and golden-set tests: running the CLI and checking error lines."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import threading
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
import pytest
from click.testing import CliRunner, Result

from semrel.cli import main
from semrel.formats import files
from semrel.judging import labels

SHARED_DATA = Path(os.environ.get("SEMREL_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data"))
"""The shared data folder beside the repo (../shared/data), read where it lies, never copied; SEMREL_DATA (as for
bench/) points elsewhere, for a clone that does not lie beside it."""


def needs_shared(*paths: str) -> pytest.MarkDecorator:
    """Skip a test whose files under SHARED_DATA are absent, saying where it looked (README: tests against real
    data skip without it)."""
    missing = [SHARED_DATA / path for path in paths if not (SHARED_DATA / path).exists()]
    return pytest.mark.skipif(bool(missing), reason=f"needs {missing[0] if missing else SHARED_DATA} "
                                                    "(SEMREL_DATA: the shared data folder)")


def takes_ctrl_c() -> dict[str, Any]:
    """Popen arguments that give the child Ctrl-C (SIGINT) as a terminal delivers it. A background
    job starts with SIGINT ignored, Python then leaves it ignored, and a child sent SIGINT would
    never stop: the tests that interrupt a process would hang when the suite runs in the background."""
    return {"preexec_fn": lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)}


def run(*args: str, input: str | None = None) -> Result:
    """The CLI as a user runs it; exceptions other than SystemExit propagate (they are bugs)."""
    return CliRunner().invoke(main, [str(a) for a in args], input=input, catch_exceptions=False)


def ok(*args: str, input: str | None = None) -> Result:
    """The CLI run as a user runs it, which must succeed."""
    result = run(*args, input=input)
    assert result.exit_code == 0, result.output
    return result


def assert_one_error(result: Result, *fragments: str, code: int = 1) -> str:
    """The command failed with `code` and said why in one stderr line holding every fragment."""
    assert result.exit_code == code, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("semrel: error: "), result.stderr
    assert "Traceback" not in result.output
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


def read_lines(path: str | Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").split("\n") if line]


def write(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


PROGRESS = re.compile(r"semrel: [^:]+(: [^:]+)?: \d+/\d+(, |$)")


def message_lines(stderr: str) -> list[str]:
    """stderr without the progress lines long work draws ('semrel: judging pairs: 0/453, ...')."""
    return [line for line in stderr.splitlines() if not PROGRESS.match(line)]


def drawn_features(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Features of p (shape + (len(FEATURES),)) inside the range WITH_GOLD was fitted on, away from its edges (beta(2, 2));
    relR_idf within -1..1, where development pairs lie (its range reaches -108 on an MS MARCO pool whose best chunk barely
    beats unrelated text)."""
    lo, hi = np.array(labels.WITH_GOLD.lower), np.array(labels.WITH_GOLD.upper)
    lo[labels.FEATURES.index("relR_idf")] = -1.0
    return lo + (hi - lo) * rng.beta(2, 2, (*shape, len(labels.FEATURES)))


def keep_screenshot(made: Path, name: str) -> None:
    """Copy a screenshot a browser test made to docs/`name` when SEMREL_SCREENSHOTS=1 (`make screenshots`):
    a test run must not change the tracked files of a clone."""
    if os.environ.get("SEMREL_SCREENSHOTS") == "1":
        shutil.copyfile(made, Path(__file__).resolve().parents[1] / "docs" / name)


def recorder(seen: list) -> Any:
    """Steps (semrel.progress) that record each step's label, total and the counts it was advanced by, in `seen`."""

    @contextlib.contextmanager
    def steps(label: str, total: int | None) -> Iterator[Callable[[int], None]]:
        counts: list[int] = []
        seen.append((label, total, counts))
        yield counts.append

    return steps


@contextlib.contextmanager
def fifo_writer(path: Path, payload: bytes) -> Iterator[list[bool]]:
    """A FIFO at `path` with a writer standing by for the block (polling, so it never blocks): code that wrongly opens it
    reads `payload` and goes on instead of hanging the test. Yields a list that gains an item each time a reader opened it."""
    import threading
    import time

    os.mkfifo(path)
    done, opened = threading.Event(), []

    def write() -> None:
        while not done.is_set():
            try:
                fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)  # ENXIO while no reader has it open
            except OSError:
                time.sleep(0.01)
                continue
            opened.append(True)
            os.write(fd, payload)
            os.close(fd)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    try:
        yield opened
    finally:
        done.set()
        writer.join()


@contextlib.contextmanager
def file_size_limit(size: int) -> Iterator[None]:
    """Inside the block no file grows past `size` bytes: a write past it fails with EFBIG (SIGXFSZ ignored, as the CLI
    ignores it), which is how a full disk meets a file held open. Write nothing else big inside it."""
    import resource

    limits = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size, limits[1]))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, limits)
        signal.signal(signal.SIGXFSZ, handler)


class SecondWriter:
    """`action`, a second writer of a file, run in a thread at a moment a test chooses (while the first writer is
    between its check and its rename): start() returns once it waits for a lock semrel holds, or has ended (nothing held
    it back); outcome() is what it returned or raised, once the first writer let go. Contention shown by order, not time."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, action: Callable[[], Any]):
        self.action, self.settled, self.waited = action, threading.Event(), False
        self.result: Any = None
        real = files.locked

        def locked(path: Any, waiting: Callable[[], None] | None = None, **options: Any) -> Any:
            def told() -> None:
                if threading.current_thread() is self.thread:
                    self.waited = True
                    self.settled.set()
                if waiting is not None:
                    waiting()
            return real(path, told, **options)

        monkeypatch.setattr(files, "locked", locked)
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            self.result = self.action()
        except BaseException as exc:  # noqa: BLE001 (what the writer raised is the outcome to check)
            self.result = exc
        self.settled.set()

    def start(self) -> None:
        self.thread.start()
        assert self.settled.wait(120), "the second writer neither waited for the lock nor ended"

    def outcome(self) -> Any:
        self.thread.join(120)
        assert not self.thread.is_alive(), "the second writer never ended"
        return self.result
