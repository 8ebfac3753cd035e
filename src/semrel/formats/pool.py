"""pool.tsv: the (query, chunk) pairs to judge, with the runs (or `gold`) that proposed each."""

from __future__ import annotations

import os

from ..errors import FormatError
from .files import display_name, read_text

POOL_HEADER = ("query_id", "chunk_id", "sources")


def read_pool(path: str | os.PathLike) -> list[tuple[str, str, tuple[str, ...]]]:
    """(query id, chunk id, sources) per line after the header `query_id<TAB>chunk_id<TAB>sources`.

    A repeated pair, a wrong column count or a missing header is an error naming the line.
    """
    name = display_name(path)
    lines = read_text(path).splitlines()
    if not lines or tuple(lines[0].rstrip("\r").split("\t")) != POOL_HEADER:
        raise FormatError(name, "missing header", line=1, hint="the first line must be query_id<TAB>chunk_id<TAB>sources")
    pairs: list[tuple[str, str, tuple[str, ...]]] = []
    seen: dict[tuple[str, str], int] = {}
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        fields = line.rstrip("\r").split("\t")
        if len(fields) != 3 or not fields[0] or not fields[1]:
            raise FormatError(name, f"expected 3 tab-separated columns, found {len(fields)}", line=number,
                              hint="query_id<TAB>chunk_id<TAB>sources")
        query_id, chunk_id, sources = fields
        if (query_id, chunk_id) in seen:
            raise FormatError(name, f"pair ({query_id!r}, {chunk_id!r}) already listed on line {seen[query_id, chunk_id]}",
                              line=number)
        seen[query_id, chunk_id] = number
        pairs.append((query_id, chunk_id, tuple(s for s in sources.split(",") if s)))
    return pairs
