"""Peak memory and time of `semrel judge` as the corpus grows and the pool stays the same.

    python bench/judge_memory.py [--sizes 10000,200000,1000000] [--rescale none]

The pool is fixed: the 18 questions of data/golden.csv against the same 17 chunks (306 pairs).
Around those chunks, synthetic corpora of each size are written (chunk texts recombine sentences
of data/docs, so they tokenize like real text). After one run that fills the embedding cache,
each size is judged by the CLI in its own process (`os.wait4` gives that process's peak RSS),
so the figures show what the corpus alone costs: reading it, never keeping it. With
`--rescale corpus` each size draws its own 500 baseline chunks and is judged once to cache them.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
import sys
import tempfile
from pathlib import Path

from measured import measured

ROOT = Path(__file__).resolve().parent.parent
POOLED = 17


def sentences() -> list[str]:
    text = " ".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "data" / "docs").glob("*.md")))
    return [s for s in (s.strip() for s in re.split(r"(?<=[.!?])\s+", re.sub(r"\s+", " ", text))) if len(s) > 20]


def write_inputs(folder: Path, sizes: list[int]) -> None:
    """corpus-N.jsonl per size (chunks c0.. of 3-5 random sentences, the same first chunks in each),
    golden.jsonl (no gold chunks: only the pool is judged) and pool.tsv."""
    pieces = sentences()
    rng = random.Random(0)
    outs = {size: open(folder / f"corpus-{size}.jsonl", "w", encoding="utf-8") for size in sizes}
    for i in range(max(sizes)):  # line by line: this process stays small, and so do the children it forks
        line = json.dumps({"_id": f"c{i}", "title": "", "text": " ".join(rng.sample(pieces, rng.randint(3, 5)))}) + "\n"
        for size, out in outs.items():
            if i < size:
                out.write(line)
    for out in outs.values():
        out.close()
    with open(ROOT / "data" / "golden.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    with open(folder / "golden.jsonl", "w", encoding="utf-8") as out:
        out.writelines(json.dumps({"query_id": r["query_id"], "query": r["query"], "reference_answer": r["reference_answer"],
                                   "gold_chunk_ids": []}) + "\n" for r in rows)
    with open(folder / "pool.tsv", "w", encoding="utf-8") as out:
        out.write("query_id\tchunk_id\tsources\n")
        out.writelines(f"{r['query_id']}\tc{i * 37 % 5000}\tbench\n" for r in sorted(rows, key=lambda r: r["query_id"])
                       for i in range(POOLED))


def judge(folder: Path, size: int, extra: list[str]) -> tuple[float, float, str]:
    """(seconds, peak RSS in MB, summary line) of one `semrel judge` process."""
    command = [sys.executable, "-m", "semrel.cli", "judge", "--corpus", str(folder / f"corpus-{size}.jsonl"),
               "--golden", str(folder / "golden.jsonl"), "--pool", str(folder / "pool.tsv"),
               "-o", str(folder / f"judgments-{size}.jsonl"), "--cache", str(folder / "cache"), *extra]
    step = measured(command)
    return step.seconds, step.peak_mb, step.stderr.strip().splitlines()[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,200000", help="corpus sizes in chunks, comma-separated")
    parser.add_argument("--rescale", default="none", choices=["none", "corpus"])
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(","))
    extra = ["--rescale", args.rescale]
    with tempfile.TemporaryDirectory(prefix="semrel-bench-memory-") as tmp:
        folder = Path(tmp)
        write_inputs(folder, sizes)
        judge(folder, sizes[0], extra)  # fills the cache: what follows differs only in the corpus
        print(f"{'chunks':>9} {'corpus MB':>9} {'seconds':>8} {'peak RSS MB':>11}  summary")
        for size in sizes:
            if args.rescale == "corpus" and size != sizes[0]:
                judge(folder, size, extra)  # each size samples its own baseline chunks: cache them first
            seconds, peak, summary = judge(folder, size, extra)
            mb = (folder / f"corpus-{size}.jsonl").stat().st_size / 1e6
            print(f"{size:>9,} {mb:>9.1f} {seconds:>8.1f} {peak:>11.0f}  {summary}")
        if args.rescale == "none":
            same = len({(folder / f"judgments-{s}.jsonl").read_bytes() for s in sizes}) == 1
            print(f"judgments identical across sizes: {same}")


if __name__ == "__main__":
    main()
