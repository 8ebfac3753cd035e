"""The lift a reranker gives over the first-stage run it reranks, and what it costs in time."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import FormatError, UsageError
from ..evaluation.doclevel import require_overlap
from ..evaluation.files import require_judgments
from ..evaluation.measures import Measure, aggregate_change, numeric_measures, paired_values, parse_measures
from ..evaluation.metrics import evaluate, ranks_within
from ..evaluation.render import cell_value
from ..formats.columns import is_float
from ..formats.files import STDIO, display_name, read_lines, same_file
from ..formats.tables import Cell, Table, render
from ..formats.trec import ranked
from ..records import Qrels, Run, dictionary_codes
from ..terminal import agreeing, quantity
from .significance import StatSettings, few_queries, level_text, no_spread, paired_stats

TOP_QUERIES = 5  # the queries that gained and lost most, listed by `lift` and the report alike


@dataclass(frozen=True)
class LiftRow:
    """One measure: both values, the change, its interval and p-value, and per-query wins."""

    measure: Measure
    base: float
    reranked: float
    change: float
    relative: float | None  # change / base; None when the base scores 0
    ci_low: float
    ci_high: float
    p: float
    wins: int
    ties: int
    losses: int
    gain_per_ms: float | None  # change per millisecond the reranker adds; None without timings

    def significant(self, alpha: float) -> bool:
        """The table's and the JSON's `significant`: p under alpha, and a change to be significant about."""
        return self.p < alpha and self.change != 0


@dataclass(frozen=True)
class QueryChange:
    query_id: str
    base: float
    reranked: float

    @property
    def change(self) -> float:
        return self.reranked - self.base


@dataclass(frozen=True)
class ReorderCheck:
    """Whether the reranked run holds only documents from the base run's top `depth` per query."""

    depth: int
    documents: int  # rows of the reranked run
    outside: int  # of them, not among the base run's top `depth` for their query
    queries_outside: int
    example: tuple[str, str] | None  # (query id, doc id) of one such row

    @property
    def ok(self) -> bool:
        return self.outside == 0

    def message(self) -> str:
        q, d = self.example or ("", "")
        return (f"the reranked run does not only reorder the base run: {self.outside} of its {quantity(self.documents, 'document')} "
                f"(in {quantity(self.queries_outside, 'query')}) {agreeing(self.outside, 'are')} not among the base run's top "
                f"{self.depth} for their query "
                f"(e.g. {d!r} for query {q!r}); check the depth and that both runs come from the same first stage")


@dataclass(frozen=True)
class Latency:
    """Mean milliseconds per query of each stage over the queries timed."""

    base_ms: float
    reranked_ms: float
    queries: int | None  # how many queries the means cover; None when given as flat numbers

    def __post_init__(self) -> None:
        for name in ("base_ms", "reranked_ms"):  # inf or nan made a change/ms of 0 and NaN in the JSON
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise UsageError(f"{name}={value!r}: give a finite, non-negative number of milliseconds")

    @property
    def extra_ms(self) -> float:
        return self.reranked_ms - self.base_ms


@dataclass(frozen=True)
class Lift:
    rows: list[LiftRow]
    by: Measure  # the measure of the per-query changes
    changes: list[QueryChange]  # every query's, in the qrels' order
    gained: list[QueryChange]
    lost: list[QueryChange]
    check: ReorderCheck
    latency: Latency | None
    settings: StatSettings
    queries: int
    missing: tuple[int, int]  # qrels queries the base and the reranked run lack (they score 0)
    ignored: tuple[int, int] = (0, 0)  # queries of the base and the reranked run not in the qrels (left out)
    no_spread: str | None = None  # measures changed by one amount on every query, where t or the bootstrap decides

    def warnings(self) -> list[str]:
        """What a user should know before trusting the numbers."""
        found = [] if self.check.ok else [self.check.message()]
        if few := few_queries(self.queries):  # as compare warns: one query gave p = 1 and an interval of one point
            found.append(few)
        if self.no_spread:  # as compare warns: t's p of 0, the bootstrap's 1/(resamples + 1), on any number of queries
            found.append(self.no_spread)
        for which, count in zip(("base", "reranked"), self.missing):
            if count:
                found.append(f"{count:,} of {quantity(self.queries, 'query')} {agreeing(count, 'have')} no results in the {which} run; "
                             "they score 0")
        for which, count in zip(("base", "reranked"), self.ignored):
            if count:  # as eval warns: a run of other queries, or qrels of a sample, is worth knowing about
                found.append(f"{quantity(count, 'query')} in the {which} run {agreeing(count, 'are')} not in the qrels and "
                             f"{agreeing(count, 'are')} ignored")
        return found


def _ranks(ordered: Run) -> np.ndarray:
    """0-based rank of each row of a run already in evaluation order (queries contiguous)."""
    return ranks_within(dictionary_codes(ordered.query_ids)[1])


def run_depth(run: Run) -> int:
    """The most documents the run returns for one query."""
    return int(pc.max(pc.value_counts(run.query_ids).field("counts")).as_py() or 0) if len(run) else 0


def check_reorder(base: Run, reranked: Run, depth: int | None = None) -> ReorderCheck:
    """Find reranked rows whose document is not among the base run's top `depth` for that query."""
    depth = run_depth(base) if depth is None else depth
    ordered = ranked(base)
    keep = _ranks(ordered) < depth
    candidates = pa.table({"q": ordered.query_ids.filter(pa.array(keep)), "d": ordered.doc_ids.filter(pa.array(keep))})
    rows = pa.table({"q": reranked.query_ids, "d": reranked.doc_ids})
    outside = rows.join(candidates, keys=["q", "d"], join_type="left anti")
    example = (outside["q"][0].as_py(), outside["d"][0].as_py()) if outside.num_rows else None
    return ReorderCheck(depth, len(reranked), outside.num_rows, len(pc.unique(outside["q"])), example)


def read_latency(path: str | os.PathLike) -> dict[str, tuple[float, float]]:
    """`qid<TAB>base_ms<TAB>reranked_ms` per line (any whitespace; a header line and `#` comments are skipped)."""
    timings: dict[str, tuple[float, float]] = {}
    first = True
    for number, line in read_lines(path):  # a line at a time: a file of any size costs its longest line
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        header, first = first, False
        if len(fields) != 3:
            raise FormatError(display_name(path), f"expected 3 fields (qid base_ms reranked_ms), found {len(fields)}",
                              line=number)
        try:
            base_ms, reranked_ms = float(fields[1]), float(fields[2])
        except ValueError:
            if header and not any(is_float(f) for f in fields[1:]):  # a header names both columns; '1O 20' is a typo
                continue
            raise FormatError(display_name(path), f"timings {fields[1]!r} {fields[2]!r} are not numbers", line=number,
                              hint="milliseconds, e.g. 'q1\t12.5\t80.2'") from None
        if not (math.isfinite(base_ms) and math.isfinite(reranked_ms)) or base_ms < 0 or reranked_ms < 0:
            raise FormatError(display_name(path), "timings must be finite, non-negative milliseconds", line=number)
        if fields[0] in timings:
            raise FormatError(display_name(path), f"query {fields[0]!r} is timed twice", line=number)
        timings[fields[0]] = (base_ms, reranked_ms)
    if not timings:
        raise FormatError(display_name(path), "no timings found", hint="lines of qid<TAB>base_ms<TAB>reranked_ms")
    return timings


def timed_latency(timings: dict[str, tuple[float, float]], query_ids: Sequence[str],
                  warn: Callable[[str], None] | None = None) -> Latency:
    """Mean timings over the evaluated queries that have them (warning about the rest)."""
    present = [timings[q] for q in query_ids if q in timings]
    if not present:
        raise UsageError("the timing file names none of the qrels' queries")
    if warn and len(present) < len(query_ids):
        missing = len(query_ids) - len(present)
        warn(f"{missing} of {quantity(len(query_ids), 'query')} {agreeing(missing, 'have')} no timings; "
             f"latency is averaged over the {len(present)} that do")
    array = np.array(present)
    return Latency(float(array[:, 0].mean()), float(array[:, 1].mean()), len(present))


LATENCY_OPTIONS = ("--latency FILE", "--base-latency-ms", "--reranked-latency-ms")  # as `semrel lift` names them


def require_two_runs(base: str | os.PathLike, reranked: str | os.PathLike, names: tuple[str, str] = ("--base", "--reranked")) -> None:
    """One file given as both runs: every query would tie, a lift of 0 that looks measured."""
    if str(base) != STDIO and same_file(base, reranked):
        raise UsageError(f"{names[0]} and {names[1]} are one file ({display_name(base)}): every query would tie; give the reranked run")


def choose_latency(latency_file: str | os.PathLike | None, base_ms: float | None, reranked_ms: float | None,
                   query_ids: Sequence[str], warn: Callable[[str], None] | None = None,
                   names: tuple[str, str, str] = LATENCY_OPTIONS) -> Latency | None:
    """Timings from a per-query file or two flat means (not both; the means together), None without either; errors
    name the options as `names` spells them (the command's flags, or the Python API's parameters)."""
    if latency_file is not None and (base_ms is not None or reranked_ms is not None):
        raise UsageError(f"give {names[0]} or {names[1]}/{names[2]}, not both")
    if latency_file is not None:
        return timed_latency(read_latency(latency_file), query_ids, warn)
    for option, value in zip(names[1:], (base_ms, reranked_ms)):
        if value is not None and not math.isfinite(value):  # click's range lets inf and nan through; JSON printed NaN
            spelled = f"{option}{value}" if option.endswith("=") else f"{option} {value}"  # base_ms=nan, --base-latency-ms nan
            raise UsageError(f"{spelled}: give a finite number of milliseconds")
    if base_ms is not None and reranked_ms is not None:
        return Latency(base_ms, reranked_ms, None)
    if base_ms is not None or reranked_ms is not None:
        raise UsageError(f"{names[1]} and {names[2]} go together")
    return None


def lift(
    qrels: Qrels,
    base: Run,
    reranked: Run,
    measures: Sequence[Measure | str],
    settings: StatSettings = StatSettings(),
    depth: int | None = None,
    latency: Latency | None = None,
    top: int = TOP_QUERIES,
    rel_level: int = 1,
) -> Lift:
    """Per-measure lift of `reranked` over `base` on the qrels' queries (paired, as in compare)."""
    if not measures:
        raise UsageError("give at least one measure")
    measures = numeric_measures(parse_measures(measures), "lift")
    named = display_name(qrels.source) if qrels.source else "the qrels"
    require_judgments(qrels, named)
    first, second = evaluate(qrels, [base, reranked], measures, rel_level)
    for result, run, which in ((first, base, "the base run"), (second, reranked, "the reranked run")):
        require_overlap(result, qrels, run, named, display_name(run.source) if run.source else which)
    diffs = np.column_stack([paired_values(m, second.values[m]) - paired_values(m, first.values[m]) for m in measures])
    found = paired_stats(diffs, settings)
    p_values = found.p_values(settings.test)
    rows = []
    for k, m in enumerate(measures):
        b, r = first.aggregate(m), second.aggregate(m)
        column = diffs[:, k]
        per_ms = (r - b) / latency.extra_ms if latency and latency.extra_ms > 0 else None
        rows.append(LiftRow(
            measure=m, base=b, reranked=r, change=r - b, relative=(r - b) / b if b else None,
            ci_low=aggregate_change(m, b, len(column), float(found.ci_low[k])),
            ci_high=aggregate_change(m, b, len(column), float(found.ci_high[k])), p=float(p_values[k]),
            wins=int((column > 0).sum()), ties=int((column == 0).sum()), losses=int((column < 0).sum()),
            gain_per_ms=per_ms,
        ))
    by = measures[0]
    changes = [QueryChange(q, float(b), float(r)) for q, b, r in zip(first.query_ids, first.values[by], second.values[by])]
    order = sorted(changes, key=lambda c: (-c.change, c.query_id))
    gained = [c for c in order if c.change > 0][:top]
    lost = sorted((c for c in changes if c.change < 0), key=lambda c: (c.change, c.query_id))[:top]  # ties by id, as gained
    check = check_reorder(base, reranked, depth)
    missing = (len(first.missing_queries), len(second.missing_queries))
    ignored = (len(first.ignored_queries), len(second.ignored_queries))
    return Lift(rows, by, changes, gained, lost, check, latency, settings, len(first.query_ids), missing, ignored,
                no_spread(diffs, settings, [m.name for m in measures]))


def lift_table(result: Lift) -> Table:
    level = level_text(result.settings.confidence)
    header = ["measure", "base", "reranked", "change", "relative", f"{level} low", f"{level} high",
              f"p ({result.settings.test})", "significant", "wins", "ties", "losses"]
    per_ms = result.latency is not None and result.latency.extra_ms > 0  # a change per extra ms, where there is one
    if per_ms:
        header.append("change/ms")
    rows: list[list[Cell]] = []
    for row in result.rows:
        relative = f"{row.relative:+.1%}" if row.relative is not None else ""
        counted = [cell_value(row.measure, v) for v in (row.base, row.reranked, row.change)]  # NumRelRet 1063, as eval prints it
        cells: list[Cell] = [row.measure.name, *counted, relative, row.ci_low, row.ci_high,
                             row.p, "yes" if row.significant(result.settings.alpha) else "no", row.wins, row.ties, row.losses]
        if per_ms:
            cells.append("" if row.gain_per_ms is None else f"{row.gain_per_ms:.3g}")
        rows.append(cells)
    return Table(header, rows)


def changes_table(result: Lift) -> Table:
    """The queries that gained most, then those that lost most, on the first measure."""
    rows: list[list[Cell]] = [[side, c.query_id, *(cell_value(result.by, v) for v in (c.base, c.reranked, c.change))]
                              for side, changes in (("gained", result.gained), ("lost", result.lost)) for c in changes]
    return Table(["", "query", f"base {result.by}", f"reranked {result.by}", "change"], rows)


def lift_json(result: Lift) -> dict[str, Any]:
    s = result.settings
    latency = result.latency
    return {
        "settings": {"test": s.test, "alpha": s.alpha, "permutations": s.permutations, "bootstrap": s.bootstrap,
                     "confidence": s.confidence, "seed": s.seed},
        "queries": result.queries,
        "measures": [{"measure": r.measure.name, "base": r.base, "reranked": r.reranked, "change": r.change,
                      "relative": r.relative, "ci": [r.ci_low, r.ci_high], "p": r.p, "significant": r.significant(s.alpha),
                      "wins": r.wins, "ties": r.ties,
                      "losses": r.losses, "change_per_ms": r.gain_per_ms} for r in result.rows],
        "by": result.by.name,
        "gained": [{"query_id": c.query_id, "base": c.base, "reranked": c.reranked, "change": c.change} for c in result.gained],
        "lost": [{"query_id": c.query_id, "base": c.base, "reranked": c.reranked, "change": c.change} for c in result.lost],
        "reorder_check": {"depth": result.check.depth, "documents": result.check.documents,
                          "outside": result.check.outside, "queries_outside": result.check.queries_outside},
        "latency": None if latency is None else {"base_ms": latency.base_ms, "reranked_ms": latency.reranked_ms,
                                                 "extra_ms": latency.extra_ms, "queries": latency.queries},
    }


def render_lift(result: Lift, fmt: str, places: int = 4) -> str:
    if fmt == "json":
        return json.dumps(lift_json(result), indent=2) + "\n"
    text = render(lift_table(result), fmt, places)
    if fmt in ("csv", "tsv"):  # one table that parses: the caption and the gained/lost table are for reading
        return text
    s = result.settings
    drawn = {"t": "", "randomization": f", {s.permutations} permutations", "bootstrap": f", {s.bootstrap} resamples"}[s.test]
    # the interval is the bootstrap's whichever test decides: under --test t it can leave out 0 where p >= alpha
    notes = (f"\n{quantity(result.queries, 'query')}; significant: p < {s.alpha:g} ({s.test} test{drawn}); the "
             f"{level_text(s.confidence)} interval is the bootstrap's percentiles of the change ({s.bootstrap} resamples, "
             f"seed {s.seed}); wins/ties/losses count queries.\n")
    if result.latency:
        notes += (f"Latency per query: base {result.latency.base_ms:.1f} ms, reranked {result.latency.reranked_ms:.1f} ms "
                  f"({result.latency.extra_ms:+.1f} ms" + ("" if result.latency.extra_ms > 0 else "; not slower: no change/ms") + ").\n")
    if result.gained or result.lost:
        notes += "\n" + render(changes_table(result), fmt, places)
    return text + notes
