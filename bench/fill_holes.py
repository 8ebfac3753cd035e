"""Reusing bootstrapped qrels for a system that was not pooled: COVID-QA, leave one run out.

Derived qrels judge only what the pool reached. For each system in turn (a run with the runs derived
from it: bm25 goes out with its dense rerank, whose top 20 are bm25's), the qrels are derived from a
pool of the *other* runs; each left-out run is then scored (a) on those qrels as they are (its unjudged
chunks count as non-relevant), (b) on condensed lists (-J) and with bpref, which skip unjudged chunks,
and (c) after `semrel fill` has judged its holes in the top 10, and in the top 20 (the pool depth),
and each is compared with its score when it was pooled (qrels derived from the pool of all runs). The
judge and pool depth are those of bench/covid.toml (MiniLM, depth 20); the label rule is semrel's default
(the probability p of judging.labels, relevant at p >= 0.40). p is relative to the query's pool, so the
pairs the smaller pool labelled can get other labels in the pooled qrels; fill keeps them as they were,
and the figures show what that costs.

    python bench/fill_holes.py [--questions 200] [--seed 0] [--work out/fill-holes]

COVID-QA is read from ../shared/data/covid_qa_deepset (deepset's 200423_covidQA.json, SQuAD format).
Prints a Markdown table (docs/eval.md holds the figures).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from shared_data import SHARED_DATA

ROOT = Path(__file__).resolve().parents[1]
SOURCE = SHARED_DATA / "covid_qa_deepset" / "200423_covidQA.json"
RUNS = ("bm25", "dense", "hybrid", "bm25+dense")
SYSTEMS = {"bm25": ("bm25", "bm25+dense"), "dense": ("dense",), "hybrid": ("hybrid",)}  # left out together
MEASURES = "nDCG@10,P@10,AP,R@100,Judged@10,Bpref"


def semrel(*args, quiet: bool = True) -> subprocess.CompletedProcess:
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "semrel.cli", *map(str, args)], capture_output=True, text=True)
    if result.returncode:
        raise SystemExit(f"semrel {' '.join(map(str, args))} failed:\n{result.stderr[-3000:]}")
    if not quiet:
        print(f"  semrel {args[0]} ... {time.perf_counter() - started:.1f}s", file=sys.stderr)
    return result


def scores(qrels: Path, run: Path, *options: str) -> dict:
    out = semrel("eval", qrels, run, "-m", MEASURES, "-f", "json", *options).stdout
    return json.loads(out)[run.name.removesuffix(".run")]["all"]


def derive(work: Path, name: str, runs: list[Path], golden: Path, corpus: Path, depth: int) -> tuple[Path, Path]:
    """Pool `runs`, judge (shared embedding cache) and label: (qrels, judgments)."""
    semrel("pool", *runs, "--golden", golden, "--depth", depth, "-o", work / f"{name}.pool.tsv")
    semrel("judge", "--corpus", corpus, "--golden", golden, "--pool", work / f"{name}.pool.tsv", "-o", work / f"{name}.judgments.jsonl",
           "--cache", work / "cache", quiet=False)
    semrel("label", work / f"{name}.judgments.jsonl", "-o", work / f"{name}.qrels")
    return work / f"{name}.qrels", work / f"{name}.judgments.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--pool-depth", type=int, default=20)
    parser.add_argument("--work", type=Path, default=ROOT / "out" / "fill-holes")
    args = parser.parse_args()
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    corpus, golden = work / "corpus.jsonl", work / "golden.jsonl"
    if not golden.exists():
        semrel("golden", "import", SOURCE, "--format", "squad", "--size", "150", "--corpus-out", corpus, "-o", work / "golden.all.jsonl")
        items = (work / "golden.all.jsonl").read_text().splitlines()
        random.Random(args.seed).shuffle(items)
        golden.write_text("\n".join(sorted(items[: args.questions], key=lambda line: json.loads(line)["query_id"])) + "\n")
    runs = {name: work / f"{name}.run" for name in RUNS}
    for name in ("bm25", "dense", "hybrid"):
        if not runs[name].exists():
            semrel("retrieve", "--corpus", corpus, "--golden", golden, "--method", name, "-k", 100, "--cache", work / "cache",
                   "-o", runs[name], quiet=False)
    if not runs["bm25+dense"].exists():
        semrel("retrieve", "--corpus", corpus, "--golden", golden, "--run", runs["bm25"], "--rerank", "dense", "--rerank-depth",
               args.pool_depth, "-k", args.pool_depth, "--cache", work / "cache", "-o", runs["bm25+dense"])
    pooled, _ = derive(work, "all", list(runs.values()), golden, corpus, args.pool_depth)
    rows = []
    for system, left in SYSTEMS.items():
        others = [path for name, path in runs.items() if name not in left]
        qrels, judgments = derive(work, f"without-{system}", others, golden, corpus, args.pool_depth)
        for name in left:
            row = {"run": name, "out": " and ".join(left), "as is": scores(qrels, runs[name]), "-J": scores(qrels, runs[name], "-J"),
                   "pooled": scores(pooled, runs[name])}
            for depth in (10, args.pool_depth):
                copy = work / f"without-{system}.{name}.fill{depth}.judgments.jsonl"
                shutil.copy(judgments, copy)
                shutil.copy(f"{judgments}.manifest.json", f"{copy}.manifest.json")
                filled = semrel("eval", qrels, runs[name], "-m", MEASURES, "-f", "json", "--fill-judgments", copy, "--corpus", corpus,
                                "--golden", golden, "--fill-depth", depth, quiet=False)
                row[f"filled {depth}"] = json.loads(filled.stdout)[name]["all"]
                row[f"holes {depth}"] = re.search(r"filled ([\d,]+) holes? in", filled.stderr).group(1)  # type: ignore[union-attr]
            rows.append(row)
    d = args.pool_depth
    print(f"COVID-QA, {args.questions} questions (seed {args.seed}), pool depth {d}; {time.perf_counter() - started:.0f} s in all\n")
    print(f"| run | left out | holes top 10 / top {d} | Judged@10 as is / filled | P@10 as is / filled 10 / pooled | "
          f"nDCG@10 as is / -J / filled 10 / filled {d} / pooled | AP as is / filled 10 / filled {d} / pooled | "
          f"R@100 as is / filled {d} / pooled | bpref as is / pooled |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        a, j, f10, f20, p = r["as is"], r["-J"], r["filled 10"], r[f"filled {d}"], r["pooled"]
        print(f"| {r['run']} | {r['out']} | {r['holes 10']} / {r[f'holes {d}']} | {a['Judged@10']:.3f} / {f10['Judged@10']:.3f} | "
              f"{a['P@10']:.4f} / {f10['P@10']:.4f} / {p['P@10']:.4f} | "
              f"{a['nDCG@10']:.4f} / {j['nDCG@10']:.4f} / {f10['nDCG@10']:.4f} / {f20['nDCG@10']:.4f} / {p['nDCG@10']:.4f} | "
              f"{a['AP']:.4f} / {f10['AP']:.4f} / {f20['AP']:.4f} / {p['AP']:.4f} | {a['R@100']:.4f} / {f20['R@100']:.4f} / "
              f"{p['R@100']:.4f} | {a['Bpref']:.4f} / {p['Bpref']:.4f} |")
    exact = max(abs(r[f"filled {d}"][m] - r["pooled"][m]) for r in rows for m in r["pooled"])
    print(f"\nlargest difference between a run filled to the pool depth and the same run pooled, over every measure: {exact:.2e}")


if __name__ == "__main__":
    main()
