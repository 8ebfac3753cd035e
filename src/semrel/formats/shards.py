"""A split that Hugging Face's hub stores as several files (data/train-00000-of-00003.parquet, -00001-of-00003, ...),
read as the one set it is: given one shard, an import read a third of the questions without a word."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Iterator, Sequence

from ..errors import FormatError
from ..terminal import quantity
from .files import display_name, line_count
from .parquet import is_parquet, parquet_columns, parquet_rows, read_records

SHARD = re.compile(r"(?P<stem>.+)-(?P<index>\d{5})-of-(?P<count>\d{5})(?P<suffix>\.parquet|\.jsonl|\.jsonl\.gz)", re.IGNORECASE)


def split_files(source: str, split: str | None = None) -> tuple[str, ...]:
    """Every shard of the split `source` is one of, or holds, in order; else `source` alone. A folder whose files of
    records are all shards holds one split, or several (the hub's data/ of train, test and validation), of which
    `split` names the one read: without it such a folder is refused, naming its splits. A shard whose siblings are
    not all beside it is refused, naming them."""
    path = Path(source)
    if path.is_dir():
        splits = _folder_splits(path)
        if not splits:
            return (source,)
        path = path / _chosen(path, splits, split)[0]
    match = SHARD.fullmatch(path.name)
    if match is None or int(match["index"]) >= int(match["count"]):
        return (str(path),)
    count = int(match["count"])
    shards = [path.with_name(f"{match['stem']}-{n:05d}-of-{count:05d}{match['suffix']}") for n in range(count)]
    missing = [p.name for p in shards if not p.is_file()]
    if missing:
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        raise FormatError(display_name(str(path)), f"is shard {int(match['index']) + 1} of the {count} files of one split, and "
                          f"{', '.join(missing[:3])}{more} {'is' if len(missing) == 1 else 'are'} not beside it, so the set would "
                          f"lack {'its' if len(missing) == 1 else 'their'} queries",
                          hint="download every shard into this folder; to import this one alone, rename it")
    return tuple(str(p) for p in shards)


def _folder_splits(folder: Path) -> dict[tuple[str, str, str], list[str]]:
    """The shards of a folder, by split (stem, count and suffix), in order; none where a file of records in it is no
    shard (a BEIR folder's queries.jsonl, a table of questions)."""
    names = sorted(p.name for p in folder.iterdir() if not p.name.startswith(".") and p.is_file()
                   and p.name.lower().endswith((".parquet", ".jsonl", ".jsonl.gz")))
    found = [SHARD.fullmatch(name) for name in names]
    splits: dict[tuple[str, str, str], list[str]] = {}
    for name, m in zip(names, found):
        if m is None:
            return {}
        splits.setdefault((m["stem"], m["count"], m["suffix"]), []).append(name)
    return splits


def split_names(folder: str | os.PathLike) -> list[str]:
    """The splits a folder of shards holds (train, test, ...), sorted; none for any other folder."""
    return sorted({stem for stem, _, _ in _folder_splits(Path(folder))}) if os.path.isdir(folder) else []


def _chosen(folder: Path, splits: dict[tuple[str, str, str], list[str]], split: str | None) -> list[str]:
    """The shards of the split `split` names, or of the folder's one split; a folder of several splits without
    `split`, or a `split` none of them is, is refused with the splits listed (their files and rows)."""
    picked = [names for (stem, _, _), names in splits.items() if split is None or stem == split]
    if len(picked) == 1:
        return picked[0]
    listed = ", ".join(f"{stem} ({_counted(folder, names, int(count))})" for (stem, count, _), names in splits.items())
    if split is None:
        raise FormatError(display_name(str(folder)), f"holds the shards of {len(splits)} splits, {listed}",
                          hint="give split=NAME, the one to import")
    if not picked:
        raise FormatError(display_name(str(folder)), f"holds no split {split!r}, only {listed}",
                          hint="give split=NAME, one of them")
    both = " and ".join(split_name([str(folder / names[0])]) for names in picked)
    raise FormatError(display_name(str(folder)), f"holds the split {split!r} twice over: {both}",
                      hint="keep one of them in this folder")


def _counted(folder: Path, names: Sequence[str], count: int) -> str:
    """'2 files, 7 rows' of a split's shards ('1 of 2 files' where some are missing)."""
    files = quantity(count, "file") if len(names) == count else f"{len(names)} of {quantity(count, 'file')}"
    paths = [str(folder / name) for name in names]
    return f"{files}, {quantity(sum(map(_rows, paths)), 'row' if is_parquet(paths[0]) else 'line')}"


def _rows(path: str) -> int:
    """The lines (JSON Lines) or rows (Parquet) of a shard: how far the numbers of the next one start on."""
    return parquet_rows(path) if is_parquet(path) else line_count(path)


def split_records(shards: Sequence[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line or row, record) of the shards, file after file, numbered on from the file before (its lines or rows, as
    its reader counted them going through it, not in a second read): shard_at tells which file and line a number is."""
    start = 0
    for path in shards:
        records = read_records(path)
        while True:
            try:
                line, record = next(records)
            except StopIteration as end:
                start += end.value
                break
            yield start + line, record


def split_columns(shards: Sequence[str]) -> list[str]:
    """The columns of the Parquet shards of a split, in the order they first appear."""
    return list(dict.fromkeys(column for path in shards for column in parquet_columns(path)))


def shard_at(shards: Sequence[str], line: int) -> tuple[str, int]:
    """The shard and its own line (or row) of the `line`-th of split_records' numbers, which errors name."""
    for path in shards[:-1]:
        rows = _rows(path)
        if line <= rows:
            return path, line
        line -= rows
    return shards[-1], line


def placed(error: FormatError, shards: Sequence[str]) -> FormatError:
    """`error` naming the shard and its line where it names the first shard at a number of split_records."""
    if len(shards) < 2 or error.line is None or error.path != display_name(shards[0]):
        return error
    path, line = shard_at(shards, error.line)
    return FormatError(display_name(path), error.message, line=line, hint=error.hint)


def split_of(shards: Sequence[str]) -> str | None:
    """The split the shards are of, as the hub names it ('train' of data/train-00000-of-00003.parquet), for the manifest."""
    match = SHARD.fullmatch(Path(shards[0]).name)
    return None if match is None else match["stem"]


def split_name(shards: Sequence[str]) -> str:
    """The split in messages: its folder and the shards' common name ('data/train-*-of-00003.parquet')."""
    match = SHARD.fullmatch(Path(shards[0]).name)
    return display_name(shards[0]) if match is None else \
        display_name(os.path.join(os.path.dirname(shards[0]), f"{match['stem']}-*-of-{match['count']}{match['suffix']}"))

