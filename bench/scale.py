"""Bootstrapping qrels as the corpus grows: 10k, 100k and 1M chunks, the pool held fixed.

    python bench/scale.py [--sizes 10000,100000,1000000] [--queries 1000] [--depth 20]
                          [--engines local,ray] [--ray-sizes 10000,1000000] [--work DIR]
    python bench/scale.py --report DIR/scale.json      (print a finished run's tables again)

Corpora come from bench/corpus_gen.py (real COVID-QA/PubMedQA sentences recombined, so lengths and
vocabulary are real); the same queries are asked at every size. Per size, each step runs as the
`semrel` command a user would type, in its own process, so its wall time and peak RSS are its own:

  bm25    semrel retrieve --method bm25 -k DEPTH      the pooling run (cost grows with the corpus)
  pool    semrel pool --depth DEPTH                    top DEPTH of the run plus the gold chunks
  judge   semrel judge --engine E, empty cache         BERTScore of every pooled pair (grows with the pool)

and the peer, in the same run: bert_score.score over the same pairs of the smallest size (a subsample
of --peer-pairs, since it holds every pair's text in memory and runs the full model).
Prints one table (figures, ratios, cache disk) and an estimate for 10M chunks x 10k queries built
from the measured per-chunk BM25 cost and per-text encoder cost.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus_gen import generated_corpus, generated_golden  # noqa: E402
from measured import measured  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable


def timed(cmd: list[str], log: Path) -> tuple[float, float]:
    """Run a semrel step; its wall seconds and peak RSS in MB, its stderr kept in `log`."""
    step = measured(cmd, cwd=ROOT)
    log.write_text(step.stderr)
    return step.seconds, step.peak_mb


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
    run = measured([PYTHON, "-c", script], cwd=ROOT)
    count, seconds = run.stdout.split()
    return int(count) / float(seconds), run.peak_mb, int(count)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--depth", type=int, default=20)
    parser.add_argument("--engines", default="local,ray", help="judge engines; ray runs with 2 local workers")
    parser.add_argument("--ray-sizes", default=None, help="sizes judged with ray too [default: all]")
    parser.add_argument("--peer-pairs", type=int, default=500)
    parser.add_argument("--work", default="/tmp/semrel-scale")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    engines = args.engines.split(",")
    ray_sizes = set(sizes) if args.ray_sizes is None else {int(s) for s in args.ray_sizes.split(",")}
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    golden_rows = list(generated_golden(args.queries, seed=0))
    rows = []
    for size in sizes:
        folder = work / f"{size}"
        folder.mkdir(exist_ok=True)
        print(f"[{size:,} chunks] generating ...", file=sys.stderr)
        write_jsonl(folder / "corpus.jsonl", generated_corpus(size, seed=0))
        write_jsonl(folder / "golden.jsonl", golden_rows)
        corpus_mb = (folder / "corpus.jsonl").stat().st_size / 2**20
        print(f"[{size:,} chunks] bm25 ...", file=sys.stderr)
        bm25 = timed(semrel("retrieve", "--corpus", str(folder / "corpus.jsonl"), "--golden", str(folder / "golden.jsonl"),
                            "--method", "bm25", "-k", str(args.depth), "-o", str(folder / "bm25.run")), folder / "bm25.log")
        timed(semrel("pool", "--golden", str(folder / "golden.jsonl"), str(folder / "bm25.run"),
                     "--depth", str(args.depth), "-o", str(folder / "pool.tsv")), folder / "pool.log")
        pairs = sum(1 for line in open(folder / "pool.tsv", encoding="utf-8") if not line.startswith("query_id"))
        for engine in engines:
            if engine == "ray" and size not in ray_sizes:
                continue
            cache = folder / f"cache-{engine}"
            shutil.rmtree(cache, ignore_errors=True)
            print(f"[{size:,} chunks] judge {pairs:,} pairs, engine {engine} ...", file=sys.stderr)
            extra = ["--ray-workers", "2"] if engine == "ray" else []
            log = folder / f"judge-{engine}.log"
            wall, rss = timed(semrel("judge", "--corpus", str(folder / "corpus.jsonl"), "--golden", str(folder / "golden.jsonl"),
                                     "--pool", str(folder / "pool.tsv"), "--cache", str(cache), "--engine", engine, *extra,
                                     "-o", str(folder / f"judgments-{engine}.jsonl")), log)
            rows.append({"chunks": size, "corpus_mb": corpus_mb, "bm25_s": bm25[0], "bm25_mb": bm25[1], "pairs": pairs,
                         "engine": engine, "texts": judged_texts(log), "judge_s": wall, "pairs_s": pairs / wall,
                         "judge_mb": rss, "cache_mb": folder_mb(cache)})
            print(json.dumps(rows[-1]), file=sys.stderr)
    peer_rate, peer_mb, peer_pairs = peer(work / f"{sizes[0]}", args.peer_pairs)
    results = {"rows": rows, "peer": [peer_rate, peer_mb, peer_pairs], "queries": args.queries, "depth": args.depth}
    (work / "scale.json").write_text(json.dumps(results, indent=1))
    report(results)


def report(results: dict) -> None:
    rows, (peer_rate, peer_mb, peer_pairs) = results["rows"], results["peer"]
    queries, depth = results["queries"], results["depth"]
    print(f"queries {queries}, pool depth {depth} (bm25 top {depth} + gold), fresh embedding cache per judge run; "
          "ray: 2 local workers, peak MB of the driver process only\n")
    print("| chunks | corpus MB | bm25 s | bm25 peak MB | pairs | engine | texts encoded | judge s | pairs/s | judge peak MB | cache MB |")
    print("|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['chunks']:,} | {r['corpus_mb']:,.0f} | {r['bm25_s']:.1f} | {r['bm25_mb']:,.0f} | {r['pairs']:,} | {r['engine']} | "
              f"{r['texts']} | {r['judge_s']:.1f} | {r['pairs_s']:.1f} | {r['judge_mb']:,.0f} | {r['cache_mb']:,.0f} |")
    local = [r for r in rows if r["engine"] == "local"]
    if len(local) > 1:
        lo, hi = local[0], local[-1]
        print(f"\njudge peak RSS {hi['chunks']:,} vs {lo['chunks']:,} chunks: {hi['judge_mb'] / lo['judge_mb']:.2f}x "
              f"(corpus {hi['chunks'] / lo['chunks']:.0f}x); judge time {hi['judge_s'] / lo['judge_s']:.2f}x "
              f"(pool {hi['pairs'] / lo['pairs']:.2f}x)")
    if local:
        print(f"peer bert_score.score on {peer_pairs} of the same pairs: {peer_rate:.1f} pairs/s, peak {peer_mb:,.0f} MB; "
              f"semrel local {local[0]['pairs_s']:.1f} pairs/s = {local[0]['pairs_s'] / peer_rate:.2f}x, "
              f"peak {local[0]['judge_mb'] / peer_mb:.2f}x its memory")
        estimate(local[-1], queries)


def estimate(row: dict, queries: int) -> None:
    """10M chunks x 10k queries, scaled from the largest local run: BM25 per chunk, judge per text encoded."""
    texts = int(row["texts"]) * 10_000 / queries  # pooled chunks + reference answers grow with the queries
    judge_h = row["judge_s"] / int(row["texts"]) * texts / 3600
    bm25_h, bm25_gb = row["bm25_s"] / row["chunks"] * 1e7 / 3600, row["bm25_mb"] / row["chunks"] * 1e7 / 1024
    cache_gb = row["cache_mb"] / int(row["texts"]) * texts / 1024
    print(f"\nestimate for 10M chunks x 10k queries, one run pooled at this depth, from the {row['chunks']:,}-chunk run: "
          f"~{texts:,.0f} texts to encode -> judge {judge_h:.1f} h on this 2-core machine "
          f"({row['judge_s'] / int(row['texts']) * 1e3:.0f} ms/text; N such workers: /N), embedding cache ~{cache_gb:,.0f} GB; "
          f"BM25 index and search {bm25_h:.1f} h, peak ~{bm25_gb:,.0f} GB (grows with the corpus)")


def main_or_report() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--report":
        report(json.loads(Path(sys.argv[2]).read_text()))
    else:
        main()


if __name__ == "__main__":
    main_or_report()
