"""End-to-end metric evaluation: semrel against pytrec_eval, ir_measures and ranx.

Writes a TREC qrels and two runs (default 10,000 queries x 1,000 retrieved, 100 judged per query):
`sorted`, each query's rows in rank order as retrieval systems write them, and `unsorted`, the same
rows shuffled within each query (trec_eval ranks by score whatever the row order, so every tool must
sort). Then each tool, in its own process, reads the qrels and a run with its own reader and computes
nDCG@10, AP, RR, R@100 and P@10. Prints per run each tool's median wall and CPU seconds, peak RSS,
semrel's share of each tool's time and the largest difference between any tool's values and semrel's.

    python bench/metrics.py [--queries 10000] [--docs 1000] [--judged 100] [--repeats 3] [--runs sorted,unsorted]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from measured import measured

MEASURES = {  # semrel name: (pytrec_eval name, its output key, ir_measures name, ranx name)
    "nDCG@10": ("ndcg_cut.10", "ndcg_cut_10", "nDCG@10", "ndcg@10"),
    "AP": ("map", "map", "AP", "map"),
    "RR": ("recip_rank", "recip_rank", "RR", "mrr"),
    "R@100": ("recall.100", "recall_100", "R@100", "recall@100"),
    "P@10": ("P.10", "P_10", "P@10", "precision@10"),
}
TOOLS = ("semrel", "pytrec_eval", "ir_measures", "ranx")


def make_collection(folder: Path, queries: int, docs: int, judged: int, seed: int = 0) -> tuple[Path, Path]:
    """A run and graded qrels; some judged docs are never retrieved.

    Scores are distinct within a query and exact in 32-bit floats: pytrec_eval (and ir_measures
    through it) keeps scores as floats, so closer scores would tie there and rank differently
    from trec_eval, which keeps doubles (as semrel does).
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pacsv

    rng = np.random.default_rng(seed)
    q = np.repeat(np.arange(queries), docs)
    slot = np.tile(np.arange(docs), queries)
    doc = (q * 7919 + slot * 104729) % 10_000_000
    scores = (docs - slot) + np.round(rng.random(len(slot)) * 0.9, 2)
    qids = pa.array(np.char.add("q", q.astype(str)))
    run = pa.table({
        "q": qids, "q0": pa.array(np.full(len(q), "Q0")), "d": pa.array(np.char.add("d", doc.astype(str))),
        "rank": slot + 1, "score": scores, "tag": pa.array(np.full(len(q), "bench")),
    })
    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    run_path, qrels_path = folder / "bench.run", folder / "bench.qrels"
    pacsv.write_csv(run, run_path, write_options=options)
    # the same rows, shuffled within each query: scores no longer descend down the file
    shuffled = (np.argsort(rng.random((queries, docs)), axis=1) + np.arange(queries)[:, None] * docs).ravel()
    pacsv.write_csv(run.take(shuffled), folder / "bench.unsorted.run", write_options=options)
    # judged: a random subset of each query's retrieved docs, plus 10% never retrieved
    retrieved = judged - judged // 10
    pick = np.argsort(rng.random((queries, docs)), axis=1)[:, :retrieved] + np.arange(queries)[:, None] * docs
    jq = np.concatenate([q[pick.ravel()], np.repeat(np.arange(queries), judged - retrieved)])
    jd = np.concatenate([doc[pick.ravel()], 10_000_000 + rng.integers(0, 10_000_000, (queries * (judged - retrieved)))])
    order = np.lexsort((jd, jq))
    qrels = pa.table({
        "q": pa.array(np.char.add("q", jq[order].astype(str))), "it": pa.array(np.zeros(len(jq), dtype=np.int64)),
        "d": pa.array(np.char.add("d", jd[order].astype(str))), "rel": rng.choice([0, 0, 0, 1, 1, 2, 3], len(jq)),
    })
    pacsv.write_csv(qrels, qrels_path, write_options=options)
    return qrels_path, run_path


def evaluate_with(tool: str, qrels: str, run: str) -> dict[str, float]:
    """Read both files with the tool's own readers and return mean values by semrel name."""
    if tool == "semrel":
        from semrel.evaluation.files import evaluate_files

        (result,) = evaluate_files(qrels, [run], list(MEASURES))
        return {m.name: result.aggregate(m) for m in result.values}
    if tool == "pytrec_eval":
        import pytrec_eval

        with open(qrels) as f:
            judged = pytrec_eval.parse_qrel(f)
        with open(run) as f:
            ranked = pytrec_eval.parse_run(f)
        per_query = pytrec_eval.RelevanceEvaluator(judged, {v[0] for v in MEASURES.values()}).evaluate(ranked)
        return {name: sum(v[key] for v in per_query.values()) / len(judged) for name, (_, key, _, _) in MEASURES.items()}
    if tool == "ir_measures":
        import ir_measures

        measures = {ir_measures.parse_measure(v[2]): name for name, v in MEASURES.items()}
        found = ir_measures.calc_aggregate(list(measures), ir_measures.read_trec_qrels(qrels), ir_measures.read_trec_run(run))
        return {measures[m]: v for m, v in found.items()}
    if tool == "ranx":
        import ranx

        found = ranx.evaluate(ranx.Qrels.from_file(qrels, kind="trec"), ranx.Run.from_file(run, kind="trec"),
                              [v[3] for v in MEASURES.values()])
        return {name: float(found[v[3]]) for name, v in MEASURES.items()}
    raise ValueError(tool)


def child(tool: str, qrels: str, run: str) -> None:
    start = time.perf_counter()
    values = evaluate_with(tool, qrels, run)
    print(json.dumps({"seconds": time.perf_counter() - start, "values": values}))


def measure(tool: str, qrels: Path, run: Path) -> dict:
    """Run one tool in a fresh process; its own timing and the kernel's peak RSS of that process."""
    child_run = measured([sys.executable, __file__, "--child", tool, str(qrels), str(run)])
    return {**json.loads(child_run.stdout), "peak_mb": child_run.peak_mb, "cpu": child_run.cpu_seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=1_000)
    parser.add_argument("--judged", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tools", default=",".join(TOOLS))
    parser.add_argument("--runs", default="sorted,unsorted", help="which runs: sorted, unsorted or both")
    parser.add_argument("--child", nargs=3, metavar=("TOOL", "QRELS", "RUN"), help=argparse.SUPPRESS)
    parser.add_argument("--make", nargs=4, metavar=("FOLDER", "QUERIES", "DOCS", "JUDGED"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child)
        return
    if args.make:
        make_collection(Path(args.make[0]), *map(int, args.make[1:]))
        return
    tools = args.tools.split(",")
    kinds = args.runs.split(",")
    with tempfile.TemporaryDirectory() as folder:
        start = time.perf_counter()
        # Written by a child process: a child forked from a big parent would report the
        # parent's memory as its own peak.
        subprocess.run([sys.executable, __file__, "--make", folder, str(args.queries), str(args.docs), str(args.judged)], check=True)
        os.sync()  # the files just written go to disk now, not as writeback competing with the timed runs
        qrels = Path(folder) / "bench.qrels"
        files = {"sorted": Path(folder) / "bench.run", "unsorted": Path(folder) / "bench.unsorted.run"}
        print(f"collection: {args.queries:,} queries x {args.docs:,} retrieved, {args.judged} judged per query "
              f"({files['sorted'].stat().st_size / 2**20:.0f} MiB run, written in {time.perf_counter() - start:.1f}s); "
              f"load average before: {os.getloadavg()[0]:.1f}", file=sys.stderr)
        runs = {(kind, tool): [] for kind in kinds for tool in tools}
        for rep in range(args.repeats):
            for kind in kinds:
                for tool in tools:  # interleaved, so drift in machine speed hits every tool alike
                    runs[kind, tool].append(measure(tool, qrels, files[kind]))
                    print(f"  repeat {rep + 1}: {kind} {tool} {runs[kind, tool][-1]['seconds']:.2f}s", file=sys.stderr)
    print(f"load average after: {os.getloadavg()[0]:.1f} (cores: {os.cpu_count()})")
    print(f"{'run':<9} {'tool':<12} {'median s':>9} {'cpu s':>7} {'peak MiB':>9} {'semrel/tool':>12} {'cpu ratio':>10} {'max |diff|':>11}")
    for kind in kinds:
        own = runs.get((kind, "semrel"))
        base = statistics.median(r["seconds"] for r in own) if own else None
        base_cpu = statistics.median(r["cpu"] for r in own) if own else None
        reference = own[0]["values"] if own else {}
        for tool in tools:
            results = runs[kind, tool]
            seconds = statistics.median(r["seconds"] for r in results)
            cpu = statistics.median(r["cpu"] for r in results)
            peak = max(r["peak_mb"] for r in results)
            diff = max((abs(results[0]["values"][m] - reference[m]) for m in reference), default=0.0)
            ratio = f"{base / seconds:.2f}" if base else "-"
            cpu_ratio = f"{base_cpu / cpu:.2f}" if base_cpu else "-"
            print(f"{kind:<9} {tool:<12} {seconds:>9.2f} {cpu:>7.2f} {peak:>9.0f} {ratio:>12} {cpu_ratio:>10} {diff:>11.2e}")


if __name__ == "__main__":
    main()
