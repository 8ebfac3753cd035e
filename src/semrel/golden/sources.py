"""What every golden-set importer shares: its options, its result, and reading JSON sources."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..errors import FormatError
from ..formats.files import display_name, read_text
from ..formats.jsonl import loads
from ..records import Chunk, GoldenItem
from .chunking import ChunkSettings


@dataclass(frozen=True)
class ImportOptions:
    """What the importers may need besides the source."""

    settings: ChunkSettings = ChunkSettings()
    corpus: str | None = None
    columns: dict[str, str | None] = field(default_factory=dict)
    threshold: float = 0.5
    split: str = "test"


@dataclass
class Imported:
    """The golden items, the corpus built when the source holds the documents (else None),
    counts worth a warning, and parameters for the manifest."""

    items: list[GoldenItem]
    chunks: list[Chunk] | None = None
    counts: Counter[str] = field(default_factory=Counter)
    params: dict[str, Any] = field(default_factory=dict)


def load_json(path: str | os.PathLike) -> Any:
    """A whole JSON document; a syntax error names its line."""
    return loads(read_text(path), path)


def expect(value: Any, kind: type, path: str, where: str) -> Any:
    """`value` if it is a `kind`, else a FormatError saying which part of the JSON is wrong."""
    if not isinstance(value, kind) or isinstance(value, bool):
        raise FormatError(display_name(path), f"{where} should be a {kind.__name__}, found {type(value).__name__}")
    return value
