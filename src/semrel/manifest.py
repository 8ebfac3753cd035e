"""`<file>.manifest.json` beside every derived file: what it takes to make that file again."""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import sys
from importlib import metadata
from typing import Any, Iterable, Mapping

from .formats.files import STDIO, atomic_writer, file_digest

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


def describe_input(path: str | os.PathLike) -> dict[str, Any]:
    """Path, sha256 and line count (after gunzip) of one input file."""
    name = str(path)
    if name == STDIO or not os.path.isfile(name):
        return {"path": name}
    return {"path": name, **file_digest(name)}


def manifest_path(output: str | os.PathLike) -> str:
    return f"{output}.manifest.json"


def write_manifest(
    output: str | os.PathLike,
    inputs: Iterable[str | os.PathLike] = (),
    params: Mapping[str, Any] | None = None,
    rows: int | None = None,
) -> str | None:
    """Write the manifest of `output` (nothing for stdout) and return its path."""
    if str(output) == STDIO:
        return None
    record = {
        "output": str(output),
        "rows": rows,
        "created_utc": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": [os.path.basename(sys.argv[0]), *sys.argv[1:]],
        "versions": versions(),
        "inputs": [describe_input(p) for p in inputs],
        "params": dict(params or {}),
    }
    target = manifest_path(output)
    with atomic_writer(target) as out:
        json.dump(record, out, indent=2, sort_keys=True, default=str)
        out.write("\n")
    return target


def read_params(path: str | os.PathLike) -> dict[str, Any] | None:
    """The `params` of the manifest beside `path`, or None when there is no readable one."""
    try:
        with open(manifest_path(path), encoding="utf-8") as handle:
            params = json.load(handle).get("params")
    except (OSError, ValueError, AttributeError):
        return None
    return params if isinstance(params, dict) else None
