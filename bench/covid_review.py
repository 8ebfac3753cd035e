"""The COVID-QA simulated review: gold chunks stand in for people reviewing 200 uncertain + 100 random pairs.

    python bench/covid_review.py [--folder out/bench-labels/sets/covid150]

Runs on the folder bench/labels.py prepared for COVID-QA at 150-word chunks (corpus, the sampled
golden set, its judgments with the gold chunks known: the shipped settings). Every step is a `semrel` command, so
the sequence is what a user would type (each is echoed to stderr); steps whose output exists
are skipped, so a rerun only redoes what is missing:

1. gold qrels (`golden qrels`) and the derived qrels by the shipped default (`label`: p >= the cut);
2. `review simulate` of 300 pairs, a third of them the seeded random sample, the rest nearest the
   cut; `review export --only-reviewed` gives the simulated human labels;
3. `calibrate` on them (the default refit, every coefficient; then again with `--fit anchored`, p's slope
   and offset), each tested on every other judged pair (`--test gold.qrels`);
4. `label --calibration` with each refit; runs over the sampled queries in review-runs/ (bm25, dense,
   hybrid, bm25 reranked by dense; -k 100) and `agree` between the derived and the gold qrels over them.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from measured import SEMREL

ROOT = Path(__file__).resolve().parent.parent
RUNS = {
    "bm25": ["--method", "bm25"],
    "dense": ["--method", "dense"],
    "hybrid": ["--method", "hybrid"],
    "bm25-dense": ["--run", "review-runs/bm25.run", "--rerank", "dense", "--rerank-depth", "100"],
}


def step(folder: Path, output: str | None, *args: str, after: str | None = None) -> None:
    """Run one semrel command in `folder` unless its `output` is already there and newer than `after` (an
    input it derives from: judgments rejudged by bench/labels.py redo the review); a stale output is removed first."""
    if output and (target := folder / output).exists():
        if after is None or target.stat().st_mtime >= (folder / after).stat().st_mtime:
            return
        for stale in (target, *(target.with_name(target.name + end) for end in ("-wal", "-shm"))):
            stale.unlink(missing_ok=True)
    print("$ semrel " + " ".join(args), file=sys.stderr)
    subprocess.run([*SEMREL, *args], check=True, cwd=folder)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, default=ROOT / "out" / "bench-labels" / "sets" / "covid150")
    args = parser.parse_args()
    folder = args.folder
    judgments = "judgments-gold-kappa.jsonl"
    if not (folder / judgments).exists():
        raise SystemExit(f"{folder / judgments} is missing: run bench/labels.py first")
    step(folder, "gold.qrels", "golden", "qrels", "golden.jsonl", "-o", "gold.qrels")
    step(folder, "derived.qrels", "label", judgments, "-o", "derived.qrels", after=judgments)
    step(folder, "sim.sqlite", "review", "simulate", "--db", "sim.sqlite", "--reviewer", "gold", "--judgments", judgments,
         "--labels", "derived.qrels", "--corpus", "corpus.jsonl", "--golden", "golden.jsonl", "--limit", "300",
         "--random-share", "0.34", "--human", "gold.qrels", "--unlisted-as-zero", after="derived.qrels")
    step(folder, "sim-human.qrels", "review", "export", "--db", "sim.sqlite", "--labels", "derived.qrels",
         "-o", "sim-human.qrels", "--only-reviewed", after="sim.sqlite")
    step(folder, None, "calibrate", judgments, "sim-human.qrels", "--test", "gold.qrels",
         "--test-unlisted-as-zero", "-o", "cal.json")
    step(folder, None, "label", judgments, "--calibration", "cal.json", "-o", "calibrated.qrels")
    step(folder, None, "calibrate", judgments, "sim-human.qrels", "--fit", "anchored", "--test", "gold.qrels",
         "--test-unlisted-as-zero", "-o", "cal-anchored.json")
    step(folder, None, "label", judgments, "--calibration", "cal-anchored.json", "-o", "calibrated-anchored.qrels")
    for name, options in RUNS.items():
        step(folder, f"review-runs/{name}.run", "retrieve", "--corpus", "corpus.jsonl", "--golden", "golden.jsonl", *options,
             "-k", "100", "-o", f"review-runs/{name}.run")
    runs = [f"review-runs/{name}.run" for name in RUNS]
    for qrels in ("derived.qrels", "calibrated.qrels", "calibrated-anchored.qrels"):
        step(folder, None, "agree", "gold.qrels", qrels, "--unlisted-as-zero", *runs)


if __name__ == "__main__":
    main()
