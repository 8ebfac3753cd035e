"""Fast parsing of whitespace-separated column files (TREC runs and qrels).

Arrow's CSV reader does the work; when it refuses a file, a plain line-by-line pass finds
the first bad line so the error can name it.
"""

from __future__ import annotations

import io
import math
import re
from typing import Callable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from ..errors import FormatError, ValidationError
from .files import GZIP_MAGIC, STDIO, UTF8_BOM, display_name, not_utf8, open_input, read_bytes

_RUNS_OF_BLANKS = re.compile(rb"[ \t]+")
_LINE_EDGES = re.compile(rb"^ +| +$", re.MULTILINE)

Check = Callable[[str], object]


def _arrow_read(data: bytes | str, names: Sequence[str], types: dict[str, pa.DataType]) -> pa.Table:
    return pacsv.read_csv(
        io.BytesIO(data) if isinstance(data, bytes) else data,
        read_options=pacsv.ReadOptions(column_names=list(names), block_size=1 << 24),
        parse_options=pacsv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False, escape_char=False),
        convert_options=pacsv.ConvertOptions(
            column_types=types, include_columns=[n for n in names if n in types], strings_can_be_null=False,
            quoted_strings_can_be_null=False, null_values=[],
        ),
    )


def read_plain_file(path: str, names: Sequence[str], types: dict[str, pa.DataType]) -> pa.Table | None:
    """Arrow reads a plain file straight from disk (no copy of its bytes in Python); None where it
    cannot (stdin, gzip, a BOM, anything it refuses): the caller then reads the bytes itself."""
    if path == STDIO:
        return None
    with open_input(path) as handle:  # a regular file (Arrow would read /dev/zero forever), remembered as an input
        head = handle.read(3)
    try:
        if not head or head[:2] == GZIP_MAGIC or head == UTF8_BOM:
            return None
        return _arrow_read(path, names, types)
    except (OSError, pa.ArrowInvalid, pa.ArrowTypeError):
        return None


def normalise(data: bytes) -> bytes:
    """Single spaces between columns, no CR, no blanks at line ends: the form Arrow reads fast."""
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if b"\t" in data or b"  " in data:
        data = _RUNS_OF_BLANKS.sub(b" ", data)
    if b" \n" in data or b"\n " in data or data[:1] == b" " or data.endswith(b" "):
        data = _LINE_EDGES.sub(b"", data)
    return data


def read_columns(
    data: bytes, path: str, names: Sequence[str], types: dict[str, pa.DataType], checks: dict[int, tuple[str, Check]], what: str
) -> pa.Table:
    """Parse `data` into the typed columns named in `types`; a bad line raises FormatError naming it.

    `checks` maps a column position to (what it should be, a parser that raises on bad values)
    for the line-by-line pass that explains a refusal.
    """
    if not data or data.isspace():
        return pa.table({n: pa.array([], type=t) for n, t in types.items()})
    try:
        return _arrow_read(data, names, types)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        pass
    data = normalise(data)  # tabs, runs of blanks, blanks at line ends: rare, so only on refusal
    try:
        return _arrow_read(data, names, types)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        first_bad_line(data, path, len(names), checks, what)
        raise FormatError(display_name(path), f"could not be read as {what}") from None


def first_bad_line(data: bytes, path: str, ncols: int, checks: dict[int, tuple[str, Check]], what: str) -> None:
    """Raise FormatError for the first line that is not `ncols` valid columns."""
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise not_utf8(path, number) from None
        parts = line.split()
        if len(parts) != ncols:
            raise FormatError(
                display_name(path), f"expected {ncols} columns ({what}), found {len(parts)}", line=number
            )
        for column, (expected, parse) in checks.items():
            try:
                parse(parts[column])
            except ValueError:
                raise FormatError(
                    display_name(path), f"column {column + 1} is {parts[column]!r}, expected {expected}", line=number
                ) from None


def line_number(data: bytes, row: int) -> int:
    """1-based line of the `row`-th non-empty line (0-based) of normalised data."""
    seen = -1
    for number, raw in enumerate(normalise(data).split(b"\n"), start=1):
        if raw.strip():
            seen += 1
            if seen == row:
                return number
    return seen + 1


def finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def first_nonfinite(values: np.ndarray) -> int | None:
    bad = np.flatnonzero(~np.isfinite(values))
    return int(bad[0]) if len(bad) else None


def duplicate_error(source: str | None, row: int, query: str, doc: str, what: str) -> Exception:
    """The error for a (query, doc) pair listed twice, naming the file's line where it can."""
    message = f"duplicate {what} for query {query!r} and doc {doc!r}"
    hint = "each document may appear once per query"
    if source is None:
        return ValidationError(f"{message} (row {row + 1}; {hint})")
    if source == STDIO:
        return FormatError(display_name(source), f"{message} (the {row + 1}th line with content)", hint=hint)
    data = read_bytes(source)
    header = 1 if data.startswith(b"query-id") else 0  # a BEIR qrels file's first line
    return FormatError(source, message, line=line_number(data, row + header), hint=hint)
