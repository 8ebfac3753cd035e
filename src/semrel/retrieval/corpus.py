"""A corpus as retrieval reads it: chunk ids and text keys by position, texts fetched only where needed.

With a warm vector store, dense search needs no chunk text at all: a corpus file is streamed once for
its ids and the 16-byte key of each indexed text (the store's), and read again only for the texts the
store lacks and for rerank candidates. Chunks given in memory (the Python API, stdin, or a run that
reads every text anyway) keep their texts.
"""

from __future__ import annotations

import os
from typing import Iterator, Sequence

import numpy as np

from ..encoding.vectors import KEY, text_key, text_keys
from ..errors import SemrelError
from ..formats.corpus import iter_corpus, unique_chunks
from ..formats.files import display_name, stamp
from ..records import Chunk
from .lexical import indexed_text


class Corpus:
    """Chunk ids (`ids`) and their indexed texts' keys (`keys`) by corpus position; `texts` by position."""

    def __init__(self, ids: list[str], held: list[str] | None = None, keys: np.ndarray | None = None,
                 path: str | None = None):
        self.ids, self._held, self._keys, self.path = ids, held, keys, path
        self._stamp = stamp(os.stat(path)) if path is not None else None

    @classmethod
    def of_chunks(cls, chunks: Sequence[Chunk]) -> Corpus:
        """Chunks in memory, their texts held."""
        return cls([c.id for c in chunks], [indexed_text(c) for c in chunks])

    @classmethod
    def read(cls, path: str | os.PathLike) -> Corpus:
        """A corpus file streamed once for its ids and keys (read_corpus's checks: no id twice, not empty);
        its texts are read again when asked for."""
        corpus = cls([], path=str(path))  # the file's stamp, taken before reading it
        keys = bytearray()
        for chunk in unique_chunks(path):
            corpus.ids.append(chunk.id)
            keys += text_key(indexed_text(chunk))
        corpus._keys = np.frombuffer(bytes(keys), dtype=KEY)
        return corpus

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def keys(self) -> np.ndarray:
        """The vector store's key of each chunk's indexed text (computed once for held texts)."""
        if self._keys is None:
            self._keys = text_keys(self._held or [])
        return self._keys

    def holds(self, ids: Sequence[str]) -> np.ndarray:
        """Whether the corpus lists each of `ids`."""
        listed = set(ids).intersection(self.ids)
        return np.array([chunk_id in listed for chunk_id in ids], dtype=bool)

    def iter_texts(self, positions: np.ndarray) -> Iterator[str]:
        """The indexed texts at ascending `positions`, one at a time: a file is read once, in step with the caller."""
        if self._held is not None:
            yield from (self._held[p] for p in positions.tolist())
            return
        yield from (indexed_text(chunk) for chunk in self.iter_chunks(positions))

    def iter_chunks(self, positions: np.ndarray) -> Iterator[Chunk]:
        """The chunks at ascending `positions` of a corpus read from a file, read again from it, one at a time."""
        if self.path is None:
            raise ValueError("iter_chunks reads a corpus file again; this corpus was given in memory")
        wanted = iter(positions.tolist())
        due = next(wanted, None)
        self._check()
        for position, (_, chunk) in enumerate(iter_corpus(str(self.path))):
            if due is None:
                break
            if position == due:
                yield chunk
                due = next(wanted, None)
        self._check()
        if due is not None:
            raise self._changed()

    def texts(self, positions: np.ndarray) -> list[str]:
        """The indexed texts at `positions`, in the order asked (repeats allowed)."""
        if self._held is not None:
            return [self._held[p] for p in np.asarray(positions).tolist()]
        unique, inverse = np.unique(np.asarray(positions, dtype=np.int64), return_inverse=True)
        found = list(self.iter_texts(unique))
        return [found[i] for i in inverse.reshape(-1).tolist()]

    def _check(self) -> None:
        """The file is as it was when first read (size, mtime, ctime, inode), else the positions may name other chunks."""
        try:
            same = stamp(os.stat(str(self.path))) == self._stamp
        except OSError:
            same = False
        if not same:
            raise self._changed()

    def _changed(self) -> SemrelError:
        return SemrelError(f"{display_name(str(self.path))}: changed while it was being read; run again")
