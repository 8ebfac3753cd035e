"""Append-only progress files, so a long run killed halfway resumes without redoing finished work.

The first line records a fingerprint of everything the results depend on; a file written under
another fingerprint is ignored. A line cut short by the kill is ignored too.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable


class Checkpoint:
    """Rows appended (and flushed) as work finishes; `done` holds those of an earlier run.

    Flushed rows survive the process being killed; they are fsynced when the file is closed.
    """

    def __init__(self, path: str | os.PathLike, fingerprint: str):
        self.path = Path(path)
        self.fingerprint = fingerprint
        self.done: list[dict[str, Any]] = self._load()
        self._handle = None

    def _load(self) -> list[dict[str, Any]]:
        if not self.path.exists():
            return []
        lines = self.path.read_text(encoding="utf-8", errors="replace").split("\n")
        try:
            if json.loads(lines[0]).get("fingerprint") != self.fingerprint:
                return []
        except (ValueError, AttributeError):
            return []
        rows = []
        for line in lines[1:]:
            try:
                rows.append(json.loads(line))
            except ValueError:
                break  # the line being written when the run stopped
        return rows

    def append(self, rows: Iterable[dict[str, Any]]) -> None:
        if self._handle is None:  # start afresh: header and the earlier rows, minus any cut-off line
            self._handle = open(self.path, "w", encoding="utf-8")
            self._handle.write(json.dumps({"fingerprint": self.fingerprint}) + "\n")
            self._handle.writelines(json.dumps(row) + "\n" for row in self.done)
        self._handle.writelines(json.dumps(row) + "\n" for row in rows)
        self._handle.flush()

    def close(self) -> None:
        if self._handle is not None:
            self._handle.flush()
            os.fsync(self._handle.fileno())
            self._handle.close()
            self._handle = None
