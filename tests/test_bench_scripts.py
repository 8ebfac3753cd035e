"""Every benchmark script answers --help with its usage and writes nothing.

bench/cranfield_trec.py read its folders from sys.argv, so `--help` became an output folder: a copy of
Cranfield named `--help` was committed to the repository."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
SCRIPTS = sorted(p.name for p in BENCH.glob("*.py") if 'if __name__ == "__main__":' in p.read_text(encoding="utf-8"))


def test_the_scripts_are_found() -> None:
    assert {"cranfield_trec.py", "labels.py", "judge.py", "scale.py"} <= set(SCRIPTS)
    assert "measured.py" not in SCRIPTS  # a module the scripts import, not a script


def test_readme_names_every_script_make_bench_runs() -> None:
    """README's "Benchmarks" says what `make bench` runs; bench/run_layouts.py was added to the target, not to it."""
    makefile = (BENCH.parent / "Makefile").read_text(encoding="utf-8")
    target = makefile.split("\nbench:", 1)[1].split("\n\n", 1)[0]
    readme = (BENCH.parent / "README.md").read_text(encoding="utf-8").split("## Benchmarks", 1)[1].split("\n## ", 1)[0]
    ran = re.findall(r"bench/\w+\.py", target)
    assert len(ran) > 5
    assert [script for script in ran if script not in readme] == []


@pytest.mark.slow
@pytest.mark.parametrize("script", SCRIPTS)
def test_help_writes_nothing(script: str, tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(BENCH / script), "--help"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage:"), done.stdout[:200]
    assert list(tmp_path.iterdir()) == []
