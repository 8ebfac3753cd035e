"""Path parameters that say what they are (an input, an output, a review database), and the one
check, made before a command does any work, that no output is one of its inputs.

A command's path parameters are declared with `input_path(...)`, `output_path(...)` or
`database_path(...)` (click.Path otherwise). `check_command_paths` then compares every output, and
the files written beside it (its manifest, sidecars such as `.sources.jsonl`), with every input
and database by identity (the same file after links are resolved: device and inode), refuses
inputs that are devices, FIFOs or sockets, outputs that are folders or devices, and two outputs
naming one file: each with one line, before a long judge run is spent. The library keeps a last
line of defence in `formats.files.atomic_writer` (see `input_guard`).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from typing import Any, Iterable, Iterator

import click

from ..errors import SemrelError
from ..formats.files import MANIFEST_SUFFIX, SQLITE_FILES, STDIO, check_input_file, name_key, no_such_file, note_input, special_kind
from ..formats.manifest import manifest_path

INPUT, OUTPUT, DATABASE = "input", "output", "database"
DATABASE_FILES = ("", *SQLITE_FILES)  # a review database and the files SQLite keeps beside it


class RolePath(click.Path):
    """click.Path that knows whether it names an input, an output (with the files written beside
    it) or a review database."""

    def __init__(self, role: str, sidecars: tuple[str, ...] = (), **kwargs: Any):
        super().__init__(**kwargs)
        self.role, self.sidecars = role, sidecars

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        """A path that must exist and does not: the readers' own line and exit code (1), not click's 'Invalid value ...
        does not exist' (2), so a missing input reads the same from every command."""
        if self.exists and str(value) != STDIO and not os.path.exists(value):
            raise no_such_file(os.fspath(value), "file" if self.file_okay else "folder")
        return super().convert(value, param, ctx)


def input_path(**kwargs: Any) -> RolePath:
    """A file (or, with dir_okay, a folder) the command reads."""
    return RolePath(INPUT, **kwargs)


def output_path(sidecars: tuple[str, ...] = (), **kwargs: Any) -> RolePath:
    """A file the command writes; `sidecars` are suffixes of files written beside it (its
    manifest, `.manifest.json`, is always one)."""
    return RolePath(OUTPUT, sidecars=sidecars, **kwargs)


def database_path(**kwargs: Any) -> RolePath:
    """A review database: read (and written only by the review itself), never replaced."""
    return RolePath(DATABASE, **kwargs)


class FolderPath(click.Path):
    """A folder the command writes into. '-' is refused: elsewhere it means stdin or stdout, and
    `-o -` made a folder named '-'."""

    def __init__(self, **kwargs: Any):
        super().__init__(file_okay=False, **kwargs)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if str(value) == STDIO:
            self.fail("'-' is not a folder (stdout cannot hold files); give a folder's path, './-' for one named '-'", param, ctx)
        return super().convert(value, param, ctx)


@dataclass(frozen=True)
class NamedPath:
    label: str  # how the command line names it: --labels, -o/--output, QRELS
    path: str
    role: str
    sidecars: tuple[str, ...] = ()


def _label(param: click.Parameter) -> str:
    if isinstance(param, click.Option):
        return max(param.opts, key=len)
    return param.human_readable_name


def _given(ctx: click.Context) -> Iterator[tuple[click.Parameter, RolePath, Any]]:
    """(parameter, its path type, value) for each path the command of `ctx` was given (after parsing)."""
    for param in ctx.command.params:
        if not isinstance(param.type, RolePath) or param.name is None:
            continue
        value = ctx.params.get(param.name)
        values: Iterable[Any] = value if isinstance(value, (tuple, list)) else [value]
        yield from ((param, param.type, item) for item in values if item is not None and str(item) != "")


def command_paths(ctx: click.Context) -> list[NamedPath]:
    """The path parameters given to the command of `ctx` (after parsing), '-' left out."""
    return [NamedPath(_label(param), os.fspath(item), kind.role, kind.sidecars)
            for param, kind, item in _given(ctx) if str(item) != STDIO]


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def check_command_paths(ctx: click.Context) -> None:
    """Refuse (SemrelError, one line) what would read a device or write over an input; remember
    the inputs in the current input guard."""
    paths = command_paths(ctx)
    read: dict[tuple[int, int], NamedPath] = {}
    reserved: dict[str, NamedPath] = {}  # a database's journal files, which SQLite may make at any time
    stdin = [_label(param) for param, kind, item in _given(ctx) if kind.role == INPUT and str(item) == STDIO]
    if len(stdin) > 1:  # the first would read it all and the second find nothing
        both = f"{stdin[0]} name '-' (stdin) twice" if stdin[0] == stdin[1] else f"{stdin[0]} and {stdin[1]} both read '-' (stdin)"
        raise SemrelError(f"{both}: only one input can come from stdin")  # 'RUNS and RUNS both read' named one option twice
    stdout = [_label(param) for param, kind, item in _given(ctx) if kind.role == OUTPUT and str(item) == STDIO]
    if len(stdout) > 1:  # both would be written to stdout, one after the other, as if they were one file
        raise SemrelError(f"{stdout[0]} and {stdout[1]} both write '-' (stdout): only one output can go to stdout; "
                          "give the other a file name (nothing was written)")
    for named in paths:
        if named.role == OUTPUT:
            continue
        if named.role == DATABASE:
            reserved.update({name_key(named.path + suffix): named for suffix in DATABASE_FILES})
        if named.role == INPUT and os.path.lexists(named.path):
            check_input_file(named.path, folder_ok=True)
        # an input's manifest is read too (label takes the judge's settings, review the labels' rule from it)
        files = [named.path + suffix for suffix in DATABASE_FILES] if named.role == DATABASE else [named.path, manifest_path(named.path)]
        for file in files:
            info = _stat(file)
            if info is None:
                continue
            if named.role == DATABASE and file == named.path and (kind := special_kind(info.st_mode)):
                raise SemrelError(f"{file}: is {kind}, not a review database file")
            source = named if file == named.path or named.role == DATABASE else NamedPath(f"{named.label}'s manifest", file, named.role)
            first = read.setdefault((info.st_dev, info.st_ino), source)
            if first.role != named.role and DATABASE in (first.role, named.role):
                raise SemrelError(f"{named.label} {named.path} and {first.label} {first.path} are the same file: a review "
                                  "database is never read as another input, nor written as one")
            note_input(file, info)
    written: dict[str, NamedPath] = {}
    for named in (p for p in paths if p.role == OUTPUT):
        info = _stat(named.path)
        if info is not None and stat.S_ISDIR(info.st_mode):
            raise SemrelError(f"{named.label} {named.path}: is a folder; give the output a file name")
        if info is not None and (kind := special_kind(info.st_mode)):
            raise SemrelError(f"{named.label} {named.path}: is {kind}; semrel writes outputs to files (use '-' for stdout)")
        for file in [named.path, manifest_path(named.path), *(named.path + s for s in named.sidecars)]:
            found = _stat(file)
            if found is not None and (found.st_dev, found.st_ino) in read:
                source = read[found.st_dev, found.st_ino]
                what = "the review database" if source.role == DATABASE else "an input"
                beside = "" if file == named.path else f" (which writes {file} beside it)"
                raise SemrelError(f"{named.label} {named.path}{beside} would overwrite {what}, {source.label} {source.path}: "
                                  "semrel never writes over its inputs; give another file name (nothing was written)")
            real = name_key(file)
            if real in reserved:
                source = reserved[real]
                raise SemrelError(f"{named.label} {named.path} would overwrite a file of the review database, {source.label} "
                                  f"{source.path}: semrel never writes over its inputs; give another file name (nothing was written)")
            if real in written and written[real] != named:
                other = written[real]
                raise SemrelError(f"{named.label} {named.path} and {other.label} {other.path} name the same file; "
                                  "give each output its own name (nothing was written)")
            written[real] = named
        if named.path.endswith(MANIFEST_SUFFIX):  # it would replace the record of how another file, no input, was made
            raise SemrelError(f"{named.label} {named.path}: a name ending in {MANIFEST_SUFFIX} is where semrel keeps the manifest of "
                              f"{named.path.removesuffix(MANIFEST_SUFFIX)}; give the output another file name (nothing was written)")
