"""The click group and the one place where library errors become one line and an exit code."""

from __future__ import annotations

import sys

import click

from .. import __version__
from ..errors import SemrelError


class SemrelGroup(click.Group):
    """Turns SemrelError (and a broken stdout pipe) into one line on stderr, never a traceback."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except SemrelError as exc:
            click.echo(f"semrel: error: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except click.BadParameter as exc:
            _name_the_variable(exc)
            raise
        except BrokenPipeError:
            sys.stderr.close()
            ctx.exit(1)


def _name_the_variable(exc: click.BadParameter) -> None:
    """A bad value that came from SEMREL_<COMMAND>_<OPTION> says so: nothing on the command line shows it."""
    param, sub = exc.param, exc.ctx
    if param is None or sub is None or param.name is None:
        return
    if sub.get_parameter_source(param.name) is click.core.ParameterSource.ENVIRONMENT:
        variable = param.envvar or f"{sub.auto_envvar_prefix}_{param.name.upper()}"
        exc.message = f"{exc.message} (from the environment variable {variable})"


def warn(message: str) -> None:
    click.echo(f"semrel: warning: {message}", err=True)


@click.group(cls=SemrelGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100,
                                                "auto_envvar_prefix": "SEMREL"})
@click.version_option(__version__, "-V", "--version", prog_name="semrel", allow_from_autoenv=False)
def main() -> None:
    """Evaluate retrieval: golden datasets, BERTScore-derived qrels, human review, trec_eval-exact metrics.

    Any option's default can come from the environment as SEMREL_<COMMAND>_<OPTION>, e.g.
    SEMREL_JUDGE_MODEL=/models/minilm for `semrel judge --model` (--help names the variable of
    per-machine options); the command line wins.
    """
