"""The click group and the one place where library errors become one line and an exit code.

Commands are imported when they are run (or listed by --help), so `semrel eval --help` loads
eval's module and no other: neither Flask nor rich nor torch.
"""

from __future__ import annotations

import importlib
import sys

import click

from .. import __version__
from ..errors import SemrelError


class LazyGroup(click.Group):
    """A group whose commands named in `lazy` ("name" -> "module:attribute") are imported on first use."""

    def __init__(self, *args, lazy: dict[str, str] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy or {})

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.lazy and name not in self.commands:
            module, attribute = self.lazy[name].split(":")
            self.add_command(getattr(importlib.import_module(module), attribute), name)
        return super().get_command(ctx, name)


class SemrelGroup(LazyGroup):
    """Turns SemrelError (and a broken stdout pipe) into one line on stderr, never a traceback."""

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except SemrelError as exc:
            click.echo(f"semrel: error: {exc}", err=True)
            ctx.exit(exc.exit_code)
        except click.UsageError as exc:  # a bad option or argument: one line too, naming the help to read
            if isinstance(exc, click.BadParameter):
                _name_the_variable(exc)
            where = exc.ctx.command_path if exc.ctx else "semrel"
            click.echo(f"semrel: error: {exc.format_message()} (see '{where} --help')", err=True)
            ctx.exit(exc.exit_code)
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


COMMANDS = {name: f"semrel.cli.{target}" for name, target in {
    "corpus": "corpus:corpus_group", "golden": "golden:golden_group", "retrieve": "retrieve:retrieve_command",
    "fuse": "fuse:fuse_command", "pool": "pool:pool_command", "judge": "judge:judge_command", "fill": "fill:fill_command",
    "label": "label:label_command",
    "eval": "evaluate:eval_command", "compare": "compare:compare_command", "lift": "lift:lift_command",
    "sensitivity": "sensitivity:sensitivity_command", "report": "report:report_command",
    "review": "review:review_group", "calibrate": "calibrate:calibrate_command", "agree": "agree:agree_command",
    "estimate": "estimate:estimate_command", "doctor": "doctor:doctor_command", "run": "run:run_command",
    "init": "run:init_command",
}.items()}


@click.group(cls=SemrelGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100,
                                                "auto_envvar_prefix": "SEMREL"})
@click.version_option(__version__, "-V", "--version", prog_name="semrel", allow_from_autoenv=False)
def main() -> None:
    """Evaluate retrieval: golden datasets, BERTScore-derived qrels, human review, trec_eval-exact metrics.

    Any option's default can come from the environment as SEMREL_<COMMAND>_<OPTION>, e.g.
    SEMREL_JUDGE_MODEL=/models/minilm for `semrel judge --model` (--help names the variable of
    per-machine options); the command line wins.
    """
