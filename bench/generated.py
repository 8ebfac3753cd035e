"""Label quality on generated answers, held out from the fit: LlamaIndex rag_dataset.json files, ragas and Giskard testsets.

    python bench/generated.py DATASET [DATASET ...] [--work out/bench-generated] [--cache DIR]

No development set of bench/labels.py has answers written by an LLM; the issue's held-out sets do. p's
coefficients were fitted without these files, so their figures are what a user with such a file gets, at the
shipped default. A rag_dataset.json (or a ragas or Giskard testset) holds questions, reference answers and the contexts
they were generated from, not the documents, so each file's corpus is its distinct reference contexts, a chunk
each (`semrel golden import --corpus-out`): a closed corpus, as MS MARCO's passages are, in which the other
questions' contexts are the negatives. Gold = the context(s) a question was generated from, which is
incomplete where two questions share a topic. Then as bench/labels.py (its functions): pool.tsv (BM25 top 20 +
gold) judged with gold known and without; per condition and rule (R >= 0.70, the shipped p >= labels.CUT): kappa
against gold, the rule's own oracle, AUC, ECE, the share of gold chunks labelled relevant and the questions
left with nothing relevant; with gold known, the gold pairs p labels relevant by how many gold contexts the
question has, and the non-gold pairs it labels relevant (how many lie near a gold context). Then the remedy
the judge's warnings point to, as bench/labels.py's learning curve measures it: n pairs reviewed in `semrel
review`'s order (gold standing in for the reviewer), p refitted as `semrel calibrate` refits it, kappa on the
pairs not reviewed (mean of 10 seeds). And the ranking check of bench/labels.py on the full set: its 8 runs
(bm25, dense, hybrid, bm25 reranked by dense, each again on half-queries) by nDCG@10 over the pool plus every
run's top 10, under gold and under each rule's labels: Kendall's tau over the 8 and over bm25, dense and hybrid
(a few dozen to a few hundred questions: no samples of 150). The files stay where they are: WORK/<file's folder
name>/ gets the corpus, golden set, runs and judgments.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
from scipy.stats import kendalltau

import labels as bench  # bench/labels.py (python puts a script's folder first on sys.path): building, judging, measures
from semrel.analysis.compare import compare, reversals
from semrel.formats.corpus import read_corpus, read_golden
from semrel.formats.manifest import read_params
from semrel.formats.tables import Table, render
from semrel.judging import labels

REMEDIES = {"features": "p refitted (calibrate's default)", "anchored": "--fit anchored", "raw": "a threshold on R re-chosen"}
P_RULE = f"p>={labels.CUT:.2f}"


def build(source: Path, folder: Path) -> tuple[int, int]:
    """corpus.jsonl of the file's distinct contexts, golden.jsonl and pool.tsv, by the CLI; (questions, chunks)."""
    if not (folder / "golden.jsonl").exists():
        folder.mkdir(parents=True, exist_ok=True)
        bench.cli("golden", "import", source, "--corpus-out", folder / "corpus.jsonl",
                  "-o", folder / "golden.jsonl")
        bench.cli("retrieve", "--corpus", folder / "corpus.jsonl", "--golden", folder / "golden.jsonl", "-k", "20",
                  "-o", folder / "bm25.run")
        bench.cli("pool", folder / "bm25.run", "--golden", folder / "golden.jsonl", "--depth", "20", "-o", folder / "pool.tsv")
    return len(read_golden(folder / "golden.jsonl")), len(read_corpus(folder / "corpus.jsonl"))


def rows_of(d: bench.SetData) -> list[list[str]]:
    out, raw = [], f"{bench.oracle(d.y, d.R):.3f}"
    for rule, (score, cut, calibrated) in {"R>=0.70": (d.R, labels.DEFAULT_THRESHOLD, False), P_RULE: (d.p, labels.CUT, True)}.items():
        row = bench.rule_rows(d, rule, score, (cut,), labels.GRADE_CUTS if calibrated else bench.RAW_GRADES, False, None, calibrated)
        relevant = score >= cut
        empty = len(set(d.qid) - {q for q, r in zip(d.qid, relevant) if r})
        out.append([d.name, d.condition, rule, str(row["pairs"]), str(row["gold"]), raw, f"{row['kappa']:.3f}",
                    f"{row['oracle']:.3f}", f"{row['auc']:.3f}", bench.fmt(row["ece"]), f"{relevant[d.y == 1].mean():.2f}",
                    str(empty)])
    return out


def ranking_rows(d: bench.SetData) -> list[list[str]]:
    """Per rule: tau over the 8 runs and over bm25, dense and hybrid (gold against the rule's labels), the three's
    nDCG@10 under gold and under the labels, how much more the labels favour dense over bm25 than gold does (the judge
    and dense share a model), and the pairs of the three `semrel report` would warn of (ordered oppositely,
    significant under either qrels; every pair tested)."""
    three = [list(bench.RUNS).index(r) for r in bench.BAR_RUNS]
    bm25, dense = list(bench.RUNS).index("bm25"), list(bench.RUNS).index("dense")
    gold = bench.system_values(d, d.gold_qrels, "gold").mean(1)
    out = []
    rules = {"R>=0.70": labels.choose_rule(d.all, on="R", threshold=labels.DEFAULT_THRESHOLD), P_RULE: labels.choose_rule(d.all)}
    runs = {r: str(d.folder / "runs" / f"{r}.run") for r in bench.BAR_RUNS}
    with warnings.catch_warnings():  # a question whose contexts matched no chunk has no gold: the runs' rows for it are ignored
        warnings.simplefilter("ignore")
        on_gold = compare({q: v for q, v in d.gold_qrels.items() if any(v.values())}, runs, ["nDCG@10"], all_pairs=True)
    for rule, chosen in rules.items():  # as `semrel label` labels: a pair without p (no null chunk left) by R >= 0.70
        qrels = labels.apply_rule(d.all, chosen).to_dict()
        mine = bench.system_values(d, qrels, rule).mean(1)
        warned = reversals(compare(qrels, runs, ["nDCG@10"], all_pairs=True), on_gold)
        lean = (mine[dense] - mine[bm25]) - (gold[dense] - gold[bm25])
        out.append([d.name, d.condition, rule, f"{kendalltau(gold, mine)[0]:.3f}", f"{kendalltau(gold[three], mine[three])[0]:.3f}",
                    " / ".join(f"{v:.3f}" for v in gold[three]), " / ".join(f"{v:.3f}" for v in mine[three]), f"{lean:+.3f}",
                    ", ".join(f"{r.behind} over {r.ahead}" for r in warned) or "none"])
    return out


def by_gold_count(d: bench.SetData, folder: Path) -> tuple[list[int], list[int], int, int]:
    """With gold known: gold pairs and those p labels relevant, for questions with 1, 2 and 3+ gold contexts; and the
    non-gold pairs labelled relevant, and how many of them share a tenth of their word pairs with a gold context of their
    question (LlamaIndex's overlapping neighbours would)."""
    golden = read_golden(folder / "golden.jsonl")
    listed = {g.query_id: len(g.gold_chunk_ids) for g in golden}
    gold_of = {g.query_id: g.gold_chunk_ids for g in golden}
    text = {c.id: c.text.lower().split() for c in read_corpus(folder / "corpus.jsonl")}

    def bigrams(chunk: str) -> set:
        return set(zip(text[chunk], text[chunk][1:]))

    total, found, wrong, near = [0, 0, 0], [0, 0, 0], 0, 0
    for j, y, p in zip(d.kappa, d.y, d.p):
        relevant = p >= labels.CUT
        if y:
            k = min(listed[j.query_id], 3) - 1
            total[k] += 1
            found[k] += int(relevant)
        elif relevant:
            wrong += 1
            mine = bigrams(j.chunk_id)
            near += any(len(mine & bigrams(g)) >= 0.1 * max(1, min(len(mine), len(bigrams(g)))) for g in gold_of[j.query_id])
    return total, found, wrong, near


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("datasets", nargs="+", type=Path, help="LlamaIndex rag_dataset.json files or ragas testsets (CSV, JSON, "
                        "JSONL), each in a folder of its own: the folder's name names the set")
    parser.add_argument("--work", type=Path, default=bench.ROOT / "out" / "bench-generated")
    parser.add_argument("--cache", type=Path, default=None, help="embedding cache folder [default: WORK/cache]")
    args = parser.parse_args()
    cache = args.cache or args.work / "cache"
    rows, sizes, curves, gold_rows, ranks = [], [], [], [], []
    gold_total, gold_found = [0, 0, 0], [0, 0, 0]
    shipped = bench.Fitted(labels.WITH_GOLD, labels.WITHOUT_GOLD, labels.CUT)
    for source in args.datasets:
        name = source.resolve().parent.name
        questions, chunks = build(source, args.work / name)
        bench.runs_and_pools(args.work / name, cache)
        for condition in bench.CONDITIONS:
            d = bench.SetData(name, args.work / name, condition, cache, tau=True)
            rows += rows_of(d)
            ranks += ranking_rows(d)
            if condition == "gold":
                total, found, wrong, near = by_gold_count(d, args.work / name)
                gold_total, gold_found = [a + b for a, b in zip(gold_total, total)], [a + b for a, b in zip(gold_found, found)]
                gold_rows.append([name, *[f"{f} / {t}" for f, t in zip(found, total)], f"{wrong} ({near})"])
            curve = bench.learning_curve(d, shipped, bench.REVIEWED)
            curves.append([name, condition, f"{curve['0']:.3f}", *[" / ".join(f"{curve[str(n)][k]:.3f}" for k in REMEDIES)
                                                                 for n in bench.REVIEWED]])
        null = (read_params(args.work / name / "judgments-gold-kappa.jsonl") or {})["probability"]["null_sample"]["pairs"]
        sizes.append(f"{name}: {questions} questions, {chunks} distinct contexts, {null / questions:.1f} null chunks per question "
                     "(of 25: the pool leaves the rest)")
    print("\n".join(sizes), end="\n\n")
    print(render(Table(["set", "cond", "rule", "pairs", "gold", "raw oracle", "kappa", "rule's oracle", "AUC", "ECE",
                        "gold labelled relevant", "questions with none"], rows), "markdown"))
    gold_rows.append(["all", *[f"{f} / {t} = {f / t:.2f}" if t else "-" for f, t in zip(gold_found, gold_total)], "-"])
    print("\nWith gold known, gold pairs p labels relevant by how many gold contexts the question has; non-gold pairs it labels "
          "relevant (of them, sharing a tenth of their word pairs with a gold context of the question)\n")
    print(render(Table(["set", "1 gold context", "2", "3 or more", "non-gold labelled relevant (near a gold context)"], gold_rows),
                 "markdown"))
    print(f"\nAfter review, kappa on the pairs not reviewed: {' / '.join(REMEDIES.values())}\n")
    print(render(Table(["set", "cond", "0 reviewed", *[f"{n} reviewed" for n in bench.REVIEWED]], curves), "markdown"))
    print("\nSystem ranking by nDCG@10, gold against each rule's labels (the full set)\n")
    print(render(Table(["set", "cond", "rule", "tau, 8 runs", "tau, bm25 dense hybrid", "bm25 / dense / hybrid: gold",
                        "the rule's labels", "dense's lead over bm25: labels - gold", "reversals the report warns of"], ranks), "markdown"))
    for rule in ("R>=0.70", P_RULE):
        leans = [float(r[7]) for r in ranks if r[2] == rule]
        print(f"\n{rule}: the labels favour dense over bm25 more than gold does on {sum(v > 0 for v in leans)} of {len(leans)} "
              f"set-conditions; mean |labels - gold| {np.mean(np.abs(leans)):.3f}")


if __name__ == "__main__":
    sys.exit(main())
