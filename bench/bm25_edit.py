"""The on-disk BM25 index after an edit: what one chunk edited near the end of a corpus costs, against a whole build.

    python bench/bm25_edit.py [--chunks 300000] [--at 0.9] [--work /tmp/semrel-bm25-edit]

bench/corpus_gen.py writes a corpus of CHUNKS generated chunks; `semrel retrieve --method bm25` builds its index; one
chunk, at the share AT of the file, gets a sentence more; the same command indexes the edited corpus (a new chain from
the last segment boundary before the edit, docs/retrieve.md) and, in a fresh cache, builds it whole. Each run is its own
process (bench/measured.py: CPU = user + system seconds). Prints the chunks each indexed and reused, the CPU seconds,
the ratio, and whether the edited corpus's run equals the fresh build's to the byte (the tag aside).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
from pathlib import Path

from measured import SEMREL, measured


def retrieve(work: Path, corpus: Path, cache: Path, name: str) -> tuple[int, int, float, list[str]]:
    """(chunks indexed, chunks reused, CPU seconds, the run's lines less their tag)."""
    run = work / f"{name}.run"
    done = measured([*SEMREL, "retrieve", "--corpus", str(corpus), "--golden", str(work / "golden.jsonl"), "--method", "bm25",
                     "-k", "10", "--cache", str(cache), "-o", str(run)])
    found = re.search(r"bm25 index: ([\d,]+) chunks? indexed, ([\d,]+) reused", done.stderr)
    if not found:
        raise SystemExit(f"no index line in:\n{done.stderr[-2000:]}")
    built, reused = (int(g.replace(",", "")) for g in found.groups())
    return built, reused, done.cpu_seconds, [line.rsplit(" ", 1)[0] for line in run.read_text().splitlines()]


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=300_000)
    parser.add_argument("--at", type=float, default=0.9, help="where the edited chunk is, as a share of the file")
    parser.add_argument("--work", type=Path, default=Path("/tmp/semrel-bm25-edit"))
    args = parser.parse_args(argv)
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    corpus, edited = args.work / "corpus.jsonl", args.work / "edited.jsonl"
    measured([sys.executable, str(Path(__file__).parent / "corpus_gen.py"), str(args.chunks), "0", str(corpus), "--queries", "10",
              "--golden", str(args.work / "golden.jsonl")])
    lines = corpus.read_text(encoding="utf-8").splitlines()
    at = int(len(lines) * args.at)
    row = json.loads(lines[at])
    row["text"] += " An edited sentence."
    lines[at] = json.dumps(row)
    edited.write_text("\n".join(lines) + "\n", encoding="utf-8")
    built, _, whole, _ = retrieve(args.work, corpus, args.work / "cache", "whole")
    grown, reused, edit, edit_run = retrieve(args.work, edited, args.work / "cache", "edited")
    fresh_built, _, fresh, fresh_run = retrieve(args.work, edited, args.work / "fresh", "fresh")
    print(f"{args.chunks:,} chunks, chunk {at:,} edited")
    print(f"whole build: {built:,} chunks indexed, {whole:.1f} CPU s")
    print(f"after the edit: {grown:,} indexed, {reused:,} reused, {edit:.1f} CPU s ({edit / whole:.2f}x the whole build)")
    print(f"the edited corpus built afresh: {fresh_built:,} indexed, {fresh:.1f} CPU s; "
          f"runs {'identical' if edit_run == fresh_run else 'DIFFERENT'}")


if __name__ == "__main__":
    main(sys.argv[1:])
