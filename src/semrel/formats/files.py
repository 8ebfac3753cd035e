"""Opening inputs (paths, '-', .gz) and writing outputs atomically."""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import os
import stat
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, Any, Iterator

from ..errors import FormatError, SemrelError

STDIO = "-"


def display_name(path: str | os.PathLike) -> str:
    """How a path is named in messages ('<stdin>' for '-')."""
    return "<stdin>" if str(path) == STDIO else str(path)


def _open_binary(name: str) -> IO[bytes]:
    try:
        return open(name, "rb")
    except FileNotFoundError:
        raise SemrelError(f"{name}: no such file (check the path)") from None
    except IsADirectoryError:
        raise SemrelError(f"{name}: is a folder, expected a file") from None
    except PermissionError:
        raise SemrelError(f"{name}: permission denied") from None


GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"


def _without_bom(data: bytes) -> bytes:
    return data[len(UTF8_BOM):] if data.startswith(UTF8_BOM) else data


def _broken_gzip(name: str, exc: Exception) -> FormatError:
    return FormatError(name, f"broken gzip data ({exc})")


def not_utf8(path: str | os.PathLike, line: int) -> FormatError:
    return FormatError(display_name(path), "not valid UTF-8", line=line, hint="re-save the file as UTF-8")


def read_bytes(path: str | os.PathLike) -> bytes:
    """The whole content of a file (gunzipped, without a UTF-8 BOM), or of stdin for '-'."""
    name = str(path)
    if name == STDIO:
        data = sys.stdin.buffer.read()
    else:
        with _open_binary(name) as handle:
            data = handle.read()
    if data[:2] == GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as exc:
            raise _broken_gzip(name, exc) from None
    return _without_bom(data)


def read_head(path: str | os.PathLike, size: int = 256) -> bytes:
    """The first bytes of a file's (decompressed) content, to tell formats apart."""
    name = str(path)
    try:
        with open(name, "rb") as handle:
            head = handle.read(size)
    except OSError:
        return read_bytes(name)[:size]  # let read_bytes phrase the error
    if head[:2] == GZIP_MAGIC:
        return read_bytes(name)[:size]
    return _without_bom(head)


def decode_text(data: bytes, path: str | os.PathLike) -> str:
    """UTF-8 text; other encodings are refused with the line they break on."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise not_utf8(path, data.count(b"\n", 0, exc.start) + 1) from None


def read_text(path: str | os.PathLike) -> str:
    return decode_text(read_bytes(path), path)


def read_lines(path: str | os.PathLike) -> Iterator[tuple[int, str]]:
    """(line number, line without its "\\n"), decoded as read_text does (gunzip, BOM, UTF-8).

    Files are read one line at a time, so a file of any size costs the memory of its longest
    line; stdin is read whole.
    """
    name = str(path)
    if name == STDIO:
        yield from enumerate(read_text(path).split("\n"), start=1)
        return
    with _open_binary(name) as plain:
        compressed = plain.peek(2)[:2] == GZIP_MAGIC
        handle = gzip.GzipFile(fileobj=plain, mode="rb") if compressed else plain
        try:
            for number, raw in enumerate(handle, start=1):
                if number == 1:
                    raw = _without_bom(raw)
                try:
                    yield number, raw.rstrip(b"\n").decode("utf-8")
                except UnicodeDecodeError:
                    raise not_utf8(name, number) from None
        except (OSError, EOFError) as exc:
            if not compressed:
                raise
            raise _broken_gzip(name, exc) from None


def file_digest(path: str | os.PathLike) -> dict[str, Any]:
    """sha256 of a file's bytes and its line count (after gunzip), reading it block by block
    (inputs can be hundreds of MB; they are neither loaded whole nor read twice when plain)."""
    digest, lines, last = hashlib.sha256(), 0, b"\n"
    with open(path, "rb") as handle:
        compressed = handle.read(2) == GZIP_MAGIC
        handle.seek(0)
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
            lines += block.count(b"\n")
            last = block[-1:]
    if compressed:
        lines, last = 0, b"\n"
        with gzip.open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                lines += block.count(b"\n")
                last = block[-1:]
    return {"sha256": digest.hexdigest(), "lines": lines + (last != b"\n")}


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
        stream = sys.stdout.buffer if binary else sys.stdout
        yield stream
        stream.flush()
        return
    target = Path(name)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as raw:
            os.fchmod(raw.fileno(), new_file_mode(target))
            sink: IO = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) if name.endswith(".gz") else raw
            with sink if sink is not raw else contextlib.nullcontext(raw):
                handle = sink if binary else io.TextIOWrapper(sink, encoding="utf-8", newline="\n")
                yield handle
                handle.flush()
                if not binary:
                    handle.detach()
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def check_id(value: str, kind: str) -> str:
    """Ids go into whitespace-separated files, so they may not be empty or hold whitespace."""
    if not value or any(ch.isspace() for ch in value):
        raise SemrelError(f"{kind} {value!r} is empty or contains whitespace; ids must be single tokens")
    return value
