"""Does p depend on the pool, or only the pairs a pool counts? The same (query, chunk) pairs judged in
BM25's top 10 and top 20 (plus gold, gold known), and what each pool's p, kappa and calibration are.

    python bench/pool_depth.py [--work out/bench-labels] [--sets covid150,pubmed]

Reads the sets and judgments `bench/labels.py` leaves in WORK (run it first, at least with --no-tau on
these sets); judges a set on BM25's top 10 where that is missing (its OTHER_POOLS, warm cache: seconds).
Per set: for the pairs in both pools, mean p and mean of each feature in each pool, gold and not; per
pool, the share of gold pairs, mean p, kappa at the shipped cut, the best cut on p and its kappa, and ECE.
The answer, 2026-12-03: p is the pair's (docs/judge.md, "Where it falls short": "p is the pair's, not the pool's").
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import labels as bench  # bench/labels.py: python puts a script's folder first on sys.path
from semrel.analysis.calibrate import best_thresholds, expected_calibration_error
from semrel.formats.corpus import read_golden
from semrel.formats.judgments import read_judgments
from semrel.judging import labels


def pool_line(name: str, y: np.ndarray, p: np.ndarray) -> str:
    best = best_thresholds(p, y, 1, "none")[0]
    return (f"  {name:<8} pairs {len(y):>5}  gold share {y.mean():.3f}  mean p {p.mean():.3f}  kappa at {labels.CUT} "
            f"{bench.kappa(y, p >= labels.CUT):.3f}  best {bench.kappa(y, p >= best):.3f} at {best:.2f}  "
            f"ECE {expected_calibration_error(y, p):.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=bench.ROOT / "out" / "bench-labels")
    parser.add_argument("--sets", default="covid150,pubmed")
    args = parser.parse_args()
    cache = args.work / "cache"
    for name in [n for n in args.sets.split(",") if n]:
        folder = args.work / "sets" / name
        gold = {(g.query_id, c) for g in read_golden(folder / "golden.jsonl") for c in g.gold_chunk_ids}
        bench.other_pools(folder, cache)  # judges pool-bm25@10 where it is missing
        pools = {depth: {(j.query_id, j.chunk_id): j for j in read_judgments(folder / f"judgments-gold-{pool}.jsonl")}
                 for depth, pool in (("top 20", "kappa"), ("top 10", "bm25@10"))}
        common = sorted(set(pools["top 20"]) & set(pools["top 10"]))
        y = np.array([k in gold for k in common])
        print(f"{name}: {len(common)} pairs in both pools")
        for label, value in [("p", lambda j: j.p)] + [(f, lambda j, f=f: j.features[f]) for f in labels.FEATURES]:
            a, b = (np.array([value(pools[d][k]) for k in common]) for d in ("top 20", "top 10"))
            print(f"  {label:<10} gold {a[y].mean():+.3f} (top 20) {b[y].mean():+.3f} (top 10)   "
                  f"not gold {a[~y].mean():+.3f} {b[~y].mean():+.3f}")
        for depth, judged in pools.items():
            print(pool_line(depth, np.array([k in gold for k in judged], dtype=np.int64), np.array([j.p for j in judged.values()])))


if __name__ == "__main__":
    main()
