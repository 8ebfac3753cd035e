"""`semrel sensitivity`: how runs' values, their ranking and significant wins move with the label threshold."""

from __future__ import annotations

import click

from ..analysis.sensitivity import (
    DEFAULT_STEP,
    P_RANGE,
    RAW_RANGE,
    SENSITIVITY_FORMATS,
    choose_sweep,
    render_sensitivity,
    sensitivity,
    sensitivity_warnings,
    write_curves,
)
from ..analysis.significance import CORRECTIONS, DEFAULT_STATS
from ..errors import UsageError
from ..evaluation.files import read_runs
from ..formats.files import STDIO
from ..formats.judgments import SCORES, given_judgment_columns
from ..judging.labels import CUT, DEFAULT_COMPONENT, DEFAULT_THRESHOLD
from ..progress import stderr_steps
from .base import SemrelCommand, warn
from .options import measure_option, places_option, rel_level_option, stat_settings, test_options
from .paths import input_path, output_path


@click.command("sensitivity", cls=SemrelCommand, short_help='Show how results move with the threshold.')
@click.argument("judgments", type=input_path(allow_dash=True))
@click.argument("runs", nargs=-1, required=True, type=input_path(allow_dash=True), metavar="RUN...")
@click.option("--on", type=click.Choice(SCORES), default=None,
              help=f"The score swept: p, the judge's probability (the cut of the default rule), or P, R, F (raw thresholds) "
                   f"[default: p, or {DEFAULT_COMPONENT} for judgments without p].")
@click.option("--from", "start", type=float, default=None,
              help=f"Lowest threshold [default: {P_RANGE[0]:g} on p, {RAW_RANGE[0]:g} on P, R, F].")
@click.option("--to", "stop", type=float, default=None,
              help=f"Highest threshold [default: {P_RANGE[1]:g} on p, {RAW_RANGE[1]:g} on P, R, F].")
@click.option("--step", type=float, default=DEFAULT_STEP, show_default=True, help="Distance between thresholds.")
@click.option("--at", type=float, default=None,
              help="The chosen threshold: rankings are compared with the ranking there "
                   f"[default: {CUT} on p, {DEFAULT_THRESHOLD} on P, R, F].")
@measure_option
@test_options
@click.option("--correction", type=click.Choice(CORRECTIONS), default=DEFAULT_STATS.correction, show_default=True,
              help="Multiple-comparison correction within each threshold and measure, across the pairs of runs.")
@rel_level_option
@click.option("--calibration", type=input_path(exists=True, dir_okay=False),
              help="A refit of every coefficient (`semrel calibrate --fit features -o FILE`): sweep its p, recomputed from each "
                   "pair's features, with --at its cut.")
@click.option("--curves", type=output_path(allow_dash=True),
              help="Write rows threshold,run,measure,value here (CSV) for `semrel report --sensitivity`.")
@click.option("-f", "--format", "fmt", type=click.Choice(SENSITIVITY_FORMATS), default="table", show_default=True)
@places_option
def sensitivity_command(judgments, runs, on, start, stop, step, at, measures, test, permutations, bootstrap, seed, alpha,
                        correction, rel_level, calibration, curves, fmt, places):
    """Relabel JUDGMENTS (judgments.jsonl) at each threshold from --from to --to (binary, in memory, no model) and show
    each run's values, Kendall's tau of the runs' ranking with the ranking at --at, and, for every
    pair of runs, the threshold ranges where one beats the other significantly (one run: its values
    alone). By default the threshold is the cut on the judge's probability p; --on R (P, F) sweeps raw
    scores. A chosen threshold on a cliff of the curves is warned about."""
    if curves == STDIO:  # the tables go to stdout: the curves before them made neither readable
        raise UsageError("--curves -: stdout holds the tables; give --curves a file name (./- for a file named '-')")
    judged, _ = given_judgment_columns(judgments, empty_ok=False)
    sweep = choose_sweep(judged, on, at, calibration, start=start, stop=stop, step=step, source=judgments)
    settings = stat_settings(test, permutations, bootstrap, seed, alpha, correction)
    loaded = read_runs(runs)
    result = sensitivity(judged, loaded, measures, sweep.thresholds, sweep.at, sweep.on, settings, rel_level, steps=stderr_steps,
                         refit=sweep.refit)
    for message in sensitivity_warnings(result):
        warn(message)
    if curves:
        write_curves(result, curves, inputs=[judgments, *runs])
    click.echo(render_sensitivity(result, fmt, places), nl=False)
