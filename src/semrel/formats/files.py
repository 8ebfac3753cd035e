"""Opening inputs (paths, '-', .gz) and writing outputs atomically.

Inputs are bounded: only regular files are read (a device, FIFO or socket is refused before it
is opened for reading, so /dev/zero cannot fill memory and a FIFO cannot hang a command), gzip is
decompressed as a stream with a limit on how far it may expand, and lines and whole-read files
have a size limit named in the error with the variable that raises it (see `limits`).

Outputs never replace an input: inside `input_guard()` (the CLI opens one per command) every file
opened for reading is remembered by identity, and atomic_writer (and the review database) refuse
to write over one of them.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import functools
import gzip
import hashlib
import io
import itertools
import json
import os
import re
import shutil
import stat
import sys
import tempfile
import threading
import time
import unicodedata
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, BinaryIO, Callable, Iterable, Iterator, TypeVar, cast

from ..errors import FormatError, SemrelError, UsageError
from ..interrupts import InterruptedAfterWriting, check_interrupted, signals_held
from ..progress import Steps, no_progress
from ..terminal import unfiltered

if TYPE_CHECKING:
    from typing_extensions import Buffer  # collections.abc.Buffer is Python 3.12's

if sys.platform == "win32":
    import msvcrt
else:
    import fcntl

STDIO = "-"
F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T")


def display_name(path: str | os.PathLike) -> str:
    """How a path is named in messages ('<stdin>' for '-')."""
    return "<stdin>" if str(path) == STDIO else str(path)


def os_path(text: str) -> str:
    """A path a file records (a manifest's input, output or cwd) as os functions take it here. A name written under a
    UTF-8 locale is UTF-8 text, which an ASCII locale (LC_ALL=C) cannot encode: 'données/' named no file, and verify
    called an input there missing. Its bytes, read as this locale reads names, find it in either."""
    try:
        return os.fsdecode(text.encode("utf-8", "surrogateescape"))
    except UnicodeError:  # a lone surrogate no file name holds: left as it is, to be found nowhere
        return text


def name_text(name: str) -> str:
    """A file name as os functions give it, as text: its bytes read as UTF-8 whatever the locale (under LC_ALL=C, 'café'
    came as surrogates, and its document was skipped as 'not valid UTF-8'). A name that is not UTF-8 stays as it is."""
    try:
        return os.fsencode(name).decode("utf-8")
    except UnicodeError:
        return name


# ---------------------------------------------------------------- limits

LINE_LIMIT = ("SEMREL_MAX_LINE_MB", 64)  # one line of a line-by-line file (JSONL, TSV)
DOCUMENT_LIMIT = ("SEMREL_MAX_DOCUMENT_MB", 512)  # a file read whole: a text document, JSON, CSV, stdin
GZIP_RATIO_LIMIT = ("SEMREL_MAX_GZIP_RATIO", 100)  # decompressed / compressed size of a .gz input ...
GZIP_RATIO_FLOOR = 4 << 20  # ... checked once it has given this many bytes (small files may expand more)
MB = 1 << 20
LIMITS = (LINE_LIMIT, DOCUMENT_LIMIT, GZIP_RATIO_LIMIT)  # every limit: `semrel doctor` knows their variables
LARGEST_LIMIT = 1e12  # a larger one is no limit, and in bytes overflowed to inf (a traceback)


def limit_value(limit: tuple[str, float]) -> float:
    """The value of a limit: its environment variable (a positive number) or its default."""
    variable, default = limit
    text = os.environ.get(variable, "").strip()
    if not text:
        return float(default)
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 < value <= LARGEST_LIMIT:
        raise UsageError(f"{variable}={text!r}: expected a positive number, at most {LARGEST_LIMIT:g}")
    return value


def limit_bytes(limit: tuple[str, float]) -> int:
    return int(limit_value(limit) * MB)


def too_large(name: str, what: str, limit: tuple[str, float], line: int | None = None) -> FormatError:
    """The error for an input past a size limit: names the limit and the variable that raises it."""
    variable, value = limit[0], limit_value(limit)
    raised = min(value * 4, LARGEST_LIMIT)  # not int(): below 0.25 MB that suggested 0, which the variable refuses
    return FormatError(display_name(name), f"{what} is longer than the limit of {value:g} MB", line=line,
                       hint=f"raise it with the environment variable {variable}, in MB, e.g. {variable}={raised:g}")


# ---------------------------------------------------------------- inputs: regular files only, remembered

SPECIAL_FILES = {stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device", stat.S_IFIFO: "a FIFO (named pipe)",
                 stat.S_IFSOCK: "a socket"}


def not_plain(path: str | os.PathLike) -> str | None:
    """What a file semrel keeps for itself (a checkpoint, a lock, a state) is when it is there and no plain file ("a link",
    "a FIFO (named pipe)", "a folder"...): a FIFO would hang it, a link's target be rewritten. None: plain, or absent."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISREG(info.st_mode):
        return None
    return "a link" if stat.S_ISLNK(info.st_mode) else special_kind(info.st_mode) or "a folder"


def special_kind(mode: int) -> str | None:
    """'a character device', 'a FIFO (named pipe)', ... for a file that is not regular nor a folder."""
    return SPECIAL_FILES.get(stat.S_IFMT(mode))


def _not_a_file(name: str, kind: str) -> SemrelError:
    target = os.path.realpath(name)
    shown = f" (it links to {target})" if target != os.path.abspath(name) else ""
    return SemrelError(f"{name}: is {kind}{shown}, not a file; semrel reads regular files (use '-' to read a stream from stdin)")


def no_such_file(name: str, what: str = "file") -> SemrelError:
    """A path given that names nothing: one message (and exit code) whether a reader or the command line found it."""
    if os.path.islink(name):  # "no such file" would send the user looking for a file they can see
        return SemrelError(f"{name}: a link to {os.path.realpath(name)}, which does not exist (check the link)")
    return SemrelError(f"{name}: no such {what} (check the path)")


def _os_error(name: str, exc: OSError) -> SemrelError:
    if isinstance(exc, FileNotFoundError):
        return no_such_file(name)
    if isinstance(exc, PermissionError):
        return SemrelError(f"{name}: permission denied")
    return SemrelError(f"{name}: {exc.strerror or exc}")


def check_input_file(path: str | os.PathLike, folder_ok: bool = False) -> os.stat_result:
    """stat (which, unlike opening, never blocks on a FIFO) and refuse what is not a regular file:
    a device, FIFO or socket, and a folder unless `folder_ok`."""
    name = str(path)
    try:
        info = os.stat(name)
    except OSError as exc:
        raise _os_error(name, exc) from None
    if stat.S_ISDIR(info.st_mode):
        if not folder_ok:
            raise SemrelError(f"{name}: is a folder, expected a file")
        return info
    kind = special_kind(info.st_mode)
    if kind:
        raise _not_a_file(name, kind)
    return info


def open_input(path: str | os.PathLike) -> io.BufferedReader:
    """A regular file opened for reading (see _open_binary): SemrelError, one line, otherwise."""
    return _open_binary(str(path))


def binary(flags: int) -> int:
    """`flags` for os.open, with O_BINARY where os has it: without it Windows opens the file in text mode, whose reads turn
    CR LF into LF and end at the first Ctrl-Z byte (open() adds it; os.open does not)."""
    return flags | getattr(os, "O_BINARY", 0)


def _open_binary(name: str) -> io.BufferedReader:
    """A regular file opened for reading, remembered as an input. It is opened without blocking
    and checked with fstat before anything is read, so a FIFO or device swapped in after a check
    is still refused and never hangs the command."""
    nonblocking = getattr(os, "O_NONBLOCK", 0)  # Windows has none (nor, before Python 3.12, os.set_blocking): no FIFO to hang on
    flags = binary(os.O_RDONLY | nonblocking | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        fd = os.open(name, flags)
    except OSError as exc:
        if isinstance(exc, IsADirectoryError) or os.path.isdir(name):  # Windows refuses a folder as 'permission denied'
            raise SemrelError(f"{name}: is a folder, expected a file") from None
        raise _os_error(name, exc) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise SemrelError(f"{name}: is a folder, expected a file")
        kind = special_kind(info.st_mode)
        if kind:
            raise _not_a_file(name, kind)
        if nonblocking:
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    note_input(name, info)
    return os.fdopen(fd, "rb")


@dataclass
class _Guard:
    """The inputs a command has opened, by identity (device, inode), and the files it may rewrite."""

    inputs: dict[tuple[int, int], str] = field(default_factory=dict)
    reserved: dict[str, str] = field(default_factory=dict)  # name_key of a review database's other files, which may not exist yet
    rewritable: set[tuple[int, int]] = field(default_factory=set)
    stdin: dict[str, Any] = field(default_factory=dict)  # file_digest of what was read from stdin, for the manifest


_GUARD: contextvars.ContextVar[_Guard | None] = contextvars.ContextVar("semrel_input_guard", default=None)


@contextlib.contextmanager
def input_guard() -> Iterator[None]:
    """Within it, no output may replace a file read as an input. Each command of the CLI runs in
    one (a nested guard starts with the inputs of the one around it), so the steps of `semrel
    run`, and code in a notebook outside any guard, are not held back by files read earlier."""
    outer = _GUARD.get()
    token = _GUARD.set(_Guard(dict(outer.inputs), dict(outer.reserved), set(outer.rewritable), dict(outer.stdin)) if outer else _Guard())
    try:
        yield
    finally:
        _GUARD.reset(token)


def guarded(function: F) -> F:
    """`function` run inside input_guard(): called from Python, as from the CLI, it never writes over
    a file it read (semrel.label(j, output=j) replaced the judgments with their qrels)."""
    @functools.wraps(function)
    def inside(*args: Any, **kwargs: Any) -> Any:
        with input_guard():
            return function(*args, **kwargs)

    return cast(F, inside)


def _identity(info: os.stat_result) -> tuple[int, int]:
    return info.st_dev, info.st_ino


def note_input(path: str | os.PathLike, info: os.stat_result | None = None) -> None:
    """Remember `path` as an input of the current command (nothing outside input_guard), and the manifest
    beside it, which is read too (label takes the judge's settings there, review the labels' rule)."""
    guard = _GUARD.get()
    if guard is None or str(path) == STDIO:
        return
    for name, known in ((str(path), info), (manifest_path(path), None)):
        with contextlib.suppress(OSError):
            guard.inputs.setdefault(_identity(known or os.stat(name)), name)


SQLITE_FILES = ("-wal", "-shm", "-journal")  # SQLite keeps a database's pages in these beside it


def note_database(path: str | os.PathLike, info: os.stat_result) -> None:
    """Remember a review database as an input, and its SQLite files beside it, there or not yet."""
    note_input(path, info)
    guard = _GUARD.get()
    if guard is not None:
        guard.reserved.update({name_key(f"{path}{suffix}"): str(path) for suffix in SQLITE_FILES})


def stdin_digest() -> dict[str, Any]:
    """file_digest of what the current command read from stdin ({} outside input_guard, or when it read none)."""
    guard = _GUARD.get()
    return dict(guard.stdin) if guard is not None else {}


STAMP = ("size", "mtime_ns", "ctime_ns", "ino")


def stamp(info: os.stat_result) -> list[int]:
    """What stands for a file's bytes without reading them: the same STAMP means the same file (the ctime,
    which no user can set, catches a file replaced in place with its size and mtime kept: `cp -p`, `rsync -t`)."""
    return [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino]


RACY_NS = 2 * 10**9
"""A stamp taken this soon after its file last changed is not kept (git's racily clean entries): a write
in the same tick of the file system's clock (2 s on FAT) would leave it as it was, and be taken for no change."""


def changed_ns(info: os.stat_result) -> int:
    """When a file last changed: its ctime, which no user sets. Windows' st_ctime is the file's creation time, so there
    the later of it and the mtime: a file edited just now, made long ago, was taken as changed long ago, and a second
    edit in the same tick of its clock as the first's read (size and mtime the same) went unseen."""
    return max(info.st_ctime_ns, info.st_mtime_ns) if sys.platform == "win32" else info.st_ctime_ns


def lasting(taken: T, changed_ns: int) -> T | None:
    """A stamp `taken` of a file (or folder) last changed at `changed_ns` (see changed_ns), when it may stand for the
    bytes read after it; None while the change is within RACY_NS."""
    return taken if changed_ns < time.time_ns() - RACY_NS else None


class StampMemo:
    """What reading a file taught (its sha256, its line count), kept in a JSON file under the file's real path
    and taken back while the file's stamp is the one it had before that read, so a later call only stats it
    (the model fingerprint hashes hundreds of MB of weights; the BM25 index digests the corpus)."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)

    def _entries(self) -> dict[str, Any]:
        try:
            entries = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}  # none yet, or damaged: the files are read again
        return {k: v for k, v in entries.items() if isinstance(v, dict)} if isinstance(entries, dict) else {}

    def recall(self, file: str | os.PathLike) -> tuple[dict[str, Any] | None, list[int] | None]:
        """(what was remembered of `file` as it is now, or None; the stamp to remember what is read next by, or
        None when `file` is missing or changed too recently to be taken by its stamp)."""
        try:
            info = os.stat(file)
        except OSError:
            return None, None
        note_input(file, info)  # what is taken by its stamp stands for a read: no output may replace it
        now = stamp(info)
        entry = self._entries().get(os.path.realpath(file))
        known = entry if entry is not None and [entry.get(k) for k in STAMP] == now else None
        return known, lasting(now, changed_ns(info))

    def remember(self, file: str | os.PathLike, taken: list[int] | None, facts: dict[str, Any]) -> None:
        """Keep `facts` about `file`, read after `taken` (recall's stamp; None keeps nothing)."""
        if taken is None:
            return
        entries = {**self._entries(), os.path.realpath(file): {**dict(zip(STAMP, taken)), **facts}}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_writer(self.path) as out:
            json.dump(entries, out)


MANIFEST_SUFFIX = ".manifest.json"


def manifest_path(output: str | os.PathLike) -> str:
    """Where the manifest of `output` lies (semrel.formats.manifest writes it)."""
    return f"{output}{MANIFEST_SUFFIX}"


def allow_rewrite(path: str | os.PathLike) -> None:
    """Let the current command rewrite `path`, and the manifest beside it, although it read them
    (`golden pick` edits its golden set in place, with a journal of every change; `fill` extends
    judgments.jsonl)."""
    guard = _GUARD.get()
    if guard is not None:
        for name in (path, manifest_path(path)):
            with contextlib.suppress(OSError):
                guard.rewritable.add(_identity(os.stat(name)))


def check_not_input(path: str | os.PathLike, what: str = "output") -> None:
    """Refuse to write `path` when it is (by identity, links resolved) a file the current command read, or
    one of the SQLite files of a review database it opened."""
    guard = _GUARD.get()
    if guard is None or str(path) == STDIO:
        return
    database = guard.reserved.get(name_key(path))
    if database is not None:
        raise SemrelError(f"{path}: is a file SQLite keeps the review database {database}'s pages in; semrel never writes its "
                          f"{what} over an input: give another file name (nothing was written)")
    try:
        key = _identity(os.stat(path))
    except OSError:
        try:  # not there yet; but new/../in.run is an input once `new` is made: refused before anything is
            key = _identity(os.stat(os.path.normpath(path)))
        except OSError:
            return
    if key in guard.inputs and key not in guard.rewritable:
        source = guard.inputs[key]
        same = "" if os.path.abspath(source) == os.path.abspath(str(path)) else f" (the same file as {source})"
        if what == "manifest":  # named by the output the user gave, whose manifest it is (the input may be read later)
            raise SemrelError(f"{str(path)[: -len(MANIFEST_SUFFIX)]}: its manifest {path} is an input of this command{same}; "
                              "semrel never writes its output over an input: give another file name (nothing was written)")
        raise SemrelError(f"{path}: is an input of this command{same}; semrel never writes its {what} over an input: "
                          "give another file name (nothing was written)")


def check_outputs(*outputs: str | os.PathLike | None) -> None:
    """Refuse, before any work, outputs that are (or whose manifests are) inputs read so far."""
    for output in outputs:
        if output is not None and str(output) != STDIO:
            check_not_input(output)
            check_not_input(manifest_path(output), "manifest")


GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"


def _without_bom(data: bytes) -> bytes:
    return data[len(UTF8_BOM):] if data.startswith(UTF8_BOM) else data


def _broken_gzip(name: str, exc: Exception) -> FormatError:
    return FormatError(name, f"broken gzip data ({exc})")


def not_utf8(path: str | os.PathLike, line: int) -> FormatError:
    return FormatError(display_name(path), "not valid UTF-8", line=line, hint="re-save the file as UTF-8")


def expanded_too_far(name: str, what: str, ratio: float) -> FormatError:
    """The error for compressed data that expands past the ratio limit (GZIP_RATIO_LIMIT): a decompression bomb."""
    return FormatError(display_name(name), f"{what} expands more than {ratio:g} times (a decompression bomb?); refused before "
                       "it fills memory", hint=f"raise the limit with the environment variable {GZIP_RATIO_LIMIT[0]}")


class Inflating:
    """A gzip stream decompressed on demand, refused (with one FormatError) once it expands more
    than the ratio limit (a decompression bomb) or gives more than `size_limit` bytes."""

    def __init__(self, name: str, raw: BinaryIO, size_limit: tuple[str, float] | None = None):
        self.name, self.raw, self.size_limit = name, raw, size_limit
        self.gz = gzip.GzipFile(fileobj=raw, mode="rb")
        self.start = raw.tell() if raw.seekable() else 0
        self.given = 0
        self.ratio = limit_value(GZIP_RATIO_LIMIT)
        self.most = limit_bytes(size_limit) if size_limit else None

    def _count(self, data: bytes) -> bytes:
        self.given += len(data)
        if self.most is not None and self.given > self.most and self.size_limit:
            raise too_large(self.name, "the decompressed content", self.size_limit)
        if self.given > GZIP_RATIO_FLOOR:
            consumed = max(self.raw.tell() - self.start, 1) if self.raw.seekable() else 1
            if self.given > self.ratio * consumed:
                raise expanded_too_far(self.name, "gzip data", self.ratio)
        return data

    def read(self, size: int = -1) -> bytes:
        try:
            return self._count(self.gz.read(size))
        except (OSError, EOFError, zlib.error) as exc:
            raise _broken_gzip(self.name, exc) from None

    def lines(self) -> io.BufferedReader:
        """This stream as a buffered reader, for fast readline: it draws blocks of a megabyte, so the
        limits are checked every megabyte however short the lines are."""
        return io.BufferedReader(_InflatingRaw(self), buffer_size=1 << 20)


class _InflatingRaw(io.RawIOBase):
    def __init__(self, source: Inflating):
        self.source = source

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.source.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


def _read_bounded(name: str, source: Any, limit: tuple[str, float]) -> bytes:
    """All of `source` (anything with read(n)), refused once it passes `limit`; read in blocks
    into one buffer, so the content is held once."""
    most = limit_bytes(limit)
    out = io.BytesIO()
    while True:
        block = source.read(min(1 << 22, most + 1 - out.tell()))
        if not block:
            return out.getvalue()
        out.write(block)
        if out.tell() > most:
            raise too_large(name, "the content" if name == STDIO else "the file", limit)


def read_bytes(path: str | os.PathLike) -> bytes:
    """The whole content of a file (gunzipped, without a UTF-8 BOM), or of stdin for '-'.

    At most SEMREL_MAX_DOCUMENT_MB are read (FormatError naming the limit beyond); gzip is
    decompressed as a stream, within the ratio limit.
    """
    name = str(path)
    if name == STDIO:
        raw = data = _read_bounded(name, sys.stdin.buffer, DOCUMENT_LIMIT)
        if data[:2] == GZIP_MAGIC:
            data = _read_bounded(name, Inflating(name, io.BytesIO(data), DOCUMENT_LIMIT), DOCUMENT_LIMIT)
        guard = _GUARD.get()
        if guard is not None:  # stdin cannot be hashed again when the manifest is written: what file_digest gives, now
            guard.stdin = {"sha256": hashlib.sha256(raw).hexdigest(), "lines": _line_count([data])}
        return _without_bom(data)
    with _open_binary(name) as handle:
        if handle.peek(2)[:2] == GZIP_MAGIC:
            data = _read_bounded(name, Inflating(name, handle, DOCUMENT_LIMIT), DOCUMENT_LIMIT)
        else:
            if os.fstat(handle.fileno()).st_size > limit_bytes(DOCUMENT_LIMIT):
                raise too_large(name, "the file", DOCUMENT_LIMIT)
            data = _read_bounded(name, handle, DOCUMENT_LIMIT)
    return _without_bom(data)


def read_blocks(path: str | os.PathLike, size: int = 1 << 24) -> Iterator[bytes]:
    """The content read_bytes gives, in blocks of whole lines of about `size` bytes: finding a line of a file
    costs a block's memory, not the file's, and a file of any size can be gone through (stdin: one block). A lone
    CR ends a line too (old Mac files, which were held whole), and a line is at most SEMREL_MAX_LINE_MB."""
    name = str(path)
    if name == STDIO:
        yield read_bytes(name)
        return
    most = limit_bytes(LINE_LIMIT)
    with _open_binary(name) as plain:
        handle: Any = Inflating(name, plain) if plain.peek(2)[:2] == GZIP_MAGIC else plain
        rest = bytearray()
        first, lines = True, 1
        while block := handle.read(size):
            rest += _without_bom(block) if first else block
            first = False
            cut = rest.rfind(b"\n") + 1 or rest.rfind(b"\r", 0, len(rest) - 1) + 1  # a CR with no LF after it
            if cut:
                yield bytes(memoryview(rest)[:cut])  # one copy (rest[:cut] would be a second)
                lines += line_ends(rest, cut)
                del rest[:cut]
            elif len(rest) > most:
                raise too_large(name, "the line", LINE_LIMIT, line=lines)
        if rest:
            yield bytes(rest)


def line_ends(data: bytes | bytearray, end: int | None = None) -> int:
    """The lines `data[:end]` ends: each LF, and each CR with no LF after it (old Mac files), as read_blocks cuts
    them and columns.normalise reads them."""
    ends = data.count(b"\n", 0, end)
    if data.find(b"\r", 0, end) >= 0:  # a search at memchr's speed: most files hold no CR to count
        ends += data.count(b"\r", 0, end) - data.count(b"\r\n", 0, end)
    return ends


def read_head(path: str | os.PathLike, size: int = 256) -> bytes:
    """The first bytes of a file's (decompressed) content, to tell formats apart."""
    name = str(path)
    if name == STDIO:
        return read_bytes(name)[:size]
    with _open_binary(name) as handle:
        if handle.peek(2)[:2] == GZIP_MAGIC:
            return _without_bom(Inflating(name, handle).read(size))
        return _without_bom(handle.read(size))


def read_tail(path: str | os.PathLike, size: int) -> bytes:
    """About the last `size` bytes of a file's (decompressed) content: a plain file's are read from its end, a gzip
    file's kept as it is gone through (a line cut at the start is the caller's to skip)."""
    with _open_binary(str(path)) as handle:
        if handle.peek(2)[:2] != GZIP_MAGIC:
            handle.seek(max(0, handle.seek(0, os.SEEK_END) - size))
            return handle.read()
    tail = b""
    for block in read_blocks(path):
        tail = (tail + block[-size:])[-size:]
    return tail


def content_ends(path: str | os.PathLike) -> tuple[bool, bool]:
    """Whether a file's (decompressed) content starts with a UTF-8 byte-order mark, and whether it ends with a newline: the
    two things read_lines does not give back, for a rewrite that keeps every byte it read (jsonl.JsonlText)."""
    name = str(path)
    with _open_binary(name) as handle:
        head = Inflating(name, handle).read(len(UTF8_BOM)) if handle.peek(2)[:2] == GZIP_MAGIC else handle.read(len(UTF8_BOM))
    return head == UTF8_BOM, read_tail(path, 1) == b"\n"


UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")  # little- and big-endian


def decode_text(data: bytes, path: str | os.PathLike) -> str:
    """UTF-8 text, or UTF-16 where the file starts with its byte-order mark (Notepad's and Excel's "Unicode", a
    PowerShell redirect), which says so unambiguously; other encodings are refused with the line they break on."""
    if data[:2] in UTF16_BOMS:
        try:
            return data.decode("utf-16")  # reads the mark and drops it
        except UnicodeDecodeError:
            raise FormatError(display_name(path), "not valid UTF-16, though it starts with UTF-16's byte-order mark",
                              hint="re-save the file as UTF-8") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise not_utf8(path, data.count(b"\n", 0, exc.start) + 1) from None


def read_text(path: str | os.PathLike) -> str:
    return decode_text(read_bytes(path), path)


def read_lines(path: str | os.PathLike) -> Iterator[tuple[int, str]]:
    """(line number, line without its "\\n"), decoded as read_text does (gunzip, BOM, UTF-8).

    Files are read one line at a time, so a file of any size costs the memory of its longest
    line, which may be SEMREL_MAX_LINE_MB at most; stdin is read whole (SEMREL_MAX_DOCUMENT_MB).
    """
    name = str(path)
    if name == STDIO:
        lines = read_text(path).split("\n")  # not splitlines, which also breaks at \r and \u2028 (a JSON string may hold them)
        if not lines[-1]:  # the newline ending the last line opens no line after it, as in a file
            lines.pop()
        yield from enumerate(lines, start=1)
        return
    most = limit_bytes(LINE_LIMIT)
    with _open_binary(name) as plain:
        handle = Inflating(name, plain).lines() if plain.peek(2)[:2] == GZIP_MAGIC else plain
        number = 0
        while raw := handle.readline(most + 1):
            number += 1
            if len(raw) > most and not raw.endswith(b"\n"):
                raise too_large(name, "the line", LINE_LIMIT, line=number)
            if number == 1:
                raw = _without_bom(raw)
            try:
                yield number, raw.rstrip(b"\n").decode("utf-8")
            except UnicodeDecodeError:
                if number == 1 and raw[:2] in UTF16_BOMS:  # read a line at a time, as UTF-8: a UTF-16 file is refused as such
                    raise FormatError(display_name(name), "UTF-16 text (Windows' \"Unicode\"), read here as UTF-8 only", line=1,
                                      hint="re-save the file as UTF-8") from None
                raise not_utf8(name, number) from None


def file_digest(path: str | os.PathLike) -> dict[str, Any]:
    """sha256 of a file's bytes and its line count (after gunzip), reading it block by block
    (inputs can be hundreds of MB; they are neither loaded whole nor read twice when plain)."""
    digest = hashlib.sha256()

    def hashed(handle: IO[bytes]) -> Iterator[bytes]:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
            yield block

    with open(path, "rb") as handle:
        compressed = handle.read(2) == GZIP_MAGIC
        handle.seek(0)
        lines = _line_count(hashed(handle))
    if compressed:
        with gzip.open(path, "rb") as inflated:
            lines = _line_count(iter(lambda: inflated.read(1 << 20), b""))
    return {"sha256": digest.hexdigest(), "lines": lines}


def stream_sha256(handle: IO[bytes]) -> Any:
    """The sha256 (a hashlib object) of what is left to read of an open file, a MB at a time: never held whole."""
    digest = hashlib.sha256()
    for block in iter(lambda: handle.read(1 << 20), b""):
        digest.update(block)
    return digest


def checksum(*parts: Buffer) -> int:
    """crc32 of the parts one after another, kept with cached bytes so that a bit flipped on disk is found when they are
    read back. It guards against damage, not tampering: crc32 runs at 4 GB/s here, blake2b at 0.9 and sha256 at 1.7."""
    crc = 0
    for part in parts:
        crc = zlib.crc32(part, crc)
    return crc


def bytes_sha256(path: str | os.PathLike) -> str | None:
    """sha256 of a file's bytes, read block by block; None when it cannot be read."""
    try:
        with open(path, "rb") as handle:
            return stream_sha256(handle).hexdigest()
    except OSError:
        return None


SQLITE_HEADER = b"SQLite format 3\0"


def sqlite_header(path: str | os.PathLike) -> bool:
    """Whether the file at `path` starts as every SQLite database does (an empty file, which SQLite takes as a new one,
    does not)."""
    with open(path, "rb") as handle:
        return handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER


def content_sha256(path: str | os.PathLike) -> str | None:
    """sha256 of a file's bytes, or of a folder's files and their names under it: what a manifest records of an input
    (describe_input) and `semrel run` keeps of it; None when missing. An SQLite file's write-ahead log counts with it:
    a review database holds its latest grades there until SQLite copies them into the file."""
    if os.path.isdir(path):
        return folder_digest(path)["sha256"]
    digest = bytes_sha256(path)
    return None if digest is None else with_log(path, digest)


def path_order(paths: Iterable[Path]) -> list[Path]:
    """Paths sorted by their parts, case and all: Path's own order on Linux and macOS. Windows' Path folds case ('B.txt'
    before 'a.txt' here, after it there), so a folder's documents came in another order there, and a corpus chunked
    there was another file."""
    return sorted(paths, key=lambda path: path.parts)


def name_key(path: str | os.PathLike) -> str:
    """What tells apart files that need not exist yet (outputs, a review database's -wal and -shm): the real path, its
    file name in NFC and casefolded. macOS's and Windows' file systems take 'Out.txt' and 'out.txt' (or a name in NFC and
    in NFD) for one file, so the later output was renamed over the earlier; Linux refuses them too, so a command's checks
    are alike everywhere."""
    folder, name = os.path.split(os.path.realpath(path))
    return os.path.join(folder, unicodedata.normalize("NFC", name).casefold())


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether two paths name one file (links followed; hard links too), or, where either cannot be read, one path."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def prefix_matches(path: str | os.PathLike, lines: int, sha256: str) -> bool:
    """Whether the file's first `lines` lines (with their newlines) have that sha256: a file only appended to since it was
    read (`semrel fill` appends the pairs it judges to judgments.jsonl), which is worth saying apart from an edit."""
    digest, seen, last = hashlib.sha256(), 0, b"\n"
    with open(path, "rb") as handle:  # a MB at a time: a line of a binary input (an SQLite file) can be as long as the file
        for block in iter(lambda: handle.read(1 << 20), b""):
            ends = block.count(b"\n")
            if seen + ends >= lines:  # the last line read ends in this block
                at = -1
                for _ in range(lines - seen):
                    at = block.index(b"\n", at + 1)
                digest.update(block[: at + 1])
                return digest.hexdigest() == sha256
            digest.update(block)
            seen, last = seen + ends, block[-1:]
    return seen + (last != b"\n") == lines and digest.hexdigest() == sha256  # a last line without its newline counts, as in line_count


def with_log(path: str | os.PathLike, digest: str) -> str:
    """`digest`, the sha256 of the file at `path`, with its SQLite write-ahead log's where it is an SQLite file that has one
    (what it holds is the file and the log together): the one home of that rule for every input digest."""
    log = f"{os.fspath(path)}-wal"
    if not os.path.isfile(log) or not os.path.getsize(log):
        return digest
    if not sqlite_header(path):
        return digest
    return hashlib.sha256(f"{digest}\0{bytes_sha256(log)}".encode()).hexdigest()


def sqlite_rows_sha256(path: str | os.PathLike) -> str | None:
    """sha256 of an SQLite database's schema and rows as SQLite reads them (its write-ahead log included), not of its
    bytes: the same after SQLite copies the log into the file (a checkpoint, when the last connection closes), which
    rewrites the bytes and empties the log but changes no row; with_log's digest of a review database exported while
    a reviewer had it open changed so, and verify called the database changed. None where it cannot be read."""
    import sqlite3  # here: most inputs are no database

    try:
        with contextlib.closing(sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)) as conn:
            digest = hashlib.sha256()
            for statement in conn.iterdump():  # tables by name, each one's rows in its key order
                digest.update(statement.encode("utf-8", "surrogatepass") + b"\n")
            return digest.hexdigest()
    except sqlite3.Error:
        return None


def folder_digest(path: str | os.PathLike, most: int | None = None) -> dict[str, Any]:
    """sha256 over a folder's files (recursively, in sorted order): each one's path inside it and the sha256
    of its bytes ('None' for one that cannot be read), and how many there are (folder_files). `most`: the files it
    should hold; a folder of another count differs, known before any file is read, with no sha256 and `files` its count,
    counted no further than most + 1 (a manifest naming / or ~ as an input, with a count above what they hold, read
    every file under them)."""
    names: Iterable[str] = folder_files(path)
    if most is not None:
        names = list(itertools.islice(names, most + 1))  # listed once, by name: no file is opened to count them
        if len(names) != most:
            return {"sha256": None, "files": len(names)}
    digest, count = hashlib.sha256(), 0
    for full in names:
        sha = bytes_sha256(full) if os.path.isfile(full) else None  # not a FIFO (it would block), device or dangling link
        inside = os.path.relpath(full, path).replace(os.sep, "/")  # '/' on every system: Windows' digest is Linux's
        digest.update(f"{inside}\0{sha}\0".encode("utf-8", "surrogateescape"))
        count += 1
    return {"sha256": digest.hexdigest(), "files": count}


def folder_files(path: str | os.PathLike) -> Iterator[str]:
    """The paths of the files under a folder that count as its content, in sorted order: hidden files and
    folders are left out (semrel reads none of them, and an output written inside the folder is staged in one)."""
    for root, folders, files in os.walk(os.fspath(path)):
        folders[:] = sorted(f for f in folders if not f.startswith("."))
        for name in sorted(f for f in files if not f.startswith(".")):
            yield os.path.join(root, name)


def line_count(path: str | os.PathLike) -> int:
    """The lines of a file's content, as read_lines numbers them."""
    return _line_count(read_blocks(path))


def _line_count(blocks: Iterable[bytes]) -> int:
    """Lines in the content the blocks make up, a last line without its newline included."""
    lines, last = 0, b"\n"
    for block in blocks:
        lines += block.count(b"\n")
        last = block[-1:] or last  # an empty block (empty stdin) ends nothing
    return lines + (last != b"\n")


_UMASK_LOCK = threading.Lock()


def current_umask() -> int:
    """The process umask, read without changing it where Linux shows it (/proc/self/status);
    elsewhere set and restored at once, under a lock."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def new_file_mode(target: str | os.PathLike) -> int:
    """The permissions `open(target, "w")` would leave: those of the file being replaced, else
    0666 less the umask (tempfile.mkstemp makes 0600 files, which other users could not read)."""
    try:
        return stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        return 0o666 & ~current_umask()


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike, mode: str = "w") -> Iterator[IO]:
    """Write to a temp file beside `path` and rename it into place only on success.

    A crash or an exception leaves the old file (or none), never a half-written one. The file
    gets the permissions a plain write would give it (new_file_mode: the umask's, or the replaced
    file's). '-' writes to stdout; a '.gz' name is compressed.
    """
    name = str(path)
    binary = "b" in mode
    if name == STDIO:
        stdout = unfiltered(sys.stdout)  # data, as it is: the CLI's terminal filter is for messages and tables
        if binary or not hasattr(stdout, "buffer"):  # a text-only stream (io.StringIO) takes text as it is
            stream = stdout.buffer if binary else stdout
            yield stream
            stream.flush()
            return
        stdout.flush()
        # UTF-8, as the file would be: under LC_ALL=C stdout is ASCII, and an id outside it was a traceback
        text = io.TextIOWrapper(stdout.buffer, encoding="utf-8", newline="\n", write_through=True)
        try:
            yield text
        finally:
            text.detach()  # stdout stays open: it is the interpreter's
        stdout.buffer.flush()
        return
    target = Path(landing(name))
    existed = prepare_output(name)
    tmp: str | None = None
    raw: IO[bytes] | None = None
    try:
        with signals_held():  # a signal between making the temp file and naming it here would leave it behind
            fd, tmp = _temp_file(name, target)
            raw = os.fdopen(fd, "wb")
        with raw:
            os.chmod(tmp, new_file_mode(target))  # by name: Windows' os has no fchmod before Python 3.13
            # cast: typeshed declares GzipFile a BufferedIOBase only, though it has every method of IO[bytes]
            sink = cast(IO[bytes], gzip.GzipFile(fileobj=raw, mode="wb", mtime=0)) if name.endswith(".gz") else raw
            with sink if sink is not raw else contextlib.nullcontext(raw):
                if binary:
                    yield sink
                    sink.flush()
                else:
                    text = io.TextIOWrapper(sink, encoding="utf-8", newline="\n")
                    yield text
                    text.flush()
                    text.detach()
            raw.flush()
            os.fsync(raw.fileno())
        check_not_input(target)  # again: an input streamed while it was written counts too
        check_interrupted()
        os.replace(tmp, target)
    except BaseException as exc:
        if raw is not None:
            raw.close()  # closed already, unless a signal came as the temp file was made
        if tmp is not None:
            with signals_held(), contextlib.suppress(FileNotFoundError):  # a second Ctrl-C would leave it there
                os.unlink(tmp)
        if isinstance(exc, OSError) and (exc.errno in WRITE_ERRNOS or exc.filename in (tmp, name)):
            raise write_error(name, exc, existed) from None
        raise


class Staged(dict[str, str]):
    """{target: staged name}, looked up by a str or a path alike."""

    def __getitem__(self, key: str | os.PathLike) -> str:
        return super().__getitem__(str(key))


@contextlib.contextmanager
def files_as_one(targets: list[str], superseded: Iterable[str] = ()) -> Iterator[Staged]:
    """Write files that belong together (an output, its companions, their manifests) as one unit.
    Yields {target: staged name}: each is written whole under its staged name, in a hidden folder
    beside its target (so the rename stays on one file system), then all are renamed into place in
    `targets`' order with Ctrl-C, SIGTERM and SIGHUP held back, so an error or interrupt leaves the
    old set or the new one. Only a hard kill between two renames (microseconds) can split them: put
    last the file that vouches for the others. Errors name the target, never the staged file.
    `superseded` files (the checkpoint an output was resumed from) are removed with the renames, so an
    interrupt cannot leave a checkpoint of finished work beside it. A signal held during the renames
    is raised after them as InterruptedAfterWriting, which says the set is in place."""
    given: dict[str, str] = {}
    for target in targets:
        if given.setdefault(name_key(target), target) != target or targets.count(target) > 1:
            raise UsageError(f"{target}: named for two outputs of one command; give each output its own file")
    for target in targets:  # every one before any folder is made
        check_not_input(target, "manifest" if target.endswith(MANIFEST_SUFFIX) and target[: -len(MANIFEST_SUFFIX)] in targets
                        else "output")
    existed = {target: prepare_output(target) for target in targets}  # not an input, not a folder; its folder made
    landings = {target: landing(target) for target in targets}
    folders: dict[Path, Path] = {}
    try:
        for target in reversed(targets):  # a folder's staging area is named after its last target
            folder = Path(landings[target]).parent
            if folder not in folders:
                try:
                    with signals_held():  # a signal between making the folder and naming it here would leave it behind
                        folders[folder] = Path(tempfile.mkdtemp(prefix=temp_prefix(Path(target)), suffix=".tmp", dir=folder))
                except OSError as exc:
                    raise write_error(target, exc, existed[target]) from None
        staged = Staged({target: str(folders[Path(landings[target]).parent] / Path(landings[target]).name) for target in targets})
        with _named_as(staged, existed):
            yield staged
        for target in targets:
            check_not_input(target)  # again: an input streamed while these were written (a folder's files) counts too
            os.chmod(staged[target], new_file_mode(target))  # the replaced file's permissions, else the umask's
        check_interrupted()
        done: list[str] = []
        try:
            with signals_held():
                for target in targets:
                    try:
                        os.replace(staged[target], landings[target])
                    except OSError as exc:
                        if not done:
                            raise write_error(target, exc, existed[target]) from None
                        raise SemrelError(f"{target}: cannot put it in place ({exc.strerror or exc}); {', '.join(done)} already "
                                          "hold the new files: run it again") from None
                    done.append(target)
                for name in superseded:
                    with contextlib.suppress(OSError):  # the new set is in place: a checkpoint left over fails nothing
                        Path(name).unlink()
        except KeyboardInterrupt as exc:
            if len(done) == len(targets):
                raise InterruptedAfterWriting(done) from None
            if isinstance(exc.__context__, SemrelError):  # a rename failed too: which files hold the new set matters more
                raise exc.__context__ from None
            raise
    finally:
        with signals_held():  # a second Ctrl-C would leave them there
            for staging in folders.values():
                shutil.rmtree(staging, ignore_errors=True)


NO_LOCKS = {errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOTSUP, errno.EINVAL}  # flock refused by the file system, not held

if sys.platform == "win32":
    def _lock(handle: IO, wait: bool) -> None:
        """Windows has no flock: msvcrt locks a byte range (here the first byte; a lock file holds none, and Windows locks
        past the end). Its LK_LOCK gives up after 10 s, so a lock that waits retries LK_NBLCK until the holder lets go."""
        while True:
            handle.seek(0)
            try:
                msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
                return
            except OSError as exc:
                if exc.errno not in (errno.EACCES, errno.EDEADLOCK):  # those say another process holds it
                    raise
                if not wait:
                    raise BlockingIOError(exc.errno, exc.strerror) from None
            time.sleep(0.05)

    def _unlock(handle: IO) -> None:
        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
else:
    def _lock(handle: IO, wait: bool) -> None:
        fcntl.flock(handle, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)

    def _unlock(handle: IO) -> None:
        fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def locked(path: str | os.PathLike, waiting: Callable[[], None] | None = None, required: bool = True) -> Iterator[None]:
    """The block holds an exclusive lock on the file `path` (made if missing): another process taking
    it waits until this one ends the block, or ends however it ends (the kernel drops the lock).
    `waiting` is called once if this one has to wait. A FIFO or folder there (named like a cache's lock) is refused: opening
    a FIFO to write waited for ever for a reader. `required=False`: where the file system takes no locks (some network
    and FUSE mounts: ENOLCK, EOPNOTSUPP), the block runs without one rather than fail, for a lock that only narrows a
    race a check already guards (rewrite_lock: a judge's hour of work was not to be lost at its last write)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        info = None
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise SemrelError(f"{path}: semrel keeps a lock there, and this is {special_kind(info.st_mode) or 'a folder'}, "
                          "not a file: remove it")
    try:
        handle = open(path, "ab")
    except OSError as exc:  # a folder not writable (or gone): one line, not a traceback
        raise SemrelError(f"{path}: cannot make the lock semrel keeps there ({exc.strerror or exc})") from None
    with handle:
        held = True
        try:
            _lock(handle, wait=False)
        except BlockingIOError:
            if waiting is not None:
                waiting()
            _lock(handle, wait=True)
        except OSError as exc:
            if required or exc.errno not in NO_LOCKS:
                raise SemrelError(f"{path}: cannot lock it ({exc.strerror or exc})" + (
                    ": its file system takes no locks; use a folder on a local disk" if exc.errno in NO_LOCKS else "")) from None
            held = False  # the caller's check is the guard, as it was before it took a lock
        try:
            yield
        finally:
            if held:
                _unlock(handle)


def rewrite_lock_path(target: str | os.PathLike) -> str:
    """Where rewrite_lock keeps its lock: hidden beside the file it guards (links followed, so two names of one file share
    it), as `semrel run`'s is; a folder's digest leaves hidden files out."""
    real = Path(os.path.realpath(target))
    return str(real.parent / f".{_temp_stem(real)}.lock")


@contextlib.contextmanager
def rewrite_lock(target: str | os.PathLike, steps: Steps = no_progress) -> Iterator[None]:
    """Held by a command that rewrites a file it read (`golden pick`, `fill`) from its check that the file is as it read
    it through the rename of the new one, and by `judge` for its write of judgments a fill may be extending: the check
    alone let two writers in the same instant both pass it, and the later rename drop the other's write. A second
    writer waits (said once through `steps`) until the first's file is in place, then its check sees the change and
    refuses with its one line; waiting, not failing at once, refuses nothing that a writer which failed or was
    interrupted left as it was, and the lock is held for one write, not a session. The kernel drops it when its holder
    ends however it ends. A hand edit takes no lock: the check is what catches that."""
    name, lock = display_name(target), rewrite_lock_path(target)

    def waiting() -> None:
        with steps(f"waiting for another semrel command to finish writing {name} (it holds {lock})", 0):
            pass

    try:  # the target's folder, which its write makes anyway: `golden pick -o new/golden.jsonl` appends its journal there first
        Path(lock).parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise SemrelError(f"{name}: cannot make its folder ({exc.strerror or exc})") from None
    with locked(lock, waiting, required=False):
        yield


@contextlib.contextmanager
def _named_as(staged: dict[str, str], existed: dict[str, bool]) -> Iterator[None]:
    """A SemrelError raised while staged files are written names the targets they stand for, and says
    which old files are kept: none of the set is replaced."""
    try:
        yield
    except SemrelError as exc:
        message, named = str(exc), None
        for target, name in sorted(staged.items(), key=lambda item: -len(item[1])):  # a longer name before its prefix
            if name in message:
                named = named or target
                message = message.replace(name, target)
        others = sum(there for target, there in existed.items() if target != named)
        if named is not None and existed[named]:  # written under its staged name, which was new
            message = message.replace("no file was made", "the old files are kept" if others else "the old file is kept")
        elif others:
            message = message.replace("no file was made", "no file was made, the old files beside it are kept")
        error = SemrelError(message)
        error.exit_code = exc.exit_code
        raise error from None


# Failures of writing itself (rather than of reading an input inside the writer's block).
WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EIO}


def write_error(name: str, exc: OSError, existed: bool) -> SemrelError:
    kept = "the old file is kept" if existed else "no file was made"
    return SemrelError(f"{name}: cannot write ({write_reason(exc)}); nothing was written, {kept}")


def write_reason(exc: OSError) -> str:
    return {errno.ENOSPC: "no space left on device", errno.EDQUOT: "disk quota exceeded", errno.EROFS: "read-only file system",
            errno.EFBIG: "file too large for this system or its limits"}.get(exc.errno or 0, exc.strerror or str(exc))


@contextlib.contextmanager
def appending(path: str | os.PathLike, kept: str) -> Iterator[None]:
    """Writes to a file held open (a checkpoint, a cache) fail with an OSError that names no file, which the CLI took for
    stdout's ('stdout: No space left on device'): the error names `path` and says what `kept` there. One that names its
    file (opening it failed: nothing was written) is left as it is."""
    try:
        yield
    except OSError as exc:
        if exc.filename is not None:
            raise
        raise SemrelError(f"{path}: cannot write ({write_reason(exc)}); {kept}") from None


def prepare_output(name: str) -> bool:
    """Check an output path before anything is written: not an input of this command, not a
    folder or device; make its folder. Returns whether a file is there already."""
    if not name:  # said as such: it was ': is a folder', the current one
        raise UsageError("an output's path is empty: give a file name")
    check_not_input(name)
    try:
        info = os.stat(name)
    except (FileNotFoundError, NotADirectoryError):  # no file there (a part of the path that is a file is named below)
        info = None
    except OSError as exc:
        raise SemrelError(f"{name}: cannot write ({exc.strerror or exc})") from None
    if info is not None:
        if stat.S_ISDIR(info.st_mode):
            raise SemrelError(f"{name}: is a folder; give the output a file name")
        kind = special_kind(info.st_mode)
        if kind:
            raise SemrelError(f"{name}: is {kind}; semrel writes outputs to files (use '-' for stdout)")
        if not info.st_mode & 0o222 or not os.access(name, os.W_OK):  # the rename would replace it all the same
            if _read_only_mount(name):  # no chmod mends that: say what does not let it be written
                raise write_error(name, OSError(errno.EROFS, os.strerror(errno.EROFS)), True)
            raise SemrelError(f"{name}: is read-only; semrel does not replace a file you may not write: make it writable, "
                              "or give another file name (nothing was written)")
    folder = Path(landing(name)).parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise SemrelError(f"{name}: cannot write ({_not_a_folder(folder)})") from None
    except OSError as exc:
        raise write_error(name, exc, False) if exc.errno in WRITE_ERRNOS else SemrelError(
            f"{name}: cannot make its folder ({exc.strerror or exc})") from None
    sweep_stale_temps(Path(landing(name)))
    return info is not None


def _read_only_mount(name: str) -> bool:
    try:
        return bool(os.statvfs(name).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


def _not_a_folder(folder: Path) -> str:
    """Which part of `folder` stops it being made: a file, or a link to nothing."""
    for part in [*reversed(folder.parents), folder]:
        if os.path.islink(part) and not part.exists():
            return f"{part} is a link to {os.readlink(part)}, which does not exist"
        if part.exists() and not part.is_dir():
            return f"{part} is a file, not a folder"
    return "a part of the path is a file, not a folder"


def landing(name: str | os.PathLike) -> str:
    """The file a write of `name` replaces: the one a symbolic link `name` points at (so the link
    follows the new content, as a plain open(name, "w") would have it), else `name` itself."""
    return os.path.realpath(name) if os.path.islink(name) else os.fspath(name)


TEMP_STEM_BYTES = 200  # of a file name's 255 (NAME_MAX): the rest holds the dots, a process id, random letters, .tmp and -journal


def temp_prefix(target: Path) -> str:
    """The start of the name of a hidden temp file or folder beside `target` (then random letters and
    `.tmp`): the target's name and the writing process's id, by which a later write of the target
    knows the ones a killed process left (sweep_stale_temps)."""
    return f".{_temp_stem(target)}.{os.getpid()}_"


def _temp_stem(target: Path) -> str:
    """The target's name, or for a name too long to leave room for the rest, its start and a hash of the whole (a temp
    named after it whole was 'File name too long' where the target's own name was taken)."""
    name = os.fsencode(target.name)
    if len(name) <= TEMP_STEM_BYTES:
        return target.name
    return f"{os.fsdecode(name[:TEMP_STEM_BYTES - 17])}~{hashlib.sha256(name).hexdigest()[:16]}"


_TEMP_REST = re.compile(r"(\d+)_\w+\.tmp(?:-wal|-shm|-journal)?", re.ASCII)  # after ".NAME." (see temp_prefix)


def sweep_stale_temps(target: Path) -> None:
    """Remove the hidden temp files and folders beside `target` that a semrel process writing it left
    when it was killed outright (SIGKILL, the out-of-memory killer, a power cut: nothing could remove
    them then). Only those whose process has ended: another one may still be writing."""
    start = f".{_temp_stem(target)}."
    try:
        entries = [e for e in os.scandir(target.parent) if e.name.startswith(start)]
    except OSError:
        return
    for entry in entries:
        match = _TEMP_REST.fullmatch(entry.name[len(start):])
        if match is None or not _process_ended(int(match.group(1))):
            continue
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            with contextlib.suppress(OSError):
                os.unlink(entry.path)


if sys.platform == "win32":
    def _process_running(pid: int) -> bool:
        """Whether a process runs, asked through a handle to it: os.kill(pid, 0) on Windows is TerminateProcess, which
        ends it. One that may not be opened (ERROR_ACCESS_DENIED) is another user's, running."""
        import ctypes
        from ctypes import wintypes

        kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
        kernel32.OpenProcess.restype = wintypes.HANDLE
        kernel32.OpenProcess.argtypes = (wintypes.DWORD, wintypes.BOOL, wintypes.DWORD)
        kernel32.GetExitCodeProcess.argtypes = (wintypes.HANDLE, ctypes.POINTER(wintypes.DWORD))
        kernel32.CloseHandle.argtypes = (wintypes.HANDLE,)
        handle = kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return ctypes.get_last_error() == 5
        try:
            code = wintypes.DWORD()
            return not kernel32.GetExitCodeProcess(handle, ctypes.byref(code)) or code.value == 259  # STILL_ACTIVE
        finally:
            kernel32.CloseHandle(handle)


def _process_ended(pid: int) -> bool:
    if pid == os.getpid():
        return False
    if sys.platform == "win32":
        return not _process_running(pid)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # another user's process (EPERM): alive
        return False
    return False


def _temp_file(name: str, target: Path) -> tuple[int, str]:
    try:
        return tempfile.mkstemp(prefix=temp_prefix(target), suffix=".tmp", dir=target.parent)
    except OSError as exc:
        if exc.errno in WRITE_ERRNOS:
            raise write_error(name, exc, target.exists()) from None
        raise SemrelError(f"{name}: cannot write ({exc.strerror or exc})") from None


def check_id(value: str, kind: str) -> str:
    """Ids go into whitespace-separated files, so they may not be empty or hold whitespace; a query
    id opens a TREC line, which a leading '#' would make a comment (and the query vanish)."""
    if not value or any(ch.isspace() for ch in value):
        raise SemrelError(f"{kind} {value!r} is empty or contains whitespace; ids must be single tokens")
    if kind == "query id" and value.startswith("#"):
        raise SemrelError(f"query id {value!r} starts with '#', which makes its lines comments in TREC qrels and runs; "
                          "rename the query")
    return value


def line_id(value: str, kind: str, path: str | os.PathLike, line: int) -> str:
    """check_id, naming the file and line the id was read from."""
    try:
        return check_id(value, kind)
    except SemrelError as exc:
        raise FormatError(display_name(path), str(exc), line=line) from None


def id_form(value: str) -> str:
    """The form in which two ids are one: Unicode's NFC. macOS names files in NFD (an e and a combining accent), a keyboard
    types NFC (one character): the same 'café#0' to the eye is two ids to a comparison. Document ids of files are made in
    it (file_document_id); gold ids are written as the corpus spells them where only this form tells them apart."""
    return unicodedata.normalize("NFC", value)
