from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from semrel.cli import main


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
    """cli(*args, input=None) -> click Result, stdout and stderr kept apart."""

    def _run(*args: str, input: str | bytes | None = None):
        return CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)

    return _run
