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
