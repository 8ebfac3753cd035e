"""JSON Lines: one object per line, read with line numbers for errors, written atomically."""

from __future__ import annotations

import json
import os
from typing import Any, Iterable, Iterator

import jsonlines

from ..errors import FormatError
from .files import atomic_writer, display_name, read_lines


def read_jsonl(path: str | os.PathLike) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-empty line; anything but a JSON object is an error."""
    # Only "\n" ends a line: JSON strings may hold U+2028 and other characters splitlines() breaks at.
    for number, line in read_lines(path):
        if not line.strip():
            continue
        yield number, json_object(line, path, number)


def json_object(line: str, path: str | os.PathLike, number: int) -> dict[str, Any]:
    """One line of a JSON Lines file, which must hold a JSON object; errors name the file and line."""
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        raise FormatError(display_name(path), f"invalid JSON ({exc.msg})", line=number) from None
    if not isinstance(value, dict):
        raise FormatError(display_name(path), f"expected a JSON object, found {type(value).__name__}", line=number)
    return value


def require(obj: dict[str, Any], key: str, path: str | os.PathLike, line: int, kind: type | tuple = str) -> Any:
    """obj[key], which must exist and be of `kind`; otherwise a FormatError naming the line."""
    if key not in obj:
        raise FormatError(display_name(path), f"missing field {key!r}", line=line)
    value = obj[key]
    if not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise FormatError(display_name(path), f"field {key!r} should be {names}, found {type(value).__name__}", line=line)
    return value


def write_jsonl(rows: Iterable[dict[str, Any]], path: str | os.PathLike) -> int:
    """Write rows atomically; returns how many were written."""
    count = 0
    with atomic_writer(path) as out:
        with jsonlines.Writer(out, compact=True, sort_keys=False) as writer:
            for row in rows:
                writer.write(row)
                count += 1
    return count
