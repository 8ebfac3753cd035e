"""A BM25 index that lives on disk: built once per corpus, grown with it, searched in bounded memory.

Layout, under `CACHE/bm25/<tokenizer key>/<chain>/`: the key is a digest of what decides the
stored postings (token pattern, CJK bigrams, lower-casing, stopwords, stemmer, format), so another
stemmer or stopword list gets its own index; k1, b and the BM25 variant are applied when scoring (from term
counts, document lengths and document frequencies), so every value of them reads the same files.

A chain is an append-only index of one corpus and the corpora that grow it:

  index.json      the commit point: chunks, tokens, terms, and the segments, each with the sha256
                  of the corpus lines up to its end (its boundary); replaced atomically
  terms.txt       stemmed terms, one a line; a term's id is its line number
  lengths.u32     tokens per chunk (after stopwords), in corpus order
  ids.bin/.end    chunk ids (UTF-8) and where each ends; idkeys.u64 an 8-byte hash of each id
  seg-NNNNN.*     postings of a run of chunks, term-major: indptr (int64 per term), chunk
                  positions (uint32) and term counts (uint16, or uint32 if a count needs it)

A corpus is matched to a chain by the sha256 of its non-blank lines at the chain's boundaries:
equal at the last boundary (the same corpus, or one that grew past it), the chain is reused and
only the chunks past it are indexed, as new segments; equal at an earlier boundary and no further
(a corpus the chain has since grown from), its first segments are searched alone; equal at an
earlier boundary and then different (a chunk edited, a document added or removed), a new chain
starts from that boundary's segments (their files linked, not copied) and indexes only the chunks
past it; no match, a new chain is built. A file whose path, size, mtime, ctime and inode were seen before is not hashed again (the
ctime, which no user can set, catches a file replaced in place with its size and mtime kept: `cp -p`,
`rsync -t`).

Tokens are `words`' (bm25s' pattern; CJK runs as bigrams), made terms by the Analyzer that Bm25Index uses too.
Scores equal bm25s' (same tokens, same float64 arithmetic rounded to float32 per term, summed in
float32 in query-token order), so rankings equal the in-memory Bm25Index's.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import shutil
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from ..cjk import BIGRAMMED, WIDTH_FORMS
from ..encoding.cache import OTHER_CACHE
from ..errors import FormatError, SemrelError, UsageError
from ..formats.corpus import chunk_of, iter_corpus, repeated_id
from ..formats.files import StampMemo, appending, atomic_writer, binary, display_name, locked, read_lines, read_text
from ..formats.jsonl import json_object
from ..progress import Steps, no_progress
from ..records import Chunk

FORMAT = 1
TOKEN_PATTERN = r"(?u)\b\w\w+\b"  # bm25s' (and scikit-learn's) default
CJK = "bigrams, widths folded"  # in the cache key: older indexes hold CJK runs whole, or ＰＣ apart from PC
METHODS = ("lucene", "robertson", "atire")
BLOCK = 8192
"""Chunks tokenized at a time while building."""
SEGMENT_POSTINGS = 16_000_000
"""Postings held before a segment is written (~200 MB while building): memory stays flat for any corpus."""


@dataclass(frozen=True)
class Bm25Settings:
    """BM25 parameters as bm25s takes them (k1, b, method, stopwords, stemmer)."""

    k1: float = 1.5
    b: float = 0.75
    method: str = "lucene"
    stopwords: Any = "en"  # a list name, none, or {"file", "sha256"}
    stemmer: str = "english"

    @classmethod
    def of(cls, params: Mapping[str, Any]) -> Bm25Settings:
        return cls(**{k: params[k] for k in ("k1", "b", "method", "stopwords", "stemmer") if k in params})

    def tokenizer(self) -> dict[str, Any]:
        """What the stored postings depend on: the index's cache key."""
        return {"format": FORMAT, "pattern": TOKEN_PATTERN, "cjk": CJK, "lower": True, "stopwords": self.stopwords,
                "stemmer": self.stemmer}

    def key(self) -> str:
        return hashlib.sha256(json.dumps(self.tokenizer(), sort_keys=True).encode()).hexdigest()[:16]


def stopword_file(path: str) -> list[str]:
    """The words of a stopword file (--bm25-stopwords FILE): one a line, lowercased; blank lines and '#' comments skipped.
    The one reader of it, so the disk index and the in-memory Bm25Index drop the same words."""
    return [w.strip().lower() for w in read_text(path).splitlines() if w.strip() and not w.startswith("#")]


def stopword_set(value: Any) -> frozenset[str]:
    """A bm25s list name (en, de, ...), none, or {"file", "sha256"} (bm25_params): a file of one word per line."""
    if value in (None, "", "none"):
        return frozenset()
    if isinstance(value, Mapping):
        return frozenset(stopword_file(value["file"]))
    from bm25s.tokenization import _infer_stopwords

    return frozenset(_infer_stopwords(value))


def stem_function(name: str | None) -> Callable[[str], str]:
    """A PyStemmer algorithm (english = Snowball English, porter, german, ...; a 'snowball-' prefix is
    accepted) or none."""
    if name in (None, "", "none"):
        return str
    import Stemmer

    try:
        return Stemmer.Stemmer(name.removeprefix("snowball-")).stemWord
    except KeyError:
        raise UsageError(f"BM25 stemmer {name!r}: none or a PyStemmer algorithm ({', '.join(Stemmer.algorithms())})") from None


_SPLIT = re.compile(TOKEN_PATTERN).findall
_WIDE = re.compile(f"[{WIDTH_FORMS}]+")
_HAS_CJK = re.compile(f"[{BIGRAMMED}]").search
_WORDS_AND_LONE_CJK = re.compile(rf"{TOKEN_PATTERN}|(?=\w)[{BIGRAMMED}]").findall
_RUNS = re.compile(rf"(?:(?=\w)[{BIGRAMMED}])+|(?:(?![{BIGRAMMED}])\w)+").findall


def words(text: str) -> list[str]:
    """The tokens of a lower-cased text: bm25s' (TOKEN_PATTERN), except that a run of Chinese, Japanese or Korean
    characters (semrel.cjk.BIGRAMMED) gives its overlapping bigrams, and a lone one itself, as Lucene's CJKAnalyzer
    and Elasticsearch's cjk analyzer do: those languages put no spaces between words (Korean puts them between words
    with their particles attached), so a whole run as one token matched nothing but itself. A word mixing scripts
    is cut where they change ('iphone用' gives 'iphone' and '用'). Full-width letters and digits and half-width
    katakana are first folded to their usual width (semrel.cjk.WIDTH_FORMS), so ＰＣ finds PC. Other text takes the
    regex alone: its tokens, and so every score over it, are bm25s' as before."""
    if text.isascii():  # isascii reads a flag CPython keeps: free for plain English
        return _SPLIT(text)
    text = _WIDE.sub(lambda wide: unicodedata.normalize("NFKC", wide[0]), text)
    if not _HAS_CJK(text):
        return _SPLIT(text)
    tokens: list[str] = []
    for word in _WORDS_AND_LONE_CJK(text):
        if not _HAS_CJK(word):
            tokens.append(word)
            continue
        for run in _RUNS(word):
            if _HAS_CJK(run[0]):
                tokens.extend([run[i : i + 2] for i in range(len(run) - 1)] if len(run) > 1 else [run])
            elif len(run) > 1:  # the rest of the word: a token if TOKEN_PATTERN would take it (two characters or more)
                tokens.append(run)
    return tokens


class Analyzer:
    """Text to BM25 terms, for both indexes (this on-disk one and the in-memory Bm25Index) and their queries:
    `words`, then stopwords dropped and the rest stemmed. CJK tokens are neither: the stopword lists and stemmers
    are made for whole words, and a bigram is no word (the zh and ko lists would drop bigrams that merely look like
    a stopword, or a particle, and miss most particles, which are attached to words)."""

    def __init__(self, settings: Bm25Settings):
        self.stop, self.stem = stopword_set(settings.stopwords), stem_function(settings.stemmer)
        analyzer = self

        class Known(dict):
            def __missing__(self, word: str) -> str | None:
                term = self[word] = analyzer.term(word)
                return term

        self.known = Known()  # each word stemmed once, as bm25s stems each distinct word once

    def term(self, word: str) -> str | None:
        """A token's term, or None for a stopword."""
        if _HAS_CJK(word[0]):
            return word
        return None if word in self.stop else self.stem(word)

    def terms(self, text: str) -> list[str]:
        """The terms of a text in order (repeats kept)."""
        known = self.known
        return [t for w in words(text.lower()) if (t := known[w]) is not None]


class Vocabulary:
    """Stemmed terms and their ids; words (surface forms) are mapped once each and remembered."""

    def __init__(self, settings: Bm25Settings, terms: Sequence[str] = ()):
        self.analyzer = Analyzer(settings)
        self.list: list[str] = list(terms)
        self.terms: dict[str, int] = {t: i for i, t in enumerate(self.list)}
        vocabulary = self

        class Words(dict):
            def __missing__(self, word: str) -> int:
                term = -1
                if (stem := vocabulary.analyzer.term(word)) is not None:
                    term = vocabulary.terms.get(stem, -1)
                    if term < 0:
                        term = vocabulary.terms[stem] = len(vocabulary.list)
                        vocabulary.list.append(stem)
                self[word] = term
                return term

        self.words = Words()

    def __len__(self) -> int:
        return len(self.terms)

    def block(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(term id, text number) of every token of `texts` that is not a stopword, in text order."""
        ids = self.words
        flat: list[int] = []
        counts = np.zeros(len(texts), dtype=np.int64)
        for i, text in enumerate(texts):
            tokens = [ids[w] for w in words(text.lower())]
            flat.extend(tokens)
            counts[i] = len(tokens)
        terms = np.array(flat, dtype=np.int64)
        docs = np.repeat(np.arange(len(texts), dtype=np.int64), counts)
        keep = terms >= 0
        return terms[keep], docs[keep]

    def query(self, text: str) -> list[int]:
        """Term ids of a query's tokens in order (repeats kept, as bm25s does; unknown terms left out)."""
        return [term for t in self.analyzer.terms(text) if (term := self.terms.get(t)) is not None]


def line_digests(path: str | os.PathLike, at: set[int]) -> tuple[int, str, dict[int, str]]:
    """(non-blank lines, sha256 of them all, sha256 of the first n for each n in `at`)."""
    digest, count, seen = hashlib.sha256(), 0, {}
    for _, line in read_lines(path):
        if not line.strip():
            continue
        digest.update(line.encode("utf-8") + b"\n")
        count += 1
        if count in at:
            seen[count] = digest.copy().hexdigest()
    return count, digest.hexdigest(), seen


def _id_key(chunk_id: str) -> int:
    return int.from_bytes(hashlib.blake2b(chunk_id.encode("utf-8"), digest_size=8).digest(), "little")


INDEX_KEPT = f"the index is kept as last committed; {OTHER_CACHE}"


def _fsync_append(path: Path, data: bytes) -> None:
    with appending(path, INDEX_KEPT), open(path, "ab") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def _copy_prefix(source: Path, target: Path, size: int) -> None:
    """The first `size` bytes of `source` as `target`, synced, read a block at a time."""
    with open(source, "rb") as given, appending(target, INDEX_KEPT), open(target, "wb") as out:
        while size > 0:
            block = given.read(min(size, 1 << 20))
            if not block:
                raise _cut_short(source.parent, source.name)
            out.write(block)
            size -= len(block)
        out.flush()
        os.fsync(out.fileno())


def _cut_short(folder: Path, name: str) -> SemrelError:
    return SemrelError(f"{folder / name}: shorter than {folder / 'index.json'} says; delete {folder} to rebuild it")


def _pread(fd: int, size: int, offset: int, folder: Path, name: str) -> bytes:
    """`size` bytes at `offset` of the index file `name`; fewer (a file cut short by a copy or a failing disk) is
    one line naming it, not numpy's error on a short buffer or an empty chunk id."""
    if hasattr(os, "pread"):
        data = os.pread(fd, size, offset)
    else:  # Windows has no pread: a seek, then a read (these descriptors are read here only, by one thread)
        os.lseek(fd, offset, os.SEEK_SET)
        data = os.read(fd, size)
    if len(data) < size:
        raise _cut_short(folder, name)
    return data


def _read(path: Path, dtype: Any, first: int, count: int) -> np.ndarray:
    """`count` items of `dtype` from item `first` of a file, read (not mapped): the process keeps only what it asked for."""
    dtype = np.dtype(dtype)
    if count <= 0:
        return np.zeros(0, dtype=dtype)
    with open(path, "rb") as handle:
        data = _pread(handle.fileno(), count * dtype.itemsize, first * dtype.itemsize, path.parent, path.name)
    return np.frombuffer(data, dtype=dtype)


def _index_shaped(meta: Any) -> bool:
    """Whether index.json holds what build writes: counts that are whole numbers of 0 or more, and segments with theirs."""
    def counts(record: Any, keys: tuple[str, ...]) -> bool:
        return isinstance(record, dict) and all(type(record.get(k)) is int and record[k] >= 0 for k in keys)

    return counts(meta, ("chunks", "tokens", "terms", "id_bytes")) and isinstance(meta.get("segments"), list) and all(
        counts(s, ("first", "count", "vocab", "postings", "tokens")) and isinstance(s.get("name"), str)
        and isinstance(s.get("digest"), str) and s.get("tf") in ("<u2", "<u4") for s in meta["segments"])


class Chain:
    """One chain folder: its committed state, searched as a whole or as a prefix of its segments."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.meta: dict[str, Any] = {"format": FORMAT, "chunks": 0, "tokens": 0, "terms": 0, "id_bytes": 0, "segments": []}
        path = folder / "index.json"
        if path.exists():
            try:
                self.meta = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise SemrelError(f"{path}: unreadable BM25 index ({exc}); delete {folder} to rebuild it") from None
            if not _index_shaped(self.meta):  # JSON of another shape (a list, a count as text) went up as a TypeError
                raise SemrelError(f"{path}: unreadable BM25 index (not the record semrel writes); delete {folder} to rebuild it")

    @property
    def chunks(self) -> int:
        return int(self.meta["chunks"])

    @property
    def boundaries(self) -> dict[int, str]:
        return {s["first"] + s["count"]: s["digest"] for s in self.meta["segments"]}

    def cut_uncommitted(self) -> None:
        """Cut off what a killed build appended past the committed counts."""
        sizes = {"lengths.u32": 4 * self.chunks, "ids.end": 8 * self.chunks, "idkeys.u64": 8 * self.chunks,
                 "ids.bin": int(self.meta["id_bytes"])}
        for name, size in sizes.items():
            path = self.folder / name
            have = path.stat().st_size if path.exists() else 0
            if have < size:
                raise _cut_short(self.folder, name)
            if have > size:
                os.truncate(path, size)
        terms = self.folder / "terms.txt"
        if terms.exists():
            with open(terms, "rb") as handle:
                lines = handle.read().split(b"\n")
            if len(lines) - 1 < self.meta["terms"]:
                raise _cut_short(self.folder, "terms.txt")
            if len(lines) - 1 > self.meta["terms"] or lines[-1]:  # whole lines past the commit, or part of one
                with atomic_writer(terms, "wb") as out:
                    out.write(b"".join(line + b"\n" for line in lines[: self.meta["terms"]]))

    def terms(self) -> list[str]:
        """The committed terms; a file holding fewer (cut short, or gone) is an error, as for the other files, rather than
        query words past the cut silently finding nothing."""
        path = self.folder / "terms.txt"
        if not self.meta["terms"]:
            return []
        try:
            lines = path.read_bytes().decode("utf-8").split("\n")
        except FileNotFoundError:
            raise _cut_short(self.folder, "terms.txt") from None
        if len(lines) - 1 < self.meta["terms"]:
            raise _cut_short(self.folder, "terms.txt")
        return lines[: self.meta["terms"]]


class DiskBm25:
    """The first `chunks` chunks of a chain, searched term by term: postings are read from disk
    (never mapped), so a query holds one float32 score per chunk plus its terms' postings."""

    def __init__(self, chain: Chain, chunks: int, settings: Bm25Settings, built: int = 0):
        self._open: dict[str, tuple[int, int, int]] = {}
        if settings.method not in METHODS:
            raise UsageError(f"BM25 method {settings.method!r}: the on-disk index scores {', '.join(METHODS)}; "
                             "use cache=False for bm25s' other variants")
        self.chain, self.settings, self.size, self.built = chain, settings, chunks, built
        self.reused = chunks - built
        self.folder = chain.folder
        self.segments = [s for s in chain.meta["segments"] if s["first"] + s["count"] <= chunks]
        tokens = self.segments[-1]["tokens"] if self.segments else 0
        lengths = _read(chain.folder / "lengths.u32", "<u4", 0, chunks).astype(np.int64)
        self.vocabulary = Vocabulary(settings, chain.terms())
        k1, b = settings.k1, settings.b
        average = np.array(lengths).mean() if chunks else 1.0  # as bm25s: float64 mean of the lengths
        if tokens != int(lengths.sum()):
            raise SemrelError(f"{chain.folder}: lengths disagree with index.json; delete the folder to rebuild it")
        # k1 * ((1 - b) + b * l_d / l_avg): bm25s' length normalisation, per chunk, in its order of operations
        self.norm = k1 * ((1 - b) + b * lengths / average)

    def _postings(self, segment: dict, term: int) -> tuple[np.ndarray, np.ndarray]:
        if term >= segment["vocab"]:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        indptr, docs, tfs = self._files(segment)
        name = segment["name"]
        start, end = np.frombuffer(_pread(indptr, 16, 8 * term, self.folder, f"{name}.indptr"), dtype="<i8").tolist()
        tf_type = np.dtype(segment["tf"])
        found = np.frombuffer(_pread(docs, 4 * (end - start), 4 * start, self.folder, f"{name}.docs"), dtype="<u4")
        counts = np.frombuffer(_pread(tfs, tf_type.itemsize * (end - start), tf_type.itemsize * start, self.folder, f"{name}.tf"),
                               dtype=tf_type)
        return found.astype(np.int64), counts.astype(np.float32)

    def _files(self, segment: dict) -> tuple[int, int, int]:
        """A segment's three files, opened once per index (file descriptors: postings are read, never mapped)."""
        name = segment["name"]
        if name not in self._open:
            indptr, docs, tfs = (os.open(self.folder / f"{name}.{part}", binary(os.O_RDONLY)) for part in ("indptr", "docs", "tf"))
            self._open[name] = indptr, docs, tfs
        return self._open[name]

    def close(self) -> None:
        for fds in self._open.values():
            for fd in fds:
                os.close(fd)
        self._open.clear()

    def __del__(self) -> None:
        self.close()

    def _idf(self, df: int) -> np.float32:
        n, method = self.size, self.settings.method
        if method == "lucene":
            value = math.log(1 + (n - df + 0.5) / (df + 0.5))
        elif method == "robertson":
            value = math.log(max(1.0, (n - df + 0.5) / (df + 0.5)))
        else:
            value = math.log(n / df)
        return np.float32(value)

    def scores(self, query: str) -> np.ndarray:
        """BM25 of every chunk for `query` (float32, bm25s' values)."""
        scores = np.zeros(self.size, dtype=np.float32)
        k1 = self.settings.k1
        for term in self.vocabulary.query(query):
            postings = [self._postings(s, term) for s in self.segments]
            df = sum(len(d) for d, _ in postings)
            if not df:
                continue
            idf = np.float64(self._idf(df))
            for docs, tf in postings:
                if self.settings.method == "atire":
                    tfc = (tf * (k1 + 1)) / (tf + self.norm[docs])
                else:
                    tfc = tf / (self.norm[docs] + tf)
                scores[docs] += (idf * tfc).astype(np.float32)
        return scores

    def chunk_ids(self, positions: np.ndarray) -> list[str]:
        """The ids of chunks at `positions` (corpus order, 0-based)."""
        return read_ids(self.folder, positions)

    def holds(self, ids: Sequence[str]) -> np.ndarray:
        """Whether the indexed chunks list each of `ids`, by their 8-byte hashes (idkeys.u64): the ids are not read."""
        keys = _read(self.folder / "idkeys.u64", "<u8", 0, self.size)
        return np.isin(np.array([_id_key(chunk_id) for chunk_id in ids], dtype=np.uint64), keys)

    def info(self) -> dict[str, Any]:
        return {"folder": str(self.folder), "built": self.built, "reused": self.reused, "segments": len(self.segments)}


class LexicalStore:
    """The on-disk BM25 indexes under CACHE/bm25/<tokenizer key>/; `index(corpus)` finds or builds one."""

    def __init__(self, cache_dir: str | os.PathLike, params: Mapping[str, Any]):
        self.settings = Bm25Settings.of(params)
        if self.settings.method not in METHODS:
            raise UsageError(f"BM25 method {self.settings.method!r}: the on-disk index scores {', '.join(METHODS)}; "
                             "use cache=False for bm25s' other variants")
        self.folder = Path(cache_dir).expanduser() / "bm25" / self.settings.key()
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SemrelError(f"{self.folder}: cannot create the BM25 index ({exc}); {OTHER_CACHE}") from None
        self.last: DiskBm25 | None = None  # the index the last index() call returned
        settings_file = self.folder / "tokenizer.json"
        if not settings_file.exists():
            with atomic_writer(settings_file) as out:
                json.dump(self.settings.tokenizer(), out)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """One builder at a time per tokenizer key: a second run waits, then finds the first one's work."""
        with locked(self.folder / "lock"):
            yield

    def chains(self) -> list[Chain]:
        return [Chain(p.parent) for p in sorted(self.folder.glob("*/index.json"))]

    def index(self, corpus_path: str | os.PathLike, steps: Steps = no_progress) -> DiskBm25:
        """The index of the corpus file: reused, grown by its new chunks, or built (streaming the file)."""
        path = str(corpus_path)
        with self._locked():
            chains = self.chains()
            memo = StampMemo(self.folder / "files.json")
            seen, taken = memo.recall(path)
            if seen is not None:
                count, digest = int(seen["chunks"]), str(seen["digest"])
                at = {count: digest}
            else:
                wanted = {n for c in chains for n in c.boundaries}
                count, digest, at = line_digests(path, wanted)
                at[count] = digest
            if not count:
                raise FormatError(display_name(path), "no chunks (the file is empty)")  # as read_corpus says it
            # the chain sharing the longest prefix with the corpus, at one of its boundaries
            best, reuse = None, 0
            for chain in chains:
                for end, value in chain.boundaries.items():
                    if at.get(end) == value and end <= count and end > reuse:
                        best, reuse = chain, end
            if best is not None and reuse == count:
                memo.remember(path, taken, {"chunks": count, "digest": digest})
                self.last = DiskBm25(best, count, self.settings)
                return self.last
            if best is None:  # nothing shared
                best = self._new_chain(digest)
            elif reuse != best.chunks:  # shared up to a boundary, then edited: the segments before it are kept
                best = self._fork(best, reuse, digest)
            best.cut_uncommitted()
            _Builder(best, self.settings, path, reuse, count).run(steps)
            memo.remember(path, taken, {"chunks": count, "digest": digest})
            self.last = DiskBm25(Chain(best.folder), count, self.settings, built=count - reuse)
            return self.last


    def _fork(self, chain: Chain, at: int, digest: str) -> Chain:
        """A new chain holding `chain`'s first chunks up to its boundary `at`: the segments' files linked (committed
        segments are never written again), the other files' first bytes copied, index.json written last."""
        fork = self._new_chain(digest)
        segments = [s for s in chain.meta["segments"] if s["first"] + s["count"] <= at]
        for segment in segments:
            for part in ("indptr", "docs", "tf"):
                name = f"{segment['name']}.{part}"
                try:
                    os.link(chain.folder / name, fork.folder / name)
                except OSError:  # a file system without hard links
                    shutil.copyfile(chain.folder / name, fork.folder / name)
        id_bytes = int(_read(chain.folder / "ids.end", "<u8", at - 1, 1)[0])
        terms = segments[-1]["vocab"]
        term_bytes = sum(len(t.encode("utf-8")) + 1 for t in chain.terms()[:terms])
        for name, size in (("lengths.u32", 4 * at), ("ids.end", 8 * at), ("idkeys.u64", 8 * at), ("ids.bin", id_bytes),
                           ("terms.txt", term_bytes)):
            _copy_prefix(chain.folder / name, fork.folder / name, size)
        meta = {**chain.meta, "chunks": at, "tokens": segments[-1]["tokens"], "terms": terms, "id_bytes": id_bytes,
                "segments": segments}
        with atomic_writer(fork.folder / "index.json") as out:
            json.dump(meta, out, indent=1)
        return Chain(fork.folder)

    def _new_chain(self, digest: str) -> Chain:
        name, n = f"chain-{digest[:16]}", 1
        while (self.folder / name / "index.json").exists():
            name, n = f"chain-{digest[:16]}-{n}", n + 1
        folder = self.folder / name
        folder.mkdir(exist_ok=True)
        for stale in folder.iterdir():  # left by a build killed before its first commit
            stale.unlink()
        return Chain(folder)


class _Builder:
    """Appends the corpus's chunks past `start` to a chain, a segment (a commit) at a time."""

    def __init__(self, chain: Chain, settings: Bm25Settings, path: str, start: int, count: int):
        self.chain, self.settings, self.path, self.start, self.count = chain, settings, path, start, count
        self.vocabulary = Vocabulary(settings, chain.terms())
        self.meta = dict(chain.meta)
        self.meta["segments"] = list(chain.meta["segments"])
        self.digest = hashlib.sha256()  # of the corpus lines read so far
        self.known_ids = _read(chain.folder / "idkeys.u64", "<u8", 0, chain.chunks)

    def run(self, steps: Steps) -> None:
        label = "bm25 index: chunks" if not self.start else "bm25 index: new chunks"
        blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        ids: list[str] = []
        lengths: list[np.ndarray] = []
        postings = 0
        position = self.start
        with steps(label, self.count - self.start) as advance:
            for texts, block_ids in self._blocks():
                terms, docs = self.vocabulary.block(texts)
                key, tf = np.unique(terms * len(texts) + docs, return_counts=True)
                blocks.append(((key // len(texts)).astype(np.int64), (key % len(texts) + position).astype(np.uint32), tf))
                lengths.append(np.bincount(docs, minlength=len(texts)).astype("<u4"))
                ids.extend(block_ids)
                position += len(texts)
                postings += len(key)
                if postings >= SEGMENT_POSTINGS:
                    self._commit(blocks, ids, lengths)
                    blocks, ids, lengths, postings = [], [], [], 0
                advance(len(texts))
            if ids:
                self._commit(blocks, ids, lengths)

    def _blocks(self) -> Iterator[tuple[list[str], list[str]]]:
        """(indexed texts, chunk ids) a block at a time, past the reused chunks. The digest follows the
        lines read: when a block is handed out it covers the corpus up to that block's last chunk."""
        texts: list[str] = []
        ids: list[str] = []
        count = 0
        for number, line in read_lines(self.path):
            if not line.strip():
                continue
            self.digest.update(line.encode("utf-8") + b"\n")
            count += 1
            if count == self.start and self.digest.copy().hexdigest() != self.chain.boundaries[self.start]:
                raise SemrelError(f"{self.path}: changed while it was being indexed; run again")  # the reused part, edited
            if count <= self.start:
                continue
            chunk = chunk_of(json_object(line, self.path, number), self.path, number)
            texts.append(indexed_text(chunk))
            ids.append(chunk.id)
            if len(texts) == BLOCK:
                yield texts, ids
                texts, ids = [], []
        if texts:
            yield texts, ids
        if count != self.count:
            raise SemrelError(f"{self.path}: changed while it was being indexed; run again")

    def _check_ids(self, ids: list[str]) -> None:
        """A chunk id used twice in the corpus is an error, as when the corpus is read whole (8-byte hashes,
        so the check costs 8 bytes a chunk; a hash match is confirmed on the ids themselves)."""
        keys = np.array([_id_key(i) for i in ids], dtype="<u8")
        everything = np.concatenate([self.known_ids, keys])
        order = np.argsort(everything, kind="stable")
        same = np.flatnonzero(everything[order][1:] == everything[order][:-1])
        known = len(self.known_ids)

        def id_at(p: int) -> str:
            return ids[p - known] if p >= known else read_ids(self.chain.folder, np.array([p]))[0]

        repeats = {id_at(int(order[i])) for i in same if id_at(int(order[i])) == id_at(int(order[i + 1]))}
        if repeats:
            _repeated(self.path, repeats)
        self.known_ids = everything

    def _commit(self, blocks: list[tuple[np.ndarray, np.ndarray, np.ndarray]], ids: list[str], lengths: list[np.ndarray]) -> None:
        """Write one segment, append its chunks' lengths and ids and the new terms, then commit index.json."""
        self._check_ids(ids)
        folder, meta = self.chain.folder, self.meta
        vocab = len(self.vocabulary)
        counts = np.zeros(vocab, dtype=np.int64)
        for terms, _, _ in blocks:
            counts += np.bincount(terms, minlength=vocab)
        indptr = np.concatenate([[0], np.cumsum(counts)]).astype("<i8")
        total = int(indptr[-1])
        docs = np.empty(total, dtype="<u4")
        most = max((int(tf.max()) for _, _, tf in blocks if len(tf)), default=0)
        tf_type = "<u2" if most < 2**16 else "<u4"
        tfs = np.empty(total, dtype=tf_type)
        filled = np.zeros(vocab, dtype=np.int64)
        for terms, positions, tf in blocks:  # a counting sort: blocks in corpus order keep each term's chunks ascending
            block_counts = np.bincount(terms, minlength=vocab)
            first = np.cumsum(block_counts) - block_counts
            at = indptr[terms] + filled[terms] + (np.arange(len(terms)) - first[terms])
            docs[at], tfs[at] = positions, tf
            filled += block_counts
        name = f"seg-{len(meta['segments']):05d}"
        for suffix, data in (("indptr", indptr), ("docs", docs), ("tf", tfs)):
            with appending(folder / f"{name}.{suffix}", INDEX_KEPT), open(folder / f"{name}.{suffix}", "wb") as handle:
                handle.write(data.tobytes())
                handle.flush()
                os.fsync(handle.fileno())
        length = np.concatenate(lengths)
        encoded = [i.encode("utf-8") for i in ids]
        ends = np.cumsum([len(e) for e in encoded], dtype=np.int64) + int(meta["id_bytes"])
        new_terms = self.vocabulary.list[meta["terms"] : vocab]
        _fsync_append(folder / "lengths.u32", length.astype("<u4").tobytes())
        _fsync_append(folder / "ids.bin", b"".join(encoded))
        _fsync_append(folder / "ids.end", ends.astype("<u8").tobytes())
        _fsync_append(folder / "idkeys.u64", self.known_ids[-len(ids):].astype("<u8").tobytes())
        _fsync_append(folder / "terms.txt", "".join(t + "\n" for t in new_terms).encode("utf-8"))
        first_chunk = int(meta["chunks"])
        meta.update(chunks=first_chunk + len(ids), tokens=int(meta["tokens"]) + int(length.sum()), terms=vocab,
                    id_bytes=int(ends[-1]))
        meta["segments"].append({"name": name, "first": first_chunk, "count": len(ids), "vocab": vocab, "postings": total,
                                 "tf": tf_type, "tokens": int(meta["tokens"]), "digest": self.digest.hexdigest()})
        with atomic_writer(folder / "index.json") as out:
            json.dump(meta, out, indent=1)
        self.chain.meta = meta


def indexed_text(chunk: Chunk) -> str:
    """What retrieval sees of a chunk: its title (when it has one) before its text, as BEIR does."""
    return f"{chunk.title} {chunk.text}" if chunk.title else chunk.text


def read_ids(folder: Path, positions: np.ndarray) -> list[str]:
    """The ids of the chunks at `positions` (0-based, corpus order) from a chain's ids.bin and ids.end, each checked
    against its hash in idkeys.u64: a damaged byte there put another id in the run, or stopped it with 'Invalid argument'."""
    out = []
    with open(folder / "ids.bin", "rb") as names, open(folder / "ids.end", "rb") as ends, open(folder / "idkeys.u64", "rb") as keys:
        size = os.fstat(names.fileno()).st_size
        for p in np.asarray(positions, dtype=np.int64).tolist():
            bounds = np.frombuffer(_pread(ends.fileno(), 16 if p else 8, 8 * (p - 1) if p else 0, folder, "ids.end"), dtype="<u8")
            start, end = (int(bounds[0]), int(bounds[1])) if p else (0, int(bounds[0]))
            key = int.from_bytes(_pread(keys.fileno(), 8, 8 * p, folder, "idkeys.u64"), "little")
            if end > size:  # not read: a damaged end of 2**40 would allocate that many bytes first
                raise _cut_short(folder, "ids.bin")
            raw = _pread(names.fileno(), end - start, start, folder, "ids.bin") if start <= end else b"\xff"
            chunk_id = raw.decode("utf-8", errors="replace")
            if _id_key(chunk_id) != key:
                raise SemrelError(f"{folder}: the id of chunk {p + 1:,} in ids.bin and ids.end disagrees with idkeys.u64 (a damaged file); "
                                  f"delete {folder} to rebuild it")
            out.append(chunk_id)
    return out


def _repeated(path: str, ids: set[str]) -> None:
    """Raise the corpus's repeated-id error, naming both lines (found by reading the file again)."""
    lines: dict[str, int] = {}
    for line, chunk in iter_corpus(path):
        if chunk.id in ids:
            if chunk.id in lines:
                raise repeated_id(path, chunk.id, lines[chunk.id], line)
            lines[chunk.id] = line
