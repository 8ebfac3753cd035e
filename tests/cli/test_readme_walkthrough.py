"""README's walkthrough is what `make demo` (`semrel run data/demo.toml`) runs, and it works when a
person types it line by line: each command in a fresh folder, in its own process, with the repo's semrel."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import run

ROOT = Path(__file__).resolve().parents[2]
ACTIVATE = ". .venv/bin/activate"


def block() -> str:
    """README's walkthrough, as printed there."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Ten minutes on the bundled data", 1)[1].split("\n## ", 1)[0]
    return section.split("```sh\n", 1)[1].split("```", 1)[0]


def walkthrough() -> list[str]:
    """Its commands, continuation lines joined."""
    return [line for line in block().replace(" \\\n", " ").splitlines() if line.strip()]


def fresh_clone(tmp_path: Path) -> Path:
    """The bundled data, and a .venv/bin/activate that puts this checkout's semrel on PATH."""
    shutil.copytree(ROOT / "data", tmp_path / "data")
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    semrel = bin_dir / "semrel"
    semrel.write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m semrel.cli \"$@\"\n")
    semrel.chmod(semrel.stat().st_mode | stat.S_IEXEC)
    (bin_dir / "activate").write_text(f"export PATH={shlex.quote(str(bin_dir))}:\"$PATH\"\n"
                                      f"export PYTHONPATH={shlex.quote(str(ROOT / 'src'))}\n")
    return tmp_path


def test_readme_walkthrough_is_what_semrel_run_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(fresh_clone(tmp_path))
    result = run("run", "data/demo.toml", "--dry-run")
    assert result.exit_code == 0, result.output
    printed = result.stdout.split("\n\nstep ", 1)[0]
    readme = block()
    assert readme == f"{ACTIVATE}\n{printed}\n", "README's walkthrough is not what `semrel run data/demo.toml` runs"
    assert "semrel lift out/demo/derived.qrels --base out/demo/runs/bm25.run" in readme
    assert "--curves out/demo/sensitivity.csv" in readme
    assert "semrel: " not in result.stderr  # no warnings while planning


@pytest.mark.slow
def test_readme_walkthrough_replays_line_by_line(tmp_path):
    folder = fresh_clone(tmp_path)
    commands = walkthrough()
    assert commands[0] == ACTIVATE and len(commands) == 18
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEMREL_")} | {"HF_HUB_OFFLINE": "1"}
    for command in commands[1:]:
        # each line in a new shell after the activate line, as a person in a fresh terminal would
        done = subprocess.run(["bash", "-c", f"set -eo pipefail; {ACTIVATE}; {command}"], cwd=folder, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, (command, done.stderr[-2000:])
        assert "Traceback" not in done.stderr
        for path in re.findall(r"(?:-o|>) (\S+)", command):
            assert (folder / path).stat().st_size > 0, (command, path)
            if not path.endswith(".txt") and not path.endswith(".json"):
                assert (folder / f"{path}.manifest.json").is_file(), path
    out = folder / "out" / "demo"
    lift = (out / "lift.txt").read_text()
    assert lift.splitlines()[0].split()[:3] == ["measure", "base", "reranked"] and "18 queries" in lift
    derived = {line.split()[0]: line.split()[1:] for line in (out / "eval.derived.txt").read_text().splitlines()[2:]}
    base_ndcg, reranked_ndcg = (float(v) for v in lift.splitlines()[2].split()[1:3])
    assert lift.splitlines()[2].startswith("nDCG@10")
    assert (base_ndcg, reranked_ndcg) == (float(derived["nDCG@10"][0]), float(derived["nDCG@10"][3]))
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "bm25+dense" in html and "lift" in html.lower()


def test_readme_trec_commands_import_and_evaluate_the_bundled_collection(tmp_path):
    """README's three TREC commands, typed in a fresh clone, each in its own shell."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Your own files", 1)[1].split("\n## ", 1)[0]
    commands = [c for c in section.split("```sh\n", 1)[1].split("```", 1)[0].replace(" \\\n", " ").splitlines() if c.strip()]
    assert len(commands) == 3 and commands[0].startswith("semrel golden import data/trec/topics.txt")
    folder = fresh_clone(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEMREL_")}
    for command in commands:
        done = subprocess.run(["bash", "-c", f"set -eo pipefail; {ACTIVATE}; {command}"], cwd=folder, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, (command, done.stderr[-2000:])
    table = dict(line.split() for line in done.stdout.splitlines()[2:])
    assert set(table) == {"AP", "nDCG@10", "P@10"} and float(table["AP"]) > 0.5
