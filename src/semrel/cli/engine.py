"""The --engine, --ray-address and --ray-workers options shared by the commands that run an encoder."""

from __future__ import annotations

import click

from ..encoding.engines import ENGINES


def engine_options(command):
    """Add the three options; the command receives them as engine, ray_address, ray_workers."""
    options = (
        click.option("--engine", type=click.Choice(ENGINES), default="local", show_default=True,
                     help="Where the encoder runs: in this process, or as Ray Data batch inference on a Ray "
                          "cluster (pip install 'semrel[ray]'). Results are the same."),
        click.option("--ray-address", default=None, metavar="ADDRESS",
                     help="--engine ray: auto (the running cluster), host:port or ray://host:port "
                          "[default: start a local Ray instance]."),
        click.option("--ray-workers", type=int, default=None, metavar="N",
                     help="--engine ray: encoder workers, one model each [default: the cluster's GPUs, else its CPUs]."),
    )
    for option in reversed(options):
        command = option(command)
    return command

