"""What the probability of relevance p costs `semrel judge`: the same pool judged with `--null-sample 0`
(no p, no null pairs) and with the default, each run in its own process, interleaved; and, to part the
null pairs' cost from the rest of p's, the pool plus the null pairs judged as ordinary pairs without p.

    python bench/judge_p_cost.py [--folder out/bench-labels/sets/covid150] [--repeats 3] [--cold-queries 40]
    python bench/judge_p_cost.py --instructions 40    # the same arms counted in instructions (valgrind)
    python bench/judge_p_cost.py --in-process 5       # the warm pools' last two arms timed in this process
    python bench/judge_p_cost.py --in-process-instructions 60   # those arms counted in instructions (valgrind)
    python bench/judge_p_cost.py --in-process-instructions 60 --no-checkpoint   # the same, no checkpoint written

Runs on the COVID-QA folder bench/labels.py prepared (corpus, golden set, pool.tsv = BM25 top 20 + gold,
pool-all.tsv = also every run's top 10). Pools:
  kappa  pool.tsv, embedding cache warm (the judge only matches)
  all    pool-all.tsv, cache warm
  cold   the first --cold-queries questions of pool.tsv, each run with an empty cache (encoding included)
Prints per pool the null pairs p adds and the medians of CPU seconds (user + system), wall seconds and
peak RSS without p, with p, and without p on the pool plus the null pairs (the issue lets the null sample
add pairs: what p costs beyond matching them is the last two compared), and the medians of the ratios of
each repeat's runs (docs/judge.md, "What p costs").

CPU seconds on a shared machine drift too much to show a change of a few percent; --instructions N
counts the instructions of each arm once under valgrind's callgrind (deterministic), on the first N
questions with the warm cache, plus one question alone as the start-up (imports, the corpus pass) that
the ratios leave out. Several minutes an arm, with one BLAS thread (see count_instructions).
--in-process N times the default against the pool plus its null pairs without p in one process (one
BLAS thread, a checkpoint written, no output file), each arm reading its pool file and calling
judge_pairs as `semrel judge` does, N interleaved repeats after one of each: no start-up, no output,
and less drift than separate processes, on either warm pool's depth; the ratio is the median of the
repeats' paired ratios, with a distribution-free 95% interval for it (order statistics). (Until 2026-12-05 the pools were
read before the clock started, which left out the arm without p parsing its 7,252 extra rows while
the default's building of its null pairs was counted.)
--in-process-instructions N counts those two arms' judge_pairs instructions on the first N questions
of the larger pool (pool-all.tsv): each arm in a child process under callgrind, counted between two
marker calls around its second judge_pairs call (the first warms). The pool is read outside the
count: the file holds every question's rows, and reading them all would weigh N questions' judging
against 300 questions' parsing. --no-checkpoint runs either in-process mode without a checkpoint file: what
p costs beyond the checkpoint, which holds each pooled pair's token bests so a killed run resumes exactly.
"""

from __future__ import annotations

import os
import sys

if any(a.startswith("--in-process") for a in sys.argv):  # one BLAS thread, set before numpy loads, as the valgrind counts are made
    os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = "1"

import argparse
import gc
import json
import re
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from scipy.stats import binom

from measured import SEMREL, measured
from semrel.formats.corpus import iter_corpus, read_golden
from semrel.formats.pool import read_pool
from semrel.judging.judge import JudgeOptions, Pair, judge_pairs, scan_corpus
from semrel.judging.labels import NULL_SAMPLE
from semrel.judging.probability import null_pairs
from semrel.records import GoldenItem

ROOT = Path(__file__).resolve().parent.parent


def subset(folder: Path, work: Path, queries: int) -> tuple[Path, Path]:
    """The golden set's first `queries` questions and their pool.tsv rows."""
    golden = [line for line in (folder / "golden.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()][:queries]
    kept = {json.loads(line)["query_id"] for line in golden}
    rows = (folder / "pool.tsv").read_text(encoding="utf-8").splitlines()
    (work / "golden.jsonl").write_text("\n".join(golden) + "\n", encoding="utf-8")
    (work / "pool.tsv").write_text("\n".join([rows[0], *[r for r in rows[1:] if r.split("\t")[0] in kept]]) + "\n", encoding="utf-8")
    return work / "golden.jsonl", work / "pool.tsv"


def with_null(corpus: Path, golden: Path, pool: Path, out: Path) -> Path:
    """`pool` plus the judge's null pairs (the default seed and size) as ordinary pool rows."""
    rows = [line for line in pool.read_text(encoding="utf-8").splitlines() if line.strip()]
    judged: dict[str, set[str]] = {}
    for row in rows[1:]:
        q, c, *_ = row.split("\t")
        judged.setdefault(q, set()).add(c)
    for item in read_golden(golden):
        if item.gold_chunk_ids:  # the judge adds them to the pool
            judged.setdefault(item.query_id, set()).update(item.gold_chunk_ids)
    candidates = scan_corpus(iter_corpus(corpus), set(), NULL_SAMPLE, 0, str(corpus), False).candidates
    extra = null_pairs(list(judged), candidates, judged)
    out.write_text("\n".join([*rows, *(f"{q}\t{c}\tnull" for q, c in extra)]) + "\n", encoding="utf-8")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", type=Path, default=ROOT / "out" / "bench-labels" / "sets" / "covid150")
    parser.add_argument("--cache", type=Path, default=None, help="the warm embedding cache [default: bench/labels.py's, WORK/cache]")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cold-queries", type=int, default=40, help="questions in the cold-cache pool (0: skip it)")
    parser.add_argument("--instructions", type=int, default=0, metavar="N",
                        help="count instructions instead, on the first N questions (needs valgrind)")
    parser.add_argument("--in-process", type=int, default=0, metavar="N",
                        help="time the warm pools' default and pool + null pairs arms in this process instead, N repeats")
    parser.add_argument("--in-process-instructions", type=int, default=0, metavar="N",
                        help="count those two arms' instructions instead, on the first N questions of pool-all.tsv (needs valgrind)")
    parser.add_argument("--no-checkpoint", action="store_true",
                        help="in-process arms without a checkpoint file, to part its cost (each pooled pair's token bests) from p's")
    parser.add_argument("--arm", choices=("p", "null"), help=argparse.SUPPRESS)  # the child that callgrind counts
    args = parser.parse_args()
    folder = args.folder
    if not (folder / "pool-all.tsv").exists():
        raise SystemExit(f"{folder} lacks pool-all.tsv: run bench/labels.py first")
    cache = args.cache or folder.parent.parent / "cache"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        checkpoint = None if args.no_checkpoint else work / "checkpoint"
        if args.instructions:
            count_instructions(folder, cache, work, args.instructions)
            return
        if args.in_process:
            time_in_process(folder, cache, work, args.in_process, checkpoint)
            return
        if args.in_process_instructions:
            if args.arm:
                run_marked(folder, cache, work, args.in_process_instructions, args.arm, checkpoint)
            else:
                count_in_process(folder, cache, work, args.in_process_instructions, checkpoint is None)
            return
        pools = {"kappa": (folder / "golden.jsonl", folder / "pool.tsv", cache),
                 "all": (folder / "golden.jsonl", folder / "pool-all.tsv", cache)}
        if args.cold_queries:
            pools["cold"] = (*subset(folder, work, args.cold_queries), None)
        figures: dict[tuple[str, int], list] = {}
        added: dict[str, str] = {}
        arms = {name: [(pool, 0), (pool, None), (with_null(folder / "corpus.jsonl", golden, pool, work / f"{name}-null.tsv"), 0)]
                for name, (golden, pool, _) in pools.items()}
        for _ in range(args.repeats):
            for name, (golden, _, warm) in pools.items():
                for arm, (pool, null) in enumerate(arms[name]):  # interleaved: without p, the default, the pool + null without p
                    run_cache = warm or work / "cold-cache"
                    shutil.rmtree(work / "cold-cache", ignore_errors=True)
                    command = [*SEMREL, "judge", "--corpus", str(folder / "corpus.jsonl"), "--golden", str(golden), "--pool", str(pool),
                               "--cache", str(run_cache), "-o", str(work / f"{name}.jsonl"), *(["--null-sample", "0"] if null == 0 else [])]
                    step = measured(command)
                    figures.setdefault((name, arm), []).append(step)
                    if null is None:
                        added[name] = step.stderr.strip().splitlines()[-1]
    print("| pool | judge summary with p | CPU s without / with p / pool + null pairs without p | wall s, the same three | "
          "peak RSS MiB, the same three |")
    print("|---|---|---:|---:|---:|")
    for name in pools:
        cpu, wall, peak = ([statistics.median(getattr(s, what) for s in figures[name, arm]) for arm in range(3)]
                           for what in ("cpu_seconds", "seconds", "peak_mb"))
        print(f"| {name} | {added[name]} | {cpu[0]:.2f} / {cpu[1]:.2f} / {cpu[2]:.2f} ({ratio(figures, name, 0, 'cpu_seconds')}; "
              f"{ratio(figures, name, 2, 'cpu_seconds')} beyond the null pairs) | {wall[0]:.2f} / {wall[1]:.2f} / {wall[2]:.2f} | "
              f"{peak[0]:.0f} / {peak[1]:.0f} / {peak[2]:.0f} ({ratio(figures, name, 0, 'peak_mb')}; "
              f"{ratio(figures, name, 2, 'peak_mb')}) |")


def count_instructions(folder: Path, cache: Path, work: Path, queries: int) -> None:
    """Each arm's instructions (one callgrind run each) on the first `queries` questions, less start-up."""
    arms = {}
    for name, size in (("start-up", 1), ("questions", queries)):
        (work / name).mkdir()
        arms[name] = subset(folder, work / name, size)

    def judge(golden: Path, pool: Path, null: bool) -> list[str]:
        return [*SEMREL, "judge", "--corpus", str(folder / "corpus.jsonl"), "--golden", str(golden), "--pool", str(pool),
                "--cache", str(cache), "-o", str(work / "j.jsonl"), *([] if null else ["--null-sample", "0"])]

    golden, pool = arms["questions"]
    padded = with_null(folder / "corpus.jsonl", golden, pool, work / "questions" / "null.tsv")
    runs = {"start-up (1 question, no p)": judge(*arms["start-up"], False), "no p": judge(golden, pool, False),
            "p": judge(golden, pool, True), "pool + null pairs, no p": judge(golden, padded, False)}
    # one BLAS thread: valgrind runs threads one at a time, so an idle BLAS thread's spinning wait would be
    # counted as work (the 40-question arm without p counted 10.7 G instructions with two threads, 4.4 G with one)
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    subprocess.run(runs["no p"], check=True, capture_output=True, env=env)  # compiles what a fresh checkout lacks, outside the counts
    counts = {}
    for name, command in runs.items():
        done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *command],
                              capture_output=True, text=True, check=True, env=env)
        counts[name] = int(re.search(r"I\s+refs:\s+([\d,]+)", done.stderr).group(1).replace(",", ""))  # type: ignore[union-attr]
        print(f"{name}: {counts[name] / 1e9:.3f} G instructions", file=sys.stderr)
    base = counts["start-up (1 question, no p)"]
    print(f"| questions | instructions G: {' / '.join(runs)} | p over no p | p beyond the null pairs |")
    print("|---:|---|---:|---:|")
    print(f"| {queries} | {' / '.join(f'{c / 1e9:.3f}' for c in counts.values())} | "
          f"{(counts['p'] - base) / (counts['no p'] - base) - 1:+.1%} | "
          f"{(counts['p'] - base) / (counts['pool + null pairs, no p'] - base) - 1:+.1%} |")


def in_process_arms(folder: Path, cache: Path, work: Path, pool: Path, queries: int = 0
                    ) -> tuple[list[GoldenItem], list[tuple[Path, JudgeOptions]]]:
    """The golden set (its first `queries` questions, or all), and the pool file and options of the default
    on `pool` and of the pool plus its null pairs without p."""
    golden = read_golden(folder / "golden.jsonl")
    golden = golden[:queries] if queries else golden
    padded = with_null(folder / "corpus.jsonl", folder / "golden.jsonl", pool, work / f"{pool.stem}-null.tsv")
    return golden, [(pool, JudgeOptions(cache_dir=str(cache))), (padded, JudgeOptions(cache_dir=str(cache), null_sample=0))]


def arm_pairs(golden: list[GoldenItem], pool: Path) -> list[Pair]:
    """The pool's rows of the golden set's questions."""
    kept = {item.query_id for item in golden}
    return [tuple(r) for r in read_pool(pool) if r[0] in kept]  # type: ignore[misc]


def run_arm(chunks: list, golden: list[GoldenItem], pairs: list[Pair], options: JudgeOptions, checkpoint: Path | None) -> None:
    if checkpoint:
        checkpoint.unlink(missing_ok=True)
    judge_pairs(lambda: iter(chunks), golden, pairs, options, checkpoint=str(checkpoint) if checkpoint else None)


def count_in_process(folder: Path, cache: Path, work: Path, queries: int, no_checkpoint: bool) -> None:
    """Each in-process arm's instructions between the markers of its child process (run_marked)."""
    counts = {}
    for arm in ("p", "null"):
        out = work / f"callgrind.{arm}"
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--zero-before=getppid", "--dump-before=getpgrp",
                        sys.executable, __file__, "--folder", str(folder), "--cache", str(cache), "--in-process-instructions",
                        str(queries), "--arm", arm, *(["--no-checkpoint"] if no_checkpoint else [])], check=True, capture_output=True)
        counts[arm] = int(re.search(r"^summary: (\d+)$", Path(f"{out}.1").read_text(), re.M).group(1))  # type: ignore[union-attr]
        print(f"{arm}: {counts[arm] / 1e9:.3f} G instructions", file=sys.stderr)
    print("| questions of pool-all.tsv | checkpoint | instructions G: p / pool + null pairs, no p | p beyond the null pairs |")
    print("|---:|---|---:|---:|")
    print(f"| {queries} | {'none' if no_checkpoint else 'written'} | {counts['p'] / 1e9:.3f} / {counts['null'] / 1e9:.3f} | "
          f"{counts['p'] / counts['null'] - 1:+.1%} |")


def run_marked(folder: Path, cache: Path, work: Path, queries: int, arm: str, checkpoint: Path | None) -> None:
    """One in-process arm run twice, the second between the calls callgrind zeroes and dumps its counts at."""
    chunks = list(iter_corpus(folder / "corpus.jsonl"))
    golden, arms = in_process_arms(folder, cache, work, folder / "pool-all.tsv", queries)
    pool, options = arms[0 if arm == "p" else 1]
    pairs = arm_pairs(golden, pool)  # read outside the count: the file holds every question's rows, the count N's
    for marked in (False, True):
        if marked:
            os.getppid()  # --zero-before
        run_arm(chunks, golden, pairs, options, checkpoint)
        if marked:
            os.getpgrp()  # --dump-before


def time_in_process(folder: Path, cache: Path, work: Path, repeats: int, checkpoint: Path | None) -> None:
    """Per warm pool, CPU seconds of the default on the pool and of the pool plus the null pairs without p, and
    each arm's full collections of Python's cyclic garbage collector (a walk of every object the process holds,
    which an arm's extra long-lived objects can bring about, so part of a difference in CPU time)."""
    chunks = list(iter_corpus(folder / "corpus.jsonl"))
    collected = [0, 0]  # full collections in the kept repeats, per arm
    timing: list[int | None] = [None]  # the arm being timed, if kept

    def count(phase: str, info: dict) -> None:
        if phase == "start" and info["generation"] == 2 and timing[0] is not None:
            collected[timing[0]] += 1

    gc.callbacks.append(count)
    print("| pool | pooled pairs a query | CPU s: p / pool + null pairs, no p | p beyond the null pairs (95% CI of the median) | "
          "full GC collections |")
    print("|---|---:|---:|---:|---:|")
    for name, pool in (("kappa", folder / "pool.tsv"), ("all", folder / "pool-all.tsv")):
        golden, arms = in_process_arms(folder, cache, work, pool)
        seconds: list[list[float]] = [[], []]
        collected[:] = [0, 0]
        for repeat in range(repeats + 1):  # the first round warms caches and is not kept
            for arm, (path, options) in enumerate(arms):
                timing[0] = arm if repeat else None
                started = time.process_time()  # the pool read as `semrel judge` reads it: the other arm's has 7,252 more rows
                run_arm(chunks, golden, arm_pairs(golden, path), options, checkpoint)
                if repeat:
                    seconds[arm].append(time.process_time() - started)
        timing[0] = None
        ratios = sorted(a / b - 1 for a, b in zip(*seconds))
        low, high = median_interval(ratios)
        rows = list(read_pool(pool))
        depth = len(rows) / len({r[0] for r in rows})
        print(f"| {name} | {depth:.0f} | {statistics.median(seconds[0]):.2f} / {statistics.median(seconds[1]):.2f} | "
              f"{statistics.median(ratios):+.1%} ({low:+.1%} to {high:+.1%}) | {collected[0]} / {collected[1]} |")
    gc.callbacks.remove(count)


def median_interval(ordered: list[float], level: float = 0.95) -> tuple[float, float]:
    """A distribution-free confidence interval for the median of `ordered` (sorted): the order statistics k and n-1-k
    (from 0), k the largest with P(Binomial(n, 1/2) <= k) <= (1 - level) / 2, which covers the median with
    probability 1 - 2 P(B <= k) (97.3% for n = 21); the whole range when n is too small for `level`."""
    n, k = len(ordered), 0
    while k + 1 < n - 2 - k and binom.cdf(k + 1, n, 0.5) <= (1 - level) / 2:
        k += 1
    return ordered[k], ordered[n - 1 - k]


def ratio(figures: dict, name: str, against: int, what: str) -> str:
    """The median over repeats of the default's figure over the `against` arm's in the same repeat: paired,
    so a drift of the shared machine's speed between repeats does not move it."""
    pairs = zip(figures[name, 1], figures[name, against])
    return f"{statistics.median(getattr(a, what) / getattr(b, what) for a, b in pairs) - 1:+.0%}"


if __name__ == "__main__":
    main()
