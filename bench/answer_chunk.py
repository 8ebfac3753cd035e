"""How often `golden import --doc-qrels answer-chunk` finds, from the article alone, the gold chunk COVID-QA's answer
offsets give (docs/golden.md, "The answer is in file X").

    python bench/answer_chunk.py [--work out/bench-answer-chunk] [--sizes 150,300]

For each chunk size: COVID-QA imported with its answer offsets (`semrel golden import --size N --corpus-out`), the
gold chunk ids replaced by their documents' ids, imported again with `--doc-qrels answer-chunk`, and the two gold sets
compared per question: the same chunks; a superset (several chunks hold a short answer and tie); or other chunks.
Printed per size and per way the chunk was found (the answer's text, word pairs alone, none), with the import's time.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from collections import Counter
from pathlib import Path

from measured import SEMREL
from shared_data import SHARED_DATA

ROOT = Path(__file__).resolve().parent.parent


def semrel(*args: object) -> None:
    subprocess.run([*SEMREL, *map(str, args)], check=True, stderr=subprocess.DEVNULL)


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def measure(work: Path, size: int) -> None:
    corpus, spans = work / f"corpus{size}.jsonl", work / f"spans{size}.jsonl"
    semrel("golden", "import", SHARED_DATA / "covid_qa_deepset" / "200423_covidQA.json", "--size", size,
           "--corpus-out", corpus, "-o", spans)
    doc_of = {c["_id"]: c.get("doc_id", c["_id"]) for c in lines(corpus)}
    items = [i for i in lines(spans) if i["gold_chunk_ids"]]
    by_doc = work / f"by-doc{size}.jsonl"
    by_doc.write_text("".join(json.dumps({**{k: i[k] for k in ("query_id", "query", "reference_answer")},
                                          "gold_chunk_ids": sorted({doc_of[g] for g in i["gold_chunk_ids"]})}) + "\n"
                              for i in items), encoding="utf-8")
    started = time.perf_counter()
    semrel("golden", "import", by_doc, "--corpus", corpus, "--doc-qrels", "answer-chunk", "-o", work / f"found{size}.jsonl")
    seconds = time.perf_counter() - started
    found = {i["query_id"]: i for i in lines(work / f"found{size}.jsonl")}
    ways: Counter[tuple[str, str]] = Counter()
    for item in items:
        gold, got = set(item["gold_chunk_ids"]), found[item["query_id"]]
        chosen = set(got["gold_chunk_ids"])
        how = next(iter(got["meta"]["answer_chunks"].values()))["how"]
        ways[how, "same" if chosen == gold else "superset" if chosen > gold else "other"] += 1
    same = sum(n for (_, relation), n in ways.items() if relation == "same")
    print(f"{size}-word chunks: {same:,} of {len(items):,} questions get their span's own chunk ({same / len(items):.1%}); "
          f"import {seconds:.1f} s")
    for (how, relation), n in sorted(ways.items()):
        print(f"  found by {how:5}  {relation:8}  {n:5,}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, default=ROOT / "out" / "bench-answer-chunk")
    parser.add_argument("--sizes", default="150,300")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    for size in args.sizes.split(","):
        measure(args.work, int(size))


if __name__ == "__main__":
    main()
