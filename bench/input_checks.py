"""What two input checks cost and spare: the HTML nesting guard (docs/golden.md) and eval's --corpus check of a run's
chunk ids (docs/eval.md, "Runs of other chunk ids").

    python bench/input_checks.py [--work out/bench-input-checks] [--depths 20000,50000] [--rows 100000]

Nesting: the HTML parser (selectolax's lexbor) timed on divs nested DEPTH deep, against the guard's pass over the same
page (`semrel.golden.documents.nesting`), which reads it before the parser would. Run ids: a corpus of ROWS chunks and a
run of ROWS rows (a tenth of its ids misspelt), `semrel eval` timed in its own process with and without `--corpus`
(medians of 3), and the check alone (`warn_unlisted` on the run read).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from measured import SEMREL, measured
from semrel.evaluation.doclevel import corpus_documents, warn_unlisted
from semrel.formats import read_qrels, read_run
from semrel.golden.documents import nesting

ROOT = Path(__file__).resolve().parent.parent


def timed(call, *args) -> float:
    started = time.perf_counter()
    call(*args)
    return time.perf_counter() - started


def nesting_figures(depths: list[int]) -> None:
    from selectolax.lexbor import LexborHTMLParser

    for depth in depths:
        page = "<html><body>" + "<div>" * depth + "x</body></html>"
        print(f"divs nested {depth:,} deep: parser {timed(LexborHTMLParser, page):.2f} s, "
              f"the guard's pass {timed(nesting, page):.3f} s")


def run_id_figures(work: Path, rows: int) -> None:
    corpus, run, qrels = work / "corpus.jsonl", work / "mine.run", work / "qrels.txt"
    queries = max(rows // 100, 1)
    with corpus.open("w", encoding="utf-8") as out:
        for n in range(rows):
            out.write(json.dumps({"_id": f"doc{n // 10}#{n % 10}", "text": f"chunk {n} of a generated corpus"}) + "\n")
    with run.open("w", encoding="utf-8") as out:
        for n in range(rows):
            chunk = f"doc{n // 10}#{n % 10}" if n % 10 else f"doc{n // 10}-{n % 10}"  # a tenth misspelt
            out.write(f"q{n % queries} Q0 {chunk} {n // queries + 1} {1.0 / (n + 1):.9f} mine\n")
    qrels.write_text("".join(f"q{q} 0 doc{q}#1 1\n" for q in range(queries)), encoding="utf-8")
    for args in ((), ("--corpus", corpus)):
        seconds = [measured([*SEMREL, "eval", str(qrels), str(run), *map(str, args)]).seconds for _ in range(3)]
        print(f"eval of a {rows:,}-row run{' with --corpus' if args else ''}: {statistics.median(seconds):.2f} s")
    mapping, loaded, judged = corpus_documents(corpus), read_run(run), read_qrels(qrels)
    print(f"reading the corpus's ids: {timed(corpus_documents, corpus):.2f} s; the check alone: "
          f"{timed(warn_unlisted, loaded, mapping, judged, lambda line: None):.3f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, default=ROOT / "out" / "bench-input-checks")
    parser.add_argument("--depths", default="20000,50000")
    parser.add_argument("--rows", type=int, default=100_000)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    nesting_figures([int(d) for d in args.depths.split(",")])
    run_id_figures(args.work, args.rows)


if __name__ == "__main__":
    main()
