"""`semrel compare` and `semrel lift`: paired significance between runs, and a reranker's lift."""

from __future__ import annotations

from typing import Callable

import click
import pyarrow.compute as pc

from ..analysis.compare import COMPARE_FORMATS, compare, render_comparison
from ..analysis.lift import Latency, lift, read_latency, render_lift, timed_latency
from ..analysis.significance import CORRECTIONS, TESTS, StatSettings
from ..errors import UsageError
from ..evaluation.files import evaluate_files
from ..evaluation.measures import DEFAULT_MEASURES, parse_measures
from ..formats import read_qrels, read_run
from .base import warn

measure_option = click.option(
    "-m", "--measure", "measures", multiple=True, metavar="NAME",
    help=f"Measure(s), repeatable or comma-separated [default: {','.join(DEFAULT_MEASURES)}].")
rel_level_option = click.option("-l", "--rel-level", default=1, show_default=True, type=int,
                                help="Lowest grade that counts as relevant.")
places_option = click.option("--places", default=4, show_default=True, type=click.IntRange(0, 17), help="Decimals shown.")


def test_options(command: Callable) -> Callable:
    """Options of the paired tests, shared by compare, lift and report."""
    for option in reversed([
        click.option("--test", "test", type=click.Choice(TESTS), default="randomization", show_default=True,
                     help="Whose p-value decides significance: paired t-test, Fisher's randomization, or bootstrap."),
        click.option("--permutations", type=click.IntRange(min=1), default=10_000, show_default=True,
                     help="Random sign flips of the randomization test (exact enumeration when 2^queries is fewer)."),
        click.option("--bootstrap", type=click.IntRange(min=1), default=10_000, show_default=True,
                     help="Bootstrap resamples of the queries (confidence interval and bootstrap p-value)."),
        click.option("--seed", type=int, default=0, show_default=True, help="Seed of the random draws."),
        click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05,
                     show_default=True, help="Significance level."),
    ]):
        command = option(command)
    return command


def settings_from(test: str, permutations: int, bootstrap: int, seed: int, alpha: float,
                  correction: str = "none") -> StatSettings:
    return StatSettings(test=test, permutations=permutations, bootstrap=bootstrap, seed=seed, alpha=alpha,
                        correction=correction)


def comparison_options(command: Callable) -> Callable:
    """Which pairs are tested, and how: shared by compare and report."""
    command = test_options(command)
    for option in reversed([
        click.option("--baseline", metavar="RUN", help="Run (file stem) to test the others against [default: the first]."),
        click.option("--all-pairs", is_flag=True, help="Test every pair of runs instead of each against the baseline."),
        click.option("--correction", type=click.Choice(CORRECTIONS), default="holm", show_default=True,
                     help="Multiple-comparison correction, within each measure across the pairs tested."),
    ]):
        command = option(command)
    return command


@click.command("compare")
@click.argument("qrels", type=click.Path(allow_dash=True))
@click.argument("runs", nargs=-1, required=True, type=click.Path(allow_dash=True))
@measure_option
@comparison_options
@rel_level_option
@click.option("--detail", is_flag=True, help="Print one row per paired test (difference, interval, every p-value).")
@click.option("-f", "--format", "fmt", type=click.Choice(COMPARE_FORMATS), default="table", show_default=True)
@places_option
def compare_command(qrels, runs, measures, baseline, all_pairs, correction, test, permutations, bootstrap, seed, alpha,
                    rel_level, detail, fmt, places):
    """Compare RUNS on QRELS: one row per run, one column per measure, with significance marks.

    A value carries the letters of the runs it is significantly better than (runs are keyed
    a, b, c, ... in the order given). Only the qrels' queries count; a query a run lacks
    scores 0 (trec_eval -c).
    """
    if len(runs) < 2:
        raise UsageError("give at least two runs to compare")
    if all_pairs and baseline is not None:
        raise UsageError("give --baseline or --all-pairs, not both")
    settings = settings_from(test, permutations, bootstrap, seed, alpha, correction)
    results = evaluate_files(qrels, runs, parse_measures(measures), rel_level, warn=warn)
    if baseline is not None and baseline not in (names := [r.run_name for r in results]):
        raise UsageError(f"--baseline {baseline!r} is none of the runs ({', '.join(names)})")
    comparison = compare(results, settings, baseline=baseline, all_pairs=all_pairs)
    click.echo(render_comparison(comparison, fmt, places, detail), nl=False)


def latency_from(latency_file: str | None, base_ms: float | None, reranked_ms: float | None,
                 query_ids: list[str]) -> Latency | None:
    """Timings from a per-query file or two flat means (not both)."""
    if latency_file and (base_ms is not None or reranked_ms is not None):
        raise UsageError("give --latency FILE or --base-latency-ms/--reranked-latency-ms, not both")
    if latency_file:
        return timed_latency(read_latency(latency_file), query_ids, warn)
    if (base_ms is None) != (reranked_ms is None):
        raise UsageError("--base-latency-ms and --reranked-latency-ms go together")
    return None if base_ms is None else Latency(base_ms, reranked_ms, None)


def lift_options(command: Callable) -> Callable:
    """--base/--reranked and the reorder depth, shared by lift and report."""
    for option in reversed([
        click.option("--base", type=click.Path(allow_dash=True), help="The first-stage run."),
        click.option("--reranked", type=click.Path(allow_dash=True), help="The same candidates reranked."),
        click.option("--depth", type=click.IntRange(min=1),
                     help="Reranked documents must come from the base run's top DEPTH [default: the base run's depth]."),
    ]):
        command = option(command)
    return command


@click.command("lift")
@click.argument("qrels", type=click.Path(allow_dash=True))
@lift_options
@measure_option
@test_options
@click.option("--top", type=click.IntRange(min=0), default=5, show_default=True,
              help="How many queries that gained and lost most (on the first measure) to list.")
@click.option("--base-latency-ms", type=click.FloatRange(min=0), help="Mean milliseconds per query of the base run.")
@click.option("--reranked-latency-ms", type=click.FloatRange(min=0),
              help="Mean milliseconds per query of the reranked run (first stage included).")
@click.option("--latency", "latency_file", type=click.Path(allow_dash=True),
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
    settings = settings_from(test, permutations, bootstrap, seed, alpha)
    judged = read_qrels(qrels)
    first, second = read_run(base), read_run(reranked)
    chosen = parse_measures(measures)
    query_ids = pc.unique(judged.query_ids).to_pylist()
    timings = latency_from(latency_file, base_latency_ms, reranked_latency_ms, query_ids)
    result = lift(judged, first, second, chosen, settings, depth, timings, top, rel_level)
    for message in result.warnings():
        warn(message)
    click.echo(render_lift(result, fmt, places), nl=False)
