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


def cited_passage(doc: str, cited: str) -> str:
    """The section a citation's heading opens, else the paragraph or list item holding its text ('...' leaves words out)."""
    lines = (BENCH.parent / doc).read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        level = len(line) - len(line.lstrip("#"))
        if level and line.lstrip("#").strip().startswith(cited):
            end = next((j for j in range(i + 1, len(lines)) if 0 < len(lines[j]) - len(lines[j].lstrip("#")) <= level), len(lines))
            return "\n".join(lines[i:end])
    text = "\n".join(lines)
    found = re.search(r"\s+".join(map(re.escape, cited.split("...")[0].split())), text)
    if found is None:
        return ""
    at = found.start()
    start = max(text.rfind("\n\n", 0, at), text.rfind("\n- ", 0, at))
    ends = [e for e in (text.find("\n\n", at), text.find("\n- ", at)) if e >= 0]
    return text[start:min(ends, default=len(text))]


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_passage_a_script_cites_for_its_answer_names_the_script(script: str) -> None:
    """bench/pool_depth.py cited docs/judge.md "Calibration", a bullet on ECE; its answer is the bullet after it."""
    text = " ".join((BENCH / script).read_text(encoding="utf-8").split())
    for doc, cited in re.findall(r"""(docs/[a-z_-]+\.md),? ["“]([^"”]+)["”]""", text):
        assert f"bench/{script}" in cited_passage(doc, cited), f"{script} cites {doc}, {cited!r}, which does not name it"
