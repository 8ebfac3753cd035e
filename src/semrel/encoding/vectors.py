"""A persistent store of dense text vectors, so dense retrieval encodes each chunk text once.

One folder per model, named by its fingerprint (weights and tokenizer files; `-int8` added for
vectors made at another precision than exact), under `CACHE/vectors/`: `vectors.f32` (float32 rows,
appended), `keys.bin` (the 16-byte sha256 prefix of each row's text, appended) and `store.json`
(model, fingerprint, dim, rows, and the crc32 of each committed piece's keys and vectors). store.json
is the commit point: it is replaced atomically once the rows it counts are fsynced, and bytes past its
count (left by a killed run) are cut off at the next open. Texts are encoded and committed in pieces,
so a killed run keeps what it finished and the next run encodes only what is missing.
A run checks the pieces holding the rows it reads against their crc32 before it uses them: a bit
flipped on disk is one error naming the folder, not other vectors. Rows committed before pieces had
a checksum (a store.json without `pieces`, or the rows before its first piece) are trusted as they were.
A texts' vector is found by its text alone: a corpus that grew, or another corpus sharing chunks,
encodes only the texts the store lacks; another model gets its own folder and encodes afresh.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from itertools import islice
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

import numpy as np

from ..errors import SemrelError
from ..formats.files import appending, atomic_writer, checksum, locked
from ..progress import Steps
from .cache import OTHER_CACHE
from .engines import LOCAL, Engine
from .models import DEFAULT_MODEL, describe_model
from .sentences import sentence_embeddings

PIECE = 4096
"""Texts encoded between two commits: a killed run loses at most this many."""

KEY = np.dtype("S16")
CACHE_KEPT = f"what it held before is kept; {OTHER_CACHE}"


def text_key(text: str) -> bytes:
    """A text's key in the store: the first 16 bytes of its UTF-8 sha256."""
    return hashlib.sha256(text.encode("utf-8")).digest()[:16]


def text_keys(texts: Sequence[str]) -> np.ndarray:
    return np.array([text_key(t) for t in texts], dtype=KEY)


def _pieces_fit(pieces: object, rows: int) -> bool:
    """Whether store.json's pieces are [first row, crc32] pairs, first rows rising from 0 or more and each below `rows`."""
    if not isinstance(pieces, list):
        return False
    firsts = [p[0] for p in pieces if isinstance(p, list) and len(p) == 2 and all(type(v) is int for v in p) and 0 <= p[1] < 1 << 32]
    return len(firsts) == len(pieces) and all(0 <= a < b for a, b in zip(firsts, firsts[1:] + [rows]))


class VectorStore:
    """The vectors of one model; `rows_for(keys, texts)` encodes what is missing, `vectors()` maps them read-only."""

    def __init__(self, cache_dir: str | os.PathLike, model: str | None = None, precision: str = "exact"):
        info = describe_model(model)
        self.model, self.fingerprint, self.precision = model, info.fingerprint, precision
        # another precision's vectors live in a folder of their own: exact and int8 vectors never mix; so do
        # vectors cut at another length (before 2026-12-01 at the model's 512, not sentence-transformers' 256)
        name = f"{info.fingerprint}-t{info.sentence_length}" + ("" if precision == "exact" else f"-{precision}")
        self.folder = Path(cache_dir).expanduser() / "vectors" / name
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SemrelError(f"{self.folder}: cannot create the vector store ({exc}); {OTHER_CACHE}") from None
        self.rows, self.dim = 0, 0
        self.pieces: list[list[int]] = []  # [first row, crc32 of its keys and vectors] of each piece, the last ending at rows
        self.checked: set[int] = set()  # the first rows of the pieces this store found intact
        self.encoded = self.reused = self.repeated = 0

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """One writer at a time: a second run over the same store waits for the first."""
        with locked(self.folder / "lock"):
            self._load()
            yield

    def _load(self) -> None:
        """Read the committed row count and cut off anything a killed run appended past it."""
        manifest = self.folder / "store.json"
        if manifest.exists():
            try:
                meta = json.loads(manifest.read_text(encoding="utf-8"))
                if not isinstance(meta, dict):
                    raise ValueError(f"a JSON {type(meta).__name__}, not an object")
                self.rows, self.dim, self.pieces = meta["rows"], meta["dim"], meta.get("pieces", [])
                if not (type(self.rows) is int and type(self.dim) is int and self.rows >= 0 and (self.dim > 0 or not self.rows)):
                    raise ValueError(f"rows {self.rows!r} of dimension {self.dim!r}")  # a list, -5 rows or 0 dimensions: a traceback
                if not _pieces_fit(self.pieces, self.rows):
                    raise ValueError(f"pieces {str(self.pieces)[:80]} do not fit {self.rows} rows")
            except (OSError, ValueError, KeyError) as exc:
                raise SemrelError(f"{manifest}: unreadable vector store ({exc}); delete {self.folder} to rebuild it") from None
            if meta.get("fingerprint") != self.fingerprint:
                raise SemrelError(f"{manifest}: made with another model; delete {self.folder} to rebuild it")
        for name, width in (("vectors.f32", 4 * self.dim), ("keys.bin", KEY.itemsize)):
            path = self.folder / name
            size = path.stat().st_size if path.exists() else 0
            if size < self.rows * width:
                raise SemrelError(f"{path}: shorter than {manifest} says; delete {self.folder} to rebuild it")
            if size > self.rows * width:
                os.truncate(path, self.rows * width)

    def _append(self, keys: np.ndarray, vectors: np.ndarray) -> None:
        """Append rows, fsync them, then commit the new count."""
        if self.dim and vectors.shape[1] != self.dim:
            raise SemrelError(f"{self.folder}: the model gave {vectors.shape[1]}-dim vectors, the store holds {self.dim}")
        key_bytes, vector_bytes = keys.tobytes(), vectors.astype("<f4").tobytes()
        for name, data in (("vectors.f32", vector_bytes), ("keys.bin", key_bytes)):
            with appending(self.folder / name, CACHE_KEPT), open(self.folder / name, "ab") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
        self.pieces.append([self.rows, checksum(key_bytes, vector_bytes)])
        self.checked.add(self.rows)
        self.rows, self.dim = self.rows + len(keys), vectors.shape[1]
        with atomic_writer(self.folder / "store.json") as handle:
            json.dump({"model": self.model or DEFAULT_MODEL, "fingerprint": self.fingerprint, "dim": self.dim, "rows": self.rows,
                       "dtype": "float32", "precision": self.precision, "pieces": self.pieces}, handle)

    def _check(self, stored: np.ndarray, rows: np.ndarray) -> None:
        """Refuse the store where a piece holding one of `rows` no longer gives its crc32 (`stored`: keys.bin's keys).
        Only those pieces are read: a run over a few rows of a large store reads no more of it than it uses."""
        firsts = np.array([first for first, _ in self.pieces] + [self.rows], dtype=np.int64)
        holding = np.unique(np.searchsorted(firsts, rows, side="right") - 1)
        unchecked = [p for p in holding[holding >= 0].tolist() if int(firsts[p]) not in self.checked]  # -1: rows before any piece
        if not unchecked:  # every piece these rows lie in found intact already: nothing to map
            return
        vectors = self.vectors()
        for piece in unchecked:
            first, end = int(firsts[piece]), int(firsts[piece + 1])
            if checksum(stored[first:end].data, vectors[first:end].data) != self.pieces[piece][1]:
                raise SemrelError(f"{self.folder}: rows {first:,} to {end - 1:,} are damaged (their bytes in vectors.f32 and keys.bin no "
                                  f"longer give the checksum store.json holds); delete {self.folder} to rebuild it, or {OTHER_CACHE}")
            self.checked.add(first)

    def rows_for(self, keys: np.ndarray, texts: Callable[[np.ndarray], Iterable[str]], label: str, steps: Steps,
                 engine: Engine = LOCAL) -> np.ndarray:
        """The store row of each key's vector (text_keys), encoding (on `engine`, progress under `label`) the texts it
        lacks: `texts(indices)` gives the texts of those ascending indices into `keys`, in order, and is called only
        when some are missing, so a warm store needs no text."""
        if getattr(engine, "precision", "exact") != self.precision:
            raise SemrelError(f"{self.folder}: holds {self.precision} vectors; the encoder runs at {engine.precision}")
        with self._locked():
            stored = np.fromfile(self.folder / "keys.bin", dtype=KEY, count=self.rows) if self.rows else np.zeros(0, KEY)
            order = np.argsort(stored, kind="stable")
            at = np.minimum(np.searchsorted(stored[order], keys), max(len(stored) - 1, 0))
            found = stored[order][at] == keys if len(stored) else np.zeros(len(keys), dtype=bool)
            rows = np.full(len(keys), -1, dtype=np.int64)
            rows[found] = order[at[found]]
            self._check(stored, rows[found])
            missing = np.flatnonzero(~found)
            _, first, inverse = np.unique(keys[missing], return_index=True, return_inverse=True)
            appear = np.argsort(first)  # new texts are encoded and appended in corpus order
            slot = np.empty_like(appear)
            slot[appear] = np.arange(len(appear))
            todo = missing[first[appear]]
            rows[missing] = self.rows + slot[inverse.reshape(-1)]
            with steps(label, len(todo)) if len(todo) else contextlib.nullcontext(lambda n: None) as advance:
                read = iter(texts(todo)) if len(todo) else iter(())
                for start in range(0, len(todo), PIECE):
                    piece = todo[start : start + PIECE]
                    batch = list(islice(read, len(piece)))
                    if len(batch) != len(piece) or not np.array_equal(text_keys(batch), keys[piece]):
                        raise SemrelError("the texts to encode changed while they were read (their file was written to); run again")
                    self._append(keys[piece], sentence_embeddings(batch, self.model, advance, engine))
        self.encoded += len(todo)
        self.reused += int(found.sum())
        self.repeated += len(missing) - len(todo)  # a text met twice is encoded once: neither encoded anew nor from the store
        return rows

    def vectors(self) -> np.ndarray:
        """All committed rows, memory-mapped read-only (pages are read as a search touches them)."""
        if not self.rows:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.memmap(self.folder / "vectors.f32", dtype="<f4", mode="r", shape=(self.rows, self.dim))
