"""What the probability of relevance p costs `semrel judge`: the same pool judged with `--null-sample 0`
(no p, no null pairs) and with the default, each run in its own process, the two interleaved.

    python bench/judge_p_cost.py [--folder out/bench-labels/sets/covid150] [--repeats 3] [--cold-queries 40]

Runs on the COVID-QA folder bench/labels.py prepared (corpus, golden set, pool.tsv = BM25 top 20 + gold,
pool-all.tsv = also every run's top 10). Pools:
  kappa  pool.tsv, embedding cache warm (the judge only matches)
  all    pool-all.tsv, cache warm
  cold   the first --cold-queries questions of pool.tsv, each run with an empty cache (encoding included)
Prints per pool the null pairs p adds and the medians of CPU seconds (user + system), wall seconds and
peak RSS without and with p (docs/judge.md, "What p costs").
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from measured import measured

ROOT = Path(__file__).resolve().parent.parent
SEMREL = [sys.executable, "-c", "from semrel.cli import main; main()"]


def subset(folder: Path, work: Path, queries: int) -> tuple[Path, Path]:
    """The golden set's first `queries` questions and their pool.tsv rows."""
    golden = [line for line in (folder / "golden.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()][:queries]
    kept = {json.loads(line)["query_id"] for line in golden}
    rows = (folder / "pool.tsv").read_text(encoding="utf-8").splitlines()
    (work / "golden.jsonl").write_text("\n".join(golden) + "\n", encoding="utf-8")
    (work / "pool.tsv").write_text("\n".join([rows[0], *[r for r in rows[1:] if r.split("\t")[0] in kept]]) + "\n", encoding="utf-8")
    return work / "golden.jsonl", work / "pool.tsv"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, default=ROOT / "out" / "bench-labels" / "sets" / "covid150")
    parser.add_argument("--cache", type=Path, default=None, help="the warm embedding cache [default: bench/labels.py's, WORK/cache]")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cold-queries", type=int, default=40, help="questions in the cold-cache pool (0: skip it)")
    args = parser.parse_args()
    folder = args.folder
    if not (folder / "pool-all.tsv").exists():
        raise SystemExit(f"{folder} lacks pool-all.tsv: run bench/labels.py first")
    cache = args.cache or folder.parent.parent / "cache"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        pools = {"kappa": (folder / "golden.jsonl", folder / "pool.tsv", cache),
                 "all": (folder / "golden.jsonl", folder / "pool-all.tsv", cache)}
        if args.cold_queries:
            pools["cold"] = (*subset(folder, work, args.cold_queries), None)
        figures: dict[tuple[str, int], list] = {}
        added: dict[str, str] = {}
        for _ in range(args.repeats):
            for name, (golden, pool, warm) in pools.items():
                for null in (0, None):  # interleaved: without p, then the default
                    run_cache = warm or work / "cold-cache"
                    shutil.rmtree(work / "cold-cache", ignore_errors=True)
                    command = [*SEMREL, "judge", "--corpus", str(folder / "corpus.jsonl"), "--golden", str(golden), "--pool", str(pool),
                               "--cache", str(run_cache), "-o", str(work / f"{name}.jsonl"), *(["--null-sample", "0"] if null == 0 else [])]
                    step = measured(command)
                    figures.setdefault((name, 0 if null == 0 else 1), []).append(step)
                    if null is None:
                        added[name] = step.stderr.strip().splitlines()[-1]
    print("| pool | judge summary with p | CPU s without / with p | wall s without / with p | peak RSS MiB without / with p |")
    print("|---|---|---:|---:|---:|")
    for name in pools:
        off, on = figures[name, 0], figures[name, 1]
        cpu = [statistics.median(s.cpu_seconds for s in runs) for runs in (off, on)]
        wall = [statistics.median(s.seconds for s in runs) for runs in (off, on)]
        peak = [statistics.median(s.peak_mb for s in runs) for runs in (off, on)]
        print(f"| {name} | {added[name]} | {cpu[0]:.2f} / {cpu[1]:.2f} ({cpu[1] / cpu[0] - 1:+.0%}) | {wall[0]:.2f} / {wall[1]:.2f} | "
              f"{peak[0]:.0f} / {peak[1]:.0f} ({peak[1] / peak[0] - 1:+.0%}) |")


if __name__ == "__main__":
    main()
