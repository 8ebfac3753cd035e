"""`semrel lift`: the lift a reranker gives over the run it reranks, and what it costs in time."""

from __future__ import annotations

import click
import pyarrow.compute as pc

from ..analysis.compare import COMPARE_FORMATS
from ..analysis.lift import TOP_QUERIES, choose_latency, lift, render_lift, require_two_runs
from ..errors import UsageError
from ..evaluation.files import require_judgments, shallow_cutoffs
from ..formats import read_qrels, read_run
from ..formats.files import display_name
from .base import SemrelCommand, warn
from .options import lift_options, measure_option, places_option, rel_level_option, stat_settings, test_options
from .paths import input_path


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
    require_two_runs(base, reranked)
    settings = stat_settings(test, permutations, bootstrap, seed, alpha)
    judged = read_qrels(qrels)
    require_judgments(judged, display_name(qrels))  # before the timings are matched to its queries, as lift() says it
    # the timings before the runs: a timing file's error came after the runs' warnings, as if they had caused it
    timings = choose_latency(latency_file, base_latency_ms, reranked_latency_ms, pc.unique(judged.query_ids).to_pylist(), warn)
    first, second = read_run(base), read_run(reranked)
    for message in shallow_cutoffs(measures, [first, second]):
        warn(message)
    result = lift(judged, first, second, measures, settings, depth, timings, top, rel_level)
    for message in result.warnings():
        warn(message)
    click.echo(render_lift(result, fmt, places), nl=False)
