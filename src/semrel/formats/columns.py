"""Fast parsing of whitespace-separated column files (TREC runs and qrels).

Arrow's CSV reader does the work; when it refuses a file, a plain line-by-line pass finds
the first bad line so the error can name it.
"""

from __future__ import annotations

import io
import math
import os
import re
import unicodedata
from typing import Callable, Iterator, NoReturn, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from ..errors import FormatError, ValidationError
from .files import GZIP_MAGIC, STDIO, UTF8_BOM, display_name, line_ends, not_utf8, open_input, read_blocks
from .parquet import is_parquet

_RUNS_OF_BLANKS = re.compile(rb" {2,}")
_LINE_EDGES = re.compile(rb"^ +| +$", re.MULTILINE)
_COMMENT_LINES = re.compile(rb"(?:^|(?<=\r))[ \t]*#[^\n\r]*", re.MULTILINE)  # a lone CR ends a line too (see normalise)

Check = Callable[[str], object]
ARROW_BLOCK = 1 << 24  # bytes Arrow's CSV reader takes at a time: no line may be longer


def _arrow_read(data: bytes | str, names: Sequence[str], types: dict[str, pa.DataType]) -> pa.Table:
    return pacsv.read_csv(
        io.BytesIO(data) if isinstance(data, bytes) else data,
        read_options=pacsv.ReadOptions(column_names=list(names), block_size=ARROW_BLOCK),
        parse_options=pacsv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False, escape_char=False),
        convert_options=pacsv.ConvertOptions(
            column_types=types, include_columns=[n for n in names if n in types], strings_can_be_null=False,
            quoted_strings_can_be_null=False, null_values=[],
        ),
    )


def read_plain_file(path: str, names: Sequence[str], types: dict[str, pa.DataType]) -> pa.Table | None:
    """Arrow reads a plain file straight from disk (no copy of its bytes in Python); None where it
    cannot (stdin, gzip, a BOM, comment lines, irregular spacing, anything it refuses): the caller then gives the file to
    read_columns."""
    if path == STDIO:
        return None
    with open_input(path) as handle:  # a regular file (Arrow would read /dev/zero forever), remembered as an input
        head = handle.read(3)
        if not head or head[:2] == GZIP_MAGIC or head == UTF8_BOM or head[:1] == b"#":
            return None
    if any(irregular(block) or b"\x00" in block for block in read_blocks(path, BLOCK_BYTES)):  # whole lines: a blank at an
        return None  # edge is at a line's; see read_columns (one pass over the bytes, a fraction of the parse), which refuses a NUL
    try:  # Arrow takes a name as UTF-8: under LC_ALL=C Python holds a name's other bytes as surrogates, which it cannot encode
        table = _arrow_read(os.fsencode(path).decode("utf-8"), names, types)
    except (OSError, UnicodeError, pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    first = names[0]
    if first in types and len(table) and pc.any(pc.starts_with(table.column(first), "#")).as_py():
        return None  # a comment line that happened to have as many fields as a data line
    return table


def irregular(data: bytes) -> bool:
    """Whether `data`'s lines are spaced otherwise than by single spaces (a tab, a run of blanks, a blank at a line's
    edge): Arrow, which splits at each space, would read an empty field there (' q1 0 1' as query '', doc '0'), or keep
    a tab in an id ('TAB q1'), where normalise mends the line or the line is refused."""
    if b"\t" in data:
        return True
    codes = np.frombuffer(data, np.uint8)  # a blank beside a blank or a line's end: 4 times faster than 5 searches
    blank = codes == 32
    edge = blank | (codes == 10) | (codes == 13)
    return bool(blank[:1].any() or blank[-1:].any() or (blank[1:] & edge[:-1]).any() or (blank[:-1] & edge[1:]).any())


def refuse_nul(block: bytes, path: str, first: int) -> None:
    """A NUL byte belongs to no id or number: it marks a binary file or one damaged in a copy. Read on, it would sit in
    an id that matches nothing (trec_eval's C strings end at it), so it is refused at its line (`block`'s first line
    is the file's line `first`)."""
    at = block.find(b"\x00")
    if at >= 0:
        raise FormatError(display_name(path), "holds a NUL byte, the mark of a binary file or of one damaged in a copy",
                          line=first + line_ends(block, at), hint="write the file again from its source")


def blank_comments(data: bytes) -> bytes:
    """Comment lines (`#` first, after any blanks) emptied, as trec_eval skips them; a `#` inside a
    field (`doc#3`) is data. Line numbers are kept."""
    if b"#" not in data:
        return data
    return _COMMENT_LINES.sub(b"", data)


BLOCK_BYTES = 1 << 24


def _blocks(content: bytes | str) -> Iterator[bytes]:
    """`content` (bytes read, or the path of a file) in blocks of whole lines of about BLOCK_BYTES: what a regular
    expression builds on the way (a piece per match) and what a parse holds stay a block's size, whatever the file's
    (a 39 MB tab-separated run took 1.9 GB at once; a 300 MB one was read whole, past SEMREL_MAX_DOCUMENT_MB refused)."""
    if isinstance(content, str):
        yield from read_blocks(content, BLOCK_BYTES)
        return
    start = 0
    while start < len(content):
        end = content.find(b"\n", start + BLOCK_BYTES)
        end = len(content) if end < 0 else end + 1
        yield content[start:end]
        start = end


def keep_fields(data: bytes, count: int) -> bytes:
    """Normalised lines cut after their `count`-th field: trec_eval ignores what follows a run's sixth."""
    return re.sub(rb"^((?:[^ \n]+ ){%d}[^ \n]+) [^\n]*$" % (count - 1), rb"\1", data, flags=re.MULTILINE)


def normalise(data: bytes) -> bytes:
    """Single spaces between columns, no CR, no blanks at line ends: the form Arrow reads fast."""
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if b"\t" in data:  # one tab between columns (the usual other form) needs no regular expression
        data = data.replace(b"\t", b" ")
    if b"  " in data:
        data = _RUNS_OF_BLANKS.sub(b" ", data)
    if b" \n" in data or b"\n " in data or data[:1] == b" " or data.endswith(b" "):
        data = _LINE_EDGES.sub(b"", data)
    return data


def read_columns(
    content: bytes | str, path: str, names: Sequence[str], types: dict[str, pa.DataType], checks: dict[int, tuple[str, Check]],
    what: str, extra_fields: bool = False,
) -> pa.Table:
    """Parse `content` (the bytes read, or the path of a file, a block of lines at a time) into the typed columns named
    in `types`; a bad line raises FormatError naming it.

    `checks` maps a column position to (what it should be, a parser that raises on bad values)
    for the line-by-line pass that explains a refusal. `extra_fields`: fields after the last named
    column are ignored (trec_eval's runs). Lines starting with `#` are comments, skipped as trec_eval does.
    """
    tables, number = [], 1  # the file's line that opens the block
    for block in _blocks(content):
        refuse_nul(block, path, number)
        table = _read_block(block, names, types, extra_fields)
        if table is None:
            _explain(block, number, path, names, checks, what, extra_fields)
        if len(table):
            tables.append(table)
        number += line_ends(block)
    return tables[0] if len(tables) == 1 else pa.concat_tables(tables) if tables else _empty(types)


def _read_block(data: bytes, names: Sequence[str], types: dict[str, pa.DataType], extra_fields: bool) -> pa.Table | None:
    """The rows of a block of whole lines; None where Arrow refuses it even mended."""
    if not data or data.isspace():
        return _empty(types)
    try:
        table = _arrow_read(data, names, types) if not irregular(data) else None
        if table is not None and not (b"#" in data and _has_comment_rows(table, names, types)):
            return table
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        pass
    data = normalise(blank_comments(data))  # all rare, so only on refusal
    if not data.strip():
        return _empty(types)
    for attempt in ("normalised", "cut") if extra_fields else ("normalised",):
        if attempt == "cut":  # fields past the last named one, which trec_eval ignores
            data = keep_fields(data, len(names))
        try:
            return _arrow_read(data, names, types)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            pass
    return None


def _explain(block: bytes, number: int, path: str, names: Sequence[str], checks: dict[int, tuple[str, Check]], what: str,
             extra_fields: bool) -> NoReturn:
    """Raise the FormatError for a block Arrow refused (its first line the file's line `number`): its first bad line,
    else its first line too long for Arrow, else what it is not. The blocks before it were read, so only this one is
    gone through line by line: a bad line at the end of 5.6M took 11 s when every block was."""
    block = normalise(blank_comments(block))
    block = keep_fields(block, len(names)) if extra_fields else block
    first_bad_line(block, path, len(names), checks, what, extra_fields, first=number)
    _first_long_line(block, path, first=number)
    raise FormatError(display_name(path), f"could not be read as {what}")


def _first_long_line(data: bytes, path: str, first: int = 1) -> None:
    """Arrow reads no line longer than its block (a run or qrels line is a few dozen bytes): name the first (`data`'s
    first line is the file's line `first`)."""
    start, number = 0, first
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        if end - start > ARROW_BLOCK:
            raise FormatError(display_name(path), f"the line is {end - start:,} bytes long; semrel reads lines of up to "
                              f"{ARROW_BLOCK >> 20} MB here", line=number)
        start, number = end + 1, number + 1


def _empty(types: dict[str, pa.DataType]) -> pa.Table:
    return pa.table({n: pa.array([], type=t) for n, t in types.items()})


def _has_comment_rows(table: pa.Table, names: Sequence[str], types: dict[str, pa.DataType]) -> bool:
    first = names[0]
    return first in types and bool(len(table)) and bool(pc.any(pc.starts_with(table.column(first), "#")).as_py())


def first_bad_line(data: bytes, path: str, ncols: int, checks: dict[int, tuple[str, Check]], what: str,
                   extra_fields: bool = False, first: int = 1) -> None:
    """Raise FormatError for the first line that is not `ncols` valid columns (or more, with `extra_fields`); `data`'s
    first line is the file's line `first`."""
    for number, raw in enumerate(data.split(b"\n"), start=first):
        if not raw.strip() or raw.lstrip().startswith(b"#"):
            continue
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise not_utf8(path, number) from None
        parts = line.split(" ")  # normalised: one space between columns (str.split() would also split at a no-break space)
        if len(parts) < ncols or len(parts) > ncols and not extra_fields:
            later = "; any after them are ignored" if extra_fields else ""
            odd = next((c for c in line if c.isspace() and c != " "), None)
            hint = odd and f"it holds {unicodedata.name(odd, 'a blank')} (U+{ord(odd):04X}), which separates no columns: use spaces or tabs"
            raise FormatError(
                display_name(path), f"expected {ncols} columns ({what}{later}), found {len(parts)}{f': {hint}' if hint else ''}",
                line=number,
            )
        for column, (expected, parse) in checks.items():
            try:
                parse(parts[column])
            except ValueError:
                raise FormatError(
                    display_name(path), f"column {column + 1} is {parts[column]!r}, expected {expected}", line=number
                ) from None


def line_number(content: bytes | str, row: int) -> int:
    """1-based line of the `row`-th non-empty line (0-based) of normalised content (see row_line)."""
    return row_line(content, row)[0]


def row_line(content: bytes | str, row: int) -> tuple[int, bytes]:
    """The 1-based number and the normalised text of the `row`-th non-empty line (0-based) of `content`: its bytes,
    or the path of a file Arrow read from disk, gone through a block at a time (a file of any size, never read whole)."""
    seen, number = -1, 0
    for block in [content] if isinstance(content, bytes) else read_blocks(content):
        mended = normalise(blank_comments(block))
        lines = mended.split(b"\n")
        if mended.endswith(b"\n"):
            lines.pop()  # the line end (a lone CR too) ends the block's last line, it opens none
        for raw in lines:
            number += 1
            if raw.strip():
                seen += 1
                if seen == row:
                    return number, raw
    return seen + 1, b""


_DECIMAL = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


def finite_float(text: str) -> float:
    """A number as Arrow reads one (ASCII digits: Python's float also takes '١' and '1_000'), and finite."""
    if not _DECIMAL.fullmatch(text):
        raise ValueError(text)
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def is_float(text: str) -> bool:
    """Whether Python reads `text` as a float: enough to tell a number from a word (a header, a typo) in a line."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def whole_number(text: str) -> int:
    """An integer as Arrow's int64 reads one: ASCII digits, a minus sign at most (no plus), within 64 bits."""
    if not re.fullmatch(r"-?[0-9]+", text) or not -(2**63) <= int(text) < 2**63:
        raise ValueError(text)
    return int(text)


def require_finite(values: np.ndarray, path: str, field: int, what: str, content: bytes | str) -> None:
    """Refuse the first value of a column that is not finite, naming its line and the text written there (Arrow reads
    1e400 as inf, which the file does not say); `content`: the bytes read, or the path of a file Arrow read from disk."""
    bad = np.flatnonzero(~np.isfinite(values))
    if not len(bad):
        return
    line, text = row_line(content, int(bad[0]))
    fields = text.split()
    written = fields[field].decode("utf-8", "replace") if len(fields) > field else str(values[bad[0]])
    raise FormatError(display_name(path), f"{what} {written} is not a finite number", line=line)


def duplicate_error(source: str | None, row: int, query: str, doc: str, what: str) -> Exception:
    """The error for a (query, doc) pair listed twice, naming the file's line where it can."""
    message = f"duplicate {what} for query {query!r} and doc {doc!r}"
    hint = "each document may appear once per query"
    if source is None:
        return ValidationError(f"{message} (row {row + 1}; {hint})")
    if source == STDIO:
        return FormatError(display_name(source), f"{message} (line {row + 1} not counting blank and comment lines)", hint=hint)
    if is_parquet(source):
        return FormatError(display_name(source), f"{message} (row {row + 1})", hint=hint)
    head = next(read_blocks(source), b"")  # the file's first lines: it may be larger than any file read whole
    header = 1 if head.startswith(b"query-id") else 0  # a BEIR qrels file's first line
    if what == "judgment" and len(groups := _second_column(head)) > 1:
        named = ", ".join(sorted(groups)[:3]) + (", ..." if len(groups) > 3 else "")
        hint = (f"{hint}; its second column names {len(groups)} groups ({named}): if each is one assessor's judgments, "
                "`semrel agree --groups`, `semrel calibrate --groups` (--test-groups) and `semrel eval -R qrels_jg` read them")
    return FormatError(source, message, line=line_number(source, row + header), hint=hint)


def _second_column(data: bytes, lines: int = 10_000) -> set[str]:
    """The distinct second fields of a TREC qrels file's first lines: trec_eval's judgment groups, "0" in plain qrels."""
    fields = (line.split() for line in data.split(b"\n", lines)[:lines])
    return {f[1].decode("utf-8", "replace") for f in fields if len(f) == 4 and not f[0].startswith(b"#")}
