"""What lexR_rel, p's exact-token feature (since 2026-12-04), adds: p refitted with and without it.

    python bench/lexical_feature.py [--work out/bench-labels] [--generated out/bench-generated]

Run after bench/labels.py (and, for --generated, bench/generated.py), whose sets, judgments and pools it reads.
lexR_rel = (lex - the query's mean lex over p's null sample) / max(the query's best lex in the pool - that mean,
LEX_FLOOR), held to [-1, 1], where lex is the idf-weighted share of the reference's token ids that occur in the
chunk: relR_idf's normalisation on exact tokens (semrel.judging.labels). Every other feature of p rests on the
judge's vectors, which are the vectors of a dense retriever on the same model. Both variants are refitted as
bench/labels.py fits p (a model per condition, sets weighted equally, C=100, each column held to its fitted range,
the cut by the mean margin to the raw oracle), in-sample and leave-one-family-out, then compared on kappa against
gold and on how the derived qrels of pool-all.tsv rank bm25, dense and hybrid by nDCG@10 (tau3, as the issue's bar)
and measure dense's lead over bm25. With --generated, the models fitted on every development set also label
bench/generated.py's held-out sets, where labels without lexR_rel favoured dense (docs/judge.md, "The exact-token
feature").
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

import labels as bench  # bench/labels.py (python puts a script's folder first on sys.path): the sets, judgments, measures
from semrel.judging import labels

VARIANTS = {"without lexR_rel": ("lexR_rel",), "shipped (8 features)": ()}


class Model:
    """p's logistic model on the shipped design, less the `dropped` features, plus `extra` columns (SetData.columns
    holds them, "X" the features), fitted as bench/labels.py fits p."""

    def __init__(self, parts: list, extra: tuple[str, ...], raw: dict, dropped: tuple[str, ...] = ()):
        self.extra, self.dropped, self.fits = extra, [labels.FEATURES.index(f) for f in dropped], {}
        for condition in bench.CONDITIONS:
            mine = [d for d in parts if d.condition == condition]
            X, y = np.vstack([self.design(d) for d in mine]), np.concatenate([d.y for d in mine])
            w = np.concatenate([np.full(len(d.y), len(y) / len(mine) / len(d.y)) for d in mine])
            self.fits[condition] = (LogisticRegression(C=100.0, max_iter=5000).fit(X, y, sample_weight=w), X.min(0), X.max(0))
        self.cut = bench.choose_cut([(self.p(d), d.y, raw[d.name, d.condition]) for d in parts])

    def design(self, d, columns: dict | None = None) -> np.ndarray:
        columns = columns or d.columns
        return np.column_stack([np.delete(bench.design(columns["X"]), self.dropped, axis=1), *[columns[e] for e in self.extra]])

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
    key = f"{model.extra} without {model.dropped}"
    bm25, dense = list(bench.RUNS).index("bm25"), list(bench.RUNS).index("dense")
    lead = [float(v[dense].mean() - v[bm25].mean()) for v in (bench.system_values(d, d.gold_qrels, "gold"),
                                                                bench.system_values(d, derived, key))]
    return (*bench.ranking_tau(d, derived, key, runs=bench.BAR_RUNS), *lead)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, default=bench.ROOT / "out" / "bench-labels")
    parser.add_argument("--generated", type=Path, default=None, help="bench/generated.py's work folder: label its sets too")
    args = parser.parse_args()
    data, held_out, raw = [], [], {}
    for name, folder, cache, held in bench.set_folders(args.work, args.generated, "pool-all.tsv"):
        for condition in bench.CONDITIONS:
            d = bench.SetData(name, folder, condition, cache, tau=True)
            d.columns = {"X": d.X}
            d.all_columns = {"X": np.array([[(j.features or {}).get(f, np.nan) for f in labels.FEATURES] for j in d.all])}
            raw[name, condition] = bench.oracle(d.y, d.R)
            (held_out if held else data).append(d)
    rows, summary = [], []
    for variant, dropped in VARIANTS.items():
        inside = Model(data, (), raw, dropped)
        left_out = {}
        for family in sorted(set(bench.FAMILY.values())):
            model = Model([d for d in data if bench.FAMILY[d.name] != family], (), raw, dropped)
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
