"""On-disk cache of token embeddings: one SQLite file in WAL mode (many readers, one writer).

An entry is keyed by sha256 of (model fingerprint, layer, token limit, text) and holds the
text's token ids, its window starts and its normalised float32 token embeddings, so a judge
run re-encodes only texts it has never seen and a killed run resumes where it stopped.
Windowed texts also record the overlap they were cut with; another overlap is a miss. Token
weight tables (plain, or idf of a corpus) are kept too, so a fully cached run needs no tokenizer.
Each entry's crc32 (of its ids, starts and vectors; a weight table's, of its weights) is kept in a table of its
own: a bit flipped on disk makes the entry a miss (encoded again and replaced), not other BERTScore values. A table
beside, not a column, so the file stays one that semrel before checksums reads and writes: a row such a version
replaces no longer gives the crc kept for it and is a miss, never wrong; rows with no crc (written before checksums)
are trusted as they were, until encoded again.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

from ..errors import SemrelError
from ..formats.files import checksum

OTHER_CACHE = "pass cache='DIR' or cache=False"
"""The way round a cache folder that cannot be used, in the library's words (the command line's
`--cache DIR or --no-cache`, cli.base.in_flags)."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    key BLOB PRIMARY KEY, overlap INTEGER, dim INTEGER NOT NULL,
    ids BLOB NOT NULL, starts BLOB NOT NULL, vectors BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS checksums (key BLOB PRIMARY KEY, crc INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS weights (key BLOB PRIMARY KEY, documents INTEGER NOT NULL, weights BLOB NOT NULL);
"""


def default_cache_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("semrel"))


@dataclass(frozen=True)
class Encoded:
    """Token ids, window starts and normalised token embeddings of one text (all windows stacked)."""

    ids: np.ndarray  # int32, (tokens,)
    starts: np.ndarray  # int64, (windows,): first row of each window
    vectors: np.ndarray  # float32, (tokens, dim)

    @property
    def windows(self) -> int:
        return len(self.starts)


# entries read per query: each holds 10-400 KB, and a query's rows stay alive while the next is read
# (at 128 they were 100 of the judge's 196 MB at its peak, on a warm cache)
FETCH_ROWS = 16


def text_key(namespace: str, text: str) -> bytes:
    return hashlib.sha256(namespace.encode() + b"\0" + text.encode("utf-8")).digest()


def _entry(dim: object, ids: object, starts: object, vectors: object, crc: object) -> Encoded | None:
    """A stored row as an entry; None (a miss: the text is encoded again and the row replaced) where its parts disagree,
    as a row damaged outside semrel leaves them: read as it was, it crashed the judge or gave vectors to the wrong tokens.
    Windows must start at the first token and move forward within the text (starts past it broke the judge's sums).
    A part whose bytes no longer give the row's crc (a bit flipped on disk: same lengths, other vectors) is a miss too."""
    if not (isinstance(dim, int) and isinstance(ids, bytes) and isinstance(starts, bytes) and isinstance(vectors, bytes)):
        return None  # a part some edit stored as a number or text (read as bytes: see EmbeddingCache)
    tokens = len(ids) // 4
    if dim < 1 or len(ids) % 4 or not starts or len(starts) % 8 or len(vectors) != tokens * dim * 4:
        return None
    if not _intact(crc, ids, starts, vectors):
        return None
    first = np.frombuffer(starts, dtype=np.int64)
    if first[0] != 0 or first[-1] >= max(tokens, 1) or (len(first) > 1 and np.any(np.diff(first) <= 0)):
        return None
    return Encoded(np.frombuffer(ids, dtype=np.int32), first, np.frombuffer(vectors, dtype=np.float32).reshape(tokens, dim))


def _intact(crc: object, *parts: bytes) -> bool:
    """Whether the parts still give their stored crc; a row with none (written before rows had one) is trusted."""
    return crc is None or crc == checksum(*parts)


class EmbeddingCache:
    """Get and put Encoded entries."""

    def __init__(self, folder: str | os.PathLike):
        path = Path(folder).expanduser() / "embeddings.sqlite"
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(path, timeout=60)
            self.db.text_factory = bytes  # a part an edit turned into TEXT is read, found wrong and missed: decoded, it crashed
            self.db.execute("PRAGMA page_size=65536")  # entries are 10-400 KB: big pages write them 3x faster
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA wal_autocheckpoint=4000")
            self.db.executescript(SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise SemrelError(f"{path}: cannot open the embedding cache ({exc}); {OTHER_CACHE}") from None
        self.path = path

    def get_many(self, keys: Iterable[bytes], overlap: int) -> Iterator[tuple[bytes, Encoded]]:
        """The cached entries among `keys` (in batches, so memory stays bounded by the caller's use)."""
        keys = list(keys)
        for begin in range(0, len(keys), FETCH_ROWS):
            part = keys[begin : begin + FETCH_ROWS]
            with self._failing():
                rows = self.db.execute(
                    "SELECT e.key, e.overlap, e.dim, e.ids, e.starts, e.vectors, c.crc FROM embeddings e"
                    f" LEFT JOIN checksums c ON c.key = e.key WHERE e.key IN ({','.join('?' * len(part))})",
                    part,
                ).fetchall()
            for key, stored_overlap, dim, ids, starts, vectors, crc in rows:
                entry = _entry(dim, ids, starts, vectors, crc)
                if entry is None or entry.windows > 1 and stored_overlap != overlap:
                    continue
                yield key, entry

    def put_many(self, items: Iterable[tuple[bytes, Encoded]], overlap: int) -> None:
        rows, crcs = [], []
        for key, e in items:
            parts = e.ids.astype(np.int32).tobytes(), e.starts.astype(np.int64).tobytes(), e.vectors.astype(np.float32).tobytes()
            rows.append((key, overlap if e.windows > 1 else None, e.vectors.shape[1], *parts))
            crcs.append((key, checksum(*parts)))
        with self._failing(), self.db:  # one transaction: a row and its crc are written together or not at all
            self.db.executemany("INSERT OR REPLACE INTO embeddings (key, overlap, dim, ids, starts, vectors) VALUES (?, ?, ?, ?, ?, ?)",
                                rows)
            self.db.executemany("INSERT OR REPLACE INTO checksums (key, crc) VALUES (?, ?)", crcs)

    def get_weights(self, key: bytes) -> tuple[np.ndarray, int] | None:
        """Token weights (idf from a corpus, or plain) and the number of documents they came from; their crc32 is kept in
        the checksums table as an entry's is (a bit flipped in an idf weight moved p without a word)."""
        with self._failing():
            row = self.db.execute("SELECT w.documents, w.weights, c.crc FROM weights w LEFT JOIN checksums c ON c.key = w.key"
                                  " WHERE w.key = ?", (key,)).fetchone()
        if not row or not isinstance(row[0], int) or not isinstance(row[1], bytes) or len(row[1]) % 8:
            return None  # none, or damaged outside semrel: computed again and replaced, as an entry is
        if not _intact(row[2], row[1]):
            return None
        return np.frombuffer(row[1], dtype=np.float64), row[0]

    def put_weights(self, key: bytes, weights: np.ndarray, documents: int) -> None:
        data = weights.astype(np.float64).tobytes()
        with self._failing(), self.db:
            self.db.execute("INSERT OR REPLACE INTO weights (key, documents, weights) VALUES (?, ?, ?)", (key, documents, data))
            self.db.execute("INSERT OR REPLACE INTO checksums (key, crc) VALUES (?, ?)", (key, checksum(data)))

    @contextlib.contextmanager
    def _failing(self) -> Iterator[None]:
        """SQLite failing mid-run (a damaged page: 'database disk image is malformed'; a full disk) as one line, not a traceback."""
        try:
            yield
        except sqlite3.Error as exc:
            raise SemrelError(f"{self.path}: the embedding cache failed ({exc}); it is only a cache: delete it to build it afresh, "
                              f"or {OTHER_CACHE}") from None

    def close(self) -> None:
        self.db.close()
