"""What the judge's labels are worth without reference answers: Cranfield, graded by its assessors
(Cleverdon's codes 1-4 as gains 4..1, unlisted 0), judged with each QUESTION as the reference, as a
user of a collection without answers (TREC topics, Cranfield) might try.

    python bench/question_as_reference.py [--work out/bench-question] [--cranfield ../shared/data/cranfield]

Builds the set with the CLI (`golden import --format cranfield`, references set to the questions,
`retrieve` BM25 top 20, `pool` with the assessed documents), judges it with the defaults, and prints
per human grade the pairs, mean p and R and the share labelled relevant, then AUC and Cohen's kappa
of relevance (gain > 0) and the Spearman correlation of p with the grade (docs/judge.md).
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

import numpy as np
from scipy import stats
from sklearn.metrics import cohen_kappa_score, roc_auc_score

from measured import SEMREL
from semrel.judging import labels
from shared_data import SHARED_DATA

ROOT = Path(__file__).resolve().parent.parent


def cli(*args) -> None:
    subprocess.run([*SEMREL, *map(str, args)], check=True)


def build(work: Path, cranfield: Path) -> None:
    """corpus.jsonl, golden.jsonl (question as reference), pool.tsv and judgments.jsonl under `work`."""
    if (work / "judgments.jsonl").exists():
        return
    work.mkdir(parents=True, exist_ok=True)
    cli("golden", "import", "--format", "cranfield", cranfield, "--corpus-out", work / "corpus.jsonl", "-o", work / "imported.jsonl")
    with open(work / "imported.jsonl", encoding="utf-8") as source, open(work / "golden.jsonl", "w", encoding="utf-8") as out:
        for line in source:
            item = json.loads(line)
            item["reference_answer"] = [item["query"]]
            item["meta"].pop("no_answer", None)
            out.write(json.dumps(item) + "\n")
    cli("retrieve", "--corpus", work / "corpus.jsonl", "--golden", work / "golden.jsonl", "--method", "bm25", "-k", 20,
        "-o", work / "bm25.run")
    cli("pool", work / "bm25.run", "--golden", work / "golden.jsonl", "--depth", 20, "-o", work / "pool.tsv")
    cli("judge", "--corpus", work / "corpus.jsonl", "--golden", work / "golden.jsonl", "--pool", work / "pool.tsv",
        "-o", work / "judgments.jsonl", "--cache", work / "cache")


def best_kappa(y: np.ndarray, score: np.ndarray) -> float:
    cuts = np.unique(np.quantile(score, np.linspace(0.01, 0.99, 197)))
    return max(cohen_kappa_score(y, score >= t) for t in cuts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=ROOT / "out" / "bench-question")
    parser.add_argument("--cranfield", type=Path, default=SHARED_DATA / "cranfield")
    args = parser.parse_args()
    build(args.work, args.cranfield)
    gains = {}
    with open(args.work / "golden.jsonl", encoding="utf-8") as handle:
        for line in handle:
            item = json.loads(line)
            gains[item["query_id"]] = item["meta"]["grades"]
    with open(args.work / "judgments.jsonl", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    grade = np.array([gains[r["query_id"]].get(r["chunk_id"], 0) for r in rows])
    p, recall = np.array([r["p"] for r in rows]), np.array([r["R"] for r in rows])
    cut = labels.CUT
    print(f"| human gain | pairs | mean p | mean R | labelled relevant (p >= {cut}) |\n|---:|---:|---:|---:|---:|")
    for g in range(5):
        at = grade == g
        print(f"| {g} | {at.sum()} | {p[at].mean():.3f} | {recall[at].mean():.3f} | {(p[at] >= cut).mean():.3f} |")
    relevant = (grade > 0).astype(int)
    print(f"\nAUC p {roc_auc_score(relevant, p):.3f}, R {roc_auc_score(relevant, recall):.3f}; "
          f"kappa p >= {cut} {cohen_kappa_score(relevant, p >= cut):.3f}, best threshold on R {best_kappa(relevant, recall):.3f}; "
          f"Spearman p ~ gain {stats.spearmanr(p, grade).statistic:.3f} (assessed documents only "
          f"{stats.spearmanr(p[grade > 0], grade[grade > 0]).statistic:.3f})")


if __name__ == "__main__":
    main()
