"""`semrel fuse` against ranx's fuse on two large TREC runs, each tool in its own process, end to end as a user
runs it (read both runs, fuse, write the fused run as TREC text), interleaved, medians of --repeats.

    python bench/fuse.py [--queries 10000] [--depth 100] [--repeats 3] [--methods rrf,combmnz]

The runs are random: each query ranks --depth of 200,000 documents, scores with 6 decimals (so ties occur), the
two runs sharing about half their documents per query. semrel and ranx agree on every method measured here
(tests/retrieval/test_fusion.py checks each against ranx.fuse); this bench times them. Prints median wall and
CPU seconds, peak RSS and semrel's share of ranx's time. docs/retrieve.md, "`semrel fuse`", cites the figures.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measured import SEMREL, Measured, measured  # noqa: E402

RANX = """
import sys
from ranx import Run, fuse
runs = [Run.from_file(path, kind="trec") for path in sys.argv[1:3]]
method, norm = sys.argv[4], sys.argv[5] if sys.argv[5] != "none" else None
fuse(runs, method=method, norm=norm).save(sys.argv[3], kind="trec")
"""
RANX_METHOD = {"rrf": ("rrf", "none"), "combmnz": ("mnz", "min-max"), "combsum": ("sum", "min-max")}  # semrel's defaults


def write_runs(folder: Path, queries: int, depth: int) -> list[Path]:
    rng = np.random.default_rng(0)
    paths = [folder / "a.run", folder / "b.run"]
    with open(paths[0], "w") as a, open(paths[1], "w") as b:
        for q in range(queries):
            shared = rng.choice(200_000, depth + depth // 2, replace=False)
            for out, docs, name in ((a, shared[:depth], "a"), (b, shared[depth // 2:], "b")):
                scores = np.sort(rng.random(depth))[::-1]
                out.write("".join(f"q{q} Q0 d{d} {r} {s:.6f} {name}\n" for r, (d, s) in enumerate(zip(docs, scores), start=1)))
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--methods", default="rrf,combmnz")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        a, b = write_runs(folder, args.queries, args.depth)
        print(f"two runs of {args.queries:,} queries x {args.depth} documents ({a.stat().st_size / 2**20:.0f} MiB each)")
        print("| method | tool | median s | CPU s | peak MiB | semrel / tool (wall) | (CPU) |")
        print("|---|---|---:|---:|---:|---:|---:|")
        for method in args.methods.split(","):
            commands = {
                "semrel": [*SEMREL, "fuse", str(a), str(b), "-o", str(folder / "semrel.run"), "--method", method],
                "ranx": [sys.executable, "-c", RANX, str(a), str(b), str(folder / "ranx.run"), *RANX_METHOD[method]],
            }
            times: dict[str, list[Measured]] = {tool: [] for tool in commands}
            for _ in range(args.repeats):
                for tool, command in commands.items():
                    times[tool].append(measured(command))
            mine = times["semrel"]
            for tool, runs in times.items():
                wall = statistics.median(m.seconds for m in runs)
                cpu = statistics.median(m.cpu_seconds for m in runs)
                peak = statistics.median(m.peak_mb for m in runs)
                print(f"| {method} | {tool} | {wall:.2f} | {cpu:.2f} | {peak:,.0f} | "
                      f"{statistics.median(m.seconds for m in mine) / wall:.2f} | "
                      f"{statistics.median(m.cpu_seconds for m in mine) / cpu:.2f} |")


if __name__ == "__main__":
    main()
