"""`semrel compare`: paired significance between runs."""

from __future__ import annotations

import click

from ..analysis.compare import COMPARE_FORMATS, compare_evaluations, render_comparison
from ..errors import UsageError
from ..evaluation.files import baseline_name, evaluate_files, require_distinct_names, run_names
from ..evaluation.metrics import Options
from .base import SemrelCommand, warn
from .options import comparison_options, cutting_options, measure_option, places_option, rel_level_option, stat_settings
from .paths import input_path


@click.command("compare", cls=SemrelCommand, short_help='Compare runs with paired significance tests.')
@click.argument("qrels", type=input_path(allow_dash=True))
@click.argument("runs", nargs=-1, required=True, type=input_path(allow_dash=True))
@measure_option
@comparison_options
@rel_level_option
@cutting_options
@click.option("--detail", is_flag=True, help="Print one row per paired test (difference, interval, every p-value).")
@click.option("-f", "--format", "fmt", type=click.Choice(COMPARE_FORMATS), default="table", show_default=True)
@click.option("--corpus", type=input_path(exists=True, dir_okay=False), default=None,
              help="corpus.jsonl: the chunk ids the runs should name; a run's chunks it does not list (misspelt, another "
                   "chunking's) are warned of, as `semrel eval --corpus` does.")
@places_option
def compare_command(qrels, runs, measures, baseline, all_pairs, correction, test, permutations, bootstrap, seed, alpha,
                    rel_level, judged_only, depth, detail, fmt, corpus, places):
    """Compare RUNS on QRELS: one row per run, one column per measure, with significance marks.

    A value carries the letters of the runs it is significantly better than (runs are keyed
    a, b, c, ... in the order given). Only the qrels' queries count; a query a run lacks
    scores 0 (trec_eval -c). -J and -M score condensed or cut lists, as eval does, and the tests are on those values.
    """
    if len(runs) < 2:
        raise UsageError("give at least two runs to compare")
    if all_pairs and baseline is not None:
        raise UsageError("give --baseline or --all-pairs, not both")
    settings = stat_settings(test, permutations, bootstrap, seed, alpha, correction)
    names = run_names(runs)  # checked before any run is read and scored
    require_distinct_names(names, runs)
    baseline = baseline_name(baseline, runs, names)
    options = Options(rel_level, judged_only=judged_only, depth=depth)
    results = evaluate_files(qrels, runs, measures, rel_level, warn=warn, options=options, corpus=corpus, cutoffs=True)
    comparison = compare_evaluations(results, settings, baseline=baseline, all_pairs=all_pairs, warn=warn)
    click.echo(render_comparison(comparison, fmt, places, detail), nl=False)
