"""Near-duplicate grouping (`golden split`, `golden dedup`) of many queries, the sentence model replaced by fixed
vectors so only the grouping is timed: 10,000 identical queries, 10,000 near-identical ones (one cluster) and 10,000
unrelated ones. Each is grouped by semrel and, as the reference, by scipy's connected components over the whole
thresholded similarity matrix (held in memory at once, which semrel avoids); prints seconds and whether the groups agree.

    python bench/neardup_groups.py [--queries 10000]   (docs/golden.md, "`semrel golden split` and `semrel golden dedup`")

To time an older semrel on the same cases: PYTHONPATH=<its checkout>/src python bench/neardup_groups.py
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from scipy.sparse.csgraph import connected_components

from semrel.encoding import sentences
from semrel.golden.neardup import NEAR_DUPLICATE, near_duplicate_groups


def cases(n: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    one = rng.normal(size=(1, 384))
    made = {"identical": np.tile(one, (n, 1)), "near-identical": one + 0.02 * rng.normal(size=(n, 384)),
            "unrelated": rng.normal(size=(n, 384))}
    return {name: (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32) for name, v in made.items()}


def reference(vectors: np.ndarray) -> list[list[int]]:
    _, labels = connected_components(vectors @ vectors.T >= NEAR_DUPLICATE - 1e-6, directed=False)
    groups: dict[int, list[int]] = {}
    for i, label in enumerate(labels.tolist()):
        groups.setdefault(label, []).append(i)
    return sorted(groups.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    args = parser.parse_args()
    texts = [f"question {i}" for i in range(args.queries)]
    print("| case | groups | semrel s | scipy whole matrix s | same groups |\n|---|---:|---:|---:|---|")
    for name, vectors in cases(args.queries).items():
        sentences.sentence_embeddings = lambda given, model=None, advance=None, engine=None, v=vectors: v  # type: ignore[misc]
        start = time.perf_counter()
        groups = near_duplicate_groups(texts, NEAR_DUPLICATE).groups
        ours = time.perf_counter() - start
        start = time.perf_counter()
        expected = reference(vectors)
        theirs = time.perf_counter() - start
        print(f"| {name} | {len(groups):,} | {ours:.2f} | {theirs:.2f} | {groups == expected} |", flush=True)


if __name__ == "__main__":
    main()
