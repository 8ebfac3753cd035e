"""How p travels to another judge model: the development sets' kappa pools judged with MODEL, uncalibrated (as a user
who passes `--model` gets them) and refitted on reviewed pairs, beside the shipped model's.

    python bench/other_model.py --model PATH [--layer N] [--idf] [--question] [--ranking] [--sets covid150,pubmed,msmix]

p's coefficients were fitted on all-MiniLM-L6-v2's layer 6, and the judge warns when another model, layer, idf or
window is used and names the check: review about 100 pairs and run `semrel calibrate`. This measures how far p
moves without it, and what the refit gives. Per set (the sets bench/labels.py built in WORK/sets, --work
out/bench-labels; the "gold" condition: the golden set's gold chunks known, pool = pool.tsv) and judge (MODEL at
--layer, default the judge's for it; --idf: P, R and F idf-weighted; --question: the question before each reference
answer, as one might for answers too short to match, "Yes" or a number): kappa against the gold chunks at R >= 0.70
and at p >= 0.38, the raw oracle (the best single threshold on R for that very set) and p's (the best cut on p, and
where it lies), AUC and expected calibration error of p, and kappa on the pairs not reviewed, p unrefitted and after `semrel
calibrate`'s refit (every coefficient, the cut moved to the highest expected kappa) on 50, 100 and 200 pairs queued
as `semrel review` queues them (most uncertain first, a quarter random; mean of --seeds seeds). The shipped model's
rows read bench/labels.py's judgments; the other judge's are judged into WORK/other-model/<model folder
name>[-layerN][-idf][-question]/<set>.jsonl (with their own embedding cache beside them) and reused while current.
MODEL may be the shipped model at another layer.

--ranking also judges each set's pool-all.tsv (BM25 top 20, every run's top 10, gold) and ranks bench/labels.py's 8
runs by nDCG@10 under the gold chunks and under p >= 0.38 of each judge: Kendall's tau over the 8 and over bm25,
dense and hybrid, and the lean to dense (how much more the labels favour dense over bm25 than gold does), which
a judge sharing the dense retriever's model may show."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from sklearn.metrics import roc_auc_score

import semrel
from labels import BAR_RUNS, ROOT, RUNS, Fitted, kappa, learning_curve, oracle, qrels_of, ranking_tau, system_values
from semrel.analysis.calibrate import expected_calibration_error
from semrel.encoding.models import DEFAULT_MODEL
from semrel.formats.corpus import read_golden, write_golden
from semrel.formats.judgments import read_judgments
from semrel.formats.manifest import read_params
from semrel.formats.tables import Table, render
from semrel.judging import labels


def judged(folder: Path, out: Path, model: str, layer: int | None, idf: bool, cache: Path, pool: str = "pool.tsv",
           question: bool = False) -> list:
    """The set's `pool` (gold known) judged with `model`, or the judgments already there for it."""
    params = read_params(out) if out.exists() else None
    if not params or params.get("model") != model or layer not in (None, params.get("layer")) or params.get("idf") != idf:
        print(f"  judging {folder.name} with {model}", file=sys.stderr)
        golden = folder / "golden.jsonl"
        if question:  # the golden set with the question before each reference answer, beside the judgments
            golden = out.with_name(f"{folder.name}-golden.jsonl")
            write_golden([dataclasses.replace(g, reference_answers=tuple(f"{g.query} {a}" for a in g.reference_answers))
                          for g in read_golden(folder / "golden.jsonl")], golden)
        semrel.judge(folder / "corpus.jsonl", golden, folder / pool, out, model=model, layer=layer, idf=idf, cache=cache)
    return read_judgments(out)


def row(name: str, model: str, judgments: list, gold: set[tuple[str, str]], seeds: int) -> list:
    y = np.array([(j.query_id, j.chunk_id) in gold for j in judgments], dtype=np.int64)
    p, R = np.array([j.p for j in judgments]), np.array([j.R for j in judgments])
    best = max(np.round(np.linspace(0.05, 0.95, 91), 2), key=lambda c: kappa(y, p >= c))
    d = SimpleNamespace(y=y, R=R, qid=[j.query_id for j in judgments], with_gold=True,
                        X=np.array([[j.features[f] for f in labels.FEATURES] for j in judgments]))
    curve = learning_curve(d, Fitted(labels.WITH_GOLD, labels.WITHOUT_GOLD, labels.CUT), seeds=seeds)  # type: ignore[arg-type]
    return [name, model, f"{oracle(y, R):.3f}", f"{kappa(y, R >= labels.DEFAULT_THRESHOLD):.3f}", f"{kappa(y, p >= labels.CUT):.3f}",
            f"{kappa(y, p >= best):.3f} ({best:.2f})", f"{roc_auc_score(y, p):.3f}", f"{expected_calibration_error(y, p):.3f}",
            " / ".join(f"{curve[str(n)]['none']:.3f} to {curve[str(n)]['features']:.3f}" for n in (50, 100, 200))]


def ranking_row(name: str, model: str, judgments: list, gold: set[tuple[str, str]], folder: Path) -> list:
    """The runs of bench/labels.py ranked by nDCG@10 over the ranking pool under the gold chunks and under p >= 0.38."""
    d = SimpleNamespace(name=name, condition=model, folder=folder, queries=[g.query_id for g in read_golden(folder / "golden.jsonl")],
                        gold_qrels=qrels_of(judgments, [(j.query_id, j.chunk_id) in gold for j in judgments]))
    derived = qrels_of(judgments, [j.p >= labels.CUT for j in judgments])
    g, m = (dict(zip(RUNS, system_values(d, q, key).mean(axis=1))) for q, key in ((d.gold_qrels, "gold"), (derived, "p")))
    return [name, model, f"{ranking_tau(d, derived, 'p')[0]:.3f}", f"{ranking_tau(d, derived, 'p', runs=BAR_RUNS)[0]:.3f}",
            " / ".join(f"{g[r]:.3f}" for r in BAR_RUNS), " / ".join(f"{m[r]:.3f}" for r in BAR_RUNS),
            f"{(m['dense'] - m['bm25']) - (g['dense'] - g['bm25']):+.3f}"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="the other judge model: a folder or a Hugging Face name")
    parser.add_argument("--layer", type=int, default=None, help="the model's layer [default: the judge's default for it]")
    parser.add_argument("--idf", action="store_true", help="judge with --idf (P, R and F idf-weighted)")
    parser.add_argument("--question", action="store_true", help="judge against the question and the reference answer, joined")
    parser.add_argument("--sets", default="covid150,pubmed,msmix")
    parser.add_argument("--work", type=Path, default=ROOT / "out" / "bench-labels")
    parser.add_argument("--seeds", type=int, default=5, help="review queues drawn per reviewed count")
    parser.add_argument("--ranking", action="store_true", help="also judge pool-all.tsv and rank bench/labels.py's runs")
    args = parser.parse_args()
    tag = Path(args.model).name + (f"-layer{args.layer}" if args.layer is not None else "") + ("-idf" if args.idf else "") \
        + ("-question" if args.question else "")
    other = args.work / "other-model" / tag
    other.mkdir(parents=True, exist_ok=True)
    table = Table(["set", "model", "raw oracle", "R >= 0.70", "p >= 0.38", "best cut on p", "AUC p", "ECE p",
                   "not reviewed, unrefitted to calibrated, at 50 / 100 / 200 reviewed"], [])
    ranks = Table(["set", "model", "tau, 8 runs", "tau, bm25 dense hybrid", "nDCG@10 gold: bm25 / dense / hybrid", "derived",
                   "lean to dense"], [])
    for name in args.sets.split(","):
        folder = args.work / "sets" / name
        if not (folder / "judgments-gold-kappa.jsonl").exists():
            sys.exit(f"other_model: {folder} has no judgments-gold-kappa.jsonl: run `python bench/labels.py --sets {name}` first")
        gold = {(g.query_id, c) for g in read_golden(folder / "golden.jsonl") for c in g.gold_chunk_ids}
        table.rows.append(row(name, DEFAULT_MODEL, read_judgments(folder / "judgments-gold-kappa.jsonl"), gold, args.seeds))
        mine = judged(folder, other / f"{name}.jsonl", args.model, args.layer, args.idf, other / "cache", question=args.question)
        table.rows.append(row(name, tag, mine, gold, args.seeds))
        if args.ranking:
            ranks.rows.append(ranking_row(name, DEFAULT_MODEL, read_judgments(folder / "judgments-gold-all.jsonl"), gold, folder))
            everything = judged(folder, other / f"{name}-all.jsonl", args.model, args.layer, args.idf, other / "cache", "pool-all.tsv",
                                args.question)
            ranks.rows.append(ranking_row(name, tag, everything, gold, folder))
    print(render(table, "markdown"))
    if args.ranking:
        print("\nRanking the 8 runs by nDCG@10 (pool-all.tsv: BM25 top 20, every run's top 10, gold) under gold and under p >= 0.38; "
              "lean: how much more the labels favour dense over bm25 than gold does\n")
        print(render(ranks, "markdown"))


if __name__ == "__main__":
    main()
