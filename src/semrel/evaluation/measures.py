"""The measure registry: each measure family is one entry, its names and its computation together.

ir_measures spelling is canonical (`nDCG@10`, `Bpref`, `RBP(p=0.8)`, `IPrec@0.1`); trec_eval names
(`ndcg_cut.10`, `bpref`, `rbp`, `iprec_at_recall.0.1`), trec_eval's parameter lists (`P.5,10`,
`utility.2,-1,0,0`, `ndcg.1=3,2=9`) and common aliases (`MRR@10`) are accepted. Families ir_measures
lacks keep trec_eval's name (`gm_map`, `Rprec_mult@0.2`, `utility`, `unj@10`). Adding a family is one
decorated function in this module:

    @family("Foo", Cutoff.OPTIONAL, trec="foo", trec_cut="foo_cut", aliases=("f",))
    def foo(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
        '''What Foo is, in one line (kept as the entry's `doc`).'''
        return ctx.count(r, top(m, r) & r.relevant)   # one value per qrels query

The decorator records the family's canonical name, its cutoff rule, its trec_eval names, its aliases,
how the 'all' row aggregates it, the parameters it takes and how trec_eval spells them; parsing,
naming (`Measure.name`, `.trec_name`), aggregation, trec_eval's output order and
`semrel.evaluation.metrics` all read that entry and nothing else.

A compute function receives the measure (family, cutoff, parameters), the run's rows joined to the
qrels (`Ranked`: the judged rows' query, rank, grade and relevance, grouped by query in rank order,
and each query's number of documents returned) and a `Context`
(the prepared qrels, relevant documents per query, the relevance level, -N), and returns one value per
qrels query (queries the run lacks included: they have no rows, so they score what an empty ranking
scores). Measures with parameters besides the cutoff (`utility`, `RBP(p=0.8)`) declare them in
`params` and read them with `m.param(...)`; `Name(key=value,...)@k` parses into them.

Semantics follow trec_eval 10.0 (its own test outputs are replayed in tests/evaluation/test_trec_eval_suite.py):
a retrieved document is relevant (grade >= level), judged non-relevant (0 <= grade < level), unjudged in
the pool (a negative grade, trec_eval's RELVALUE_UNJUDGED: infAP's sampled-out documents) or not in the
pool (not in the qrels at all).
"""

from __future__ import annotations

import ast
import difflib
import enum
import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Protocol, Sequence

import numpy as np

from ..errors import UsageError, check_list


class Cutoff(enum.Enum):
    """Whether a family's measures take a cutoff (`@k`)."""

    REQUIRED = "required"  # P@k: no meaning without k (named without one by its trec_eval name: trec_eval's cutoffs)
    OPTIONAL = "optional"  # nDCG (whole ranking) or nDCG@k
    NONE = "none"  # Rprec: never


class Kind(enum.Enum):
    """What a family's values are: how they print and whether the 'all' row can hold them."""

    REAL = "real"  # printed with --places decimals
    COUNT = "count"  # whole numbers (NumRet), printed as integers
    TEXT = "text"  # runid, relstring


@dataclass(frozen=True, order=True)
class Measure:
    """A measure: its family, its cutoff (None where the family takes none or none was given) and
    its other parameters as (name, value) pairs in the order the family declares them.

    `trec_text` keeps the parameter text as given to trec_eval (`2,-1,0,0`), which trec_eval prints
    in the measure's name (`utility_2,-1,0,0`); it takes no part in comparisons."""

    family: str
    cutoff: int | None = None
    params: tuple[tuple[str, Any], ...] = ()
    trec_text: str | None = field(default=None, compare=False)

    def __repr__(self) -> str:  # the name parse_measure reads back, not the fields
        return f"Measure({self.name!r})"

    @property
    def entry(self) -> "Family":
        """The family's registry entry."""
        entry = FAMILIES.get(self.family)
        if entry is None:
            raise UsageError(f"unknown measure family {self.family!r}; known: {', '.join(sorted(FAMILIES))}")
        return entry

    @property
    def name(self) -> str:
        """ir_measures spelling: `nDCG@10`, `RR`, `RBP(p=0.8)`, `IPrec@0.1`."""
        at = self.entry.at
        if at is not None and len(self.params) == 1 and self.params[0][0] == at:
            return f"{self.family}@{_number(self.params[0][1])}"
        given = f"({','.join(f'{k}={_param_text(v)}' for k, v in self.params)})" if self.params else ""
        return self.family + given + ("" if self.cutoff is None else f"@{self.cutoff}")

    @property
    def trec_name(self) -> str:
        """The name trec_eval prints (the canonical one where trec_eval has no such measure)."""
        return self.entry.trec_name(self)

    @property
    def summed(self) -> bool:
        """Counts are added over queries in the 'all' row, as trec_eval does; the rest are means."""
        return self.entry.aggregate is total

    @property
    def geometric(self) -> bool:
        """gm_map and gm_bpref: the 'all' row is a geometric mean."""
        return self.entry.aggregate is geometric

    @property
    def kind(self) -> Kind:
        return self.entry.kind

    @property
    def bounds(self) -> tuple[float, float] | None:
        """The range of the 'all' value: [0, 1] for shares, [0, inf) for counts; None where unknown (gains set, utility)."""
        if self.entry.share and self.param("gains") is None:
            return (0.0, 1.0)
        return (0.0, float("inf")) if self.summed else None

    def param(self, key: str, default: Any = None) -> Any:
        """The value of parameter `key`, or `default` where the measure was named without it."""
        return dict(self.params).get(key, default)

    def required(self, key: str, what: str) -> float:
        """The number parameter `key` holds; a measure named without it is refused, saying `what` it needs."""
        value = self.param(key)
        if value is None:
            raise UsageError(f"{self.family} needs {what}")
        return float(value)

    def __str__(self) -> str:
        return self.name


def _number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _param_text(value: Any) -> str:
    if isinstance(value, tuple) and value and all(isinstance(v, tuple) and len(v) == 2 for v in value):
        return "{" + ",".join(f"{_number(k)}:{_number(v)}" for k, v in value) + "}"  # gains
    if isinstance(value, tuple):
        return "(" + ",".join(_number(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    return repr(value) if isinstance(value, str) else _number(value)


UNLISTED = np.iinfo(np.int64).min  # the grade `Ranked.with_unlisted` gives a document the qrels do not list


@dataclass(frozen=True)
class Ranked:
    """One run's judged rows on the qrels' queries, grouped by query and in rank order, with how many
    documents each query returned (-M and -J already applied).

    Only the documents in the qrels are rows: the rest of a ranking is known by its length
    (`retrieved`) and the ranks the judged rows keep, so a run of ten million rows with a tenth of them
    judged is scored on a million."""

    query: np.ndarray  # index into the qrels' (sorted) query list
    rank: np.ndarray  # 0-based rank within the query's whole ranking
    grade: np.ndarray  # the qrels grade (negative: in the pool, unjudged)
    relevant: np.ndarray  # grade >= the relevance level
    retrieved: np.ndarray  # per qrels query: documents returned, judged or not (0 where the run lacks it)

    @property
    def gain(self) -> np.ndarray:
        """The grade as a float gain, 0 for negative grades."""
        return np.maximum(self.grade, 0).astype(np.float64)

    @property
    def assessed(self) -> np.ndarray:
        """Rows with a grade of 0 or more: what trec_eval calls judged."""
        return self.grade >= 0

    def returned(self, cutoff: int | None = None) -> np.ndarray:
        """Per query: documents returned in the top `cutoff` (all where None), as float."""
        counts = self.retrieved.astype(np.float64)
        return counts if cutoff is None else np.minimum(counts, float(cutoff))

    @property
    def trec_value(self) -> np.ndarray:
        """Each row's relevance value as trec_eval's gain tables look it up: the grade, RELVALUE_UNJUDGED (-2) for a
        negative one, RELVALUE_NONPOOL (-1) for a document not in the qrels (a row only `with_unlisted` makes)."""
        return np.where(self.grade == UNLISTED, -1, np.where(self.grade < 0, -2, self.grade))

    def with_unlisted(self) -> "Ranked":
        """Every rank of every ranking a row, those of documents not in the qrels graded UNLISTED: for a gain table
        that gives them a gain (`ndcg.-1=G`), which trec_eval adds at their ranks."""
        counts = self.retrieved.astype(np.int64)
        query = np.repeat(np.arange(len(counts)), counts)
        offsets = np.cumsum(counts) - counts
        rank = np.arange(len(query)) - offsets[query]
        grade = np.full(len(query), UNLISTED, dtype=np.int64)
        relevant = np.zeros(len(query), dtype=bool)
        at = offsets[self.query] + self.rank
        grade[at], relevant[at] = self.grade, self.relevant
        return Ranked(query=query, rank=rank, grade=grade, relevant=relevant, retrieved=self.retrieved)


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
    num_docs: int = 0  # documents in the collection (trec_eval -N), for utility
    run_tag: str = ""  # the run's tag (trec_eval's runid)

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

    def judged_nonrelevant(self) -> np.ndarray:
        """Judged non-relevant documents per query (0 <= grade < level), retrieved or not."""
        grades = self.qrels.relevance
        keep = (grades >= 0) & (grades < self.level)
        return np.bincount(self.qrels.query[keep], minlength=self.n).astype(np.float64)


def sums(query: np.ndarray, weights: np.ndarray, n: int) -> np.ndarray:
    """Per query (0..n-1): the sum of the weights of its rows, as float64 (also with no rows)."""
    return np.bincount(query, weights=weights, minlength=n).astype(np.float64)


def mean(values: np.ndarray) -> float:
    """The 'all' row of most measures: the mean over the queries, summed one query after another as trec_eval sums them
    (numpy's pairwise sum of 8 or more differs in the last bit: a mean halfway between two printed decimals rounded the
    other way, P_20 0.5437 for trec_eval's 0.5438)."""
    return float(_added(values) / len(values)) if len(values) else 0.0


def _added(values: np.ndarray) -> float:
    """The values summed in order, left to right (np.add.accumulate; sum() and np.sum pair or compensate)."""
    return float(np.add.accumulate(values, dtype=np.float64)[-1])


def total(values: np.ndarray) -> float:
    """The 'all' row of counts (NumRel, NumRet, NumRelRet): the sum, as trec_eval prints it."""
    return float(values.sum())


MIN_GEO_MEAN = 0.00001


def geometric(values: np.ndarray) -> float:
    """gm_map, gm_bpref: exp of the mean log, each value floored at 0.00001 (as trec_eval)."""
    return float(math.exp(_added(np.log(np.maximum(values, MIN_GEO_MEAN))) / len(values))) if len(values) else 0.0


def paired_values(m: "Measure", values: np.ndarray) -> np.ndarray:
    """Per-query values on the scale whose mean the 'all' row is an increasing function of, so that a
    paired test of them tests that row: log(max(v, 0.00001)) for a geometric mean (gm_map's row is
    exp of their mean); the values themselves for means and sums (a sum is the mean times the queries)."""
    return np.log(np.maximum(values, MIN_GEO_MEAN)) if m.geometric else values


def aggregate_change(m: "Measure", base: float, queries: int, difference: float) -> float:
    """The change in the 'all' row from `base` that a mean per-query difference of paired_values makes:
    the difference for a mean, times the queries for a sum, base * (e^difference - 1) for a geometric
    mean. It rises with the difference, so an interval's ends map to the interval of the change."""
    if m.geometric:
        return base * math.expm1(difference)
    return difference * queries if m.summed else difference


def first(values: np.ndarray) -> Any:
    """runid: the one value every query shares."""
    return values[0] if len(values) else ""


def nothing(values: np.ndarray) -> None:
    """relstring: per query only."""
    return None


Compute = Callable[[Measure, Ranked, Context], np.ndarray]
TrecParams = str | None  # how trec_eval's `name.PARAMS` text is read: see _trec_form


@dataclass(frozen=True)
class Family:
    """One registry entry: everything semrel knows about a measure family."""

    name: str  # canonical (ir_measures) name
    compute: Compute
    cutoff: Cutoff
    trec: str | None = None  # trec_eval's name without a cutoff; None: trec_eval lacks the family
    trec_cut: str | None = None  # trec_eval's stem with a cutoff (`ndcg_cut` -> ndcg_cut_10); None: none
    aliases: tuple[str, ...] = ()  # other accepted spellings (matched without regard to case)
    aggregate: Callable[[np.ndarray], Any] = mean  # the 'all' row from the per-query values
    params: tuple[str, ...] = ()  # parameters besides the cutoff it accepts, as `Name(key=value)`
    doc: str = field(default="", compare=False)
    kind: Kind = Kind.REAL
    trec_params: TrecParams = None  # cutoffs | fractions | fraction_set | coefficients | gains | number
    trec_defaults: tuple = ()  # what the trec_eval name alone stands for (P: P_5 ... P_1000)
    at: str | None = None  # the parameter `Name@value` sets (IPrec@0.1: recall) instead of a cutoff
    per_query_line: bool = True  # trec_eval prints a line per query (gm_map, num_q, runid: only 'all')
    summary_line: bool = True  # trec_eval prints it in the 'all' rows (relstring: per query only)
    trec_label: Callable[[Measure], str | None] | None = field(default=None, compare=False)
    per_group: bool = False  # averaged over the judgment groups of trec_eval's qrels_jg (map_avgjg)
    prefs: bool = False  # scored on preference judgments (trec_eval -R prefs, qrels_prefs: evaluation/prefs.py)
    share: bool = False  # each query's value is a share, in [0, 1] (with its default gains)

    @property
    def spellings(self) -> set[str]:
        """Every lower-cased name the parser maps to this family."""
        return {s.lower() for s in (self.name, self.trec, self.trec_cut, *self.aliases) if s}

    def trec_label_of(self, m: Measure) -> str | None:
        """trec_eval's name of the measure, None where trec_eval has no such measure (RR@10, Judged@5)."""
        if self.trec is None:
            return None
        if self.trec_label is not None:
            return self.trec_label(m)
        if m.params:
            return None
        if m.cutoff is None:
            return self.trec
        return f"{self.trec_cut}_{m.cutoff}" if self.trec_cut else None

    def trec_name(self, m: Measure) -> str:
        return self.trec_label_of(m) or m.name

    def trec_stem(self, m: Measure) -> str | None:
        """trec_eval's measure name without parameters (its place in trec_eval's output order)."""
        if self.trec is None:
            return None
        if self.name == "SetP" and m.param("relative"):
            return "set_relative_P"
        return self.trec_cut if (m.cutoff is not None and self.trec_cut) else self.trec


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
           aliases: tuple[str, ...] = (), aggregate: Callable[[np.ndarray], Any] = mean,
           params: tuple[str, ...] = (), **more: Any) -> Callable[[Compute], Compute]:
    """Decorator: register the function as the computation of family `name` (see Family for `more`)."""

    def decorate(compute: Compute) -> Compute:
        register(Family(name, compute, cutoff, trec, trec_cut, tuple(aliases), aggregate, tuple(params),
                        (compute.__doc__ or "").strip(), **more))
        return compute

    return decorate


# ---- helpers over the ranked rows ---------------------------------------------------------------------


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


def _segments(groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(start, length) of each run of equal, contiguous group values."""
    if not len(groups):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
    return starts, np.diff(np.r_[starts, len(groups)])


def running_count(groups: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per row: how many rows of its group, up to and including it, `mask` keeps."""
    counts = np.cumsum(mask, dtype=np.int64)
    starts, lengths = _segments(groups)
    before = np.where(starts > 0, counts[starts - 1], 0) if len(starts) else counts[:0]
    return counts - np.repeat(before, lengths)


def running_sum(groups: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per row: the sum of its group's values up to and including it (summed in extended precision,
    so a group's sums do not carry the rounding of the groups before it)."""
    sums = np.cumsum(values, dtype=np.longdouble)
    starts, lengths = _segments(groups)
    before = np.where(starts > 0, sums[starts - 1], 0) if len(starts) else sums[:0]
    return (sums - np.repeat(before, lengths)).astype(np.float64)


def suffix_max(groups: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per row: the largest value of its group from it to the group's end (exact: compared as ranks)."""
    if not len(values):
        return values.astype(np.float64)
    distinct, code = np.unique(values, return_inverse=True)
    starts, lengths = _segments(groups)
    segment = np.repeat(np.arange(len(starts), dtype=np.int64), lengths)
    key = (len(starts) - 1 - segment) * (len(distinct) + 1) + code  # later segments first once reversed
    best = np.maximum.accumulate(key[::-1])[::-1]
    return distinct[best % (len(distinct) + 1)]


PRODUCT_CELLS = 1 << 20  # product_before's table of one batch of groups, at most (8 MiB)


def product_before(groups: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per row: the product of the values of its group's rows before it (1 for a group's first row), multiplied
    left to right as a loop over the ranking multiplies them; the groups are laid out as the rows of a table,
    a batch of them at a time."""
    found = np.ones(len(values))
    if not len(values):
        return found
    starts, lengths = _segments(groups)
    position = ranks_within(groups)
    width = int(lengths.max())
    batch = max(1, PRODUCT_CELLS // width)
    for first in range(0, len(starts), batch):
        begin, count = starts[first:first + batch], lengths[first:first + batch]
        rows = np.arange(begin[0], begin[-1] + count[-1])
        table = np.ones((len(begin), width + 1))
        segment = np.repeat(np.arange(len(begin)), count)
        table[segment, position[rows] + 1] = values[rows]  # one column on: the product up to the row before
        found[rows] = np.cumprod(table, axis=1)[segment, position[rows]]
    return found


def lround(values: np.ndarray) -> np.ndarray:
    """C's lround for non-negative values: halves away from zero."""
    low = np.floor(values)
    return (low + (values - low >= 0.5)).astype(np.int64)


def last_row_above(ctx: Context, r: Ranked, query: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """Per (query, rank) asked: the last of the query's rows ranked above `rank`, -1 where none is."""
    starts, lengths = _segments(r.query)
    segment = np.full(ctx.n, -1, dtype=np.int64)
    segment[r.query[starts]] = np.arange(len(starts))
    width = int(r.rank.max()) + 2 if len(r.rank) else 1  # rows sort by (segment, rank) as segment x width + rank
    keys = np.repeat(np.arange(len(starts), dtype=np.int64), lengths) * width + r.rank
    seg = segment[query]
    found = np.searchsorted(keys, np.maximum(seg, 0) * width + np.minimum(rank, width - 1)) - 1
    inside = (seg >= 0) & (found >= 0)
    inside[inside] &= found[inside] >= starts[seg[inside]]
    return np.where(inside, found, -1)


def query_starts(ctx: Context, query: np.ndarray) -> np.ndarray:
    """Index of each query's first row among rows grouped by query (any order of groups); -1 where none."""
    at = np.full(ctx.n, -1, dtype=np.int64)
    starts, _ = _segments(query)
    at[query[starts]] = starts
    return at


def exponential(m: Measure) -> bool:
    """ir_measures' dcg='exp-log2' (ranx's ndcg_burges): a grade g gains 2^g - 1, which weighs the top grades more."""
    return m.param("dcg") == "exp-log2"


def _exp_gains(gains: np.ndarray) -> np.ndarray:
    return np.where(gains > 0, np.exp2(gains) - 1.0, gains)


def gain_table(m: Measure) -> dict[int, float]:
    """The gains a measure was given per grade (`ndcg.1=3,2=9`); other grades gain their own value."""
    return {int(level): float(gain) for level, gain in (m.param("gains") or ())}


def gained(m: Measure, r: Ranked) -> tuple[Ranked, np.ndarray, np.ndarray]:
    """The rows to score and each one's gain: the grade for judged rows, else 0, or the gain the measure's table gives
    its trec_eval relevance value (a key of -2 reaches negative grades, -1 documents not in the qrels, whose ranks
    then become rows); and which rows the table gave a gain (RBP scales those)."""
    table = gain_table(m)
    r = r.with_unlisted() if table.get(-1, 0.0) != 0.0 else r
    gains = np.where(r.assessed, r.grade, 0).astype(np.float64)
    given = r.assessed.copy()
    value = r.trec_value
    for level, gain in table.items():
        at = value == level
        gains[at] = gain
        given |= at
    return r, gains, given


@dataclass(frozen=True)
class Ideal:
    """Each query's ideal ranking: the judged documents with a positive gain, best first."""

    query: np.ndarray
    position: np.ndarray  # 0-based within the query
    gain: np.ndarray
    start: np.ndarray  # per query: index of its first entry, -1 where it has none
    length: np.ndarray  # per query: entries (documents with a positive gain)

    def dcg(self, ctx: Context, cutoff: np.ndarray | int | None = None) -> np.ndarray:
        """Per query: DCG of the ideal ranking over its first `cutoff` positions (all where None)."""
        keep = np.ones(len(self.gain), dtype=bool) if cutoff is None else self.position < (
            cutoff if np.isscalar(cutoff) else np.asarray(cutoff)[self.query])
        return sums(self.query[keep], weights=self.gain[keep] / np.log2(self.position[keep] + 2.0), n=ctx.n)

    def running_dcg(self) -> np.ndarray:
        """Per entry: the ideal DCG through it."""
        return running_sum(self.query, self.gain / np.log2(self.position + 2.0))


def ideal(m: Measure, ctx: Context) -> Ideal:
    """Each query's judged documents by gain, highest first (trec_eval's ideal ranking for nDCG and its kin): the
    gains are the measure's own table where it has one, negative grades count as 0."""
    grades = ctx.qrels.relevance
    gains = np.where(grades >= 0, grades, 0).astype(np.float64)
    for level, gain in gain_table(m).items():
        gains[(grades >= 0) & (grades == level)] = gain
    gains = _exp_gains(gains) if exponential(m) else gains
    keep = np.flatnonzero(gains > 0)
    order = keep[np.lexsort((-gains[keep], ctx.qrels.query[keep]))]
    query = ctx.qrels.query[order]
    return Ideal(query, ranks_within(query), gains[order], query_starts(ctx, query), np.bincount(query, minlength=ctx.n))


# ---- the families, in trec_eval's output order --------------------------------------------------------

DEFAULT_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
RECALL_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
R_MULTIPLES = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)


@family("runid", Cutoff.NONE, trec="runid", aggregate=first, kind=Kind.TEXT, per_query_line=False)
def runid(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """The run's tag (the sixth field of its last line, as trec_eval keeps it)."""
    return np.full(ctx.n, ctx.run_tag, dtype=object)


@family("NumQ", Cutoff.NONE, trec="num_q", aggregate=total, kind=Kind.COUNT, per_query_line=False)
def num_q(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Queries scored (1 per query; the 'all' row counts them)."""
    return np.ones(ctx.n)


@family("NumRet", Cutoff.NONE, trec="num_ret", aggregate=total, kind=Kind.COUNT)
def num_ret(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Documents returned (summed in the 'all' row)."""
    return r.returned(m.cutoff)


@family("NumRel", Cutoff.NONE, trec="num_rel", aggregate=total, kind=Kind.COUNT)
def num_rel(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Relevant documents in the qrels (summed in the 'all' row)."""
    return ctx.num_rel.copy()


@family("NumRelRet", Cutoff.NONE, trec="num_rel_ret", aggregate=total, kind=Kind.COUNT)
def num_rel_ret(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Relevant documents returned (summed in the 'all' row)."""
    return ctx.count(r, top(m, r) & r.relevant)


@family("AP", Cutoff.OPTIONAL, share=True, trec="map", trec_cut="map_cut", trec_params="cutoffs", trec_defaults=DEFAULT_CUTOFFS)
def average_precision(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Precision at each relevant document retrieved (in the top k), summed, over all relevant documents."""
    return ctx.per_relevant(_precision_sum(m, r, ctx))


def _precision_sum(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Per query: the precision at each relevant document retrieved (in the top k), summed (AP x R)."""
    hits = top(m, r) & r.relevant
    nth = ranks_within(r.query[hits]) + 1.0  # each hit's number among its query's hits
    return sums(r.query[hits], weights=nth / (r.rank[hits] + 1.0), n=ctx.n)


@family("yaap", Cutoff.NONE, trec="yaap")
def yaap(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Robertson's 'yet another' AP, log((1 + S) / (1 + R - S)) with S = AP x R: monotonic with AP on a
    query, but not bounded to [0, 1], so a mean over queries is less ruled by the few near 0 or 1."""
    found = _precision_sum(m, r, ctx)
    return np.log((1.0 + found) / (1.0 + ctx.num_rel - found))


@family("gm_map", Cutoff.NONE, trec="gm_map", aliases=("GMAP",), aggregate=geometric, per_query_line=False)
def gm_map(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """AP per query; the 'all' row is the geometric mean (each AP floored at 0.00001)."""
    return average_precision(Measure("AP"), r, ctx)


@family("Rprec", Cutoff.NONE, share=True, trec="Rprec", aliases=("r-prec", "r-precision"))
def r_precision(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Precision at R, the query's number of relevant documents."""
    return ctx.per_relevant(ctx.count(r, r.relevant & (r.rank < ctx.num_rel[r.query])))


@family("Bpref", Cutoff.NONE, share=True, trec="bpref")
def bpref(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Per relevant document retrieved, 1 - (judged non-relevant above it, at most R) / min(judged
    non-relevant, R); summed over R. Unjudged documents are skipped."""
    nonrelevant = r.assessed & ~r.relevant
    above = running_count(r.query, nonrelevant)[r.relevant].astype(np.float64)
    q = r.query[r.relevant]
    R, N = ctx.num_rel[q], ctx.judged_nonrelevant()[q]
    share = np.divide(np.minimum(above, R), np.minimum(N, R), out=np.zeros(len(q)), where=above > 0)
    return ctx.per_relevant(sums(q, weights=1.0 - share, n=ctx.n))


@family("RR", Cutoff.OPTIONAL, share=True, trec="recip_rank", aliases=("mrr",))
def reciprocal_rank(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """1 / rank of the first relevant document (in the top k), 0 when there is none."""
    hits = top(m, r) & r.relevant
    found = np.zeros(ctx.n)
    q, at = np.unique(r.query[hits], return_index=True)
    found[q] = 1.0 / (r.rank[hits][at] + 1.0)
    return found


TREC_EVAL_9_ROUNDING = False  # trec_eval 9 (and pytrec_eval, built on it) rounded recall points up from .1: tests switch it on


def recall_depth(point: float, num_rel: np.ndarray) -> np.ndarray:
    """How many relevant documents reach a recall point: point x R rounded half up (trec_eval 10's
    lround; trec_eval 9 added 0.9 and truncated, which makes IPrec@0.25 at R=5 need 2, not 1)."""
    if TREC_EVAL_9_ROUNDING:
        return (point * num_rel + 0.9).astype(np.int64)
    return lround(point * num_rel)


def interpolated_precision(r: Ranked, ctx: Context, recalls: Sequence[float]) -> list[np.ndarray]:
    """Per recall point: the highest precision at or after the rank where recall reaches it (the
    point times R, rounded half up, relevant documents); 0 where the run never reaches it."""
    hits = np.flatnonzero(r.relevant)
    q = r.query[hits]
    nth = ranks_within(q) + 1
    best = suffix_max(q, nth / (r.rank[hits] + 1.0))
    start = query_starts(ctx, q)
    found = np.bincount(q, minlength=ctx.n)
    values = []
    for point in recalls:
        need = recall_depth(point, ctx.num_rel)
        reached = (found > 0) & (need <= found)
        value = np.zeros(ctx.n)
        value[reached] = best[start[reached] + np.maximum(need[reached], 1) - 1]
        values.append(value)
    return values


def _fraction_label(stem: str, key: str) -> Callable[[Measure], str | None]:
    return lambda m: f"{stem}_{m.param(key):3.2f}" if m.params and m.params[0][0] == key and len(m.params) == 1 else None


@family("IPrec", Cutoff.NONE, share=True, trec="iprec_at_recall", params=("recall",), at="recall", trec_params="fractions",
        trec_defaults=RECALL_POINTS, trec_label=_fraction_label("iprec_at_recall", "recall"))
def iprec(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Interpolated precision at a recall point (IPrec@0.1): the best precision once recall reaches it."""
    return interpolated_precision(r, ctx, [m.required("recall", "a recall point, e.g. IPrec@0.1 (iprec_at_recall.0.1)")])[0]


@family("P", Cutoff.REQUIRED, share=True, trec="P", trec_cut="P", aliases=("precision",), trec_params="cutoffs",
        trec_defaults=DEFAULT_CUTOFFS)
def precision(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Relevant documents in the top k, divided by k (even when fewer were returned)."""
    return ctx.count(r, top(m, r) & r.relevant) / m.cutoff


def _relstring_label(m: Measure) -> str:
    return "relstring" if m.cutoff is None else f"relstring_{m.cutoff}"


@family("relstring", Cutoff.OPTIONAL, trec="relstring", aggregate=nothing, kind=Kind.TEXT, summary_line=False,
        trec_params="cutoffs", trec_label=_relstring_label)
def relstring(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """The grades of the top k (default 10) documents as text: 0-9, '>' above 9, '-' not in the
    qrels, '.' judged with a negative grade (in the pool, unjudged)."""
    shown = r.returned(m.cutoff or 10).astype(np.int64)
    width = int(shown.max(initial=0))  # no wider than the longest text: relstring@100000000000 ran out of memory
    within = r.rank < width
    grades = r.grade[within]
    grid = np.full((ctx.n, width), "-", dtype="<U1")
    grid[r.query[within], r.rank[within]] = np.where(grades < 0, ".", np.where(grades > 9, ">", np.clip(grades, 0, 9).astype(str)))
    return np.array(["".join(row[:k]) for row, k in zip(grid.tolist(), shown.tolist())], dtype=object)


@family("R", Cutoff.REQUIRED, share=True, trec="recall", trec_cut="recall", trec_params="cutoffs", trec_defaults=DEFAULT_CUTOFFS)
def recall(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Relevant documents in the top k, divided by all relevant documents of the query."""
    return ctx.per_relevant(ctx.count(r, top(m, r) & r.relevant))


INFAP_EPSILON = 0.00001


@family("infAP", Cutoff.NONE, share=True, trec="infAP")
def inferred_ap(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Inferred AP (Yilmaz and Aslam): precision above each relevant document estimated from the judged
    documents above it; documents in the pool but unjudged (negative grades) count as sampled out."""
    judged_nonrel = r.assessed & ~r.relevant
    pooled_unjudged = r.grade < 0
    rel_above = (running_count(r.query, r.relevant) - 1)[r.relevant].astype(np.float64)
    nonrel_above = running_count(r.query, judged_nonrel)[r.relevant].astype(np.float64)
    unjudged_above = running_count(r.query, pooled_unjudged)[r.relevant].astype(np.float64)
    j = r.rank[r.relevant].astype(np.float64)
    safe = np.maximum(j, 1.0)
    estimate = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((rel_above + nonrel_above + unjudged_above) / safe) * (
        (rel_above + INFAP_EPSILON) / (rel_above + nonrel_above + 2 * INFAP_EPSILON))
    estimate = np.where(j == 0, 1.0, estimate)
    return ctx.per_relevant(sums(r.query[r.relevant], weights=estimate, n=ctx.n))


@family("gm_bpref", Cutoff.NONE, trec="gm_bpref", aggregate=geometric, per_query_line=False)
def gm_bpref(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Bpref per query; the 'all' row is the geometric mean (each floored at 0.00001)."""
    return bpref(Measure("Bpref"), r, ctx)


@family("Rprec_mult", Cutoff.NONE, trec="Rprec_mult", params=("mult",), at="mult", trec_params="fractions",
        trec_defaults=R_MULTIPLES, trec_label=_fraction_label("Rprec_mult", "mult"))
def rprec_mult(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Precision at a multiple of R (Rprec_mult@0.2): at floor(mult x R + 0.9) documents, as trec_eval."""
    depth = np.floor(m.required("mult", "a multiple of R, e.g. Rprec_mult@0.2") * ctx.num_rel + 0.9)
    hits = ctx.count(r, r.relevant & (r.rank < depth[r.query]))
    return np.divide(hits, depth, out=np.zeros(ctx.n), where=depth > 0)


def _joined_text(stem: str, key: str) -> Callable[[Measure], str | None]:
    """trec_eval's name of a measure given parameters: the stem and the parameter text as typed."""

    def label(m: Measure) -> str | None:
        if not m.params:
            return stem
        if m.cutoff is not None or len(m.params) != 1 or m.params[0][0] != key:
            return None
        if m.trec_text:
            return f"{stem}_{m.trec_text}"
        value = m.params[0][1]
        return f"{stem}_" + (",".join(f"{_number(k)}={_number(v)}" for k, v in value) if key == "gains"
                             else ",".join(_number(v) for v in value))

    return label


UTILITY = (1.0, -1.0, 0.0, 0.0)


@family("utility", Cutoff.NONE, trec="utility", params=("coefficients",), trec_params="coefficients",
        trec_label=_joined_text("utility", "coefficients"))
def utility(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """a x relevant retrieved + b x non-relevant retrieved + c x relevant missed + d x non-relevant
    missed (coefficients a,b,c,d; default 1,-1,0,0; d needs -N, the collection's size)."""
    a, b, c, d = (float(v) for v in (m.param("coefficients") or UTILITY))
    ret, rel_ret = r.returned(), ctx.count(r, r.relevant)
    return a * rel_ret + b * (ret - rel_ret) + c * (ctx.num_rel - rel_ret) + d * (ctx.num_docs + rel_ret - ret - ctx.num_rel)


@family("11pt_avg", Cutoff.NONE, share=True, trec="11pt_avg", aliases=("11-pt_avg",), params=("recalls",), trec_params="fraction_set",
        trec_label=_joined_text("11pt_avg", "recalls"))
def eleven_point(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Interpolated precision averaged over recall points (default 0, 0.1, ..., 1)."""
    points = tuple(float(p) for p in (m.param("recalls") or RECALL_POINTS))
    values = interpolated_precision(r, ctx, points)
    return np.sum(values[::-1], axis=0) / len(points) if points else np.zeros(ctx.n)


@family("binG", Cutoff.NONE, trec="binG")
def binary_g(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Binary G: per relevant document 1 / log2(2 + non-relevant documents above it), summed over R."""
    nonrelevant_above = (r.rank - (running_count(r.query, r.relevant) - 1))[r.relevant]
    weights = 1.0 / np.log2(2.0 + nonrelevant_above)
    return ctx.per_relevant(sums(r.query[r.relevant], weights=weights, n=ctx.n))


@family("G", Cutoff.NONE, trec="G", params=("gains",), trec_params="gains", trec_label=_joined_text("G", "gains"))
def normalised_gain(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """G (trec_eval's experimental gain measure): each document's gain / log2(2 + the ideal's cost so far
    (ideal gains, at least 1 a rank) - the run's gain so far), summed, over the ideal's total gain."""
    best = ideal(m, ctx)
    r, gains, _ = gained(m, r)
    # the ideal's cost through rank k: one a rank, plus what ideal gains above 1 add through min(k, its end)
    cost = r.rank + 1.0 + _ideal_through(best, running_sum(best.query, np.maximum(best.gain, 1.0) - 1.0), r.query, r.rank)
    with np.errstate(divide="ignore", invalid="ignore"):  # gains the ideal does not hold (-1=, -2=) can outrun its cost: as C's log2
        weight = np.divide(gains, np.log2(2.0 + cost - running_sum(r.query, gains)), out=np.zeros(len(gains)), where=gains != 0)
    whole = sums(best.query, weights=best.gain, n=ctx.n)
    return np.divide(sums(r.query, weights=weight, n=ctx.n), whole, out=np.zeros(ctx.n), where=whole > 0)


@family("nDCG", Cutoff.OPTIONAL, share=True, trec="ndcg", trec_cut="ndcg_cut", params=("gains", "dcg"), trec_params="gains",
        trec_defaults=DEFAULT_CUTOFFS, trec_label=lambda m: _ndcg_label(m), aliases=("ndcg_burges",))
def ndcg(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """DCG with the graded rel as a linear gain (or the gains given per grade) over the ideal DCG
    (cut at k too); ignores the level."""
    dcg, best = _dcg(m, r, ctx), _ideal_dcg(m, ctx)
    return np.divide(dcg, best, out=np.zeros(ctx.n), where=best > 0)


def _dcg(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Per query: the ranking's DCG (cut at k), gains as the grades, those given, or 2^grade - 1 (dcg='exp-log2')."""
    if m.param("gains") is None:
        gains = _exp_gains(r.gain) if exponential(m) else r.gain
    else:
        r, gains, _ = gained(m, r)
    keep = np.flatnonzero(top(m, r) & (gains != 0))  # the discount is computed for these rows only
    return sums(r.query[keep], gains[keep] / np.log2(r.rank[keep] + 2.0), ctx.n)


def _ideal_dcg(m: Measure, ctx: Context) -> np.ndarray:
    """Per query: the DCG of the ideal ranking of its positive gains (cut at k)."""
    return ctx.qrels.ideal_dcg(m.cutoff) if m.param("gains") is None and not exponential(m) else ideal(m, ctx).dcg(ctx, m.cutoff)


@family("DCG", Cutoff.OPTIONAL, trec="dcg", params=("gains", "dcg"), trec_params="gains", trec_label=lambda m: _dcg_label("dcg", m),
        aliases=("dcg_burges",))
def dcg(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """nDCG's numerator: gain / log2(rank + 1) summed over the ranking (its top k), not normalised."""
    return _dcg(m, r, ctx)


@family("ideal_dcg", Cutoff.OPTIONAL, trec="ideal_dcg", params=("gains", "dcg"), trec_params="gains",
        trec_label=lambda m: _dcg_label("ideal_dcg", m))
def ideal_dcg(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """nDCG's denominator: the DCG of the query's judged documents in the best order (its top k)."""
    return _ideal_dcg(m, ctx)


def _dcg_label(stem: str, m: Measure) -> str | None:
    """trec_eval's dcg and ideal_dcg take gains but no cutoff (nor exponential gains)."""
    return None if m.cutoff is not None or exponential(m) else _joined_text(stem, "gains")(m)


def _ndcg_label(m: Measure) -> str | None:
    if m.param("gains") is None:
        return None if m.params else ("ndcg" if m.cutoff is None else f"ndcg_cut_{m.cutoff}")
    return _joined_text("ndcg", "gains")(m)


@family("ndcg_rel", Cutoff.NONE, trec="ndcg_rel", params=("gains",), trec_params="gains",
        trec_label=_joined_text("ndcg_rel", "gains"))
def ndcg_rel(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """nDCG averaged over the documents with a positive gain: at each one retrieved, and at the end of
    the ranking for each one missed (trec_eval's experimental ndcg_rel)."""
    best = ideal(m, ctx)
    r, gains, _ = gained(m, r)
    dcg = running_sum(r.query, np.where(gains != 0, gains / np.log2(r.rank + 2.0), 0.0))
    ideal_at = _ideal_through(best, best.running_dcg(), r.query, r.rank)
    positive = gains > 0
    points = sums(r.query[positive], weights=dcg[positive] / ideal_at[positive], n=ctx.n)
    final = _last_per_query(ctx, r.query, dcg)
    whole = best.dcg(ctx)
    missed = best.length - np.bincount(r.query[positive], minlength=ctx.n)
    with np.errstate(invalid="ignore", divide="ignore"):
        total_points = points + missed * np.divide(final, whole, out=np.zeros(ctx.n), where=whole > 0)
    return np.divide(total_points, best.length, out=np.zeros(ctx.n), where=(total_points > 0) & (best.length > 0))


def _ideal_through(best: Ideal, running: np.ndarray, query: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """A running sum over the ideal's entries (`running`) through position `rank` of each row's query
    (through its end past the end; 0 where the ideal is empty)."""
    last = np.minimum(rank, best.length[query] - 1)
    found = np.zeros(len(query))
    inside = last >= 0
    found[inside] = running[best.start[query[inside]] + last[inside]]
    return found


def _last_per_query(ctx: Context, query: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Each query's value at its last row (0 where it has none)."""
    found = np.zeros(ctx.n)
    if len(query):
        starts, lengths = _segments(query)
        found[query[starts]] = values[starts + lengths - 1]
    return found


@family("Rndcg", Cutoff.NONE, trec="Rndcg", params=("gains",), trec_params="gains", trec_label=_joined_text("Rndcg", "gains"))
def r_ndcg(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """nDCG averaged over the points where the ideal ranking's gain changes (the R levels of each
    grade), plus the end of a ranking that outlasts the ideal (trec_eval's experimental Rndcg)."""
    best = ideal(m, ctx)
    r, gains, _ = gained(m, r)
    dcg = running_sum(r.query, np.where(gains != 0, gains / np.log2(r.rank + 2.0), 0.0))
    retrieved = r.retrieved
    # change points t (1 <= t <= length): the ideal gain at t differs from the one at t - 1 (0 past the end)
    after = np.r_[best.gain[1:], 0.0]
    last = np.r_[best.query[1:] != best.query[:-1], True] if len(best.query) else np.zeros(0, dtype=bool)
    changes = np.flatnonzero(last | (after != best.gain))
    q, t = best.query[changes], best.position[changes] + 1  # a change before position t
    through = np.minimum(t, retrieved[q])  # the run's DCG over its first t documents
    row = last_row_above(ctx, r, q, through)
    run_dcg = np.zeros(len(q))
    run_dcg[row >= 0] = dcg[row[row >= 0]]
    points = run_dcg / best.running_dcg()[changes]
    total_points = sums(q, weights=points, n=ctx.n)
    count = np.bincount(q, minlength=ctx.n).astype(np.float64)
    longer = retrieved > best.length + 1  # the ranking goes on past the ideal: its end is one more point
    whole = best.dcg(ctx)
    end = _last_per_query(ctx, r.query, dcg)
    total_points += np.where(longer & (whole > 0), np.divide(end, whole, out=np.zeros(ctx.n), where=whole > 0), 0.0)
    count += longer & (whole > 0)
    value = np.divide(total_points, count, out=np.zeros(ctx.n), where=count > 0)
    return np.where(ctx.num_rel > 0, value, 0.0)


ERR_TOP_GRADE = 4  # the TREC Web track's scale, which gdeval (and ir_measures through it) divides by


@family("ERR", Cutoff.REQUIRED, share=True)
def expected_reciprocal_rank(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Expected reciprocal rank (Chapelle et al. 2009) as the TREC Web track's gdeval scores it (and ir_measures): a
    reader stops at a document with chance (2^grade - 1) / 2^4, so the sum over the top k of that chance, times the
    chance of reaching it, over its rank. Grades 0 to 4; negative ones count as 0."""
    top_grade = int(ctx.qrels.relevance.max(initial=0))
    if top_grade > ERR_TOP_GRADE:
        raise UsageError(f"{m.name} takes grades 0 to {ERR_TOP_GRADE} (the TREC Web track's scale, as gdeval and ir_measures "
                         f"score it); the qrels hold grade {top_grade}: map the grades onto 0 to {ERR_TOP_GRADE} first")
    keep = top(m, r) & (r.grade > 0)  # the other documents are passed with certainty and add nothing
    q = r.query[keep]
    stop = (np.exp2(r.grade[keep].astype(np.float64)) - 1.0) / 2.0 ** ERR_TOP_GRADE
    return sums(q, weights=stop * product_before(q, 1.0 - stop) / (r.rank[keep] + 1.0), n=ctx.n)


@family("Success", Cutoff.REQUIRED, share=True, trec="success", trec_cut="success", aliases=("hit_rate", "hitrate", "hit"),
        trec_params="cutoffs", trec_defaults=(1, 5, 10))
def success(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """1 when a relevant document is in the top k, else 0."""
    return (ctx.count(r, top(m, r) & r.relevant) > 0).astype(np.float64)


@family("relative_P", Cutoff.REQUIRED, trec="relative_P", trec_cut="relative_P", trec_params="cutoffs",
        trec_defaults=DEFAULT_CUTOFFS)
def relative_precision(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Relevant documents in the top k over the most there could be: min(k, R)."""
    most = np.minimum(float(m.cutoff or 0), ctx.num_rel)
    return np.divide(ctx.count(r, top(m, r) & r.relevant), most, out=np.zeros(ctx.n), where=most > 0)


def _set_p_label(m: Measure) -> str | None:
    return {(): "set_P", (("relative", True),): "set_relative_P", (("relative", False),): "set_P"}.get(m.params)


@family("SetP", Cutoff.NONE, share=True, trec="set_P", aliases=("set_relative_P",), params=("relative",), trec_label=_set_p_label)
def set_precision(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Relevant retrieved over retrieved; with relative=True over min(retrieved, R) (set_relative_P)."""
    ret, rel_ret = r.returned(), ctx.count(r, r.relevant)
    below = np.minimum(ret, ctx.num_rel) if m.param("relative") else ret
    return np.divide(rel_ret, below, out=np.zeros(ctx.n), where=below > 0)


@family("SetR", Cutoff.NONE, share=True, trec="set_recall")
def set_recall(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Relevant retrieved over R."""
    return ctx.per_relevant(ctx.count(r, r.relevant))


@family("SetAP", Cutoff.NONE, share=True, trec="set_map")
def set_ap(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Set precision x set recall: relevant retrieved^2 / (retrieved x R)."""
    ret, rel_ret = r.returned(), ctx.count(r, r.relevant)
    below = ret * ctx.num_rel
    return np.divide(rel_ret * rel_ret, below, out=np.zeros(ctx.n), where=below > 0)


def _set_f_label(m: Measure) -> str | None:
    beta = m.param("beta")
    if m.trec_text is not None:  # set_F.0.50, named as trec_eval names it: by the text given
        return f"set_F_{m.trec_text}"
    return "set_F" if beta is None or float(beta) == 1.0 else f"set_F_{_number(beta)}"


@family("SetF", Cutoff.NONE, share=True, trec="set_F", params=("beta",), trec_params="number", trec_label=_set_f_label)
def set_f(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """(beta + 1) P R / (beta P + R) of set precision and set recall (beta as trec_eval's set_F parameter, default 1)."""
    beta = float(m.param("beta", 1.0))
    ret, rel_ret = r.returned(), ctx.count(r, r.relevant)
    defined = (ret > 0) & (ctx.num_rel > 0) & (rel_ret > 0)
    p = np.divide(rel_ret, ret, out=np.zeros(ctx.n), where=defined)
    rr = np.divide(rel_ret, ctx.num_rel, out=np.zeros(ctx.n), where=defined)
    return np.divide((beta + 1.0) * p * rr, beta * p + rr, out=np.zeros(ctx.n), where=defined)


@family("num_nonrel_judged_ret", Cutoff.NONE, trec="num_nonrel_judged_ret", aggregate=total, kind=Kind.COUNT)
def num_nonrel_judged_ret(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Judged non-relevant documents returned (summed in the 'all' row)."""
    return ctx.count(r, r.assessed & ~r.relevant)


def _rbp_label(stem: str, default_p: float) -> Callable[[Measure], str | None]:
    """trec_eval's name of rbp or rbp_resid: the stem alone at its p of 0.9, else the parameters (as typed)."""

    def label(m: Measure) -> str | None:
        p, gains = m.param("p", default_p), m.param("gains")
        if m.trec_text is not None:
            return f"{stem}_{m.trec_text}" if m.trec_text else stem
        if gains is None and float(p) == 0.9:
            return stem
        return f"{stem}_" + ",".join([f"p={_number(p)}"] + [f"{_number(k)}={_number(v)}" for k, v in gains or ()])

    return label


@family("RBP", Cutoff.NONE, trec="rbp", params=("p", "gains"), trec_params="gains", trec_label=_rbp_label("rbp", 0.8))
def rank_biased_precision(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Rank-biased precision (Moffat and Zobel): (1 - p) sum of gain x p^(rank - 1), persistence p
    (default 0.8 as ir_measures; trec_eval's `rbp` is p=0.9). Gains are the grades (or those given),
    scaled into [0, 1] per query where they leave it, as trec_eval does."""
    p = float(m.param("p", 0.8))
    table = gain_table(m)
    grades = ctx.qrels.relevance
    judged = grades >= 0
    top_grade = np.full(ctx.n, -1, dtype=np.int64)
    np.maximum.at(top_grade, ctx.qrels.query[judged], grades[judged])
    low, high = _rbp_bounds(ctx, top_grade, table)
    r, gains, given = gained(m, r)
    q = r.query
    width = (high - low)[q]
    scale = ((low[q] < 0) | (high[q] > 1)) & given
    # only where scaled: a query with no grade >= 0 has bounds inf and -inf, whose width numpy would warn of
    gains = np.where(scale, np.divide(gains - low[q], width, out=np.zeros(len(q)), where=scale & (width != 0)), gains)
    return (1.0 - p) * sums(q, weights=gains * _powers(p, int(r.rank.max(initial=0)))[r.rank], n=ctx.n)


def _powers(p: float, largest: int) -> np.ndarray:
    """p^0 .. p^largest as trec_eval reaches them, multiplying by p once a rank: np.power rounds otherwise, and a
    mean could land on the other side of its fourth decimal."""
    steps = np.full(largest + 1, p)
    steps[0] = 1.0
    return np.cumprod(steps)


def _rbp_bounds(ctx: Context, top_grade: np.ndarray, table: dict[int, float]) -> tuple[np.ndarray, np.ndarray]:
    """Per query: the smallest and largest gain over grades 0..top grade and the grades given gains."""
    low, high = np.full(ctx.n, np.inf), np.full(ctx.n, -np.inf)
    levels = np.arange(max(int(top_grade.max(initial=-1)), max(table, default=-1)) + 1)
    for level in levels.tolist():
        gain = table.get(level, float(level))
        present = (level <= top_grade) | (level in table)
        low = np.where(present, np.minimum(low, gain), low)
        high = np.where(present, np.maximum(high, gain), high)
    for level, gain in table.items():
        if level < 0:
            low, high = np.minimum(low, gain), np.maximum(high, gain)
    return low, high


@family("rbp_resid", Cutoff.NONE, trec="rbp_resid", params=("p",), trec_params="gains", trec_label=_rbp_label("rbp_resid", 0.9))
def rbp_residual(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """RBP's residual (p=0.9): what unjudged documents and the ranking's tail could still add,
    p^returned + (1 - p) sum over unjudged documents of p^(rank - 1); 0 when every document is judged, as trec_eval
    prints it (Moffat and Zobel's residual would still be p^returned)."""
    p = float(m.param("p", 0.9))
    returned = r.retrieved.astype(np.int64)
    powers = _powers(p, int(returned.max(initial=0)))
    every = r.with_unlisted()  # the unjudged summed one by one in rank order, as trec_eval does (not all less the judged)
    unjudged = every.grade < 0
    mass = sums(every.query[unjudged], weights=powers[every.rank[unjudged]], n=ctx.n)  # p^(rank - 1) over the unjudged
    return np.where(ctx.count(every, unjudged) > 0, powers[returned] + (1.0 - p) * mass, 0.0)


@family("unj", Cutoff.REQUIRED, trec="unj", trec_cut="unj", trec_params="cutoffs", trec_defaults=(5, 10, 20))
def unjudged_share(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Unjudged documents (not in the qrels, or with a negative grade) in the top k, divided by k."""
    return (r.returned(m.cutoff) - ctx.count(r, top(m, r) & r.assessed)) / m.cutoff


@family("Judged", Cutoff.REQUIRED, share=True)
def judged(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """The judged share of the documents returned in the top k (as ir_measures)."""
    returned = r.returned(m.cutoff)
    return np.divide(ctx.count(r, top(m, r)), returned, out=np.zeros(ctx.n), where=returned > 0)


# ---- averages over judgment groups (trec_eval -R qrels_jg, evaluation/groups.py) ----------------------
# Each computes its base measure on one group's judgments; with qrels_jg qrels the value is averaged over
# the groups that judge the query. On ordinary qrels (one group) it is the base measure.


@family("map_avgjg", Cutoff.NONE, trec="map_avgjg", per_group=True)
def map_avgjg(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """AP, averaged over the judgment groups (assessors) of the query (trec_eval -R qrels_jg)."""
    return average_precision(Measure("AP"), r, ctx)


@family("P_avgjg", Cutoff.REQUIRED, trec="P_avgjg", trec_cut="P_avgjg", trec_params="cutoffs", trec_defaults=DEFAULT_CUTOFFS,
        per_group=True)
def p_avgjg(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """P@k, averaged over the judgment groups of the query."""
    return precision(m, r, ctx)


@family("Rprec_mult_avgjg", Cutoff.NONE, trec="Rprec_mult_avgjg", params=("mult",), at="mult", trec_params="fractions",
        trec_defaults=R_MULTIPLES, trec_label=_fraction_label("Rprec_mult_avgjg", "mult"), per_group=True)
def rprec_mult_avgjg(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    """Rprec_mult@x, averaged over the judgment groups of the query."""
    return rprec_mult(m, r, ctx)


# ---- preference judgments (trec_eval -R prefs, qrels_prefs) ----------------------------------------------
# evaluation/prefs.py scores these from the preferences A>B a ranking fulfils (A ranked above B, or A
# retrieved and B not), per judgment group; the registry holds their names, order and meaning. Qrels rows
# cannot score them, so on ordinary qrels they are refused.


def _needs_preferences(m: Measure, r: Ranked, ctx: Context) -> np.ndarray:
    raise UsageError(f"{m.name} scores preference judgments, not qrels: use semrel.evaluation.prefs.evaluate_preferences")


PREFS_MEASURES = {  # trec_eval's order; _ret: only preferences with both documents retrieved; _imp: with one at least
    "prefs_num_prefs_poss": "Preferences judged (per judgment group), whether retrieved or not (summed in 'all').",
    "prefs_num_prefs_ful": "Preferences fulfilled (summed in 'all').",
    "prefs_num_prefs_ful_ret": "Preferences fulfilled with both documents retrieved (summed in 'all').",
    "prefs_simp": "Preferences fulfilled over preferences judged (neither document retrieved: failed).",
    "prefs_pair": "Per document pair, the share of its preferences (from every group) fulfilled, averaged over pairs.",
    "prefs_avgjg": "prefs_simp within each judgment group, averaged over the groups.",
    "prefs_avgjg_Rnonrel": "prefs_avgjg with as many non-relevant (value 0) documents per group as relevant ones (akin to bpref).",
    "prefs_simp_ret": "prefs_simp over the preferences whose documents are both retrieved.",
    "prefs_pair_ret": "prefs_pair over the pairs whose documents are both retrieved.",
    "prefs_avgjg_ret": "prefs_avgjg over the preferences whose documents are both retrieved.",
    "prefs_avgjg_Rnonrel_ret": "prefs_avgjg_Rnonrel over the retrieved documents.",
    "prefs_simp_imp": "prefs_simp over the preferences with at least one document retrieved.",
    "prefs_pair_imp": "prefs_pair over the pairs with at least one document retrieved.",
    "prefs_avgjg_imp": "prefs_avgjg over the preferences with at least one document retrieved.",
}
for _name, _doc in PREFS_MEASURES.items():
    _counted = _name.startswith("prefs_num")
    register(Family(_name, _needs_preferences, Cutoff.NONE, trec=_name, aggregate=total if _counted else mean, doc=_doc,
                    kind=Kind.COUNT if _counted else Kind.REAL, prefs=True))


# ---- trec_eval's measure sets and output order -------------------------------------------------------

TREC_ORDER = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult", "utility", "11pt_avg",
    "binG", "G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut", "map_cut", "relative_P", "success", "set_P",
    "set_relative_P", "set_recall", "set_map", "set_F", "num_nonrel_judged_ret", "yaap", "rbp", "rbp_resid", "unj",
    "map_avgjg", "P_avgjg", "Rprec_mult_avgjg", *PREFS_MEASURES,
)
NOT_IN_ALL_TREC = ("dcg", "ideal_dcg", "yaap")  # trec_eval's all_trec leaves these out
ALL_TREC = tuple(n for n in TREC_ORDER[: TREC_ORDER.index("unj") + 1] if n not in NOT_IN_ALL_TREC)  # `-m all_trec`
QRELS_JG = ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg")  # `-m qrels_jg`, for -R qrels_jg
OFFICIAL = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
            "iprec_at_recall", "P")  # trec_eval's output without -m
SET_MEASURES = ("runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall", "set_map",
                "set_F", "set_relative_P")
ALL_PREFS = ("runid", "num_q", *PREFS_MEASURES)  # `-m all_prefs`, for -R prefs and -R qrels_prefs
MEASURE_SETS = {"all_trec": ALL_TREC, "official": OFFICIAL, "set": SET_MEASURES, "qrels_jg": QRELS_JG, "all_prefs": ALL_PREFS}


def trec_order(measures: Iterable[Measure]) -> list[Measure]:
    """The measures in the order trec_eval prints them: by its measure table, parameters ascending;
    measures trec_eval lacks after them, in the order given."""
    given = list(dict.fromkeys(measures))

    def key(item: tuple[int, Measure]) -> tuple:
        position, m = item
        stem = m.entry.trec_stem(m)
        if stem is None or stem not in TREC_ORDER or m.entry.trec_label_of(m) is None:
            return (len(TREC_ORDER), position)
        values = [v for _, v in m.params if isinstance(v, (int, float))]
        return (TREC_ORDER.index(stem), m.cutoff or 0, *values, position)

    return [m for _, m in sorted(enumerate(given), key=key)]


# ---- parsing names ----------------------------------------------------------------------------------

DEFAULT_MEASURES = ("nDCG@10", "AP", "RR", "R@100", "P@10", "Success@10")
# ir_measures form: name, optional (key=value,...) parameters, optional @ cutoff (or @ recall point for IPrec)
_IR_FORM = re.compile(r"^\s*([A-Za-z0-9_\-]+?)\s*(?:\((.*)\))?\s*(?:@\s*([0-9.]+))?\s*$", re.DOTALL)


def _value(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _gains(value: Any, text: str) -> tuple[tuple[int, float], ...]:
    pairs = value.items() if isinstance(value, dict) else value
    try:
        return tuple(sorted((int(k), float(v)) for k, v in pairs))
    except (TypeError, ValueError):
        raise UsageError(f"measure {text!r}: gains are grade: gain pairs, e.g. gains={{1: 3, 2: 9}}") from None


def _normalise(key: str, value: Any, text: str) -> Any:
    if key == "gains":
        return _gains(value, text)
    if key == "dcg" and value not in DCG_FORMS:
        raise UsageError(f"measure {text!r}: dcg is {' or '.join(map(repr, DCG_FORMS))} (the grade as the gain, or 2^grade - 1)")
    if key in ("recalls", "coefficients"):
        values = value if isinstance(value, (tuple, list)) else (value,)
        try:
            numbers = tuple(float(v) for v in values)
        except (TypeError, ValueError):
            numbers = (math.nan,)
        if not all(map(math.isfinite, numbers)):  # float() takes 'nan' and 'inf'; trec_eval's lists refuse them too
            raise UsageError(f"measure {text!r}: {key} takes numbers")
        return numbers
    if key in ("p", "recall", "mult", "beta"):
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = math.nan
        if not math.isfinite(number):
            raise UsageError(f"measure {text!r}: {key} takes a number")
        if key == "beta" and number < 0:  # F's denominator beta P + R then crosses 0: NaN, inf, negative F
            raise UsageError(f"measure {text!r}: beta weighs recall against precision, a number of 0 or more, e.g. beta=2")
        return _persistence(number, text) if key == "p" else number
    return value


def _persistence(p: float, text: str) -> float:
    """RBP's p is the chance that a user goes on to the next document: 0 < p < 1, else its weights
    (1 - p) p^(rank - 1) are no probabilities (p = 1 scores every ranking 0, p = 2 below 0)."""
    if not 0 < p < 1:
        raise UsageError(f"measure {text!r}: p is a persistence, a number between 0 and 1 (exclusive), e.g. p=0.8")
    return p


def _ir_hint(name: str, given: str) -> str:
    """ir_measures' parameters that semrel spells otherwise: `rel=` (`P(rel=2)@5`) and `judged_only=` are one setting for all
    measures, as trec_eval's -l and -J; `cutoff=` is the number after @."""
    for part in _split(given):
        key, eq, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not eq:
            continue
        if key == "rel" and name == "NumRet":  # ir_measures' NumRelRet is NumRet(rel=1): -l with NumRet counts every document
            return f"; ir_measures' NumRet(rel={value}) counts the relevant documents retrieved: -m NumRelRet -l {value}"
        if key == "rel":
            return (f"; the relevance level is one for all measures: -l/--rel-level {value} (trec_eval's -l; "
                    f"rel_level={value} in Python) with the measure named without rel=")
        if key == "cutoff":
            return f"; name the cutoff after @: {name}@{value}"
        if key == "judged_only":
            return "; judged-only is one setting for all measures: -J/--judged-only (trec_eval's -J; judged_only=True in Python)"
    return ""


def _params(entry: Family, given: str | None, text: str) -> tuple[tuple[str, Any], ...]:
    if given is None or not given.strip():
        return ()
    if not entry.params:
        raise UsageError(f"measure {entry.name} takes no parameters (got {text!r}){_ir_hint(entry.name, given)}")
    pairs: dict[str, Any] = {}
    for part in _split(given):
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or key not in entry.params:
            raise UsageError(f"measure {text!r}: {entry.name} takes {', '.join(f'{p}=' for p in entry.params)} "
                             f"(got {part.strip()!r}){_ir_hint(entry.name, given)}")
        pairs[key] = _normalise(key, _value(value.strip()), text)
    return _ordered(entry, pairs, text)


DCG_FORMS = ("log2", "exp-log2")  # ir_measures' dcg=: trec_eval's gains, or Burges' (ranx's ndcg_burges)


def _ordered(entry: Family, pairs: dict[str, Any], text: str) -> tuple[tuple[str, Any], ...]:
    """The parameters in the family's order; dcg='log2' is the default, so left out (nDCG(dcg='log2')@10 is nDCG@10)."""
    if pairs.get("dcg") == "log2":
        del pairs["dcg"]
    if "dcg" in pairs and "gains" in pairs:
        raise UsageError(f"measure {text!r}: give gains per grade or dcg='exp-log2' (2^grade - 1), not both")
    return tuple((k, pairs[k]) for k in entry.params if k in pairs)


def _check_cutoff(entry: Family, cutoff: int | None, text: str) -> None:
    if cutoff is not None and entry.cutoff is Cutoff.NONE:
        raise UsageError(f"measure {entry.name} takes no cutoff (got {text!r})")
    if cutoff is not None and cutoff < 1:
        raise UsageError(f"measure {text!r}: the cutoff must be at least 1")


def _defaults(entry: Family, text: str) -> list[Measure]:
    """A family named without the cutoff (or recall point) it needs: trec_eval's defaults where it has them."""
    if entry.trec_defaults:
        if entry.at:
            return [Measure(entry.name, None, ((entry.at, float(v)),)) for v in entry.trec_defaults]
        return [Measure(entry.name, int(v)) for v in entry.trec_defaults]
    example = f"{entry.name}@0.1" if entry.at else f"{entry.name}@10"
    raise UsageError(f"measure {text!r} needs a cutoff, e.g. {example}")


def _ir_form(text: str) -> list[Measure] | None:
    """`nDCG@10`, `RBP(p=0.8)`, `IPrec@0.1`, `P`: None where the text is not in this form."""
    match = _IR_FORM.match(text)
    if not match or match.group(1).lower() not in SPELLINGS or match.group(1).lower() in IMPLIED_TREC:
        return None
    entry = FAMILIES[SPELLINGS[match.group(1).lower()]]
    params = _params(entry, match.group(2), text)
    if match.group(1).lower() in IMPLIED:  # ndcg_burges@10: nDCG(dcg='exp-log2')@10
        params = _ordered(entry, {**dict(IMPLIED[match.group(1).lower()]), **dict(params)}, text)
    at = match.group(3)
    if at is not None and entry.at is not None:
        try:
            point = float(at)
        except ValueError:
            raise UsageError(f"unknown measure {text!r}: {entry.name}@ takes a number, e.g. {entry.name}@0.1") from None
        return [Measure(entry.name, None, tuple(sorted(params + ((entry.at, point),),
                                                       key=lambda kv: entry.params.index(kv[0]))))]
    if at is not None and not at.isdigit():
        raise UsageError(f"unknown measure {text!r}: the cutoff after @ must be a whole number")
    cutoff = int(at) if at else None
    _check_cutoff(entry, cutoff, text)
    needs_point = entry.at is not None and not any(k == entry.at for k, _ in params)
    spelled = match.group(1).lower()
    cut_stem = bool(entry.trec_cut) and spelled == (entry.trec_cut or "").lower() != (entry.trec or "").lower()
    if cutoff is None and (entry.cutoff is Cutoff.REQUIRED or needs_point or cut_stem):
        return _defaults(entry, text)
    if entry.name == "RBP" and match.group(1) == "rbp" and not any(k == "p" for k, _ in params):
        params = (("p", 0.9),) + params  # trec_eval's `rbp`: p = 0.9
    return [Measure(entry.name, cutoff, params)]


# spellings that stand for a family with a parameter: trec_eval's (named alone, as trec_eval names it) and ranx's
IMPLIED_TREC = {"set_relative_p": (("relative", True),)}
IMPLIED = {**IMPLIED_TREC, "ndcg_burges": (("dcg", "exp-log2"),), "dcg_burges": (("dcg", "exp-log2"),)}


def _trec_number(text: str, whole: bool, full: str) -> float:
    """A number of a trec_eval parameter list: cutoffs are read as C's strtol reads them (23.4 -> 23)."""
    match = re.match(r"^\s*[-+]?(\d+)" if whole else r"^\s*[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?", text, re.IGNORECASE)
    if not match:
        raise UsageError(f"measure {full!r}: {text!r} is not a number")
    return float(int(match.group(0))) if whole else float(match.group(0))


def _trec_form(text: str) -> list[Measure] | None:
    """trec_eval's `name.PARAMS` (and semrel's older `name_10`): None where no family's name starts the text."""
    stripped = text.strip()
    lowered = stripped.lower()
    candidates = [s for s in SPELLINGS if lowered.startswith(s) and (len(lowered) == len(s) or lowered[len(s)] in "._")]
    if not candidates:
        return None
    spelling = max(candidates, key=len)
    entry = FAMILIES[SPELLINGS[spelling]]
    rest = stripped[len(spelling) + 1:]
    if spelling in IMPLIED:
        return [Measure(entry.name, None, IMPLIED[spelling])] if not rest else None
    if not rest:
        return _ir_form(stripped[: len(spelling)]) or []
    kind = entry.trec_params
    if entry.trec_cut and spelling == entry.trec_cut.lower() != (entry.trec or "").lower():
        kind = "cutoffs"  # ndcg_cut.10,20: cutoffs, where ndcg.1=3 gives gains
    if kind == "cutoffs" or (kind is None or kind == "gains") and rest.isdigit() and entry.cutoff is not Cutoff.NONE:
        cutoffs = sorted({int(_trec_number(part, True, text)) for part in rest.split(",")})
        for cutoff in cutoffs:
            _check_cutoff(entry, cutoff, text)
        return [Measure(entry.name, c, trec_text=rest if entry.name == "relstring" else None) for c in cutoffs]
    if kind == "number":  # set_F.0.5: the family's one parameter
        if "," in rest:
            raise UsageError(f"measure {text!r}: {entry.trec} takes one {entry.params[0]}, e.g. {entry.trec}.0.5")
        return [Measure(entry.name, None, ((entry.params[0], _trec_number(rest, False, text)),), rest)]
    if kind == "fractions":
        values = sorted({_trec_number(part, False, text) for part in rest.split(",")})
        return [Measure(entry.name, None, ((entry.at or "", v),)) for v in values]
    if kind == "fraction_set":
        return [Measure(entry.name, None, (("recalls", tuple(_trec_number(p, False, text) for p in rest.split(","))),), rest)]
    if kind == "coefficients":
        coefficients = tuple(_trec_number(p, False, text) for p in rest.split(","))
        if len(coefficients) != 4:
            raise UsageError(f"measure {text!r}: utility takes four coefficients (relevant retrieved, non-relevant "
                             "retrieved, relevant missed, non-relevant missed), e.g. utility.1,-1,0,0")
        return [Measure(entry.name, None, (("coefficients", coefficients),), rest)]
    if kind == "gains":
        gains, p = [], None
        for part in rest.split(","):
            key, eq, value = part.partition("=")
            if not eq:
                glued = re.fullmatch(r"(cut)_?(\d+)", rest.strip(), re.IGNORECASE)  # ndcg_cut10, meant as ndcg_cut.10
                meant = f"; did you mean {stripped[: len(spelling)]}_{glued[1]}.{glued[2]}?" if glued else ""
                raise UsageError(f"measure {text!r}: {entry.trec} takes grade=gain pairs, e.g. {entry.trec}.1=3,2=9{meant}")
            if key.strip() == "p" and "p" in entry.params:
                p = _persistence(_trec_number(value, False, text), text)
            elif re.fullmatch(r"\s*[-+]?\d+\s*", key):
                gains.append((int(key), _trec_number(value, False, text)))
            # trec_eval ignores pairs whose name is not a grade
        params: list[tuple[str, Any]] = []
        if "p" in entry.params:
            params.append(("p", 0.9 if p is None else p))
        if gains and "gains" in entry.params:  # rbp_resid.1=2: trec_eval takes the pair and ignores it
            params.append(("gains", tuple(sorted(gains))))
        return [Measure(entry.name, None, tuple(params), rest)]
    if rest.isdigit():
        cutoff = int(rest)
        _check_cutoff(entry, cutoff, text)
        return [Measure(entry.name, cutoff)]
    return None


def _parses(text: str) -> bool:
    try:
        return bool(_parse(text))
    except UsageError:
        return False


# ranx's measures that trec_eval has not, and what gives them (ranx's names otherwise map to trec_eval's: test_measures.py)
RANX_OTHERS = {"hits": "ranx's hits@k (the relevant documents in the top k) is k × P@k, as trec_eval's P@k divides by k: ask for P@k",
               "f1": "ranx's f1@k is each query's harmonic mean of P@k and R@k: ask for both per query (-q, or per_query=True) "
                     "and combine them"}


def _unknown_hint(text: str) -> str:
    """What a name that is no measure was likely meant to be: ranx's hits and f1, several names parted by blanks or semicolons
    (`P@10 AP`, as ir_measures' command line takes them), a cutoff without its @ (`P10`), a misspelling (`ndgc@10`)."""
    ranx = RANX_OTHERS.get(text.partition("@")[0].lower())
    if ranx is not None:
        return f": {ranx}"
    pieces = [p for p in re.split(r"[\s;]+", text) if p]
    if len(pieces) > 1 and all(map(_parses, pieces)):
        return f": measures are separated by commas, e.g. {','.join(pieces)!r}"
    glued = re.fullmatch(r"([A-Za-z][A-Za-z_\-]*?)(\d+)", text)
    if glued and _parses(f"{glued.group(1)}@{glued.group(2)}"):
        return f": did you mean {_parse(f'{glued.group(1)}@{glued.group(2)}')[0][0].name}?"
    match = _IR_FORM.match(text)
    name = (match.group(1) if match else text).lower()
    close = difflib.get_close_matches(name, [*SPELLINGS, *(s.lower() for s in MEASURE_SETS)], n=1, cutoff=0.75)
    # a known name with letters added is another measure, not a typo: ERR, alpha_nDCG, ranx's hits (relevant in the top k)
    if close and not (name.startswith(close[0]) or name.endswith(close[0])):
        spelled = FAMILIES[SPELLINGS[close[0]]].name if close[0] in SPELLINGS else close[0]
        return f": did you mean {spelled + text[len(name):] if match else spelled}?"
    return ""


def _parse(text: str | Measure) -> list[tuple[Measure, bool]]:
    """One name -> its measures, each marked True where it stands for trec_eval's default parameters
    (from a set such as all_trec, or a bare name such as `P` or `relstring`)."""
    if isinstance(text, Measure):
        return [(text, False)]
    key = text.strip()
    if key in MEASURE_SETS:
        return [(m, True) for name in MEASURE_SETS[key] for m, _ in _parse(name)]
    found = _ir_form(key)
    if found is None:
        found = _trec_form(key)
    if not found:
        known = ", ".join(sorted(FAMILIES))
        raise UsageError(f"unknown measure {text!r}{_unknown_hint(key)}; known: {known} (e.g. nDCG@10, R@100, RR, AP), "
                         f"or a set: {', '.join(MEASURE_SETS)}")
    bare = _IR_FORM.match(key) is not None and "(" not in key and "@" not in key and (
        len(found) > 1 or found[0].family == "relstring")
    return [(m, bare) for m in found]


def parse_measure_list(text: str | Measure) -> list[Measure]:
    """One name -> its measures: `P.5,10` and `all_trec` name several, `nDCG@10` one."""
    return [m for m, _ in _parse(text)]


def parse_measure(text: str | Measure) -> Measure:
    """`nDCG@10`, `ndcg_cut.10`, `ndcg_cut_10`, `MRR@10`, `map`... -> Measure (a Measure is returned as is)."""
    if isinstance(text, Measure):
        return text
    found = parse_measure_list(text)
    if len(found) != 1:
        one = f"{found[0].family}@10" if found and found[0].entry.cutoff is Cutoff.REQUIRED else "one measure"
        raise UsageError(f"measure {text!r} needs a cutoff, e.g. {one}" if found and found[0].entry.trec_defaults
                         else f"{text!r} names {len(found)} measures; give one")
    return found[0]


def _split(text: str) -> list[str]:
    """Split at commas outside parentheses and braces: `nDCG@10,RBP(p=0.8,x=1)` -> two names."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += (char in "({") - (char in ")}")
        if char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if p.strip()]


def _continues(part: str) -> bool:
    """A comma-separated piece that carries on the previous name's trec_eval parameters (`P.5,10`,
    `utility.2,-1,0,0`, `ndcg.1=3,2=9`, `rbp.p=0.8`) rather than naming a measure."""
    text = part.strip()
    return bool(re.match(r"[-+.\d]", text)) and not re.match(r"11-?pt", text, re.IGNORECASE) or bool(re.match(r"p\s*=", text))


def split_names(text: str) -> list[str]:
    """The measure names in one -m value: commas separate names, except within trec_eval's parameter lists."""
    names: list[str] = []
    for part in _split(text):
        if names and _continues(part):
            names[-1] += "," + part
        else:
            names.append(part)
    return names


def parse_measures(measures: str | Measure | Iterable[str | Measure] | None = None) -> list[Measure]:
    """The measures named, in order, without repeats; DEFAULT_MEASURES for None.

    Takes what a library caller or a repeatable option gives: Measure objects (kept as they are),
    names, or comma-separated names (`["nDCG@10,RR", "P@5"]`), mixed; trec_eval's spellings too
    (`P.5,10`, `all_trec`). Libraries call it once at their public entry, so inner code only ever
    sees Measure objects.
    """
    if isinstance(measures, (str, Measure)):
        measures = [measures]
    given = check_list("measures", measures, (str, Measure), "a name, a Measure or a list of them", "names or Measures")
    for m in (m for m in given or () if isinstance(m, Measure)):  # built by a caller, not parsed: its cutoff checked as a parsed one's
        if m.cutoff is not None and (not isinstance(m.cutoff, int) or isinstance(m.cutoff, bool)):
            raise UsageError(f"measure {m.family}: the cutoff must be a whole number, got {m.cutoff!r}")
        _check_cutoff(m.entry, m.cutoff, f"{m.family}@{m.cutoff}")
    if given and all(isinstance(m, Measure) for m in given):
        return list(dict.fromkeys(m for m in given if isinstance(m, Measure)))
    names = [part for item in (DEFAULT_MEASURES if given is None else given)
             for part in ([item] if isinstance(item, Measure) else split_names(str(item)))]
    if not names:  # None asks for the defaults; nothing named ([], "") is more likely a filter that kept nothing
        raise UsageError("measures: none named; name at least one measure, or leave measures out for the defaults")
    found = [pair for name in names for pair in _parse(name)]
    # as trec_eval: parameters given for a measure replace its defaults (`-m all_trec -m relstring.20`)
    explicit = {m.entry.trec_stem(m) for m, defaulted in found if not defaulted}
    return list(dict.fromkeys(m for m, defaulted in found if not (defaulted and m.entry.trec_stem(m) in explicit)))


def numeric_measures(measures: Iterable[Measure], who: str) -> list[Measure]:
    """The measures whose values are numbers: what statistics, estimates and plots can use. runid and
    relstring (text) are left out; naming only those is an error."""
    given = list(measures)
    kept = [m for m in given if m.kind is not Kind.TEXT]
    if given and not kept:
        raise UsageError(f"{who} compares numbers; {', '.join(m.name for m in given)} {'is' if len(given) == 1 else 'are'} text")
    return kept
