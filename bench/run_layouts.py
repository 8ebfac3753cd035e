"""`semrel eval` on one large run written in the layouts a TREC run comes in: single spaces (Arrow reads the file
straight from disk), tabs, the tabs gzipped (both parsed a block of whole lines at a time), and the tabs with a bad
score on the last line (the line named). docs/safety.md, "TREC runs, qrels ... are never read whole".

    python bench/run_layouts.py [--queries 5600] [--depth 1000] [--work out/bench-run-layouts] [--keep]

Each layout is evaluated by `semrel eval QRELS RUN -m map` in its own process; prints wall seconds, CPU seconds and
peak RSS, and whether the tables of the good layouts are the same.
"""

from __future__ import annotations

import argparse
import gzip
import random
import shutil
from pathlib import Path

from measured import SEMREL, measured


def write_files(folder: Path, queries: int, depth: int) -> dict[str, Path]:
    """A qrels of 5 relevant documents a query and a run of `depth` documents a query, in each layout."""
    rng = random.Random(0)
    folder.mkdir(parents=True, exist_ok=True)
    qrels = folder / "run.qrels"
    with qrels.open("w") as out:
        for q in range(queries):
            out.writelines(f"q{q} 0 d{doc} 1\n" for doc in rng.sample(range(depth * 2), 5))
    spaces, tabs = folder / "spaces.run", folder / "tabs.run"
    with spaces.open("w") as one, tabs.open("w") as other:
        for q in range(queries):
            docs = rng.sample(range(depth * 2), depth)
            for rank, doc in enumerate(docs, start=1):
                one.write(f"q{q} Q0 d{doc} {rank} {depth - rank + 0.5} bench\n")
                other.write(f"q{q}\tQ0\td{doc}\t{rank}\t{depth - rank + 0.5}\tbench\n")
    with tabs.open("rb") as plain, gzip.open(folder / "tabs.run.gz", "wb", compresslevel=1) as packed:
        shutil.copyfileobj(plain, packed)
    bad = folder / "tabs-bad.run"
    shutil.copy(tabs, bad)
    with bad.open("a") as out:
        out.write(f"q0\tQ0\tdX\t{depth + 1}\tnotanumber\tbench\n")
    return {"qrels": qrels, "single spaces": spaces, "tabs": tabs, "tabs, gzip": folder / "tabs.run.gz", "tabs, bad last line": bad}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=5600)
    parser.add_argument("--depth", type=int, default=1000)
    parser.add_argument("--work", type=Path, default=Path("out/bench-run-layouts"))
    parser.add_argument("--keep", action="store_true", help="keep the generated files")
    options = parser.parse_args()
    files = write_files(options.work, options.queries, options.depth)
    size = files["tabs"].stat().st_size / 2**20
    print(f"{options.queries:,} queries x {options.depth:,} documents: {size:.0f} MB tab-separated")
    print(f"{'layout':<22}{'wall s':>8}{'CPU s':>8}{'peak MB':>9}  outcome")
    tables = {}
    for layout in ("single spaces", "tabs", "tabs, gzip", "tabs, bad last line"):
        run = measured([*SEMREL, "eval", str(files["qrels"]), str(files[layout]), "-m", "map"], check=False)
        outcome = run.stderr.strip().splitlines()[-1] if run.stderr.strip() else "ok"
        tables[layout] = run.stdout.split("\n")[2:]  # the values, below the header naming the run
        print(f"{layout:<22}{run.seconds:>8.2f}{run.cpu_seconds:>8.2f}{run.peak_mb:>9.0f}  {outcome[:90]}")
    same = tables["single spaces"] == tables["tabs"] == tables["tabs, gzip"]
    print(f"values of the three good layouts the same: {same}")
    if not options.keep:
        shutil.rmtree(options.work)


if __name__ == "__main__":
    main()
