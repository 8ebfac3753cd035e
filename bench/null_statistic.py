"""Tried and not shipped (2026-12-05): a steadier statistic of the null sample in p's three "minus the highest null"
features (R_idf_max, F_max, P_max).

    python bench/null_statistic.py [--work out/bench-labels] [--idf-whole SET]

Run after bench/labels.py, whose sets it reads. Each set's kappa pool is judged again with null-sample seeds 0 and 1
(`semrel.judge`, the embedding cache warm), keeping each query's null scores. The three features subtract the
highest of the query's 25 null scores, an extreme that moves with the sample: it is what moves labels between seeds
(docs/judge.md, "The probability of relevance"). Each variant subtracts another statistic of the same scores: the
highest (as shipped), the second highest, the mean of the highest 3 or 5, or mean + 2 sd. p is refitted on it as
bench/labels.py fits p (a model per condition, sets weighted equally, C=100, held to the fitted range, the cut by
the mean margin to the raw oracle), in-sample and leave-one-family-out (LODO). Printed: the margins to each set's raw
oracle, the labels (in-sample model, its cut) that differ between seeds 0 and 1 over all 16 set-conditions, and
kappa per set-condition. The shipped row reproduces bench/labels.py's figures. With --idf-whole SET, instead: the
labels of the shipped model that seeds 0 and 1 part on in SET with gold, with idf counted on the shipped 1,000-chunk
sample and on the whole corpus.
"""

from __future__ import annotations

import argparse
import copy
from pathlib import Path

import numpy as np

import labels as bench  # bench/labels.py (python puts a script's folder first on sys.path): the sets, judgments, measures
import semrel
from semrel.formats.judgments import read_judgments
from semrel.judging import labels, probability

SEEDS = (0, 1)
NULL_COLUMN = {"R_idf_max": 3, "F_max": 2, "P_max": 0}  # feature: its column of the null scores (P, R, F, Ri, lex)
STATISTICS = {  # the query's null scores, sorted highest first -> one value per column
    "highest (shipped)": lambda v: v[0],
    "second highest": lambda v: v[min(1, len(v) - 1)],
    "mean of the highest 3": lambda v: v[:3].mean(axis=0),
    "mean of the highest 5": lambda v: v[:5].mean(axis=0),
    "mean + 2 sd": lambda v: v.mean(axis=0) + 2 * v.std(axis=0),
}


def judged_with_nulls(folder: Path, condition: str, seed: int, cache: Path, out: Path) -> tuple[list, dict[str, np.ndarray]]:
    """The kappa pool's judgments at `seed` and each query's null scores, highest first (read as the judge computes p)."""
    kept: dict = {}
    compute = probability.PoolFeatures.compute

    def keeping(self, scores, null_scores, null_queries):
        kept["null"] = (np.asarray(null_scores), np.asarray(null_queries))
        return compute(self, scores, null_scores, null_queries)

    golden, pool = (("golden.jsonl", "pool.tsv") if condition == "gold" else ("golden-nogold.jsonl", "pool-nogold.tsv"))
    target = out / f"{folder.name}-{condition}-seed{seed}.jsonl"
    probability.PoolFeatures.compute = keeping
    try:
        semrel.judge(folder / "corpus.jsonl", folder / golden, folder / pool, target, cache=cache, seed=seed, warn=lambda _: None)
    finally:
        probability.PoolFeatures.compute = compute
    scores, queries = kept["null"]
    return read_judgments(target), {q: np.sort(scores[queries == q], axis=0)[::-1] for q in np.unique(queries)}


def with_statistic(d: bench.SetData, nulls: dict[str, np.ndarray], statistic) -> bench.SetData:
    """`d` with the three features taken against `statistic` of the null scores instead of their highest."""
    changed, X = copy.copy(d), d.X.copy()
    shift = {q: v[0] - statistic(v) for q, v in nulls.items()}  # feature + highest - statistic
    for feature, column in NULL_COLUMN.items():
        i = labels.FEATURES.index(feature)
        X[:, i] = d.X[:, i] + np.array([shift[q][column] for q in d.qid])
    changed.X = X
    return changed


def idf_whole_corpus(work: Path, name: str) -> None:
    """Labels of the shipped model that seeds 0 and 1 part on, with idf counted on the 1,000-chunk sample (shipped) and
    on the whole corpus: is the idf sample what moves them? And how far p moves, at the median pair and changed one."""
    folder, cache = work / "sets" / name, work / "cache"
    for label, size in (("idf sample (shipped)", labels.IDF_SAMPLE), ("idf of the whole corpus", 10**9)):
        shipped, labels.IDF_SAMPLE = labels.IDF_SAMPLE, size
        try:
            p = [np.array([j.p for j in judged_with_nulls(folder, "gold", seed, cache, work / "null-statistic")[0]])
                 for seed in SEEDS]
        finally:
            labels.IDF_SAMPLE = shipped
        moved = (p[0] >= labels.CUT) != (p[1] >= labels.CUT)
        print(f"{name} with gold, {label}: {int(moved.sum())} of {len(moved)} labels moved by the seed; p moves by "
              f"{np.median(abs(p[0] - p[1])):.4f} at the median pair, {np.median(abs(p[0] - p[1])[moved]):.3f} at the median "
              "moved one")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, default=bench.ROOT / "out" / "bench-labels")
    parser.add_argument("--idf-whole", metavar="SET", help="instead: seeds 0 and 1 on SET (e.g. pubmed) with idf on the "
                        "sample and on the whole corpus")
    args = parser.parse_args()
    if args.idf_whole:
        idf_whole_corpus(args.work, args.idf_whole)
        return
    out = args.work / "null-statistic"
    out.mkdir(exist_ok=True)
    data: dict[int, dict] = {seed: {} for seed in SEEDS}
    for name, folder, cache, _ in bench.set_folders(args.work, None, "pool.tsv"):
        for condition in bench.CONDITIONS:
            for seed in SEEDS:
                judgments, nulls = judged_with_nulls(folder, condition, seed, cache, out)
                bench.judged = lambda *_, rows=judgments: rows  # SetData reads these judgments
                data[seed][name, condition] = (bench.SetData(name, folder, condition, cache, tau=False), nulls)
    raw = {key: bench.oracle(d.y, d.R) for key, (d, _) in data[0].items()}
    for label, statistic in STATISTICS.items():
        sets = {seed: {key: with_statistic(d, nulls, statistic) for key, (d, nulls) in data[seed].items()} for seed in SEEDS}
        train = [(sets[0][n, "gold"], sets[0][n, "nogold"]) for n in bench.SETS]
        inside = bench.refit(train, raw)
        lodo = {}
        for family in sorted(set(bench.FAMILY.values())):
            model = bench.refit([pair for pair in train if bench.FAMILY[pair[0].name] != family], raw)
            lodo |= {n: model for n in bench.SETS if bench.FAMILY[n] == family}
        kappas, moved = {}, 0
        for (n, c), d in sets[0].items():
            kappas[n, c] = (bench.kappa(d.y, inside.p(d) >= inside.cut), bench.kappa(d.y, lodo[n].p(d) >= lodo[n].cut))
            moved += int(np.sum((inside.p(d) >= inside.cut) != (inside.p(sets[1][n, c]) >= inside.cut)))
        margins = np.array([(k - raw[key], kl - raw[key]) for key, (k, kl) in kappas.items()])
        pairs = sum(len(d.y) for d in sets[0].values())
        print(f"{label}: cut {inside.cut:.2f}; margin worst / mean in-sample {margins[:, 0].min():+.3f} / {margins[:, 0].mean():+.3f}, "
              f"LODO {margins[:, 1].min():+.3f} / {margins[:, 1].mean():+.3f}; labels moved by the seed {moved} of {pairs} "
              f"({moved / pairs:.2%})")
        print("  " + ", ".join(f"{n} {c} {k:.3f} / {kl:.3f}" for (n, c), (k, kl) in kappas.items()))


if __name__ == "__main__":
    main()
