"""Append-only progress files, so a long run killed halfway resumes without redoing finished work.

The first line records a fingerprint of everything the results depend on; a file written under
another fingerprint is ignored. A line cut short by the kill (no final newline, or not JSON) is
cut off before new rows are appended, so every complete row is counted once and none twice.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import json
import os
from pathlib import Path
from typing import Any, BinaryIO, Iterable, Iterator

import numpy as np

from ..errors import SemrelError
from ..formats.files import appending, check_not_input, not_plain


class Checkpoint:
    """Rows appended (and flushed) as work finishes; `rows()` streams those of an earlier run.

    Flushed rows survive the process being killed; they are fsynced when the file is closed.
    """

    def __init__(self, path: str | os.PathLike, fingerprint: str):
        self.path = Path(path)
        kind = not_plain(self.path)  # a FIFO would hang the scan, and a link's target (any file) be rewritten
        if kind:
            raise SemrelError(f"{path}: the checkpoint of this output is {kind}, not a file semrel wrote; remove it, or give "
                              "another output (nothing was judged)")
        self.fingerprint = fingerprint
        self.stale = 0  # complete rows of an earlier run with another fingerprint: not reused, replaced at the first append
        self.saved, self._end = self._scan()  # complete rows of an earlier run; the byte after the last one
        self._handle: BinaryIO | None = None

    def _lines(self) -> Iterator[tuple[int, bytes]]:
        """(offset after the line, line) of each complete line, the header first."""
        with open(self.path, "rb") as handle:
            end = 0
            for line in handle:
                if not line.endswith(b"\n"):
                    return  # the line being written when the run stopped
                end += len(line)
                yield end, line

    def _scan(self) -> tuple[int, int]:
        if not self.path.exists():
            return 0, 0
        count, end = 0, 0
        for offset, line in self._lines():
            try:
                value = json.loads(line)
            except (ValueError, RecursionError):
                break
            if end > 0 and not isinstance(value, dict):  # JSON, but no row (a damaged file): the rows end here, as at bad JSON
                break
            if end == 0 and (not isinstance(value, dict) or value.get("fingerprint") != self.fingerprint):
                self.stale = sum(1 for _ in self._lines()) - 1
                return 0, 0
            count += end > 0
            end = offset
        return count, end

    def rows(self) -> Iterator[dict[str, Any]]:
        """The complete rows of an earlier run with the same fingerprint, read one at a time."""
        if not self.saved:
            return
        for index, (_, line) in enumerate(self._lines()):
            if index > self.saved:
                return
            if index:
                yield json.loads(line)

    def append(self, rows: Iterable[dict[str, Any]]) -> None:
        with self._writing():
            if self._handle is None:  # keep the earlier rows, drop any cut-off line after them
                check_not_input(self.path, "checkpoint")
                if self._end:
                    self._handle = open(self.path, "r+b")
                    self._handle.truncate(self._end)
                    self._handle.seek(self._end)
                else:
                    self._handle = open(self.path, "wb")
                    self._handle.write(_line({"fingerprint": self.fingerprint}))
            self._handle.write(b"".join(_line(row) for row in rows))
            self._handle.flush()

    def close(self) -> None:
        if self._handle is not None:
            handle, self._handle = self._handle, None
            with self._writing(), handle:
                handle.flush()
                os.fsync(handle.fileno())

    def _writing(self) -> contextlib.AbstractContextManager[None]:
        return appending(self.path, "the rows finished before are kept in it, and the same command run again resumes "
                                    "from them")


def _line(row: dict[str, Any]) -> bytes:
    return (json.dumps(row) + "\n").encode("utf-8")


def pack(values: np.ndarray, dtype: str) -> str:
    """Floats as base64 of their little-endian bytes (`dtype` "<f4" or "<f8"): exact, a quarter the size
    of JSON numbers, and without the shortest-repr formatting JSON gives each float (binascii as base64.b64encode
    calls it, less the wrapper's Python: a call per checkpoint row and pooled pair)."""
    return binascii.b2a_base64(np.asarray(values, dtype=dtype).tobytes(), newline=False).decode("ascii")


def unpack(text: str, dtype: str) -> np.ndarray:
    """pack's floats back (native byte order); ValueError for text that is not such base64."""
    return np.frombuffer(base64.b64decode(text, validate=True), dtype=dtype).astype(np.dtype(dtype).newbyteorder("="))
