"""The measure registry: each measure family is one entry, its names and its computation together.

ir_measures spelling is canonical (`nDCG@10`); trec_eval names (`ndcg_cut.10`) and common aliases
(`MRR@10`) are accepted. Adding a family is one decorated function in this module:

    @family("Foo", Cutoff.OPTIONAL, trec="foo", trec_cut="foo_cut", aliases=("f",))
    def foo(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
        '''What Foo is, in one line (kept as the entry's `doc`).'''
        return ctx.count(r, top(m, r) & r.relevant)   # one float64 value per qrels query

The decorator records the family's canonical name, its cutoff rule, its trec_eval names, its aliases,
how the 'all' row aggregates it and the parameters it takes; parsing, naming (`Measure.name`,
`.trec_name`), aggregation and `semrel.evaluation.metrics` all read that entry and nothing else.

A compute function receives the measure (family, cutoff, parameters), the run's rows joined to the
qrels (`Ranked`: query, rank, gain, relevant, judged; grouped by query in rank order) and a `Context`
(the prepared qrels, relevant documents per query, the relevance level), and returns one value per
qrels query (queries the run lacks included: they have no rows, so they score what an empty ranking
scores). Measures with parameters besides the cutoff (trec_eval's `utility`, ir_measures' `RBP(p=0.8)`)
declare them in `params` and read them with `m.param(...)`; `Name(key=value,...)@k` parses into them.
"""

from __future__ import annotations

import ast
import enum
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Protocol

import numpy as np

from ..errors import UsageError


class Cutoff(enum.Enum):
    """Whether a family's measures take a cutoff (`@k`)."""

    REQUIRED = "required"  # P@k: no meaning without k
    OPTIONAL = "optional"  # nDCG (whole ranking) or nDCG@k
    NONE = "none"  # Rprec: never


@dataclass(frozen=True, order=True)
class Measure:
    """A measure: its family, its cutoff (None where the family takes none or none was given) and
    its other parameters as (name, value) pairs in the order the family declares them."""

    family: str
    cutoff: int | None = None
    params: tuple[tuple[str, Any], ...] = ()

    @property
    def entry(self) -> "Family":
        """The family's registry entry."""
        entry = FAMILIES.get(self.family)
        if entry is None:
            raise UsageError(f"unknown measure family {self.family!r}; known: {', '.join(sorted(FAMILIES))}")
        return entry

    @property
    def name(self) -> str:
        """ir_measures spelling: `nDCG@10`, `RR`, `RBP(p=0.8)`."""
        given = f"({','.join(f'{k}={v!r}' for k, v in self.params)})" if self.params else ""
        return self.family + given + ("" if self.cutoff is None else f"@{self.cutoff}")

    @property
    def trec_name(self) -> str:
        """The name trec_eval prints (the canonical one where trec_eval has no such measure)."""
        return self.entry.trec_name(self)

    @property
    def summed(self) -> bool:
        """Counts are added over queries in the 'all' row, as trec_eval does; the rest are means."""
        return self.entry.aggregate is total

    def param(self, key: str, default: Any = None) -> Any:
        """The value of parameter `key`, or `default` where the measure was named without it."""
        return dict(self.params).get(key, default)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Ranked:
    """One run's rows on the qrels' queries, grouped by query and in rank order (rows of queries the
    qrels lack are dropped)."""

    query: np.ndarray  # index into the qrels' (sorted) query list
    rank: np.ndarray  # 0-based rank within the query
    gain: np.ndarray  # graded rel as float, 0 for unjudged or negative
    relevant: np.ndarray  # judged with rel >= the relevance level
    judged: np.ndarray  # the pair is in the qrels (any grade)


class JudgedPairs(Protocol):
    """The prepared qrels a compute function may consult (semrel.evaluation.metrics builds them)."""

    n: int  # queries
    query: np.ndarray  # each judged pair's query index
    relevance: np.ndarray  # each judged pair's grade

    def ideal_dcg(self, cutoff: int | None) -> np.ndarray: ...


@dataclass(frozen=True)
class Context:
    """What a compute function may need besides the ranked rows."""

    qrels: JudgedPairs
    num_rel: np.ndarray  # relevant documents per query at `level` (retrieved or not), as float
    level: int  # the relevance level (rel >= level is relevant)

    @property
    def n(self) -> int:
        return self.qrels.n

    def count(self, r: Ranked, mask: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        """Per query: how many rows `mask` keeps (or the sum of their `weights`)."""
        return np.bincount(r.query[mask], weights=None if weights is None else weights[mask], minlength=self.n).astype(
            np.float64
        )

    def per_relevant(self, numerator: np.ndarray) -> np.ndarray:
        """numerator / relevant documents of the query (0 where it has none)."""
        return np.divide(numerator, self.num_rel, out=np.zeros(self.n), where=self.num_rel > 0)


def mean(values: np.ndarray) -> float:
    """The 'all' row of most measures: the mean over the qrels' queries."""
    return float(values.mean()) if len(values) else 0.0


def total(values: np.ndarray) -> float:
    """The 'all' row of counts (NumRel, NumRet, NumRelRet): the sum, as trec_eval prints it."""
    return float(values.sum())


Compute = Callable[[Measure, Ranked, Context], np.ndarray]


@dataclass(frozen=True)
class Family:
    """One registry entry: everything semrel knows about a measure family."""

    name: str  # canonical (ir_measures) name
    compute: Compute
    cutoff: Cutoff
    trec: str | None = None  # trec_eval's name without a cutoff; None: trec_eval lacks the family
    trec_cut: str | None = None  # trec_eval's stem with a cutoff (`ndcg_cut` -> ndcg_cut_10); None: none
    aliases: tuple[str, ...] = ()  # other accepted spellings (matched without regard to case)
    aggregate: Callable[[np.ndarray], float] = mean  # the 'all' row from the per-query values
    params: tuple[str, ...] = ()  # parameters besides the cutoff it accepts, as `Name(key=value)`
    doc: str = field(default="", compare=False)

    @property
    def spellings(self) -> set[str]:
        """Every lower-cased name the parser maps to this family."""
        return {s.lower() for s in (self.name, self.trec, self.trec_cut, *self.aliases) if s}

    def trec_name(self, m: Measure) -> str:
        if self.trec is None or m.params:
            return m.name
        if m.cutoff is None:
            return self.trec
        return f"{self.trec_cut}_{m.cutoff}" if self.trec_cut else m.name


FAMILIES: dict[str, Family] = {}  # canonical name -> entry, in registration order
SPELLINGS: dict[str, str] = {}  # lower-cased spelling -> canonical name


def register(entry: Family) -> Family:
    """Add a family to the registry; a spelling two families would share is an error."""
    taken = {s: SPELLINGS[s] for s in entry.spellings if s in SPELLINGS and SPELLINGS[s] != entry.name}
    if taken:
        spelling, other = next(iter(taken.items()))
        raise ValueError(f"measure family {entry.name}: the spelling {spelling!r} already names {other}")
    FAMILIES[entry.name] = entry
    SPELLINGS.update(dict.fromkeys(entry.spellings, entry.name))
    return entry


def family(name: str, cutoff: Cutoff, *, trec: str | None = None, trec_cut: str | None = None,
           aliases: tuple[str, ...] = (), aggregate: Callable[[np.ndarray], float] = mean,
           params: tuple[str, ...] = ()) -> Callable[[Compute], Compute]:
    """Decorator: register the function as the computation of family `name` (see Family)."""

    def decorate(compute: Compute) -> Compute:
        register(Family(name, compute, cutoff, trec, trec_cut, tuple(aliases), aggregate, tuple(params),
                        (compute.__doc__ or "").strip()))
        return compute

    return decorate


def top(m: Measure, r: Ranked) -> np.ndarray:
    """The rows within the measure's cutoff (every row where it has none)."""
    return np.ones(len(r.rank), dtype=bool) if m.cutoff is None else r.rank < m.cutoff


def ranks_within(groups: np.ndarray) -> np.ndarray:
    """0-based position of each row within its run of equal, contiguous group values."""
    n = len(groups)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
    lengths = np.diff(np.r_[starts, n])
    return np.arange(n, dtype=np.int64) - np.repeat(starts, lengths)


# ---- the families -----------------------------------------------------------------------------------


@family("P", Cutoff.REQUIRED, trec="P", trec_cut="P", aliases=("precision",))
def precision(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Relevant documents in the top k, divided by k (even when fewer were returned)."""
    return ctx.count(r, top(m, r) & r.relevant) / m.cutoff


@family("R", Cutoff.REQUIRED, trec="recall", trec_cut="recall")
def recall(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Relevant documents in the top k, divided by all relevant documents of the query."""
    return ctx.per_relevant(ctx.count(r, top(m, r) & r.relevant))


@family("Success", Cutoff.REQUIRED, trec="success", trec_cut="success", aliases=("hit_rate", "hitrate", "hit"))
def success(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """1 when a relevant document is in the top k, else 0."""
    return (ctx.count(r, top(m, r) & r.relevant) > 0).astype(np.float64)


@family("Judged", Cutoff.REQUIRED)
def judged(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """The judged share of the documents returned in the top k (as ir_measures)."""
    within = top(m, r)
    returned = ctx.count(r, within)
    return np.divide(ctx.count(r, within & r.judged), returned, out=np.zeros(ctx.n), where=returned > 0)


@family("nDCG", Cutoff.OPTIONAL, trec="ndcg", trec_cut="ndcg_cut")
def ndcg(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """DCG with the graded rel as a linear gain over the ideal DCG (cut at k too); ignores the level."""
    dcg = ctx.count(r, top(m, r) & (r.gain > 0), r.gain / np.log2(r.rank + 2.0))
    ideal = ctx.qrels.ideal_dcg(m.cutoff)
    return np.divide(dcg, ideal, out=np.zeros(ctx.n), where=ideal > 0)


@family("AP", Cutoff.OPTIONAL, trec="map", trec_cut="map_cut")
def average_precision(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Precision at each relevant document retrieved (in the top k), summed, over all relevant documents."""
    hits = top(m, r) & r.relevant
    nth = ranks_within(r.query[hits]) + 1.0  # each hit's number among its query's hits
    return ctx.per_relevant(np.bincount(r.query[hits], weights=nth / (r.rank[hits] + 1.0), minlength=ctx.n))


@family("RR", Cutoff.OPTIONAL, trec="recip_rank", aliases=("mrr",))
def reciprocal_rank(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """1 / rank of the first relevant document (in the top k), 0 when there is none."""
    hits = top(m, r) & r.relevant
    first = np.zeros(ctx.n)
    q, at = np.unique(r.query[hits], return_index=True)
    first[q] = 1.0 / (r.rank[hits][at] + 1.0)
    return first


@family("Rprec", Cutoff.NONE, trec="Rprec", aliases=("r-prec",))
def r_precision(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Precision at R, the query's number of relevant documents."""
    return ctx.per_relevant(ctx.count(r, r.relevant & (r.rank < ctx.num_rel[r.query])))


@family("NumRel", Cutoff.NONE, trec="num_rel", aggregate=total)
def num_rel(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Relevant documents in the qrels (summed in the 'all' row)."""
    return ctx.num_rel.copy()


@family("NumRet", Cutoff.NONE, trec="num_ret", aggregate=total)
def num_ret(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Documents returned (summed in the 'all' row)."""
    return ctx.count(r, top(m, r))


@family("NumRelRet", Cutoff.NONE, trec="num_rel_ret", aggregate=total)
def num_rel_ret(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Relevant documents returned (summed in the 'all' row)."""
    return ctx.count(r, top(m, r) & r.relevant)


# ---- parsing names ----------------------------------------------------------------------------------

DEFAULT_MEASURES = ("nDCG@10", "AP", "RR", "R@100", "P@10", "Success@10")
# name, optional (key=value,...) parameters, optional cutoff after @ . or _ : nDCG@10, ndcg_cut.10, RBP(p=0.8)
_SPELLING = re.compile(r"^\s*([A-Za-z_\-]+?)\s*(?:\(([^()]*)\))?(?:\s*[@._]\s*(\d+))?\s*$")


def _value(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _params(entry: Family, given: str | None, text: str) -> tuple[tuple[str, Any], ...]:
    if given is None or not given.strip():
        return ()
    if not entry.params:
        raise UsageError(f"measure {entry.name} takes no parameters (got {text!r})")
    pairs: dict[str, Any] = {}
    for part in _split(given):
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or key not in entry.params:
            raise UsageError(f"measure {text!r}: {entry.name} takes {', '.join(f'{p}=' for p in entry.params)} (got {part.strip()!r})")
        pairs[key] = _value(value.strip())
    return tuple((k, pairs[k]) for k in entry.params if k in pairs)


def parse_measure(text: str | Measure) -> Measure:
    """`nDCG@10`, `ndcg_cut.10`, `ndcg_cut_10`, `MRR@10`, `map`... -> Measure (a Measure is returned as is)."""
    if isinstance(text, Measure):
        return text
    match = _SPELLING.match(text)
    name = SPELLINGS.get(match.group(1).lower()) if match else None
    if match is None or name is None:
        known = ", ".join(sorted(FAMILIES))
        raise UsageError(f"unknown measure {text!r}; known: {known} (e.g. nDCG@10, R@100, RR, AP)")
    entry = FAMILIES[name]
    cutoff = int(match.group(3)) if match.group(3) else None
    if cutoff is None and entry.cutoff is Cutoff.REQUIRED:
        raise UsageError(f"measure {text!r} needs a cutoff, e.g. {name}@10")
    if cutoff is not None and entry.cutoff is Cutoff.NONE:
        raise UsageError(f"measure {name} takes no cutoff (got {text!r})")
    if cutoff is not None and cutoff < 1:
        raise UsageError(f"measure {text!r}: the cutoff must be at least 1")
    return Measure(name, cutoff, _params(entry, match.group(2), text))


def _split(text: str) -> list[str]:
    """Split at commas outside parentheses: `nDCG@10,RBP(p=0.8,x=1)` -> two names."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += (char == "(") - (char == ")")
        if char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if p.strip()]


def parse_measures(measures: str | Measure | Iterable[str | Measure] | None = None) -> list[Measure]:
    """The measures named, in order, without repeats; DEFAULT_MEASURES when none are.

    Takes what a library caller or a repeatable option gives: Measure objects (kept as they are),
    names, or comma-separated names (`["nDCG@10,RR", "P@5"]`), mixed. Libraries call it once at their
    public entry, so inner code only ever sees Measure objects.
    """
    if isinstance(measures, (str, Measure)):
        measures = [measures]
    given = list(measures or ())
    if given and all(isinstance(m, Measure) for m in given):
        return list(dict.fromkeys(m for m in given if isinstance(m, Measure)))
    names = [part for item in (given or DEFAULT_MEASURES)
             for part in ([item] if isinstance(item, Measure) else _split(str(item)))]
    return list(dict.fromkeys(parse_measure(name) for name in names))
