"""`semrel lift`: the lift a reranker gives over the run it reranks, and what it costs in time."""

from __future__ import annotations

import math

import click
import pyarrow.compute as pc

from ..analysis.compare import COMPARE_FORMATS
from ..analysis.lift import TOP_QUERIES, Latency, lift, read_latency, render_lift, timed_latency
from ..errors import UsageError
from ..evaluation.files import require_judgments, shallow_cutoffs
from ..formats import read_qrels, read_run
from ..formats.files import STDIO, display_name, same_file
from .base import SemrelCommand, warn
from .options import lift_options, measure_option, places_option, rel_level_option, stat_settings, test_options
from .paths import input_path


def latency_from(latency_file: str | None, base_ms: float | None, reranked_ms: float | None,
                 query_ids: list[str]) -> Latency | None:
    """Timings from a per-query file or two flat means (not both)."""
    if latency_file and (base_ms is not None or reranked_ms is not None):
        raise UsageError("give --latency FILE or --base-latency-ms/--reranked-latency-ms, not both")
    if latency_file:
        return timed_latency(read_latency(latency_file), query_ids, warn)
    for option, value in (("--base-latency-ms", base_ms), ("--reranked-latency-ms", reranked_ms)):
        if value is not None and not math.isfinite(value):  # click's range lets inf and nan through; JSON printed NaN
            raise UsageError(f"{option} {value}: give a finite number of milliseconds")
    if base_ms is not None and reranked_ms is not None:
        return Latency(base_ms, reranked_ms, None)
    if base_ms is not None or reranked_ms is not None:
        raise UsageError("--base-latency-ms and --reranked-latency-ms go together")
    return None


@click.command("lift", cls=SemrelCommand, short_help='Measure the lift a reranker gives.')
@click.argument("qrels", type=input_path(allow_dash=True))
@lift_options
@measure_option
@test_options
@click.option("--top", type=click.IntRange(min=0), default=TOP_QUERIES, show_default=True,
              help="How many queries that gained and lost most (on the first measure) to list (csv and tsv hold the "
                   "measures' table alone).")
@click.option("--base-latency-ms", type=click.FloatRange(min=0), help="Mean milliseconds per query of the base run.")
@click.option("--reranked-latency-ms", type=click.FloatRange(min=0),
              help="Mean milliseconds per query of the reranked run (first stage included).")
@click.option("--latency", "latency_file", type=input_path(allow_dash=True),
              help="Per-query timings: lines qid<TAB>base_ms<TAB>reranked_ms.")
@rel_level_option
@click.option("-f", "--format", "fmt", type=click.Choice(COMPARE_FORMATS), default="table", show_default=True)
@places_option
def lift_command(qrels, base, reranked, depth, measures, test, permutations, bootstrap, seed, alpha, top,
                 base_latency_ms, reranked_latency_ms, latency_file, rel_level, fmt, places):
    """The lift of --reranked over --base on QRELS: per measure both values, the change, its
    interval, p-value and wins/ties/losses over queries; the queries that gained and lost most;
    with timings, the change per millisecond the reranker adds."""
    if not base or not reranked:
        raise UsageError("give --base FIRST.run and --reranked RERANKED.run")
    if base != STDIO and same_file(base, reranked):
        raise UsageError(f"--base and --reranked are one file ({display_name(base)}): every query would tie; give the reranked run")
    settings = stat_settings(test, permutations, bootstrap, seed, alpha)
    judged = read_qrels(qrels)
    require_judgments(judged, display_name(qrels))  # before the timings are matched to its queries, as lift() says it
    # the timings before the runs: a timing file's error came after the runs' warnings, as if they had caused it
    timings = latency_from(latency_file, base_latency_ms, reranked_latency_ms, pc.unique(judged.query_ids).to_pylist())
    first, second = read_run(base), read_run(reranked)
    for message in shallow_cutoffs(measures, [first, second]):
        warn(message)
    result = lift(judged, first, second, measures, settings, depth, timings, top, rel_level)
    for message in result.warnings():
        warn(message)
    click.echo(render_lift(result, fmt, places), nl=False)
