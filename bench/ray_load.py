"""`semrel judge --engine ray` on a busy machine: the local Ray instance semrel starts, its workers at semrel's own
priority (as shipped) against Ray's default (15 nicer), beside busy processes at normal priority.

    python bench/ray_load.py [--busy 3] [--limit 240]

On the demo's 120-word chunks with a bm25 pool of depth 10 (data/), two workers. Prints each arm's wall seconds (or
how far its progress got when --limit stopped it) and whether the judgments equal the quiet run's byte for byte
(docs/judge.md, the Ray paragraph). Ray's default is restored for that arm only, in its own process.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data"
SEMREL = [sys.executable, "-m", "semrel.cli"]
RAY_DEFAULT = [sys.executable, "-c", "import sys; import semrel.encoding.engines as e; e.LOCAL_RAY_CONFIG['worker_niceness'] = 15; "
               "sys.argv[0] = 'semrel'; from semrel.cli import start; start()"]


def prepare(folder: Path) -> list[str]:
    """The demo sample and its pool; returns the judge's input options."""
    corpus, golden = folder / "corpus.jsonl", folder / "golden.jsonl"
    for args in (["corpus", "chunk", DATA / "docs", "--size", 120, "--overlap", 20, "-o", corpus],
                 ["golden", "import", DATA / "golden.csv", "--corpus", corpus, "-o", golden],
                 ["retrieve", "--corpus", corpus, "--golden", golden, "-k", 10, "-o", folder / "bm25.run"],
                 ["pool", "--golden", golden, folder / "bm25.run", "--depth", 10, "-o", folder / "pool.tsv"]):
        subprocess.run(SEMREL + list(map(str, args)), check=True, capture_output=True)
    return [str(a) for a in ("--corpus", corpus, "--golden", golden, "--pool", folder / "pool.tsv")]


def judge(command: list[str], inputs: list[str], output: Path, limit: float) -> str:
    """One arm in its own process: its wall time, or the last progress it showed when the limit stopped it."""
    started = time.perf_counter()
    try:
        done = subprocess.run(command + ["judge", *inputs, "--no-cache", "--engine", "ray", "--ray-workers", "2", "-o", str(output)],
                              capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired as stopped:
        err = stopped.stderr.decode(errors="replace") if isinstance(stopped.stderr, bytes) else stopped.stderr or ""
        progress = [p for p in err.replace("\r", "\n").splitlines() if "judging pairs:" in p]
        return f"not done in {limit:.0f} s ({progress[-1].split('judging pairs: ')[1].split(',')[0] if progress else 'no progress'})"
    if done.returncode:
        raise SystemExit(f"judge failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return f"{time.perf_counter() - started:.0f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--busy", type=int, default=3, help="busy processes at normal priority beside the judge")
    parser.add_argument("--limit", type=float, default=240, help="seconds each loaded arm may run")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        inputs = prepare(folder)
        quiet = judge(SEMREL, inputs, folder / "quiet.jsonl", 3 * options.limit)
        print(f"{'quiet, as shipped:':<34}{quiet}")
        busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(options.busy)]
        try:
            for name, command in (("as shipped", SEMREL), ("Ray's default niceness", RAY_DEFAULT)):
                output = folder / f"{name.split()[0]}.jsonl"
                figure = judge(command, inputs, output, options.limit)
                same = output.exists() and output.read_bytes() == (folder / "quiet.jsonl").read_bytes()
                print(f"{f'{options.busy} busy, {name}:':<34}{figure}" + (", judgments equal the quiet run's" if same else ""))
        finally:
            for process in busy:
                process.kill()


if __name__ == "__main__":
    main()
