"""Measure names: ir_measures spelling is canonical; trec_eval names and common aliases are accepted."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import UsageError


@dataclass(frozen=True, order=True)
class Measure:
    """A measure family and its cutoff (None where the family takes none or none was given)."""

    family: str
    cutoff: int | None = None

    @property
    def name(self) -> str:
        return self.family if self.cutoff is None else f"{self.family}@{self.cutoff}"

    @property
    def trec_name(self) -> str:
        """The name trec_eval prints (the canonical one where trec_eval has no such measure)."""
        base, cut = TREC_NAMES.get(self.family, (None, None))
        if base is None:
            return self.name
        if self.cutoff is None:
            return base
        return f"{cut}_{self.cutoff}" if cut else self.name

    @property
    def summed(self) -> bool:
        """Counts are added over queries in the 'all' row, as trec_eval does; the rest are means."""
        return self.family in COUNTS

    def __str__(self) -> str:
        return self.name


# family -> (needs a cutoff, may take one)
FAMILIES = {
    "P": (True, True), "R": (True, True), "Success": (True, True), "Judged": (True, True),
    "nDCG": (False, True), "AP": (False, True), "RR": (False, True),
    "Rprec": (False, False), "NumRel": (False, False), "NumRet": (False, False), "NumRelRet": (False, False),
}
COUNTS = {"NumRel", "NumRet", "NumRelRet"}
# family -> (trec_eval name without cutoff, trec_eval name stem with cutoff)
TREC_NAMES = {
    "P": ("P", "P"), "R": ("recall", "recall"), "Success": ("success", "success"), "nDCG": ("ndcg", "ndcg_cut"),
    "AP": ("map", "map_cut"), "RR": ("recip_rank", None), "Rprec": ("Rprec", None), "NumRel": ("num_rel", None),
    "NumRet": ("num_ret", None), "NumRelRet": ("num_rel_ret", None), "Judged": (None, None),
}
ALIASES = {
    "p": "P", "precision": "P", "r": "R", "recall": "R", "success": "Success", "hit_rate": "Success",
    "hitrate": "Success", "hit": "Success", "judged": "Judged", "ndcg": "nDCG", "ndcg_cut": "nDCG",
    "ap": "AP", "map": "AP", "map_cut": "AP", "rr": "RR", "mrr": "RR", "recip_rank": "RR", "rprec": "Rprec",
    "r-prec": "Rprec", "numrel": "NumRel", "num_rel": "NumRel", "numret": "NumRet", "num_ret": "NumRet",
    "numrelret": "NumRelRet", "num_rel_ret": "NumRelRet",
}
DEFAULT_MEASURES = ("nDCG@10", "AP", "RR", "R@100", "P@10", "Success@10")
_SPELLING = re.compile(r"^\s*([A-Za-z_\-]+?)(?:\s*[@._]\s*(\d+))?\s*$")


def parse_measure(text: str) -> Measure:
    """`nDCG@10`, `ndcg_cut.10`, `ndcg_cut_10`, `MRR@10`, `map`... -> Measure."""
    match = _SPELLING.match(text)
    family = ALIASES.get(match.group(1).lower()) if match else None
    if family is None:
        known = ", ".join(sorted(FAMILIES))
        raise UsageError(f"unknown measure {text!r}; known: {known} (e.g. nDCG@10, R@100, RR, AP)")
    needs, takes = FAMILIES[family]
    cutoff = int(match.group(2)) if match.group(2) else None
    if cutoff is None and needs:
        raise UsageError(f"measure {text!r} needs a cutoff, e.g. {family}@10")
    if cutoff is not None and not takes:
        raise UsageError(f"measure {family} takes no cutoff (got {text!r})")
    if cutoff is not None and cutoff < 1:
        raise UsageError(f"measure {text!r}: the cutoff must be at least 1")
    return Measure(family, cutoff)


def parse_measures(texts: tuple[str, ...] | list[str] | None) -> list[Measure]:
    """Measures from repeated and/or comma-separated options, in order, without repeats."""
    names = [part for text in (texts or DEFAULT_MEASURES) for part in text.split(",") if part.strip()]
    seen: dict[Measure, None] = {}
    for name in names:
        seen.setdefault(parse_measure(name), None)
    return list(seen)
