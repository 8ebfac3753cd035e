"""`<file>.manifest.json` beside every derived file: what it takes to make that file again."""

from __future__ import annotations

import contextlib
import contextvars
import datetime as _dt
import json
import os
import platform
import sys
from importlib import metadata
from typing import Any, Iterable, Iterator, Mapping, Sequence

from ..errors import UsageError
from .files import STDIO, Staged, atomic_writer, file_digest, files_as_one, folder_digest, manifest_path, stdin_digest
from .jsonl import too_deep

LIBRARIES = ("numpy", "pyarrow", "torch", "transformers", "bert-score", "click", "jsonlines")


def versions() -> dict[str, str]:
    """Versions of Python, semrel and the libraries that shape results (read without importing them)."""
    found = {"python": platform.python_version()}
    for name in ("semrel", *LIBRARIES):
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def describe_input(path: str | os.PathLike, read_from: str | os.PathLike | None = None) -> dict[str, Any]:
    """Path, sha256 and line count (after gunzip) of one input file, or sha256 and file count of an input
    folder (documents, a BEIR or Cranfield folder); `read_from`: where it lies now, when it is staged under
    another name (see files_as_one)."""
    name = str(path)
    if name == STDIO:
        return {"path": name, **stdin_digest()}
    source = str(read_from or name)
    if os.path.isdir(source):
        return {"path": name, **folder_digest(source)}
    if not os.path.isfile(source):
        return {"path": name}
    return {"path": name, **file_digest(source)}


_STEP: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("semrel_run_step", default=None)


@contextlib.contextmanager
def recorded_step(command: Sequence[str]) -> Iterator[None]:
    """Manifests written inside the block record `command` as their "step": the command a `semrel run` step ran. The
    run's own command line ("command") leaves out what SEMREL_* variables set (a threshold from the environment), so it
    alone did not say how the file was made."""
    token = _STEP.set(list(command))
    try:
        yield
    finally:
        _STEP.reset(token)


def write_manifest(
    output: str | os.PathLike,
    inputs: Iterable[str | os.PathLike] = (),
    params: Mapping[str, Any] | None = None,
    rows: int | None = None,
    staged: Mapping[str, str] | None = None,
) -> str | None:
    """Write the manifest of `output` (nothing for stdout) and return its path. `staged`: the names
    files_as_one gave `output`, its manifest and any input written with them; the record names the targets."""
    if str(output) == STDIO:
        return None
    target = manifest_path(output)
    save_manifest(manifest_record(output, inputs, params, rows, staged), (staged or {}).get(target, target))
    return target


def manifest_record(
    output: str | os.PathLike,
    inputs: Iterable[str | os.PathLike] = (),
    params: Mapping[str, Any] | None = None,
    rows: int | None = None,
    staged: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """What write_manifest records of `output` (a file that exists): for a caller that keeps it inside another record."""
    where = staged or {}
    return {
        "output": str(output),
        "rows": rows,
        "created_utc": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": [_program(), *sys.argv[1:]],
        **({"step": step} if (step := _STEP.get()) else {}),
        "cwd": os.getcwd(),  # where the command's relative paths (and those below) are read from
        "versions": versions(),
        "inputs": [describe_input(p, where.get(str(p))) for p in inputs],
        "params": dict(params or {}),
        "output_digest": _output_digest(where.get(str(output), output)),
    }


def _program() -> str:
    """The command's name as a user types it: `python -m semrel` runs semrel/__main__.py, which is `semrel`."""
    name = os.path.basename(sys.argv[0])
    return "semrel" if name == "__main__.py" else name


@contextlib.contextmanager
def outputs_with_manifests(outputs: Sequence[str | os.PathLike], superseded: Sequence[str] = ()) -> Iterator[Staged]:
    """Outputs and their manifests written as one unit (files_as_one), each output after its
    manifest (so the hidden staging folder is named after an output): yields {name: staged name} for
    outputs and manifests alike ('-', stdout, is itself and has no manifest). Write each output to
    its staged name, then write_manifest(..., staged=). `superseded`: as files_as_one's."""
    files = [str(o) for o in outputs if str(o) != STDIO]
    if len(outputs) - len(files) > 1:  # they would follow one another on stdout, as if they were one file
        raise UsageError("two outputs are '-' (stdout): only one output can go to stdout; give the others file names")
    with files_as_one([name for output in files for name in (manifest_path(output), output)], superseded) if files \
            else contextlib.nullcontext(Staged()) as staged:
        yield Staged({STDIO: STDIO, **staged})


def save_manifest(record: Mapping[str, Any], target: str | os.PathLike) -> str:
    """Write a manifest record to `target`, atomically, as every manifest is written."""
    with atomic_writer(target) as out:
        json.dump(record, out, indent=2, sort_keys=True, default=str)
        out.write("\n")
    return str(target)


def _output_digest(path: str | os.PathLike) -> dict[str, Any]:
    return {"bytes": os.path.getsize(path), **file_digest(path)}


def read_manifest(path: str | os.PathLike, current: bool = True) -> dict[str, Any] | None:
    """The manifest beside `path`, or None when there is none, it is unreadable, or (`current`) it describes
    another file (a hard kill between the two renames of outputs_with_manifests, an output edited or
    written by another tool since: the digest tells). Manifests without a digest (older semrel) are taken as they are.
    current=False: the record whichever file it describes, to say what wrote the file before it changed.
    stdin ('-') has none: a file named '-.manifest.json' describes no stream."""
    if str(path) == STDIO:
        return None
    try:
        if not os.path.isfile(manifest_path(path)):  # a FIFO or device is no manifest (and opening one could block)
            return None
        with open(manifest_path(path), encoding="utf-8") as handle:
            text = handle.read(1 << 24)
        record = None if too_deep(text) else json.loads(text)
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(record, dict):
        return None
    recorded = record.get("output_digest")
    if recorded is None or not current:
        return record
    try:
        same = os.path.getsize(path) == recorded.get("bytes") and _output_digest(path) == recorded
    except (OSError, AttributeError):
        same = False
    return record if same else None


def manifest_is_stale(path: str | os.PathLike) -> bool:
    """True when a manifest lies beside `path` but does not describe it (see read_manifest)."""
    return str(path) != STDIO and os.path.exists(manifest_path(path)) and read_manifest(path) is None


def read_params(path: str | os.PathLike) -> dict[str, Any] | None:
    """The `params` of the manifest beside `path`, or None when there is no readable, current one."""
    params = (read_manifest(path) or {}).get("params")
    return params if isinstance(params, dict) else None
