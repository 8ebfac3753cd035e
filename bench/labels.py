"""Label quality: how well BERTScore P, R and F separate gold chunks from BM25's other candidates.

    python bench/labels.py [--queries 300] [--seed 0] [--work out/bench-labels] [--out labels.json]

On COVID-QA (150-word chunks, gold = the chunk holding the answer) and PubMedQA (reference = the
long answer, gold = the question's own contexts, BM25 over all 3,358 contexts), a seeded sample
of `--queries` questions (0: all) is pooled as BM25's top 20 plus gold and judged with the
shipped model, once without and once with idf. `--rescale corpus` runs of the judge reuse the
cached embeddings and only add the unrelated baseline pairs; bert_score ships no baseline for
all-MiniLM-L6-v2, so `baseline` is reported as unavailable. Rescaling is a positive affine map
of each component, so it moves thresholds but leaves AUC and the best kappa unchanged.

For each component: AUC against gold (sklearn's roc_auc_score), the best Cohen's kappa over every
threshold and that threshold (semrel.analysis.calibrate's exhaustive search), and kappa at the shipped
defaults of semrel.judging.labels (raw scores only: the defaults are on the raw scale). Prints one table
per dataset and writes the rows to `--out`. The CLI does the preparation (import, retrieve,
pool), so the bench runs what users run; results already in `--work` are reused.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from semrel.analysis.agreement import cohen_kappa
from semrel.analysis.calibrate import best_thresholds
from semrel.formats.corpus import read_golden, write_golden
from semrel.formats.judgments import read_judgments
from semrel.formats.tables import Table, render
from semrel.judging import labels
from semrel.judging.judge import judge
from semrel.judging.labels import reached

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(os.environ.get("SEMREL_DATA", ROOT.parent / "shared" / "data"))
SEMREL = [sys.executable, "-c", "from semrel.cli import main; main()"]
DATASETS = {
    "COVID-QA": (DATA / "covid_qa_deepset" / "200423_covidQA.json", ["--format", "squad", "--size", "150"]),
    "PubMedQA": (DATA / "pubmedqa_pqal" / "ori_pqal.json", ["--format", "pubmedqa"]),
}


def cli(*args: str) -> None:
    subprocess.run([*SEMREL, *args], check=True)


def prepare(name: str, folder: Path, queries: int, seed: int) -> None:
    """corpus.jsonl, golden.jsonl (the seeded sample), runs/bm25.run and pool.tsv in `folder`."""
    source, options = DATASETS[name]
    if not (folder / "pool.tsv").exists():
        folder.mkdir(parents=True, exist_ok=True)
        cli("golden", "import", str(source), *options, "--corpus-out", str(folder / "corpus.jsonl"), "-o", str(folder / "golden-all.jsonl"))
        items = read_golden(folder / "golden-all.jsonl")
        if queries and queries < len(items):
            keep = set(np.random.default_rng(seed).choice(len(items), queries, replace=False).tolist())
            items = [item for i, item in enumerate(items) if i in keep]
        write_golden(items, folder / "golden.jsonl")
        cli("retrieve", "--corpus", str(folder / "corpus.jsonl"), "--golden", str(folder / "golden.jsonl"),
            "--method", "bm25", "-k", "20", "-o", str(folder / "runs" / "bm25.run"))
        cli("pool", "--golden", str(folder / "golden.jsonl"), str(folder / "runs" / "bm25.run"), "--depth", "20",
            "-o", str(folder / "pool.tsv"))


def judged(folder: Path, idf: bool, rescale: str) -> tuple[list, float]:
    """The judgments of the pool with these settings (reused when already in `folder`) and seconds spent."""
    path = folder / f"judgments-idf{int(idf)}-{rescale}.jsonl"
    if path.exists():
        return read_judgments(path), 0.0
    start = time.perf_counter()
    result = judge(folder / "corpus.jsonl", folder / "golden.jsonl", folder / "pool.tsv", path, idf=idf, rescale=rescale)
    return result.judgments, time.perf_counter() - start


def quality(scores: np.ndarray, gold: np.ndarray, at_default: bool) -> dict:
    """AUC, the best kappa and its threshold, and kappa at the shipped default threshold."""
    threshold = best_thresholds(scores, gold, 1, "none")[0]
    default = float(labels.DEFAULT_THRESHOLD)
    return {
        "auc": float(roc_auc_score(gold, scores)),
        "best_kappa": cohen_kappa(gold, reached(scores, [threshold])),
        "best_threshold": threshold,
        "kappa_at_default": cohen_kappa(gold, reached(scores, [default])) if at_default else None,
    }


def measure(name: str, folder: Path) -> list[dict]:
    rows = []
    for idf in (False, True):
        for rescale in ("none", "corpus"):
            judgments, seconds = judged(folder, idf, rescale)
            gold = np.array(["gold" in j.source.split(",") for j in judgments], dtype=np.int64)
            print(f"{name}: idf={idf} rescale={rescale}: {len(judgments)} pairs, {int(gold.sum())} gold, judged in {seconds:.0f} s",
                  file=sys.stderr)
            for on in labels.COMPONENTS:
                scores = np.array([getattr(j, on) for j in judgments])
                rows.append({"dataset": name, "idf": idf, "rescale": rescale, "on": on, "pairs": len(judgments),
                             "gold": int(gold.sum()), **quality(scores, gold, rescale == "none")})
    return rows


def table(rows: list[dict]) -> Table:
    def cell(v):
        return "-" if v is None else v
    return Table(["on", "idf", "rescale", "AUC", "best kappa", "at threshold", f"kappa at {labels.DEFAULT_THRESHOLD}"],
                 [[r["on"], "yes" if r["idf"] else "no", r["rescale"], r["auc"], r["best_kappa"], r["best_threshold"],
                   cell(r["kappa_at_default"])] for r in sorted(rows, key=lambda r: (r["on"] != labels.DEFAULT_COMPONENT, r["on"]))])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=300, help="questions sampled per dataset (0: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--work", type=Path, default=ROOT / "out" / "bench-labels")
    parser.add_argument("--out", type=Path, default=None, help="JSON file for the rows (default WORK/labels.json)")
    args = parser.parse_args()
    every = []
    for name in DATASETS:
        folder = args.work / f"{name.lower()}-q{args.queries}-s{args.seed}"
        prepare(name, folder, args.queries, args.seed)
        rows = measure(name, folder)
        every += rows
        print(f"\n{name} ({rows[0]['pairs']} pairs, {rows[0]['gold']} gold; {args.queries or 'all'} questions; "
              f"shipped default: {labels.DEFAULT_COMPONENT} >= {labels.DEFAULT_THRESHOLD}, raw scores)")
        print(render(table(rows), "markdown", places=3))
    print("rescale baseline: bert_score ships no baseline for all-MiniLM-L6-v2; not available\n")
    out = args.out or args.work / "labels.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(every, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, out)
    print(f"rows written to {out}")


if __name__ == "__main__":
    main()
