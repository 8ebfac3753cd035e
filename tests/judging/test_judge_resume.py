"""`semrel judge` stopped mid-run in a real process (SIGKILL, then Ctrl-C) and started again:
every pair is scored exactly once across the runs, and the result equals an uninterrupted run's.

Real all-MiniLM-L6-v2 on the bundled data/ (six notes in 40-word chunks, every query against
every chunk), a fresh embedding cache, so the run takes long enough to be stopped halfway.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import semrel
from helpers import run, takes_ctrl_c
from semrel.formats.pool import write_pool

DATA = Path(__file__).resolve().parents[2] / "data"
SUMMARY = re.compile(r"judged ([\d,]+) pairs \(([\d,]+) resumed, ([\d,]+) scored\)")  # counts as 1,234


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("resume")
    for args in (["corpus", "chunk", DATA / "docs", "--size", "40", "--overlap", "25", "-o", folder / "corpus.jsonl"],
                 ["golden", "import", DATA / "golden.csv", "--corpus", folder / "corpus.jsonl", "-o", folder / "golden.jsonl"]):
        result = run(*args)
        assert result.exit_code == 0, result.output
    chunks = [json.loads(line)["_id"] for line in (folder / "corpus.jsonl").read_text().splitlines()]
    queries = [json.loads(line)["query_id"] for line in (folder / "golden.jsonl").read_text().splitlines()]
    total = write_pool([(q, c, ("all",)) for q in queries for c in chunks], folder / "pool.tsv")
    assert len(chunks) > 150 and total == len(chunks) * len(queries)
    return folder, total


def _command(folder: Path) -> list[str]:
    return [sys.executable, "-m", "semrel.cli", "judge", "--corpus", str(folder / "corpus.jsonl"), "--golden",
            str(folder / "golden.jsonl"), "--pool", str(folder / "pool.tsv"), "-o", str(folder / "j.jsonl"),
            "--cache", str(folder / "cache")]


def _saved(partial: Path) -> list[tuple[str, str, str]]:
    """(kind, query, chunk) of each complete row of the checkpoint (a torn last line is not one)."""
    if not partial.exists():
        return []
    lines = partial.read_text().split("\n")[1:-1]  # after the header; the last piece has no newline
    return [(row["kind"], row["query_id"], row["chunk_id"]) for row in map(json.loads, lines)]


def _stop(folder: Path, sig: int, total: int) -> subprocess.CompletedProcess:
    """Start the judge, send `sig` once its checkpoint holds some scored rows, and wait for it."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    process = subprocess.Popen(_command(folder), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               **takes_ctrl_c())
    partial, before = folder / "j.jsonl.partial", len(_saved(folder / "j.jsonl.partial"))
    deadline = time.monotonic() + 300
    while len(_saved(partial)) <= before and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(sig)
    out, err = process.communicate(timeout=120)
    assert 0 < len(_saved(partial)) < total, f"not stopped mid-run: {err}"
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:.* pairs have no probability p")  # a corpus of the pool alone
def test_killed_and_interrupted_runs_resume_scoring_every_pair_exactly_once(inputs):
    folder, total = inputs
    partial = folder / "j.jsonl.partial"

    killed = _stop(folder, signal.SIGKILL, total)
    assert killed.returncode == -signal.SIGKILL and not (folder / "j.jsonl").exists()
    first = _saved(partial)
    with open(partial, "a") as handle:
        handle.write('{"i": 0, "kind": "pair", "query_id": "ch')  # a row torn by the kill, had it come mid-write

    interrupted = _stop(folder, signal.SIGINT, total)
    assert interrupted.returncode == 130 and not (folder / "j.jsonl").exists()
    assert interrupted.stderr.strip().splitlines()[-1] == (
        f"semrel: error: interrupted; finished pairs are kept in {folder / 'j.jsonl'}.partial; run the same command again to resume")
    second = _saved(partial)
    assert second[: len(first)] == first and len(second) > len(first)  # kept, not redone; the torn row gone
    assert len(set(second)) == len(second)

    done = subprocess.run(_command(folder), env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    judged, resumed, scored = (int(n.replace(",", "")) for n in SUMMARY.search(done.stderr).groups())
    assert judged == total and resumed == len(second) and resumed + scored == total
    assert not partial.exists()

    rows = [json.loads(line) for line in (folder / "j.jsonl").read_text().splitlines()]
    fresh = semrel.judge(folder / "corpus.jsonl", folder / "golden.jsonl", folder / "pool.tsv", cache=folder / "cache")
    assert fresh.encoded == 0  # every text was encoded (once) by the stopped runs and cached
    assert [(r["query_id"], r["chunk_id"], r["source"]) for r in rows] == [(j.query_id, j.chunk_id, j.source) for j in fresh.judgments]
    assert np.abs(np.array([[r[k] for k in "PRF"] for r in rows]) - np.array([[j.P, j.R, j.F] for j in fresh.judgments])).max() < 1e-6


def test_an_interrupt_before_any_pair_is_finished_names_no_file(tmp_path, monkeypatch):
    """The message promised a .partial file that the judge had not written yet."""
    import semrel.judging.judge

    def ctrl_c(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(semrel.judging.judge, "judge", ctrl_c)
    result = run("judge", "--corpus", tmp_path / "c.jsonl", "--golden", tmp_path / "g.jsonl", "-o", tmp_path / "j.jsonl")
    assert result.exit_code == 130 and result.stderr.strip() == "semrel: error: interrupted; no pair was finished yet", result.stderr
