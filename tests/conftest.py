from __future__ import annotations

import os
from pathlib import Path

import pytest

from helpers import run


@pytest.fixture(scope="session", autouse=True)
def private_user_cache(tmp_path_factory):
    """Commands that default to the user cache dir (embeddings, dense vectors) write into a folder of
    this test session, here and in the subprocesses tests start, never into the user's own cache."""
    previous = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("user-cache"))
    yield
    if previous is None:
        os.environ.pop("XDG_CACHE_HOME")
    else:
        os.environ["XDG_CACHE_HOME"] = previous


@pytest.fixture(scope="session")
def ranx():
    """ranx (the reference for fusion and RBP) with numba's JIT off: the same functions, interpreted. Compiling them cost
    50-90 s (a fresh install has no numba cache) for inputs that take seconds interpreted. One fixture for every test
    that uses ranx, set before ranx is first imported: imported with the JIT on by one test file and turned off by
    another's fixture, the half-compiled functions failed in numba ('function' object has no attribute
    'get_call_template') in whichever ran second in a worker."""
    numba = pytest.importorskip("numba")
    previous, numba.config.DISABLE_JIT = numba.config.DISABLE_JIT, True  # read when ranx's functions are decorated
    yield pytest.importorskip("ranx")
    numba.config.DISABLE_JIT = previous  # for whatever this process runs next (ranx's functions stay interpreted)


@pytest.fixture
def write(tmp_path: Path):
    """write(name, text) -> path of a file holding text, in the test's folder."""

    def _write(name: str, text: str | bytes) -> str:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
        return str(path)

    return _write


@pytest.fixture
def cli():
    """cli(*args, input=None) -> click Result, stdout and stderr kept apart (helpers.run)."""
    return run


def pytest_terminal_summary(terminalreporter):
    """The bad-input catalogue's counts (tests/catalogue.py), when any of its cases ran."""
    from catalogue import TALLY

    if TALLY.tried:
        terminalreporter.write_line(TALLY.line())
        if TALLY.failures:
            terminalreporter.write_line(f"  tracebacks or modified inputs: {', '.join(TALLY.failures)}")
