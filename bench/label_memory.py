"""Peak memory and CPU time of `semrel label` (binary and --graded), `semrel sensitivity`, `semrel report`,
`semrel calibrate` and `semrel fill` on a large judgments file.

    python bench/label_memory.py [--rows 1000000] [--label-only]

Writes `--rows` synthetic judgments to a temporary folder, shaped like the judge's: about 20 pairs
a query, ids as in the bench-labels sets ("316", "1570#18"), sources joined by commas, p and the
features for most pairs; the queries of about 2% have neither (no null sample: they take the
R >= 0.70 fallback). Each command runs in its own process (`os.wait4` gives that process's peak
RSS and CPU time); bytes per judgment is that peak over the rows, the interpreter included.
sensitivity (--step 0.05: 19 thresholds) and report take two runs made from the judgments themselves (each query's
pairs ranked by R, and by P), and report label's qrels: every judged pair is then in a run, as in `semrel run`'s pool.
calibrate fits the judgments to 300 reviewed pairs drawn from them (qrels, as `semrel review export` writes them).
fill judges 5 holes of qrels labelled from them (write_fill_inputs) and appends them to the judgments.
docs/judge.md "Labelling memory" has the figures.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
from pathlib import Path

from measured import SEMREL, measured

FEATURES = ("relR_idf", "R_idf_max", "own_idf", "F_max", "P_max", "lenratio", "lexR_rel")
SOURCES = ("bm25", "bm25,dense", "dense", "bm25,bm25_half,hybrid_half", "gold", "bm25,gold")


def write_judgments(path: Path, rows: int, seed: int = 0) -> None:
    """`rows` judgments, line by line (this process stays small): 20 pairs a query, a query's pairs with or without p."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as out:
        for i in range(rows):
            query, pair = divmod(i, 20)
            if pair == 0:
                scored, with_gold = rng.random() > 0.02, float(rng.random() < 0.5)
            r = rng.uniform(0.3, 0.95)
            row: dict = {"query_id": str(query), "chunk_id": f"{rng.randrange(200_000)}#{pair}", "P": rng.uniform(0.3, 0.95),
                         "R": r, "F": rng.uniform(0.3, 0.95), "source": rng.choice(SOURCES)}
            if scored:
                row["p"] = rng.random()
                row["features"] = {**{f: rng.uniform(-1.0, 1.0) for f in FEATURES}, "with_gold": with_gold}
            out.write(json.dumps(row, separators=(",", ":")) + "\n")


def write_runs(judgments: Path, folder: Path) -> list[Path]:
    """Two runs of every judged pair, each query's ranked by R and by P (a query's lines are consecutive)."""
    paths = [folder / f"by_{score}.run" for score in ("R", "P")]
    outs = [open(path, "w", encoding="utf-8") for path in paths]

    def flush(pairs: list[dict]) -> None:
        for out, score in zip(outs, ("R", "P")):
            ranked = sorted(pairs, key=lambda row: -row[score])
            out.writelines(f"{row['query_id']} Q0 {row['chunk_id']} {rank} {row[score]:.6f} by_{score}\n"
                           for rank, row in enumerate(ranked, 1))

    query, pairs = None, []
    with open(judgments, encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            if row["query_id"] != query and pairs:
                flush(pairs)
                pairs = []
            query = row["query_id"]
            pairs.append(row)
    flush(pairs)
    for out in outs:
        out.close()
    return paths


def write_human(judgments: Path, rows: int, path: Path, pairs: int = 300, seed: int = 1) -> None:
    """`pairs` judged pairs as a reviewer's qrels: relevant with probability p (R where a pair has none), so that the
    refit has labels that follow the judge's."""
    rng = random.Random(seed)
    drawn = set(rng.sample(range(rows), min(pairs, rows)))
    with open(judgments, encoding="utf-8") as lines, open(path, "w", encoding="utf-8") as out:
        for i, line in enumerate(lines):
            if i in drawn:
                row = json.loads(line)
                out.write(f"{row['query_id']} 0 {row['chunk_id']} {int(rng.random() < row.get('p', row['R']))}\n")


def write_fill_inputs(judgments: Path, folder: Path, queries: int = 5) -> list[str]:
    """What `semrel fill` needs beside the judgments, its command returned: a corpus and golden set holding the first
    `queries` queries' chunks and one hole each (a chunk no one judged, ranked first by a run of those queries), the
    judgments' manifest as `semrel judge` writes it (its settings taken from judging a few of those pairs), and qrels
    labelled from them. Each hole is judged with its query's 20 judged pairs; the rest of the file is read and kept."""
    from semrel.formats.corpus import write_corpus, write_golden
    from semrel.formats.manifest import read_manifest, write_manifest
    from semrel.records import Chunk, GoldenItem

    rng = random.Random(2)
    words = [f"w{i}" for i in range(2_000)]
    pairs: dict[str, list[str]] = {}
    with open(judgments, encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            if int(row["query_id"]) >= queries:
                break
            pairs.setdefault(row["query_id"], []).append(row["chunk_id"])
    corpus, golden, pool = folder / "corpus.jsonl", folder / "golden.jsonl", folder / "pool.tsv"
    chunk_ids = [c for chunks in pairs.values() for c in chunks] + [f"hole{q}" for q in pairs]
    texts = [" ".join(rng.choices(words, k=120)) for _ in chunk_ids]
    write_corpus([Chunk(c, text, c, 0, len(text)) for c, text in zip(chunk_ids, texts)], corpus)
    write_golden([GoldenItem(q, f"question {q}", (" ".join(rng.choices(words, k=30)),)) for q in pairs], golden)
    pool.write_text("query_id\tchunk_id\tsources\n" + "".join(f"{q}\t{chunks[0]}\tbm25\n" for q, chunks in pairs.items()),
                    encoding="utf-8")
    small = folder / "small.jsonl"
    measured([*SEMREL, "judge", "--corpus", str(corpus), "--golden", str(golden), "--pool", str(pool), "-o", str(small), "--no-cache"])
    write_manifest(judgments, inputs=[corpus, golden], params=read_manifest(small)["params"])
    qrels, run = folder / "fill-qrels.tsv", folder / "holes.run"
    measured([*SEMREL, "label", str(judgments), "-o", str(qrels)])
    run.write_text("".join(f"{q} Q0 {c} {rank} {100 - rank} holes\n" for q, chunks in pairs.items()
                           for rank, c in enumerate([f"hole{q}", *chunks[:9]], 1)), encoding="utf-8")
    return ["fill", str(qrels), str(run), "--judgments", str(judgments), "--corpus", str(corpus), "--golden", str(golden),
            "--no-cache", "-o", str(folder / "filled.tsv")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="judgments to write and label")
    parser.add_argument("--label-only", action="store_true", help="measure label alone, not sensitivity, report and calibrate")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="semrel-bench-label-") as tmp:
        judgments = Path(tmp) / "judgments.jsonl"
        write_judgments(judgments, args.rows)
        size = judgments.stat().st_size
        print(f"{args.rows:,} judgments, {size / 1e6:.0f} MB ({size / args.rows:.0f} bytes a line)")
        print(f"{'command':<22} {'peak RSS MB':>11} {'bytes/judgment':>14} {'CPU s':>7} {'wall s':>7}")
        qrels, graded = Path(tmp) / "qrels.tsv", Path(tmp) / "graded.tsv"
        commands = [("label", ["label", str(judgments), "-o", str(qrels)]),
                    ("label --graded", ["label", str(judgments), "--graded", "-o", str(graded)])]
        if not args.label_only:
            runs = [str(path) for path in write_runs(judgments, Path(tmp))]
            human = Path(tmp) / "human.qrels"
            write_human(judgments, args.rows, human)
            commands += [("sensitivity", ["sensitivity", str(judgments), *runs, "--step", "0.05"]),
                         ("report", ["report", str(qrels), *runs, "--judgments", str(judgments), "-o", str(Path(tmp) / "r.html")]),
                         ("calibrate", ["calibrate", str(judgments), str(human)]),
                         ("fill", write_fill_inputs(judgments, Path(tmp)))]
        for name, command in commands:
            step = measured([*SEMREL, *command])
            print(f"{name:<22} {step.peak_mb:>11.0f} {step.peak_mb * 2**20 / args.rows:>14.0f} {step.cpu_seconds:>7.1f} "
                  f"{step.seconds:>7.1f}")


if __name__ == "__main__":
    main()
