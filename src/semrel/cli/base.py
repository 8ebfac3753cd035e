"""The click group and the one place where library errors become one line and an exit code.

Commands are imported when they are run (or listed by --help), so `semrel eval --help` loads
eval's module and no other: neither Flask nor rich nor torch.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import importlib
import os
import re
import signal
import sys
import threading
from typing import Any, Iterator

import click

from ..errors import SemrelError
from ..interrupts import interrupted_message, interrupts_recorded, signals_held, terminated
from ..resources import semrel_version
from ..terminal import SafeStream, brief, safe


@contextlib.contextmanager
def safe_streams() -> Iterator[None]:
    """stdout and stderr filtered by terminal.safe while a command runs: nothing it prints (a
    chunk, an id, a name, a file name in a message) can drive the terminal."""
    saved = sys.stdout, sys.stderr
    if not isinstance(sys.stdout, SafeStream) and sys.stdout is not None:
        sys.stdout = SafeStream(sys.stdout)
    if not isinstance(sys.stderr, SafeStream) and sys.stderr is not None:
        sys.stderr = SafeStream(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


class SemrelCommand(click.Command):
    """A command run the safe way: its path parameters are checked before any work (no output over
    an input, no device or FIFO as an input; see cli/paths.py), then it runs inside an input guard
    (the library refuses to write over a file it read) with terminal-safe stdout and stderr."""

    def invoke(self, ctx: click.Context) -> Any:
        from ..formats.files import input_guard
        from .paths import check_command_paths

        with input_guard(), safe_streams():
            _import_pandas_for_pyarrow()
            check_command_paths(ctx)
            try:
                return super().invoke(ctx)
            except SemrelError as exc:
                exc.args = (in_flags(str(exc), self),)
                raise


def _import_pandas_for_pyarrow() -> None:
    """pyarrow imports pandas at its first array (if pandas is installed), and a Ctrl-C, SIGTERM or
    SIGHUP that lands in the initialisation of pandas' compiled modules is lost (the command ran on
    and replaced its output) or leaves pandas half-imported (a traceback). A command that loaded
    pyarrow imports pandas first, with those signals held until it is done."""
    if "pyarrow" in sys.modules and "pandas" not in sys.modules:
        with signals_held(), contextlib.suppress(ImportError):
            import pandas  # noqa: F401


# name='value', or name=value where the value is a plain token (a number, a word) or nothing: not a
# path that holds '=' ("size=1/corpus.jsonl" is a folder, not the parameter size)
_PARAMETER = re.compile(r"\b([a-z][a-z0-9_]*)=(?:'([^'\s]*)'(?=[\s,:;)]|$)|(True|False)(?=[\s,:;)]|$)|(?=[\w.+-]*(?:[\s,:;)]|$)))")


def in_flags(message: str, command: click.Command) -> str:
    """The library names its parameters (`depth=0`, `engine='ray'`, `cache=False`); on the command line a
    message names the options a user typed (`--depth 0`, `--engine ray`, `--no-cache`)."""
    options = [p for p in command.params if isinstance(p, click.Option) and p.name]
    # by the option's own name too (--sample, whose parameter is sample_size, for the library's sample=; --no-cache)
    flags = {opt[2:].replace("-", "_"): opt for p in options for opt in (*p.opts, *p.secondary_opts) if opt.startswith("--")}
    flags |= {p.name: max(p.opts, key=len) for p in options if p.name}

    def flag(match: re.Match) -> str:
        name, quoted, switched = match.group(1), match.group(2), match.group(3)
        if switched == "False":  # cache=False: the option that turns it off (--no-cache), where the command has one
            name = f"no_{name}"
        if name not in flags:
            return match.group(0)
        if switched:  # all_pairs=True: the flag itself (it printed '--all-pairs True')
            return f"{flags[name]} "
        return f"{flags[name]} {quoted}" if quoted is not None else f"{flags[name]} "

    text = _PARAMETER.sub(flag, message)
    for space, tight in ((" ,", ","), (" )", ")"), (" :", ":"), (" ;", ";"), ("  ", " ")):
        text = text.replace(space, tight)
    return text.strip()


class LazyGroup(click.Group):
    """A group whose commands named in `lazy` ("name" -> "module:attribute") are imported on first use.

    Commands declared with `@group.command(...)` are SemrelCommands."""

    command_class = SemrelCommand

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


# click 8.2+ raises this for a group given no command (8.1 printed the help itself); () matches no exception
NO_ARGS_IS_HELP: Any = getattr(click.exceptions, "NoArgsIsHelpError", ())


class SemrelGroup(LazyGroup):
    """Turns SemrelError, a bad option, an OS error (disk full, read-only, permission), running out
    of memory and a broken stdout pipe into one line on stderr, never a traceback."""

    def invoke(self, ctx: click.Context) -> Any:
        _report_file_size_limit()
        with interrupts_recorded() as received:
            try:
                with safe_streams():
                    result = super().invoke(ctx)
                    sys.stdout.flush()  # a full disk or /dev/full shows here, not as noise at exit
                return result
            except SemrelError as exc:
                fail(ctx, str(exc), exc.exit_code)
            except NO_ARGS_IS_HELP as exc:  # `semrel golden`: its help, as `semrel` alone shows it, not as an error line
                exc.show()
                ctx.exit(exc.exit_code)
            except click.UsageError as exc:  # a bad option or argument: one line too, naming the help to read
                message = exc.format_message()
                if isinstance(exc, click.BadParameter):
                    message += _environment_note(exc)
                where = exc.ctx.command_path if exc.ctx else "semrel"
                fail(ctx, f"{message} (see '{where} --help')", exc.exit_code)
            except BrokenPipeError:  # `semrel eval ... | head`: stop quietly, as other Unix tools do
                _silence_stdout()
                ctx.exit(141)  # 128 + SIGPIPE, what a shell reports for a tool the broken pipe stopped
            except OSError as exc:
                fail(ctx, os_error_message(exc), 1)
            except MemoryError:
                fail(ctx, "out of memory: the inputs need more memory than this machine has (see the input limits "
                          "in docs/safety.md)", 1)
            except RecursionError:
                fail(ctx, "an input is nested too deeply to read", 1)
            except KeyboardInterrupt as exc:
                fail(ctx, interrupted_message(exc), 130)
            except Exception:
                if received:  # a Ctrl-C whose exception compiled code swallowed, mid-import: what ran on broke
                    fail(ctx, "interrupted", 130)
                raise


def fail(ctx: click.Context, message: str, code: int) -> None:
    """One line on stderr (made terminal-safe, and written as output is: safe_streams), then exit with `code`."""
    try:
        with safe_streams():
            click.echo(f"semrel: error: {brief(message)}", err=True)
    except OSError:
        pass
    if code:
        _silence_stdout()
    ctx.exit(code)


def os_error_message(exc: OSError) -> str:
    where = exc.filename if exc.filename is not None else "stdout" if exc.errno in (errno.ENOSPC, errno.EIO, errno.EFBIG) else None
    reason = exc.strerror or str(exc)
    return f"{where}: {reason}" if where else reason


def _silence_stdout() -> None:
    """Point stdout at /dev/null once writing to it failed, so the interpreter's final flush of what
    is still buffered neither fails again nor prints 'Exception ignored' at exit."""
    stream = sys.__stdout__
    try:
        if stream is not None and sys.stdout is stream:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, stream.fileno())
            os.close(null)
    except (OSError, ValueError, AttributeError):
        pass


def _report_file_size_limit() -> None:
    """A file-size limit (ulimit -f) reached kills a process with SIGXFSZ unless it is ignored;
    ignored, the write fails with EFBIG and the CLI says so in one line."""
    if hasattr(signal, "SIGXFSZ") and threading.current_thread() is threading.main_thread():
        with contextlib.suppress(ValueError, OSError):
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def _environment_note(exc: click.BadParameter) -> str:
    """A bad value that came from SEMREL_<COMMAND>_<OPTION> says so: nothing on the command line shows it.

    Appended to the formatted message, which ends with the exception's own (click declares that Final)."""
    param, sub = exc.param, exc.ctx
    if param is None or sub is None or param.name is None:
        return ""
    if sub.get_parameter_source(param.name) is click.core.ParameterSource.ENVIRONMENT:
        return f" (from the environment variable {option_variable(sub, param.name, param.envvar)})"
    return ""


def option_variable(context: click.Context, name: str, envvar: Any = None) -> str:
    """The environment variable an option of the running command is read from: its own, else SEMREL_<COMMAND>_<OPTION>."""
    return envvar if isinstance(envvar, str) else f"{context.auto_envvar_prefix}_{name.upper()}"


_SAID: contextvars.ContextVar[set[str] | None] = contextvars.ContextVar("semrel_warnings_said", default=None)


def keys_typed() -> bool:
    """Keys come from a person at the terminal, not piped (scripts, tests): piped keys are read as fast as they
    arrive, so the time between two is no one's time on a pair, and their decisions record none."""
    return sys.stdin.isatty()


def read_key() -> str:
    """One key press, raw from the terminal; from piped input, its next character. '' means quit: the end of piped
    input, or Ctrl-D or Ctrl-C at the terminal (which click raises as EOFError and KeyboardInterrupt), everything
    decided being saved already (`review start` and `golden pick` alike). SIGTERM or SIGHUP while waiting for a key
    stops the command as an interrupted one (exit 130), not as a person quitting."""
    try:
        return click.getchar() if keys_typed() else sys.stdin.read(1)
    except (KeyboardInterrupt, EOFError):
        if terminated():
            raise
        return ""


def is_suspend(key: str) -> bool:
    """Ctrl-Z pressed at a terminal: raw mode turns off the terminal's signals, so click.getchar reads it as the byte
    0x1a, not SIGTSTP. The byte in piped input is data, an unknown key: no script's pipeline is stopped by it."""
    return key == "\x1a" and keys_typed()


def suspend() -> None:
    """Stop as Ctrl-Z stops a program in cooked mode (SIGTSTP to the foreground process group; the shell's `fg` goes
    on). read_key has put the terminal back in cooked mode by now; the caller redraws its screen once continued."""
    if hasattr(signal, "SIGTSTP"):  # not on Windows, whose click reads Ctrl-Z as the end of input (read_key: quit)
        os.killpg(os.getpgrp(), signal.SIGTSTP)


def warn(message: str) -> None:
    """One warning line on stderr; within warnings_once(), a message said already is not said again."""
    said = _SAID.get()
    if said is not None:
        if message in said:
            return
        said.add(message)
    click.echo(f"semrel: warning: {safe(brief(message))}", err=True)


@contextlib.contextmanager
def warnings_once() -> Iterator[None]:
    """Each warning said once (`semrel run`: the label and report steps find the same signs in the same labels, the
    eval steps the same shallow runs)."""
    token = _SAID.set(set())
    try:
        yield
    finally:
        _SAID.reset(token)


def warn_in_flags(message: str) -> None:
    """warn() of a library message that names its parameters (fit='anchored') as the options typed (--fit anchored)."""
    warn(in_flags(message, click.get_current_context().command))


COMMANDS = {name: f"semrel.cli.{target}" for name, target in {
    "corpus": "corpus:corpus_group", "golden": "golden:golden_group", "retrieve": "retrieve:retrieve_command",
    "fuse": "fuse:fuse_command", "pool": "pool:pool_command", "judge": "judge:judge_command", "fill": "fill:fill_command",
    "label": "label:label_command",
    "eval": "evaluate:eval_command", "compare": "compare:compare_command", "lift": "lift:lift_command",
    "sensitivity": "sensitivity:sensitivity_command", "report": "report:report_command",
    "review": "review:review_group", "calibrate": "calibrate:calibrate_command", "agree": "agree:agree_command",
    "estimate": "estimate:estimate_command", "doctor": "doctor:doctor_command", "run": "run:run_command",
    "init": "run:init_command", "verify": "verify:verify_command",
}.items()}


@click.group(cls=SemrelGroup, lazy=COMMANDS, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100,
                                                "auto_envvar_prefix": "SEMREL"})
@click.version_option(semrel_version(), "-V", "--version", prog_name="semrel", allow_from_autoenv=False)
def main() -> None:
    """Evaluate retrieval: golden datasets, BERTScore-derived qrels, human review, trec_eval-exact metrics.

    Any option's default can come from the environment as SEMREL_<COMMAND>_<OPTION>, e.g.
    SEMREL_JUDGE_MODEL=/models/minilm for `semrel judge --model` (--help names the variable of
    per-machine options); the command line wins.
    """


def option_variables(command: click.Command, prefix: str) -> set[str]:
    """The environment variables click reads for the options of `command`, whose prefix is `prefix` (SEMREL_JUDGE
    for `semrel judge`), and of its subcommands at any depth (SEMREL_GOLDEN_IMPORT_FORMAT), each loaded as running it would."""
    found: set[str] = set()
    for param in command.params:
        found.update([param.envvar] if isinstance(param.envvar, str) else param.envvar or ())
        if isinstance(param, click.Option) and param.allow_from_autoenv and param.name:
            found.add(f"{prefix}_{param.name.upper()}")
    if isinstance(command, click.Group):
        context = click.Context(command)
        for name in command.list_commands(context):
            sub = command.get_command(context, name)
            if sub is not None:
                found |= option_variables(sub, f"{prefix}_{name.upper()}".replace("-", "_"))
    return found


def command_variables(*names: str) -> set[str]:
    """The SEMREL_<COMMAND>_<OPTION> variables of `semrel NAMES...` (`corpus`, or `corpus chunk`; none where that is no
    command), or of every command where no name is given."""
    command: click.Command | None = main
    for name in names:
        command = command.get_command(click.Context(command), name) if isinstance(command, click.Group) else None
    return set() if command is None else option_variables(command, "_".join(["SEMREL", *names]).upper().replace("-", "_"))
