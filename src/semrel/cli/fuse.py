"""`semrel fuse`: one run from several (reciprocal rank fusion, CombSUM, CombMNZ, weighted sum)."""

from __future__ import annotations

import click

from ..errors import UsageError
from ..retrieval.fusion import METHODS, NORMS, RRF_K, RRF_K_MAX, FusionSpec, fuse_files
from ..terminal import quantity
from .base import SemrelCommand, warn
from .options import comma_numbers, typed
from .paths import input_path, output_path


@click.command("fuse", cls=SemrelCommand, short_help="Fuse runs into one (RRF, CombSUM, CombMNZ, weighted sum).")
@click.argument("runs", nargs=-1, required=True, type=input_path(allow_dash=True))
@click.option("-o", "--output", required=True, type=output_path(allow_dash=True), help="The fused TREC run ('-' = stdout).")
@click.option("--method", type=click.Choice(METHODS), default="rrf", show_default=True,
              help="rrf: sum of 1/(k + rank); combsum: sum of normalised scores; combmnz: that sum times the number "
                   "of runs holding the document; wsum: weighted sum of normalised scores.")
@click.option("--norm", type=click.Choice(NORMS), default=None,
              help="Per-query score normalisation before combining (as ranx) [default: minmax; rrf uses ranks only].")
@click.option("--weights", default=None, metavar="W1,W2,...", help="wsum: one weight per run [default: equal].")
@click.option("--rrf-k", type=click.IntRange(min=0, max=RRF_K_MAX), default=RRF_K, show_default=True, help="rrf's k.")
@click.option("-k", "depth", type=click.IntRange(min=1), default=None, help="Keep each query's top K fused documents [default: all].")
def fuse_command(runs, output, method, norm, weights, rrf_k, depth):
    """Fuse RUNS (TREC run files) into one run, written with its manifest.

    Each run is ranked as trec_eval ranks it (score descending, ties by doc id descending); a
    document a run lacks contributes nothing from it. Queries of any run are in the output.
    """
    if method != "rrf" and typed("rrf_k"):  # ignored in silence before, as semrel.fuse refuses it
        raise UsageError(f"--rrf-k {rrf_k} is rrf's k; it does not apply to --method {method}")
    weights_given = comma_numbers(weights, float, "--weights", "0.3,0.7", "one per run")
    spec = FusionSpec(method, norm, weights_given, rrf_k, depth).check(len(runs))  # before any file is read
    fused = fuse_files(runs, output, spec, warn)
    click.echo(f"fused {quantity(len(runs), 'run')} ({method}): {quantity(len(fused), 'row')} to {output}", err=True)
