"""pool.tsv: the (query, chunk) pairs to judge and where each came from.

A header `query_id<TAB>chunk_id<TAB>sources`, then one pair per line; `sources` is a
comma-joined sorted list of run names and/or `gold`. Rows are sorted by query id, then chunk id.
"""

from __future__ import annotations

import os
from typing import Iterable, Iterator

from ..errors import FormatError, SemrelError, ValidationError
from .files import STDIO, atomic_writer, check_id, display_name, line_id, read_lines
from .given import records_given
from .kinds import POOL, expecting

POOL_HEADER = ("query_id", "chunk_id", "sources")
PoolRow = tuple[str, str, tuple[str, ...]]


def source_ok(source: str) -> bool:
    """Whether a run name can be a pool.tsv source: one token, no comma (sources are comma-separated)."""
    return bool(source) and "," not in source and not any(ch.isspace() for ch in source)


def _lines(path: str | os.PathLike) -> Iterator[tuple[int, str]]:
    """(number, line) of a pool.tsv, a line at a time (SEMREL_MAX_LINE_MB holds), a CRLF's CR dropped."""
    return ((number, line.removesuffix("\r")) for number, line in read_lines(path))


def read_pool(path: str | os.PathLike) -> list[PoolRow]:
    """The rows of a pool.tsv in file order; a malformed line is a FormatError naming it."""
    name = display_name(path)
    lines = _lines(path)
    _, header = next(lines, (1, ""))
    with expecting(path, POOL):
        if tuple(header.split("\t")) != POOL_HEADER:
            raise FormatError(name, "first line should be the header 'query_id<TAB>chunk_id<TAB>sources'", line=1,
                              hint="write pools with `semrel pool`")
    rows: list[PoolRow] = []
    seen: dict[tuple[str, str], int] = {}
    for number, line in lines:
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 3:
            raise FormatError(name, f"expected 3 tab-separated fields, found {len(fields)}", line=number)
        query_id, chunk_id, joined = fields
        line_id(query_id, "query id", path, number)
        line_id(chunk_id, "chunk id", path, number)
        sources = tuple(joined.split(","))
        if not all(source_ok(s) for s in sources):
            raise FormatError(name, f"sources {joined!r} should be comma-joined names (runs or 'gold')", line=number)
        if (query_id, chunk_id) in seen:
            raise FormatError(name, f"pair ({query_id!r}, {chunk_id!r}) already on line {seen[query_id, chunk_id]}", line=number)
        seen[query_id, chunk_id] = number
        rows.append((query_id, chunk_id, sources))
    return rows


def pool_error(pool: str, message: str, query_id: str, chunk_id: str | None = None) -> SemrelError:
    """The error for a pair of the pool named `pool` (a pool.tsv, or records): its file and, where the file holds
    the pair, its line. Only read when there is an error, so read_pool keeps no line numbers."""
    if pool != STDIO and os.path.isfile(pool):
        for number, line in _lines(pool):
            fields = line.split("\t")
            if number > 1 and fields[0] == query_id and (chunk_id is None or fields[1:2] == [chunk_id]):
                return FormatError(display_name(pool), message, line=number)
    return ValidationError(f"{display_name(pool)}: {message}")


def _pair_problem(pair: tuple | list) -> str | None:
    """What keeps a record from being a pool.tsv line, if anything: two ids and a non-empty list of sources."""
    if len(pair) == 3 and isinstance(pair[0], str) and isinstance(pair[1], str) and isinstance(pair[2], (tuple, list)) \
            and pair[2] and all(isinstance(s, str) and source_ok(s) for s in pair[2]):
        return None
    return f"{pair!r:.80} is not (query_id, chunk_id, sources), sources a tuple of names (runs or 'gold')"


def given_pool(pool: str | os.PathLike | Iterable[PoolRow]) -> tuple[list[PoolRow], str | os.PathLike | None]:
    """(the pairs, the file they came from) for the Python API: a pool.tsv read, or (query_id, chunk_id, sources)
    tuples checked as its lines are (no pair twice); none is a pool of the gold chunks alone."""
    if isinstance(pool, (str, os.PathLike)):
        return read_pool(pool), pool
    return records_given(pool, "pool", (tuple, list), lambda pair: (pair[0], pair[1]), "pair",
                         what="(query_id, chunk_id, sources) tuples", problem=_pair_problem, empty_ok=True), None


def write_pool(rows: Iterable[PoolRow], path: str | os.PathLike) -> int:
    """Write rows sorted by query id then chunk id, sources sorted; returns the row count."""
    ordered = sorted((q, c, tuple(sorted(set(s)))) for q, c, s in rows)
    for q, c, sources in ordered:
        check_id(q, "query id")
        check_id(c, "chunk id")
        if not sources or not all(source_ok(s) for s in sources):
            raise SemrelError(f"pair ({q!r}, {c!r}) has bad sources {sources!r}; sources are names without commas or blanks")
    with atomic_writer(path) as out:
        out.write("\t".join(POOL_HEADER) + "\n")
        out.writelines(f"{q}\t{c}\t{','.join(s)}\n" for q, c, s in ordered)
    return len(ordered)
