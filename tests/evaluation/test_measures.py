"""The measure registry: one entry per family drives parsing, names, aggregation and computation."""

from __future__ import annotations

import re

import numpy as np
import pytest

from semrel.errors import UsageError
from semrel.evaluation import measures
from semrel.evaluation.measures import (
    DEFAULT_MEASURES,
    FAMILIES,
    Cutoff,
    Measure,
    family,
    parse_measure,
    parse_measures,
    top,
)
from semrel.evaluation.metrics import evaluate
from semrel.records import Qrels, Run

# Every spelling README's `semrel eval` section lists.
README_SPELLINGS = {
    "P@5": "P@5", "R@100": "R@100", "RR": "RR", "RR@10": "RR@10", "nDCG": "nDCG", "nDCG@10": "nDCG@10",
    "AP": "AP", "AP@10": "AP@10", "Success@5": "Success@5", "Rprec": "Rprec", "Judged@10": "Judged@10",
    "NumRel": "NumRel", "NumRet": "NumRet", "NumRelRet": "NumRelRet", "ndcg_cut.10": "nDCG@10",
    "recall.100": "R@100", "recip_rank": "RR", "P.5": "P@5", "success.5": "Success@5", "map": "AP",
    "map_cut.10": "AP@10", "num_ret": "NumRet", "MRR@10": "RR@10", "hit_rate@5": "Success@5",
    "HitRate@5": "Success@5", "Recall@100": "R@100", "MAP": "AP",
}


@pytest.mark.parametrize("spelling,canonical", README_SPELLINGS.items())
def test_readme_spellings(spelling, canonical):
    assert parse_measure(spelling).name == canonical


# ranx's metric names (its docs' list), each the measure ranx computes; "r-precision" was refused as unknown.
RANX_SPELLINGS = {"hit_rate@5": "Success@5", "precision@5": "P@5", "recall@100": "R@100", "r-precision": "Rprec", "mrr@10": "RR@10",
                  "map@100": "AP@100", "map": "AP", "ndcg@10": "nDCG@10", "bpref": "Bpref"}


@pytest.mark.parametrize("spelling,canonical", RANX_SPELLINGS.items())
def test_ranx_spellings(spelling, canonical):
    assert parse_measure(spelling).name == canonical


@pytest.mark.parametrize("name,hint", [("hits@10", "ranx's hits@k (the relevant documents in the top k) is k × P@k"),
                                       ("f1@5", "ranx's f1@k is each query's harmonic mean of P@k and R@k")])
def test_ranx_measures_trec_eval_lacks_say_what_gives_them(name, hint):
    """ranx's hits and f1 were 'unknown measure' and a list of sixty names, with no word of P@k."""
    with pytest.raises(UsageError, match=f"^unknown measure '{name}': {re.escape(hint)}"):
        parse_measure(name)


def test_trec_names_and_sums():
    names = {m.name: (m.trec_name, m.summed) for m in parse_measures(
        ["nDCG,nDCG@10,AP,AP@5,RR,RR@3,P@5,R@100,Success@1,Rprec,Judged@5,NumRel,NumRet,NumRelRet"])}
    assert names == {
        "nDCG": ("ndcg", False), "nDCG@10": ("ndcg_cut_10", False), "AP": ("map", False), "AP@5": ("map_cut_5", False),
        "RR": ("recip_rank", False), "RR@3": ("RR@3", False), "P@5": ("P_5", False), "R@100": ("recall_100", False),
        "Success@1": ("success_1", False), "Rprec": ("Rprec", False), "Judged@5": ("Judged@5", False),
        "NumRel": ("num_rel", True), "NumRet": ("num_ret", True), "NumRelRet": ("num_rel_ret", True),
    }


def test_every_family_has_one_entry_with_distinct_spellings():
    owners: dict[str, str] = {}
    for name, entry in FAMILIES.items():
        assert entry.name == name and callable(entry.compute) and entry.doc
        for spelling in entry.spellings:
            assert owners.setdefault(spelling, name) == name


def test_a_spelling_two_families_share_is_refused(monkeypatch):
    monkeypatch.setattr(measures, "FAMILIES", dict(FAMILIES))
    monkeypatch.setattr(measures, "SPELLINGS", dict(measures.SPELLINGS))
    with pytest.raises(ValueError, match="'mrr' already names RR"):
        family("MeanRR", Cutoff.NONE, aliases=("MRR",))(lambda m, r, ctx: np.zeros(ctx.n))


def test_parse_measures_takes_measures_names_and_mixtures_once():
    ndcg10 = Measure("nDCG", 10)
    assert parse_measures(None) == parse_measures(list(DEFAULT_MEASURES))
    for nothing in ((), "", [" , "]):  # a filter that kept nothing is not "the defaults"
        with pytest.raises(UsageError, match="measures: none named"):
            parse_measures(nothing)
    assert parse_measures("nDCG@10,RR") == [ndcg10, Measure("RR")]
    assert parse_measures([ndcg10, "ndcg_cut.10", "P@5, RR"]) == [ndcg10, Measure("P", 5), Measure("RR")]
    assert parse_measures(ndcg10) == [ndcg10]
    assert parse_measure(ndcg10) is ndcg10
    assert {ndcg10: 1}[parse_measure("NDCG@10")] == 1 and min(Measure("P", 10), Measure("P", 5)) == Measure("P", 5)


@pytest.mark.parametrize("text,message", [
    ("nDCG@x", "unknown measure 'nDCG@x'"), ("P", "needs a cutoff, e.g. P@10"), ("Rprec@5", "takes no cutoff"),
    ("P@0", "the cutoff must be at least 1"), ("P(rel=2)@5", "takes no parameters"),
])
def test_bad_names(text, message):
    with pytest.raises(UsageError, match=message.replace("(", r"\(")):
        parse_measure(text)


def test_a_new_family_is_one_entry(monkeypatch):
    """A family with a parameter, registered in one place, parses, names itself, evaluates and aggregates."""
    monkeypatch.setattr(measures, "FAMILIES", dict(FAMILIES))
    monkeypatch.setattr(measures, "SPELLINGS", dict(measures.SPELLINGS))

    @family("Hits", Cutoff.OPTIONAL, trec="hits", trec_cut="hits_cut", aliases=("gain_hits",), params=("rel",),
            aggregate=measures.total)
    def hits(m, r, ctx):
        """Documents in the top k with a grade of at least `rel` (default: the relevance level)."""
        return ctx.count(r, top(m, r) & (r.grade >= m.param("rel", ctx.level)))

    qrels = Qrels.from_dict({"a": {"x": 2, "y": 1}, "b": {"x": 1}})
    run = Run.from_dict({"a": {"x": 0.9, "y": 0.8, "z": 0.7}, "b": {"z": 0.9, "x": 0.1}})
    strict, cut, loose = parse_measures(["Hits(rel=2)", "gain_hits_1", "hits"])
    assert (strict.name, cut.name, loose.name) == ("Hits(rel=2)", "Hits@1", "Hits")
    assert parse_measure(strict.name) == strict and strict.params == (("rel", 2),)
    assert (strict.trec_name, cut.trec_name, loose.trec_name) == ("Hits(rel=2)", "hits_cut_1", "hits")
    (result,) = evaluate(qrels, run, [strict, cut, loose])
    assert result.per_query(strict) == {"a": 1.0, "b": 0.0}
    assert result.per_query("Hits@1") == {"a": 1.0, "b": 0.0}
    assert result.aggregates() == {"Hits(rel=2)": 1.0, "Hits@1": 1.0, "Hits": 3.0} and loose.summed
    with pytest.raises(UsageError, match=r"Hits takes rel="):
        parse_measure("Hits(p=0.5)")


@pytest.mark.parametrize("cells", [1 << 20, 7, 1])  # one batch, several, one group a batch
def test_product_before_multiplies_each_group_in_order(monkeypatch, cells):
    """ERR's chance of reaching a row: the product of its group's earlier values, exactly as a loop multiplies them."""
    monkeypatch.setattr(measures, "PRODUCT_CELLS", cells)
    rng = np.random.default_rng(3)
    groups = np.sort(rng.integers(0, 40, 400))
    values = rng.uniform(0.01, 1.0, 400)
    expected, previous, running = [], None, 1.0
    for g, v in zip(groups.tolist(), values.tolist()):
        running = 1.0 if g != previous else running
        expected.append(running)
        running, previous = running * v, g
    assert measures.product_before(groups, values).tolist() == expected


def test_err_refuses_grades_past_its_scale():
    """ERR divides by 2^4, the TREC Web track's top grade: a grade of 5 would give a chance over 1."""
    qrels, run = Qrels.from_dict({"q": {"a": 5, "b": 1}}), Run.from_dict({"q": {"a": 2.0, "b": 1.0}})
    with pytest.raises(UsageError, match=r"ERR@10 takes grades 0 to 4 .*the qrels hold grade 5"):
        evaluate(qrels, run, parse_measures(["ERR@10"]))
    (result,) = evaluate(Qrels.from_dict({"q": {"a": 4, "b": 1}}), run, parse_measures(["ERR@10"]))
    assert result.aggregate(parse_measure("ERR@10")) == pytest.approx(15 / 16 + (1 / 16) * (1 / 16) / 2)
