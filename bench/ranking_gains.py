"""Would graded or soft derived qrels rank systems more as gold does than binary ones? On the sets where the
issue's ranking check fails (bm25, dense and hybrid by nDCG@10, mean Kendall tau over 20 samples of 150
questions under 0.95), each rule's qrels on the ranking pool, against the gold chunks.

    python bench/ranking_gains.py [--work out/bench-labels] [--sets covidmulti,pubmed,pubmed1s]

Reads the sets and the ranking pool's judgments `bench/labels.py` leaves in WORK (run it first, with the
ranking check: not `--no-tau`). Rules: R >= 0.70; p at the shipped cut, at half and at 0.5; grades 0-3 from p
(the cuts `semrel label --graded` uses); and p itself as the gain (soft qrels: p x 1000, rounded, as an
integer grade; nDCG is the same for any scale). Printed per set and condition: each run's nDCG@10 under
gold, then per rule tau over the 8 runs and over the three (full set / mean of 20 samples) and the three
systems' nDCG@10 under that rule. The answer, 2026-12-02: no (docs/judge.md, "Tried and not shipped").
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import labels as bench  # bench/labels.py: python puts a script's folder first on sys.path

labels = bench.labels


def rules(p: np.ndarray, R: np.ndarray) -> dict[str, np.ndarray]:
    cut = labels.CUT
    return {"R >= 0.70": R >= 0.70, f"p >= {cut:g}": p >= cut, f"p >= {cut / 2:g}": p >= cut / 2, "p >= 0.5": p >= 0.5,
            "grades of p": labels.reached(p, labels.GRADE_CUTS), "p as gain": np.round(p * 1000).astype(int)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=bench.ROOT / "out" / "bench-labels")
    parser.add_argument("--sets", default="covidmulti,pubmed,pubmed1s")
    args = parser.parse_args()
    for name in args.sets.split(","):
        for condition in bench.CONDITIONS:
            d = bench.SetData(name, args.work / "sets" / name, condition, args.work / "cache", True)
            p = np.array([j.p if j.p is not None else 0.0 for j in d.all])
            R = np.array([j.R for j in d.all])
            gold = bench.system_values(d, d.gold_qrels, "gold").mean(1)
            print(f"\n{name}, {condition}: nDCG@10 under gold " + ", ".join(f"{r} {v:.3f}" for r, v in zip(bench.RUNS, gold)))
            print("  rule          tau, 8 runs    tau, 3 runs    nDCG@10 bm25 / dense / hybrid")
            for rule, grades in rules(p, R).items():
                qrels = bench.qrels_of(d.all, grades)
                every, three = bench.ranking_tau(d, qrels, rule), bench.ranking_tau(d, qrels, rule, runs=bench.BAR_RUNS)
                mine = bench.system_values(d, qrels, rule).mean(1)[:3]
                print(f"  {rule:12s}  {every[0]:.3f} / {every[1]:.3f}  {three[0]:.3f} / {three[1]:.3f}  "
                      + " / ".join(f"{v:.3f}" for v in mine))


if __name__ == "__main__":
    main()
