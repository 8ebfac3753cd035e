"""Tried and not shipped (2026-12-04): an exact-token feature for the probability of relevance p.

    python bench/lexical_feature.py [--work out/bench-labels] [--floor 0.1] [--generated out/bench-generated]

Run after bench/labels.py, whose sets and judgments it reads. Per judged pair, lex = the idf-weighted
share of the reference's tokens (token ids, not vectors; idf counted on p's own idf sample) that occur
in the chunk, best reference kept; lexR_rel = (lex - the query's mean lex over p's null sample) /
max(the query's best lex in the pool - that mean, FLOOR), held to [-1, 1]: relR_idf's normalisation on
exact tokens. p's 7 shipped features, and the same plus lexR_rel, are each refitted as bench/labels.py
fits them (a model per condition, sets weighted equally, C=100, each column held to its fitted range,
the cut by the mean margin to the raw oracle), in-sample and leave-one-family-out, then compared on
kappa against gold and on how the derived qrels of pool-all.tsv rank bm25, dense and hybrid by
nDCG@10 (tau3, as the issue's bar) and measure dense's lead over bm25. With --generated, the models fitted on
every development set also label bench/generated.py's held-out sets (run it first: it builds their runs and
pools), where the labels favour dense, which runs on the judge's own model. Why it does not ship: docs/judge.md,
"Tried and not shipped".
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

import labels as bench  # bench/labels.py (python puts a script's folder first on sys.path): the sets, judgments, measures
from semrel.encoding.models import load_tokenizer
from semrel.formats.corpus import iter_corpus, read_golden
from semrel.judging import labels
from semrel.judging.bertscore import idf_table
from semrel.judging.judge import scan_corpus
from semrel.judging.probability import null_pairs

VARIANTS = {"shipped 7 features": (), "+ lexR_rel": ("lexR_rel",)}


class Lexical:
    """lex of any (query, chunk) of one set (both conditions: their answers are the same): token ids and idf as
    p's judge counts them, the corpus read once, as the judge reads it."""

    def __init__(self, folder: Path, chunks: set[str]):
        self.tokenizer = load_tokenizer(None)
        scan = scan_corpus(iter_corpus(folder / "corpus.jsonl"), chunks, max(labels.NULL_SAMPLE, labels.IDF_SAMPLE), 0,
                           "corpus", False)
        self.texts = scan.texts
        self.null = [c for _, c in scan.candidates[: labels.NULL_SAMPLE]]
        specials = [self.tokenizer.cls_token_id, self.tokenizer.sep_token_id]
        sample = [self.ids(scan.texts[c]) for _, c in scan.candidates[: labels.IDF_SAMPLE]]
        self.idf = idf_table(([specials[0], *ids, specials[1]] for ids in sample), max(len(self.tokenizer), self.tokenizer.vocab_size))[0]
        self.answers = {g.query_id: [np.array(self.ids(a)) for a in g.reference_answers] for g in read_golden(folder / "golden.jsonl")}
        self.chunk_ids: dict[str, np.ndarray] = {}

    def ids(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def lex(self, query: str, chunk: str) -> float:
        if chunk not in self.chunk_ids:
            self.chunk_ids[chunk] = np.unique(self.ids(self.texts[chunk]))
        found = self.chunk_ids[chunk]
        shares = [float(self.idf[ref] @ np.isin(ref, found)) / max(float(self.idf[ref].sum()), 1e-12) for ref in self.answers[query]
                  if len(ref)]
        return max(shares, default=0.0)

    def relative(self, rows, floor: float) -> np.ndarray:
        """lexR_rel of judgment rows (one pool: the best lex is the pool's), the null mean leaving out each query's own chunks."""
        lex = np.array([self.lex(j.query_id, j.chunk_id) for j in rows])
        queries = list(dict.fromkeys(j.query_id for j in rows))
        judged: dict[str, set[str]] = {}
        for j in rows:
            judged.setdefault(j.query_id, set()).add(j.chunk_id)
        null: dict[str, list[float]] = {}
        for q, c in null_pairs(queries, [(0, c) for c in self.null], judged):
            null.setdefault(q, []).append(self.lex(q, c))
        mean = np.array([np.mean(null.get(j.query_id, [0.0])) for j in rows])  # no null chunk left: no p either
        best: dict[str, float] = {}
        for j, v in zip(rows, lex):
            best[j.query_id] = max(best.get(j.query_id, -np.inf), v)
        top = np.array([best[j.query_id] for j in rows])
        return np.clip((lex - mean) / np.maximum(top - mean, floor), -1.0, 1.0)


class Model:
    """p's logistic model on the shipped design plus `extra` columns, fitted as bench/labels.py fits p."""

    def __init__(self, parts: list, extra: tuple[str, ...], raw: dict):
        self.extra, self.fits = extra, {}
        for condition in bench.CONDITIONS:
            mine = [d for d in parts if d.condition == condition]
            X, y = np.vstack([self.design(d) for d in mine]), np.concatenate([d.y for d in mine])
            w = np.concatenate([np.full(len(d.y), len(y) / len(mine) / len(d.y)) for d in mine])
            self.fits[condition] = (LogisticRegression(C=100.0, max_iter=5000).fit(X, y, sample_weight=w), X.min(0), X.max(0))
        self.cut = bench.choose_cut([(self.p(d), d.y, raw[d.name, d.condition]) for d in parts])

    def design(self, d, columns: dict | None = None) -> np.ndarray:
        columns = columns or d.columns
        return np.column_stack([bench.design(columns["X"]), *[columns[e] for e in self.extra]])

    def p(self, d, columns: dict | None = None) -> np.ndarray:
        fit, lower, upper = self.fits[d.condition]
        return fit.predict_proba(np.clip(self.design(d, columns), lower, upper))[:, 1]


def ranking(d, model: Model) -> tuple[float, float, float, float]:
    """bm25, dense and hybrid by nDCG@10 under gold and under the model's labels of pool-all.tsv: tau3 (full set,
    mean of 20x150) and dense's lead over bm25 under gold and under the labels (does a feature favour a retriever?)."""
    derived: dict[str, dict[str, int]] = {}
    has = np.array([bool(j.features) for j in d.all])  # as `semrel label`: a pair without p (no null chunk left) by R >= 0.70
    columns = {k: np.where(has.reshape(-1, *[1] * (v.ndim - 1)), v, 0.0) for k, v in d.all_columns.items()}
    labelled = np.where(has, model.p(d, columns) >= model.cut, np.array([j.R for j in d.all]) >= labels.DEFAULT_THRESHOLD)
    for j, relevant in zip(d.all, labelled):
        derived.setdefault(j.query_id, {})[j.chunk_id] = int(relevant)
    key = " ".join(model.extra) or "shipped"
    bm25, dense = list(bench.RUNS).index("bm25"), list(bench.RUNS).index("dense")
    lead = [float(v[dense].mean() - v[bm25].mean()) for v in (bench.system_values(d, d.gold_qrels, "gold"),
                                                                bench.system_values(d, derived, key))]
    return (*bench.ranking_tau(d, derived, key, runs=bench.BAR_RUNS), *lead)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, default=bench.ROOT / "out" / "bench-labels")
    parser.add_argument("--floor", type=float, default=0.1, help="lexR_rel's smallest denominator")
    parser.add_argument("--generated", type=Path, default=None, help="bench/generated.py's work folder: label its sets too")
    args = parser.parse_args()
    data, held_out, raw = [], [], {}
    for name, folder, cache, held in bench.set_folders(args.work, args.generated, "pool-all.tsv"):
        into = held_out if held else data
        conditions = [bench.SetData(name, folder, condition, cache, tau=True) for condition in bench.CONDITIONS]
        lexical = Lexical(folder, {j.chunk_id for d in conditions for j in (*d.kappa, *d.all)})
        for condition, d in zip(bench.CONDITIONS, conditions):
            d.columns = {"X": d.X, "lexR_rel": lexical.relative(d.kappa, args.floor)}
            d.all_columns = {"X": np.array([[(j.features or {}).get(f, np.nan) for f in labels.FEATURES] for j in d.all]),
                             "lexR_rel": lexical.relative(d.all, args.floor)}
            raw[name, condition] = bench.oracle(d.y, d.R)
            into.append(d)
            print(f"  {name} {condition}: {len(d.y)} pairs", file=sys.stderr)
    rows, summary = [], []
    for variant, extra in VARIANTS.items():
        inside = Model(data, extra, raw)
        left_out = {}
        for family in sorted(set(bench.FAMILY.values())):
            model = Model([d for d in data if bench.FAMILY[d.name] != family], extra, raw)
            left_out |= {(d.name, d.condition): (model, d) for d in data if bench.FAMILY[d.name] == family}
        margins, lodo_margins = [], []
        for d in data:
            model, _ = left_out[d.name, d.condition]
            k, k_lodo = bench.kappa(d.y, inside.p(d) >= inside.cut), bench.kappa(d.y, model.p(d) >= model.cut)
            margins.append(k - raw[d.name, d.condition])
            lodo_margins.append(k_lodo - raw[d.name, d.condition])
            full, mean20, gold_lead, lead = ranking(d, inside)
            rows.append([variant, d.name, d.condition, f"{raw[d.name, d.condition]:.3f}", f"{k:.3f}", f"{k_lodo:.3f}",
                         f"{full:.3f} / {mean20:.3f}", f"{gold_lead:+.3f} / {lead:+.3f}"])
        held, gaps = [], []
        for d in held_out:
            k = bench.kappa(d.y, inside.p(d) >= inside.cut)
            held.append(k - raw[d.name, d.condition])
            full, _, gold_lead, lead = ranking(d, inside)
            gaps.append(abs(lead - gold_lead))
            rows.append([variant, d.name, d.condition, f"{raw[d.name, d.condition]:.3f}", f"{k:.3f}", "held out", f"{full:.3f}",
                         f"{gold_lead:+.3f} / {lead:+.3f}"])
        summary.append([variant, f"{inside.cut:.2f}", f"{min(margins):+.3f} / {np.mean(margins):+.3f}",
                        f"{min(lodo_margins):+.3f} / {np.mean(lodo_margins):+.3f}",
                        f"{min(held):+.3f} / {np.mean(held):+.3f}" if held else "-",
                        f"{np.mean(gaps):.3f} / {max(gaps):.3f}" if gaps else "-"])
    print(bench.render(bench.Table(["features", "set", "cond", "raw oracle", "kappa in-sample", "kappa LODO",
                                    "tau3 full / mean20 (in-sample)",
                                    "dense - bm25 nDCG@10: gold / labels"], rows), "markdown"))
    print()
    print(bench.render(bench.Table(["features", "cut", "in-sample worst / mean margin", "LODO worst / mean margin",
                                    "generated worst / mean margin",
                                    "generated: dense - bm25 lead, labels from gold, mean / most"], summary), "markdown"))


if __name__ == "__main__":
    main()
