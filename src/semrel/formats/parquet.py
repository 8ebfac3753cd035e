"""Parquet tables read as records: the format Hugging Face's hub serves every dataset in (a testset downloaded
from it is `test-00000-of-00001.parquet`). pyarrow, semrel's table engine already, reads them; the file is
opened as every input is (a regular file, remembered so no output replaces it) and its uncompressed size,
which the footer states, is held to SEMREL_MAX_DOCUMENT_MB, and its rows to the expansion a .gz input may have
(SEMREL_MAX_GZIP_RATIO), before any row is decoded."""

from __future__ import annotations

import os
from typing import Any, BinaryIO, Generator

import numpy as np

from ..errors import FormatError, UsageError, first_line
from .files import (
    DOCUMENT_LIMIT,
    GZIP_RATIO_FLOOR,
    GZIP_RATIO_LIMIT,
    STDIO,
    display_name,
    expanded_too_far,
    limit_bytes,
    limit_value,
    open_input,
    too_large,
)
from .jsonl import read_jsonl

BATCH_ROWS = 1024  # rows decoded at a time


def is_parquet(source: str | os.PathLike) -> bool:
    """Named .parquet, or .parq (as ranx's save also names it)."""
    return str(source).lower().endswith((".parquet", ".parq"))


def parquet_columns(source: str | os.PathLike) -> list[str]:
    """The column names of a Parquet file (its footer alone is read)."""
    handle, table = _opened(str(source))
    with handle:
        return list(table.schema_arrow.names)


def parquet_rows(source: str | os.PathLike) -> int:
    """The rows of a Parquet file, as its footer states them."""
    handle, table = _opened(str(source))
    with handle:
        return int(table.metadata.num_rows)


def parquet_records(source: str | os.PathLike) -> tuple[list[str], Generator[tuple[int, dict[str, Any]], None, int]]:
    """The column names and (row number from 1, row as a dict of Python values) of a Parquet file, decoded a batch of
    rows at a time (the rows' generator returns how many there were). A file that is not Parquet, or whose columns
    cannot be decoded, is one FormatError."""
    import pyarrow as pa

    name = str(source)
    handle, table = _opened(name)

    def rows() -> Generator[tuple[int, dict[str, Any]], None, int]:
        number = 0
        with handle:
            try:
                for batch in table.iter_batches(batch_size=BATCH_ROWS):
                    for row in batch.to_pylist():
                        number += 1
                        yield number, row
            except (pa.ArrowException, OSError) as exc:
                raise FormatError(display_name(name), f"cannot read row {number + 1} ({first_line(exc)})") from None
        return number

    return list(table.schema_arrow.names), rows()


def read_records(source: str | os.PathLike) -> Generator[tuple[int, dict[str, Any]], None, int]:
    """(line or row number, record) of a Parquet table, else of a JSON Lines file: the two layouts of a file of records.
    Returns the file's rows or lines."""
    return parquet_records(source)[1] if is_parquet(source) else read_jsonl(source)


RANX_COLUMNS = ("q_id", "doc_id", "score")  # a ranx Run or Qrels saved as Parquet (`run.save("run.parquet")`)
MOST_GRADE = 2.0**53  # a grade beyond it is no whole number a float holds exactly


def ranx_columns(source: str | os.PathLike, what: str, grades: bool = False) -> tuple[Any, Any, Any]:
    """The query ids and document ids (as strings) and the scores (float64: finite; with `grades`, whole) of a run or
    qrels that ranx saved as Parquet, or that a table of those columns holds; `what` names the file's role in errors.
    A row without one of them, or with a score unfit, is an error naming it."""
    import pyarrow as pa
    import pyarrow.compute as pc

    name = str(source)
    handle, table = _opened(name, limited=False)  # a run's rows are all needed: as large as a run in TREC text
    with handle:
        found = list(table.schema_arrow.names)
        missing = [column for column in RANX_COLUMNS if column not in found]
        if missing:
            raise FormatError(display_name(name), f"no column {missing[0]!r} (columns: {', '.join(found) or 'none'})",
                              hint=f"{what} in Parquet has ranx's columns q_id, doc_id and score")
        try:
            read = table.read(columns=list(RANX_COLUMNS))
            query_ids, doc_ids = (pc.cast(read.column(c), pa.string()) for c in RANX_COLUMNS[:2])
            scores = pc.cast(read.column("score"), pa.float64())
        except (pa.ArrowException, OSError) as exc:
            raise FormatError(display_name(name), f"cannot read q_id, doc_id and score as ids and numbers ({first_line(exc)})") from None
    for column, values in zip(RANX_COLUMNS, (query_ids, doc_ids, scores)):
        if values.null_count:
            row = int(pc.index(pc.is_null(values), True).as_py())
            raise FormatError(display_name(name), f"row {row + 1} has no {column}")
    numbers = scores.to_numpy()
    unfit = ~np.isfinite(numbers)
    if grades:
        unfit |= (numbers != np.round(numbers)) | (np.abs(numbers) > MOST_GRADE)
    if unfit.any():
        row = int(np.argmax(unfit))
        should = "a whole number (a relevance grade)" if grades else "a finite number"
        raise FormatError(display_name(name), f"row {row + 1}: score {numbers[row]:g} is not {should}")
    return query_ids, doc_ids, numbers


def _opened(name: str, limited: bool = True) -> tuple[BinaryIO, Any]:
    """The file opened as an input and pyarrow's ParquetFile over it, its uncompressed size within the limit (unless
    not `limited`)."""
    import pyarrow as pa  # imported here, as the commands that read no Parquet need not load it
    import pyarrow.parquet as pq

    if name == STDIO:
        raise UsageError("a Parquet file is read from a path, not from stdin")
    handle = open_input(name)
    try:
        table = pq.ParquetFile(handle)
    except (pa.ArrowException, OSError) as exc:
        handle.close()
        raise FormatError(display_name(name), f"not a Parquet file ({first_line(exc)})") from None
    meta = table.metadata
    if limited and sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups)) > limit_bytes(DOCUMENT_LIMIT):
        handle.close()
        raise too_large(name, "the table, uncompressed,", DOCUMENT_LIMIT)
    # Run-length encoding packs millions of equal rows in a few bytes, which the footer's sizes do not show: each cell
    # takes at least 8 bytes once decoded, held to the ratio a .gz input is held to (5M rows fit in 45 KB)
    decoded, ratio = meta.num_rows * max(meta.num_columns, 1) * 8, limit_value(GZIP_RATIO_LIMIT)
    if decoded > GZIP_RATIO_FLOOR and decoded > ratio * os.fstat(handle.fileno()).st_size:
        handle.close()
        raise expanded_too_far(name, f"the table ({meta.num_rows:,} rows)", ratio)
    return handle, table
