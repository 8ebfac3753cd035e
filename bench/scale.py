"""Bootstrapping qrels as the corpus grows, the questions held fixed: BM25 build and search, pool, judge.

    python bench/scale.py [--sizes 10000,100000,1000000] [--queries 1000] [--judge-queries 200] [--depth 20]
                          [--engines local,ray] [--ray-sizes 10000,1000000] [--before-sizes 1000000]
                          [--no-judge | --judge-sizes 10000] [--memory-cap-gb 16] [--work DIR] [--keep]
    python bench/scale.py --report DIR/scale.json      (print a finished run's tables again)

Corpora come from bench/corpus_gen.py (real COVID-QA/PubMedQA sentences recombined, so lengths and
vocabulary are real), streamed to disk; the same queries are asked at every size. Per size, each step
runs as the `semrel` command a user would type, in its own process (address space capped at
--memory-cap-gb), so its wall time and peak RSS are its own:

  bm25 build   semrel retrieve --method bm25, empty cache: streams the corpus into the on-disk index, then searches
  bm25 query   the same command again: the index is reused (nothing built): the search of --queries queries
  bm25 before  (sizes in --before-sizes) semrel retrieve --no-cache: bm25s in memory, as before the on-disk index
  pool         semrel pool --depth DEPTH over the first --judge-queries queries: top DEPTH of the run plus gold
  judge        semrel judge --engine E, empty cache: BERTScore of every pooled pair (grows with the pool)

and the peer, in the same run: bert_score.score over the same pairs of the smallest size (a subsample
of --peer-pairs, since it holds every pair's text in memory and runs the full model).
Prints the tables (figures, index and cache disk, the load average at each step) and the growth of
each BM25 figure between sizes. Generated corpora and caches are deleted at the end unless --keep.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_gen import generated_corpus, generated_golden  # noqa: E402
from measured import measured  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
MEMORY_CAP: int | None = None


def load() -> str:
    """The 1-minute load average, recorded next to each figure (the machine is shared)."""
    return f"{os.getloadavg()[0]:.1f}"


def timed(cmd: list[str], log: Path) -> tuple[float, float, float]:
    """Run a semrel step; its wall seconds, peak RSS in MB and CPU seconds, its stderr kept in `log`."""
    step = measured(cmd, cwd=ROOT, memory_cap=MEMORY_CAP)
    log.write_text(step.stderr)
    return step.seconds, step.peak_mb, step.cpu_seconds


def semrel(*args: str) -> list[str]:
    return [PYTHON, "-m", "semrel.cli", *args]


def write_jsonl(path: Path, rows) -> int:
    """Write rows once; generated files are kept between runs (they are deterministic)."""
    if path.exists():
        return sum(1 for _ in open(path, encoding="utf-8"))
    tmp = path.with_suffix(".tmp")
    count = 0
    with open(tmp, "w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
    tmp.rename(path)
    return count


def folder_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


def judged_texts(log: Path) -> str:
    """'N texts encoded' from the judge's summary line on stderr."""
    for line in log.read_text().splitlines():
        if line.startswith("judged "):
            return line.split(": ", 1)[1].split(" texts encoded")[0]
    return "?"


def peer(work: Path, pairs: int) -> tuple[float, float, int]:
    """bert_score.score on the first `pairs` pooled pairs of the smallest size: pairs/s, peak MB."""
    script = f"""
import json, time, sys
from bert_score import score
from semrel.encoding.models import describe_model
chunks = {{}}
for line in open({str(work / 'corpus.jsonl')!r}, encoding='utf-8'):
    row = json.loads(line); chunks[row['_id']] = row['text']
answers = {{}}
for line in open({str(work / 'golden.jsonl')!r}, encoding='utf-8'):
    row = json.loads(line); answers[row['query_id']] = row['reference_answer']
pairs = [l.split('\\t')[:2] for l in open({str(work / 'pool.tsv')!r}, encoding='utf-8') if not l.startswith('query_id')][:{pairs}]
cands = [chunks[c] for q, c in pairs]; refs = [answers[q] for q, c in pairs]
start = time.perf_counter()
score(cands, refs, model_type=str(describe_model(None).folder), num_layers=6)
print(len(pairs), time.perf_counter() - start)
"""
    run = measured([PYTHON, "-c", script], cwd=ROOT, memory_cap=MEMORY_CAP)
    count, seconds = run.stdout.split()
    return int(count) / float(seconds), run.peak_mb, int(count)


def main() -> None:
    global MEMORY_CAP
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--queries", type=int, default=1000, help="queries searched by bm25")
    parser.add_argument("--judge-queries", type=int, default=None, help="queries pooled and judged [default: --queries]")
    parser.add_argument("--depth", type=int, default=20)
    parser.add_argument("--engines", default="local,ray", help="judge engines; ray runs with 2 local workers")
    parser.add_argument("--ray-sizes", default=None, help="sizes judged with ray too [default: all]")
    parser.add_argument("--before-sizes", default="", help="sizes also run with bm25s in memory (--no-cache), as before")
    parser.add_argument("--no-judge", action="store_true", help="bm25 only")
    parser.add_argument("--judge-sizes", default=None, help="sizes pooled and judged [default: all]")
    parser.add_argument("--peer-pairs", type=int, default=500)
    parser.add_argument("--memory-cap-gb", type=float, default=16.0, help="address-space cap of every step (0: none)")
    parser.add_argument("--work", default="/tmp/semrel-scale")
    parser.add_argument("--keep", action="store_true", help="keep the generated corpora and caches")
    args = parser.parse_args()
    MEMORY_CAP = int(args.memory_cap_gb * 2**30) if args.memory_cap_gb else None
    sizes = [int(s) for s in args.sizes.split(",")]
    engines = [] if args.no_judge else args.engines.split(",")
    judge_sizes = set(sizes) if args.judge_sizes is None else {int(s) for s in args.judge_sizes.split(",")}
    ray_sizes = set(sizes) if args.ray_sizes is None else {int(s) for s in args.ray_sizes.split(",")}
    before_sizes = {int(s) for s in args.before_sizes.split(",") if s}
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    golden_rows = list(generated_golden(args.queries, seed=0))
    judged = golden_rows[: args.judge_queries or args.queries]
    rows: list[dict] = []
    peer_figures = (0.0, 0.0, 0)
    try:
        for size in sizes:
            rows += measure_size(work, size, golden_rows, judged, args, engines if size in judge_sizes else [], ray_sizes,
                                 before_sizes)
            (work / "scale.json").write_text(json.dumps({"rows": rows, "peer": peer_figures, "queries": args.queries,
                                                          "judge_queries": len(judged), "depth": args.depth}, indent=1))
        if engines and judge_sizes:
            peer_figures = peer(work / f"{min(judge_sizes)}", args.peer_pairs)
    finally:
        if not args.keep:
            for size in sizes:
                shutil.rmtree(work / f"{size}", ignore_errors=True)
    results = {"rows": rows, "peer": peer_figures, "queries": args.queries, "judge_queries": len(judged), "depth": args.depth}
    (work / "scale.json").write_text(json.dumps(results, indent=1))
    report(results)


def measure_size(work: Path, size: int, golden_rows: list, judged: list, args: argparse.Namespace, engines: list[str],
                 ray_sizes: set[int], before_sizes: set[int]) -> list[dict]:
    folder = work / f"{size}"
    folder.mkdir(exist_ok=True)
    corpus, golden = folder / "corpus.jsonl", folder / "golden.jsonl"
    print(f"[{size:,} chunks] generating ...", file=sys.stderr)
    write_jsonl(corpus, generated_corpus(size, seed=0))
    write_jsonl(golden, golden_rows)
    write_jsonl(folder / "judged.jsonl", judged)
    index = folder / "bm25-cache"
    shutil.rmtree(index, ignore_errors=True)
    retrieve = semrel("retrieve", "--corpus", str(corpus), "--golden", str(golden), "--method", "bm25", "-k", str(args.depth),
                      "--cache", str(index))
    row: dict = {"chunks": size, "corpus_mb": corpus.stat().st_size / 2**20}
    print(f"[{size:,} chunks] bm25: build the index, search {args.queries} queries ...", file=sys.stderr)
    row["bm25_load"] = load()
    build = timed(retrieve + ["-o", str(folder / "bm25.run")], folder / "bm25.log")
    row["bm25_build_s"], row["bm25_build_mb"], row["bm25_build_cpu"] = build
    row["bm25_disk_mb"] = folder_mb(index)
    print(f"[{size:,} chunks] bm25: the same again (index reused) ...", file=sys.stderr)
    row["query_load"] = load()
    query = timed(retrieve + ["-o", str(folder / "again.run")], folder / "again.log")
    row["bm25_query_s"], row["bm25_query_mb"], row["bm25_query_cpu"] = query
    row["reused"] = f"bm25 index: 0 chunks indexed, {size} reused" in (folder / "again.log").read_text()
    if size in before_sizes:
        print(f"[{size:,} chunks] bm25s in memory (--no-cache), as before ...", file=sys.stderr)
        row["before_load"] = load()
        before = timed(retrieve + ["--no-cache", "-o", str(folder / "memory.run")], folder / "memory.log")
        row["before_s"], row["before_mb"], row["before_cpu"] = before
        runs = [p.read_text().replace(f" {p.stem}\n", "\n") for p in (folder / "bm25.run", folder / "memory.run")]
        row["same_run"] = runs[0] == runs[1]
    print(json.dumps(row), file=sys.stderr)
    if not engines:
        return [row]
    timed(semrel("pool", "--golden", str(folder / "judged.jsonl"), str(folder / "bm25.run"),
                 "--depth", str(args.depth), "-o", str(folder / "pool.tsv")), folder / "pool.log")
    pairs = sum(1 for line in open(folder / "pool.tsv", encoding="utf-8") if not line.startswith("query_id"))
    out = []
    for engine in engines:
        if engine == "ray" and size not in ray_sizes:
            continue
        cache = folder / f"cache-{engine}"
        shutil.rmtree(cache, ignore_errors=True)
        print(f"[{size:,} chunks] judge {pairs:,} pairs, engine {engine} ...", file=sys.stderr)
        extra = ["--ray-workers", "2"] if engine == "ray" else []
        log = folder / f"judge-{engine}.log"
        judge_load = load()
        wall, rss, cpu = timed(semrel("judge", "--corpus", str(corpus), "--golden", str(folder / "judged.jsonl"),
                                 "--pool", str(folder / "pool.tsv"), "--cache", str(cache), "--engine", engine, *extra,
                                 "-o", str(folder / f"judgments-{engine}.jsonl")), log)
        out.append({**row, "pairs": pairs, "engine": engine, "texts": judged_texts(log), "judge_s": wall, "pairs_s": pairs / wall,
                    "judge_mb": rss, "judge_cpu": cpu, "cache_mb": folder_mb(cache), "judge_load": judge_load})
        print(json.dumps(out[-1]), file=sys.stderr)
    return out


def report(results: dict) -> None:
    rows, (peer_rate, peer_mb, peer_pairs) = results["rows"], results["peer"]
    queries, depth = results["queries"], results["depth"]
    sizes = list({r["chunks"]: r for r in rows}.values())
    print(f"BM25, {queries} queries, k {depth}. build: the first retrieve (streams the corpus into the on-disk index, then "
          "searches); query: the same retrieve again (index reused, nothing built); before: bm25s in memory (--no-cache); "
          "load: 1-minute load average at the start of each\n")
    print("| chunks | corpus MB | build s (CPU s) | build peak MB | index MB | query s (CPU s) | query peak MB | before s (CPU s) "
          "| before peak MB | load |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")

    def cpu(r: dict, key: str) -> str:
        return f" ({r[key]:.0f})" if key in r else ""

    for r in sizes:
        before = f"{r['before_s']:.1f}{cpu(r, 'before_cpu')} | {r['before_mb']:,.0f}" if "before_s" in r else "- | -"
        loads = " / ".join(r[k] for k in ("bm25_load", "query_load", "before_load") if k in r)
        print(f"| {r['chunks']:,} | {r['corpus_mb']:,.0f} | {r['bm25_build_s']:.1f}{cpu(r, 'bm25_build_cpu')} | "
              f"{r['bm25_build_mb']:,.0f} | {r['bm25_disk_mb']:,.0f} | {r['bm25_query_s']:.1f}{cpu(r, 'bm25_query_cpu')} | "
              f"{r['bm25_query_mb']:,.0f} | {before} | {loads} |")
    for lo, hi in zip(sizes, sizes[1:]):
        print(f"\n{lo['chunks']:,} -> {hi['chunks']:,} chunks ({hi['chunks'] / lo['chunks']:.0f}x): "
              f"build time {hi['bm25_build_s'] / lo['bm25_build_s']:.2f}x, build peak {hi['bm25_build_mb'] / lo['bm25_build_mb']:.2f}x, "
              f"index {hi['bm25_disk_mb'] / lo['bm25_disk_mb']:.2f}x, query time {hi['bm25_query_s'] / lo['bm25_query_s']:.2f}x, "
              f"query peak {hi['bm25_query_mb'] / lo['bm25_query_mb']:.2f}x")
    for r in sizes:
        same = f"; on-disk run == bm25s in-memory run: {r['same_run']}" if "same_run" in r else ""
        print(f"{r['chunks']:,} chunks: second retrieve reused the index (built nothing): {r.get('reused')}{same}")
    judged = [r for r in rows if "engine" in r]
    if not judged:
        return
    print(f"\njudge: {results.get('judge_queries', queries)} queries, pool depth {depth} (bm25 top {depth} + gold), fresh embedding "
          "cache per judge run; ray: 2 local workers, peak MB of the driver process only\n")
    print("| chunks | pairs | engine | texts encoded | judge s | pairs/s | judge peak MB | cache MB | load |")
    print("|---:|---:|---|---:|---:|---:|---:|---:|---|")
    for r in judged:
        print(f"| {r['chunks']:,} | {r['pairs']:,} | {r['engine']} | {r['texts']} | {r['judge_s']:.1f} | {r['pairs_s']:.1f} | "
              f"{r['judge_mb']:,.0f} | {r['cache_mb']:,.0f} | {r.get('judge_load', '?')} |")
    local = [r for r in judged if r["engine"] == "local"]
    if len(local) > 1:
        lo, hi = local[0], local[-1]
        print(f"\njudge peak RSS {hi['chunks']:,} vs {lo['chunks']:,} chunks: {hi['judge_mb'] / lo['judge_mb']:.2f}x "
              f"(corpus {hi['chunks'] / lo['chunks']:.0f}x); judge time {hi['judge_s'] / lo['judge_s']:.2f}x "
              f"(pool {hi['pairs'] / lo['pairs']:.2f}x)")
    if local and peer_rate:
        print(f"peer bert_score.score on {peer_pairs} of the same pairs: {peer_rate:.1f} pairs/s, peak {peer_mb:,.0f} MB; "
              f"semrel local {local[0]['pairs_s']:.1f} pairs/s = {local[0]['pairs_s'] / peer_rate:.2f}x, "
              f"peak {local[0]['judge_mb'] / peer_mb:.2f}x its memory")


def main_or_report() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--report":
        report(json.loads(Path(sys.argv[2]).read_text()))
    else:
        main()


if __name__ == "__main__":
    main_or_report()
