"""Tried and not shipped (2026-12-04; spread, runner-up, siblings 2026-12-05): more changes to p and to its cut.

    python bench/label_ideas.py [--work out/bench-labels] [--generated out/bench-generated] [--hidden-gold]

Run after bench/labels.py, whose sets and judgments it reads (and, with --generated, after
bench/generated.py, whose held-out sets it scores too). Each variant is refitted as bench/labels.py
fits p (a model per condition, sets weighted equally, C=100, columns held to their fitted range, the
cut by the mean margin to the raw oracle), in-sample and leave-one-family-out (LODO):

  pool count   log(1 + the query's pooled chunks with R_idf_max > 0), alone and times relR_idf: a
               query with several chunks above the null (PubMedQA's sections) would lean less on the
               standing against its best chunk. Fitted as an extra column of the design.
  spread       1 - own_idf of the query's best chunk (highest relR_idf): the share of the answer that chunk is not
               the best source for, high where the answer is drawn from several chunks (PubMedQA's conclusion
               from its sections, covidmulti's joined answers) and low where one chunk holds it (COVID-QA's span).
               Alone, and with its product with own_idf (a chunk that is the best source for a part of a spread
               answer would count for more). Known without labels, with gold and without.
  runner-up    the relR_idf of the query's second best chunk, held to [-1, 1]: near 1 where another chunk stands
               as high as the best (several relevant chunks), low where one stands alone.
  siblings     the best relR_idf among the query's other pooled chunks of the same document (-1 where there is
               none), alone, with its share by the document's chunk count ((sibling + 1) / chunks), and with
               1 / chunks too: where a golden set's convention makes every part of a short document relevant
               (PubMedQA lists every section of the abstract), a chunk beside a strong one would count for more.
               Known without labels, from the corpus's doc_id.
  monotone     the weights of relR_idf, R_idf_max, own_idf, F_max and P_max held >= 0 (the shipped fit
               with gold weighs R_idf_max at -4.47), against the same optimiser (bounded L-BFGS) free.
  gold count   log(the number of gold chunks the golden set lists for the query), known with gold only (0
               without): a query with several gold chunks has several relevant ones, each further from the
               pool's best (PubMedQA's sections, COVID-QA's joined questions, generated multi-hop questions).
               As a feature (alone and times relR_idf), and as an offset b log k on the logit of the model
               fitted without it (b fitted on the training sets' pairs with gold), so that queries with one gold
               chunk keep their p. With --hidden-gold, one gold chunk of each query that lists two or more is
               hidden (seeded), the query judged with the rest listed (the hidden chunk stays in the pool only
               where BM25 retrieved it), and the offset (the in-sample b, on the shipped logit, the shipped cut)
               is weighed on what the gold chunks cannot show: how many hidden gold chunks it labels relevant,
               and how many non-gold pairs of the same queries.
  blend        pairs with gold get (1 - w) times the with-gold model's p plus w times the no-gold model's, as a
               shrinkage of the model that leans on the listed gold (Solana with gold, a closed corpus of one
               paper, is the held-out set where it leans too far), w = 0.25 and 0.5.
  gold as reference   (with --hidden-gold) each pooled chunk of those queries scored by BERTScore against
               the gold chunks still listed, as if they were reference answers: does likeness to the listed
               gold find the hidden one beyond p? AUC on hidden gold against the other unlisted pairs, of p,
               of that F, and of both in a logistic model cross-validated within the set (the most either
               could give).
  gold-anchored cut   the cut lowered, per set, to where a share s of the listed gold chunks reach it (as a
               user might, seeing the gold-share warning): chosen on half the queries, measured on the other
               half, both ways (seeded).

It prints the worst / mean margin in-sample and LODO (and on the held-out generated-answer sets, with the
model fitted on every development set), and kappa per set-condition (in-sample, then LODO). Why none
ships: docs/judge.md, "Tried and not shipped".
"""

from __future__ import annotations

import argparse
import random
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from scipy.optimize import minimize, minimize_scalar
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import cross_val_predict

import labels as bench  # bench/labels.py (python puts a script's folder first on sys.path): the sets, judgments, measures
import lexical_feature  # its Model: the shipped design plus extra columns, fitted as bench/labels.py fits p
import semrel
from semrel.formats.corpus import read_corpus, read_golden, write_golden
from semrel.formats.judgments import read_judgments
from semrel.formats.tables import Table, render
from semrel.judging import labels
from semrel.records import GoldenItem

SIMILARITIES = [labels.FEATURES.index(f) for f in ("relR_idf", "R_idf_max", "own_idf", "F_max", "P_max")]


def spread(d: bench.SetData) -> np.ndarray:
    """Per pair, 1 - own_idf of its query's chunk with the highest relR_idf (the first such pair)."""
    relR, own = d.X[:, labels.FEATURES.index("relR_idf")], d.X[:, labels.FEATURES.index("own_idf")]
    best: dict[str, int] = {}
    for i, q in enumerate(d.qid):
        if q not in best or relR[i] > relR[best[q]]:
            best[q] = i
    return np.array([1 - own[best[q]] for q in d.qid])


def runner_up(d: bench.SetData) -> np.ndarray:
    """Per pair, the relR_idf of its query's second best pooled chunk (0 for a query with one), held to [-1, 1]."""
    relR = d.X[:, labels.FEATURES.index("relR_idf")]
    values: dict[str, list[float]] = {}
    for q, r in zip(d.qid, relR.tolist()):
        values.setdefault(q, []).append(r)
    second = {q: sorted(v, reverse=True)[1] if len(v) > 1 else 0.0 for q, v in values.items()}
    return np.clip([second[q] for q in d.qid], -1.0, 1.0)


def siblings(d: bench.SetData, doc: dict[str, str], size: Counter) -> tuple[np.ndarray, np.ndarray]:
    """Per pair, the best relR_idf among its query's other pooled chunks of the same document (-1 for none), and
    1 / that document's chunk count in the corpus (`doc`: each chunk's document, `size`: each document's chunks)."""
    relR = d.X[:, labels.FEATURES.index("relR_idf")]
    pooled = [doc[j.chunk_id] for j in d.kappa]
    members: dict[tuple[str, str], list[int]] = {}
    for i, key in enumerate(zip(d.qid, pooled)):
        members.setdefault(key, []).append(i)
    best = np.full(len(pooled), -1.0)
    for group in members.values():
        for i in group:
            best[i] = max((relR[k] for k in group if k != i), default=-1.0)
    return np.clip(best, -1.0, 1.0), np.array([1 / size[c] for c in pooled])


def pool_count(d: bench.SetData) -> np.ndarray:
    """Per pair, log(1 + how many of its query's pooled chunks stand above the null's highest idf-weighted R)."""
    above: dict[str, int] = {}
    for q, x in zip(d.qid, d.X[:, labels.FEATURES.index("R_idf_max")]):
        above[q] = above.get(q, 0) + int(x > 0)
    return np.log1p([above[q] for q in d.qid])


class Bounded:
    """p's logistic model fitted by bounded L-BFGS (the same loss, penalty and weights as the shipped fit), the
    similarity weights held >= 0 when `monotone`; one model per condition and one cut, as shipped."""

    def __init__(self, parts: list, monotone: bool, raw: dict):
        self.fits = {c: self.fit([d for d in parts if d.condition == c], monotone) for c in bench.CONDITIONS}
        self.cut = bench.choose_cut([(self.p(d), d.y, raw[d.name, d.condition]) for d in parts])

    @staticmethod
    def fit(parts: list, monotone: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        X, y = np.vstack([bench.design(d.X) for d in parts]), np.concatenate([d.y for d in parts])
        w = np.concatenate([np.full(len(d.y), len(y) / len(parts) / len(d.y)) for d in parts])

        def loss(b: np.ndarray) -> tuple[float, np.ndarray]:
            z = b[0] + X @ b[1:]
            g = w * (1 / (1 + np.exp(-z)) - y)
            return (float(np.sum(w * (np.logaddexp(0, z) - y * z)) + 0.005 * np.sum(b[1:] ** 2)),  # C = 100
                    np.concatenate([[g.sum()], X.T @ g + b[1:] / 100]))

        bounds = [(None, None)] + [(0, None) if monotone and i in SIMILARITIES else (None, None) for i in range(X.shape[1])]
        found = minimize(loss, np.zeros(X.shape[1] + 1), jac=True, method="L-BFGS-B", bounds=bounds, options={"maxiter": 20000})
        return found.x, X.min(0), X.max(0)

    def p(self, d) -> np.ndarray:
        b, lower, upper = self.fits[d.condition]
        return 1 / (1 + np.exp(-(b[0] + np.clip(bench.design(d.X), lower, upper) @ b[1:])))


class Offset:
    """The shipped design refitted on `parts`, plus b log(gold count) on its logit, b fitted on the pairs with gold; the
    cut chosen again, or the refitted model's (`keep_cut`: pairs without gold keep their labels)."""

    def __init__(self, parts: list, raw: dict, keep_cut: bool = False):
        self.base = lexical_feature.Model(parts, (), raw)
        gold = [d for d in parts if d.condition == "gold"]
        z, k = [self.logit(d) for d in gold], [d.columns["gold count"] for d in gold]
        self.b = minimize_scalar(lambda b: sum(np.mean(np.logaddexp(0, zi + b * ki) - d.y * (zi + b * ki))
                                               for d, zi, ki in zip(gold, z, k)), bounds=(0, 5), method="bounded").x
        self.cut = self.base.cut if keep_cut else bench.choose_cut([(self.p(d), d.y, raw[d.name, d.condition]) for d in parts])

    def logit(self, d) -> np.ndarray:
        p = np.clip(self.base.p(d), 1e-12, 1 - 1e-12)
        return np.log(p / (1 - p))

    def p(self, d) -> np.ndarray:
        return 1 / (1 + np.exp(-(self.logit(d) + self.b * d.columns["gold count"])))


class Blend(lexical_feature.Model):
    """The shipped design refitted per condition; pairs with gold get (1 - w) p_gold + w p_nogold."""

    def __init__(self, parts: list, raw: dict, w: float):
        self.w = w
        super().__init__(parts, (), raw)

    def p(self, d, columns: dict | None = None) -> np.ndarray:
        def of(condition: str) -> np.ndarray:
            fit, lower, upper = self.fits[condition]
            return fit.predict_proba(np.clip(self.design(d, columns), lower, upper))[:, 1]

        return (1 - self.w) * of("gold") + self.w * of("nogold") if d.condition == "gold" else of("nogold")


VARIANTS = {
    "pool count: shipped 8 features": lambda parts, raw: lexical_feature.Model(parts, (), raw),
    "pool count: + count": lambda parts, raw: lexical_feature.Model(parts, ("count",), raw),
    "pool count: + count, count x relR_idf": lambda parts, raw: lexical_feature.Model(parts, ("count", "count x relR"), raw),
    "spread: + spread": lambda parts, raw: lexical_feature.Model(parts, ("spread",), raw),
    "spread: + spread, spread x own_idf": lambda parts, raw: lexical_feature.Model(parts, ("spread", "spread x own"), raw),
    "runner-up: + runner-up relR_idf": lambda parts, raw: lexical_feature.Model(parts, ("runner-up",), raw),
    "siblings: + sibling": lambda parts, raw: lexical_feature.Model(parts, ("sibling",), raw),
    "siblings: + sibling, sibling / chunks": lambda parts, raw: lexical_feature.Model(parts, ("sibling", "sibling / chunks"), raw),
    "siblings: + sibling, sibling / chunks, 1 / chunks": lambda parts, raw: lexical_feature.Model(
        parts, ("sibling", "sibling / chunks", "1 / chunks"), raw),
    "monotone: free": lambda parts, raw: Bounded(parts, False, raw),
    "monotone: similarities >= 0": lambda parts, raw: Bounded(parts, True, raw),
    "gold count: + log k": lambda parts, raw: lexical_feature.Model(parts, ("gold count",), raw),
    "gold count: + log k, log k x relR_idf": lambda parts, raw: lexical_feature.Model(parts, ("gold count", "gold count x relR"), raw),
    "gold count: offset b log k": Offset,
    "gold count: offset b log k, the cut kept": lambda parts, raw: Offset(parts, raw, keep_cut=True),
    "blend: w = 0.25": lambda parts, raw: Blend(parts, raw, 0.25),
    "blend: w = 0.5": lambda parts, raw: Blend(parts, raw, 0.5),
}


def hidden_gold(sets: list, b: float, with_k: lexical_feature.Model) -> list[list[str]]:
    """Per set with queries of two or more gold chunks: hidden gold chunks in the pool and how many R >= 0.70, the
    shipped p, the offset and log k as a feature (`with_k`, fitted on every development set) label relevant; the
    non-gold pairs of those queries and the same; kappa against all the gold (p, the offset, the feature)."""
    rows = []
    for name, folder, cache, _ in sets:
        golden, rng = read_golden(folder / "golden.jsonl"), random.Random(0)
        hidden, listed = {}, []
        for item in golden:
            ids = list(item.gold_chunk_ids)
            if len(ids) >= 2:
                hidden[item.query_id] = rng.choice(ids)
                ids.remove(hidden[item.query_id])
            listed.append(GoldenItem(item.query_id, item.query, item.reference_answers, tuple(ids), item.meta))
        if not hidden:
            continue
        out = folder / "judgments-hidden-kappa.jsonl"
        if not bench.current(out):
            write_golden(listed, folder / "golden-hidden.jsonl")
            bench.write_pool_rows(folder / "pool-hidden.tsv", [(q, c, s - {"gold"} if hidden.get(q) == c else s)
                                                               for q, c, s in bench.read_pool_rows(folder / "pool.tsv")
                                                               if s - {"gold"} or hidden.get(q) != c])
            semrel.judge(folder / "corpus.jsonl", folder / "golden-hidden.jsonl", folder / "pool-hidden.tsv", out, cache=cache)
        judged = read_judgments(out)
        k = {item.query_id: max(1, len(item.gold_chunk_ids)) for item in listed}
        gold = {(item.query_id, c) for item in golden for c in item.gold_chunk_ids}
        x = np.array([[j.features[f] for f in labels.FEATURES] for j in judged])
        logit, log_k = labels.logits(x, True), np.log([k[j.query_id] for j in judged])
        shipped, raw = np.array([j.p for j in judged]) >= labels.CUT, np.array([j.R for j in judged]) >= labels.DEFAULT_THRESHOLD
        offset = 1 / (1 + np.exp(-(logit + b * log_k))) >= labels.CUT
        feature = with_k.p(SimpleNamespace(condition="gold"), {"X": x, "gold count": log_k}) >= with_k.cut
        y = np.array([(j.query_id, j.chunk_id) in gold for j in judged])
        masked = np.array([hidden.get(j.query_id) == j.chunk_id for j in judged])
        others = np.array([j.query_id in hidden for j in judged]) & ~y
        rules = (raw, shipped, offset, feature)
        rows.append([name, f"{masked.sum()} of {len(hidden)}", " / ".join(str(v[masked].sum()) for v in rules),
                     str(others.sum()), " / ".join(str(v[others].sum()) for v in rules),
                     " / ".join(f"{bench.kappa(y, v):.3f}" for v in rules[1:])])
    return rows


def gold_as_reference(sets: list) -> list[list[str]]:
    """Per set judged with hidden gold: AUC on the hidden gold chunks against the unlisted pairs of the same queries,
    of p, of F against the listed gold chunks, and of both combined (logistic, 5-fold within the set)."""
    rows = []
    for name, folder, cache, _ in sets:
        if not (folder / "judgments-hidden-kappa.jsonl").exists():
            continue
        listed = {item.query_id: item for item in read_golden(folder / "golden-hidden.jsonl")}
        hidden = {item.query_id: set(item.gold_chunk_ids) - set(listed[item.query_id].gold_chunk_ids)
                  for item in read_golden(folder / "golden.jsonl")}
        judged = [j for j in read_judgments(folder / "judgments-hidden-kappa.jsonl")
                  if hidden[j.query_id] and j.chunk_id not in listed[j.query_id].gold_chunk_ids]
        out = folder / "judgments-goldref.jsonl"
        if not bench.current(out):
            texts = {c.id: c.text for c in read_corpus(folder / "corpus.jsonl")}
            write_golden([GoldenItem(q, listed[q].query, tuple(texts[c] for c in listed[q].gold_chunk_ids), (), {})
                          for q in hidden if hidden[q]], folder / "golden-goldref.jsonl")
            bench.write_pool_rows(folder / "pool-goldref.tsv", [(j.query_id, j.chunk_id, {"listed-gold"}) for j in judged])
            semrel.judge(folder / "corpus.jsonl", folder / "golden-goldref.jsonl", folder / "pool-goldref.tsv", out,
                         cache=cache, null_sample=0)
        likeness = {(j.query_id, j.chunk_id): j.F for j in read_judgments(out)}
        y = np.array([j.chunk_id in hidden[j.query_id] for j in judged])
        p = np.clip([j.p for j in judged], 1e-6, 1 - 1e-6)
        F = np.array([likeness[j.query_id, j.chunk_id] for j in judged])
        both = cross_val_predict(LogisticRegression(C=100), np.c_[np.log(p / (1 - p)), F], y, cv=min(5, int(y.sum())),
                                 method="predict_proba")[:, 1]
        rows.append([name, str(y.sum()), str((~y).sum())] + [f"{roc_auc_score(y, s):.3f}" for s in (p, F, both)])
    return rows


GOLD_SHARES = (0.8, 0.9)


def gold_anchored_cut(data: list, raw: dict) -> list[list[str]]:
    """Per set with gold: kappa at the shipped cut, and at the cut lowered to where a share s of the listed gold reaches
    it, chosen on one half of the queries and measured on the other (the mean cut in brackets)."""
    rows = []
    for d in data:
        if d.condition != "gold":
            continue
        queries = sorted(set(d.qid))
        random.Random(0).shuffle(queries)
        half = dict(zip(queries, [i % 2 for i in range(len(queries))]))
        h = np.array([half[q] for q in d.qid])
        cells = []
        for share in GOLD_SHARES:
            cuts = [min(labels.CUT, float(np.quantile(d.p[(h != k) & (d.y == 1)], 1 - share))) for k in (0, 1)]
            pred = d.p >= np.choose(h, cuts)
            cells.append(f"{bench.kappa(d.y, pred):.3f} ({np.mean(cuts):.2f})")
        rows.append([d.name, f"{raw[d.name, d.condition]:.3f}", f"{bench.kappa(d.y, d.p >= labels.CUT):.3f}", *cells])
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, default=bench.ROOT / "out" / "bench-labels")
    parser.add_argument("--generated", type=Path, default=None, help="bench/generated.py's work folder: score its sets too")
    parser.add_argument("--hidden-gold", action="store_true", help="also judge each set with one gold chunk of a query hidden")
    args = parser.parse_args()
    data, held_out, raw = [], [], {}
    sets = bench.set_folders(args.work, args.generated, "pool.tsv")
    for name, folder, cache, held in sets:
        into = held_out if held else data
        gold_chunks = {item.query_id: max(1, len(item.gold_chunk_ids)) for item in read_golden(folder / "golden.jsonl")}
        chunks = read_corpus(folder / "corpus.jsonl")
        doc, size = {c.id: c.doc_id for c in chunks}, Counter(c.doc_id for c in chunks)
        for condition in bench.CONDITIONS:
            d = bench.SetData(name, folder, condition, cache, tau=False)
            count, relR = pool_count(d), d.X[:, labels.FEATURES.index("relR_idf")]
            k = np.log([gold_chunks[q] for q in d.qid]) if condition == "gold" else np.zeros(len(d.qid))
            share = spread(d)
            d.columns = {"X": d.X, "count": count, "count x relR": count * relR, "gold count": k, "gold count x relR": k * relR,
                         "spread": share, "spread x own": share * d.X[:, labels.FEATURES.index("own_idf")], "runner-up": runner_up(d)}
            sibling, inverse = siblings(d, doc, size)
            d.columns |= {"sibling": sibling, "sibling / chunks": (sibling + 1) * inverse, "1 / chunks": inverse}
            raw[name, condition] = bench.oracle(d.y, d.R)
            into.append(d)
    summary, rows = [], []
    for variant, train in VARIANTS.items():
        inside = train(data, raw)
        left_out = {}
        for family in sorted(set(bench.FAMILY.values())):
            model = train([d for d in data if bench.FAMILY[d.name] != family], raw)
            left_out |= {(d.name, d.condition): model for d in data if bench.FAMILY[d.name] == family}
        kappas = [(bench.kappa(d.y, inside.p(d) >= inside.cut),
                   bench.kappa(d.y, left_out[d.name, d.condition].p(d) >= left_out[d.name, d.condition].cut)) for d in data]
        margins = np.array([(k - raw[d.name, d.condition], kl - raw[d.name, d.condition]) for d, (k, kl) in zip(data, kappas)])
        generated = np.array([bench.kappa(d.y, inside.p(d) >= inside.cut) - raw[d.name, d.condition] for d in held_out])
        summary.append([variant, f"{inside.cut:.2f}", f"{margins[:, 0].min():+.3f} / {margins[:, 0].mean():+.3f}",
                        f"{margins[:, 1].min():+.3f} / {margins[:, 1].mean():+.3f}",
                        f"{generated.min():+.3f} / {generated.mean():+.3f}" if held_out else "-"])
        rows += [[variant, d.name, d.condition, f"{raw[d.name, d.condition]:.3f}", f"{k:.3f} / {kl:.3f}"]
                 for d, (k, kl) in zip(data, kappas)]
        rows += [[variant, d.name, d.condition, f"{raw[d.name, d.condition]:.3f}",
                  f"{bench.kappa(d.y, inside.p(d) >= inside.cut):.3f} / held out"] for d in held_out]
    print(render(Table(["variant", "set", "cond", "raw oracle", "kappa in-sample / LODO"], rows), "markdown"))
    print()
    print(render(Table(["variant", "cut", "in-sample worst / mean margin", "LODO worst / mean margin",
                        "generated worst / mean margin"], summary), "markdown"))
    if args.hidden_gold:
        b, with_k = Offset(data, raw).b, VARIANTS["gold count: + log k"](data, raw)
        print(f"\nOne gold chunk of each query with two or more hidden; the offset b log k with b = {b:.3f}, cut {labels.CUT}; "
              f"log k as a feature, cut {with_k.cut:.2f}\n")
        print(render(Table(["set", "hidden gold in the pool", "labelled relevant: R >= 0.70 / p / offset / log k",
                            "non-gold pairs of those queries", "labelled relevant: R >= 0.70 / p / offset / log k",
                            "kappa against all gold: p / offset / log k"],
                           hidden_gold(sets, b, with_k)), "markdown"))
        print("\nThe same queries: AUC on the hidden gold against their other unlisted pairs\n")
        print(render(Table(["set", "hidden gold", "other pairs", "p", "F against the listed gold", "both (5-fold)"],
                           gold_as_reference(sets)), "markdown"))
    print("\nThe cut lowered to where a share s of the listed gold reaches it (halves of the queries, seeded)\n")
    print(render(Table(["set", "raw oracle", f"p >= {labels.CUT}", *(f"s = {s}: kappa (cut)" for s in GOLD_SHARES)],
                       gold_anchored_cut(data + held_out, raw)), "markdown"))


if __name__ == "__main__":
    main()
