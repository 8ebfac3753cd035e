"""Every benchmark script answers --help with its usage and writes nothing.

bench/cranfield_trec.py read its folders from sys.argv, so `--help` became an output folder: a copy of
Cranfield named `--help` was committed to the repository."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
SCRIPTS = sorted(p.name for p in BENCH.glob("*.py") if 'if __name__ == "__main__":' in p.read_text(encoding="utf-8"))


def test_the_scripts_are_found() -> None:
    assert {"cranfield_trec.py", "labels.py", "judge.py", "scale.py"} <= set(SCRIPTS)
    assert "measured.py" not in SCRIPTS  # a module the scripts import, not a script


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS)
def test_help_writes_nothing(script: str, tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(BENCH / script), "--help"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage:"), done.stdout[:200]
    assert list(tmp_path.iterdir()) == []
