"""Records given in place of a file, as the Python API takes them (a list of Chunk for a corpus.jsonl):
checked as the file's reader checks its lines, so records and files give the same errors, not wrong numbers."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from typing import Any, Callable

from ..errors import ValidationError


def records_given(value: Any, kind: str, record: type | tuple[type, ...], key: Callable[[Any], Hashable], key_name: str, *,
                  what: str | None = None, problem: Callable[[Any], str | None] | None = None, empty_ok: bool = False) -> list:
    """`value`, the records given for the parameter `kind`, as a list: an iterable (not text or a mapping) of `record`s
    (`what` names them; default the record's class), each without a `problem`, none with the `key` of an earlier one
    (as a file may not repeat a line's id), and not empty unless `empty_ok`. A wrong kind is a TypeError, a bad record
    a ValidationError; each names the parameter and the item."""
    what = what or getattr(record, "__name__", str(record))
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise TypeError(f"{kind}: give a file path or a list of {what}, not {type(value).__name__}")
    items = list(value)
    first: dict[Hashable, int] = {}
    for number, item in enumerate(items):
        if not isinstance(item, record):
            raise TypeError(f"{kind}: give a file path or a list of {what}, not of {type(item).__name__} (item {number}: {item!r:.60})")
        trouble = problem(item) if problem is not None else None
        if trouble:
            raise ValidationError(f"{kind}: item {number}: {trouble}")
        earlier = first.setdefault(key(item), number)
        if earlier != number:
            raise ValidationError(f"{kind}: item {number}: {key_name} {key(item)!r} is given twice (first as item {earlier})")
    if not items and not empty_ok:
        raise ValidationError(f"{kind}: the list is empty; give at least one {what}")
    return items
