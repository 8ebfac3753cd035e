"""What semrel does differently on Windows, simulated on Linux: calls that module `os` lacks there (fchmod, pread), the
modules it lacks (fcntl), and the calls whose meaning differs (os.kill, os.open's text mode and its error for a folder)."""

from __future__ import annotations

import errno
import json
import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from semrel.errors import SemrelError, UsageError
from semrel.formats.files import atomic_writer, current_umask, files_as_one, read_bytes

SRC = str(Path(__file__).resolve().parents[2] / "src")

WINDOWS_LOCKS = textwrap.dedent("""
    import errno, os, sys, threading, time
    import contextlib, contextvars, functools, gzip, hashlib, io, itertools, json, re, shutil, stat, tempfile
    import unicodedata, zlib, dataclasses, pathlib, typing, pydoc  # each that looks at sys.platform as it loads
    import numpy, pyarrow.compute, semrel.errors, semrel.interrupts, semrel.progress, semrel.records, semrel.terminal

    class Msvcrt:  # msvcrt.locking's contract: a byte range of a file, refused (EACCES) while another handle holds it
        LK_UNLCK, LK_NBLCK = 0, 2
        held = {}

        @classmethod
        def locking(cls, fd, mode, count):
            key = (os.fstat(fd).st_ino, os.lseek(fd, 0, os.SEEK_CUR), count)
            if mode == cls.LK_UNLCK:
                del cls.held[key]
            elif cls.held.setdefault(key, fd) != fd:
                raise OSError(errno.EACCES, "Permission denied")

    sys.modules["fcntl"] = None  # Windows has none
    sys.modules["msvcrt"] = Msvcrt
    sys.platform = "win32"
    from semrel.formats.files import locked

    path, order = sys.argv[1], []
    inside = threading.Event()

    def first():
        with locked(path):
            inside.set()
            time.sleep(0.3)
            order.append("first done")

    thread = threading.Thread(target=first)
    thread.start()
    inside.wait()
    with locked(path, lambda: order.append("second waits")):
        order.append("second in")
    thread.join()
    print(order, Msvcrt.held)
""")


def test_locks_work_where_there_is_no_fcntl(tmp_path):
    """Windows has no fcntl: its import at the top of formats/files.py stopped every command (the module is under all of
    them) with ModuleNotFoundError. There msvcrt.locking holds the lock, and a second holder waits for the first."""
    done = subprocess.run([sys.executable, "-c", WINDOWS_LOCKS, str(tmp_path / "lock")], capture_output=True, text=True,
                          env={"PYTHONPATH": SRC}, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['second waits', 'first done', 'second in'] {}"


def test_an_output_is_written_where_os_has_no_fchmod(tmp_path, monkeypatch):
    """Windows' os has no fchmod before Python 3.13: atomic_writer set its temp file's permissions with it, so every output
    failed there with AttributeError. By name, os.chmod gives the same permissions."""
    monkeypatch.delattr(os, "fchmod")
    target = tmp_path / "run.txt"
    with atomic_writer(target) as out:
        out.write("q1 Q0 d1 1 1.0 run\n")
    assert target.read_bytes() == b"q1 Q0 d1 1 1.0 run\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o666 & ~current_umask()


def test_inputs_and_the_bm25_index_are_read_as_bytes_where_os_has_o_binary_and_no_pread(tmp_path, monkeypatch):
    """As on Windows: os.open without O_BINARY opens a file in text mode there (CR LF read as LF, a Ctrl-Z byte read as the
    end), and os has no pread, with which the BM25 index read its postings and ids (AttributeError at the first query).
    Every file os.open reads is opened with O_BINARY, and the index gives the same hits without pread."""
    import numpy as np

    from semrel.formats.files import open_input
    from semrel.retrieval.lexical import LexicalStore
    from semrel.retrieval.retrieve import BM25_PARAMS, StoredBm25

    words = "virus protein cell infection patient study trial dose vaccine lung fever cough".split()
    rows = [{"_id": f"c{i}", "text": " ".join(words[(i * k) % len(words)] for k in range(1, 9))} for i in range(60)]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    queries = ["virus dose", "fever cough lung", "zebra"]
    expected = StoredBm25(LexicalStore(tmp_path / "posix", BM25_PARAMS).index(str(corpus))).search(queries, 5)

    sentinel, real_open, opened = 1 << 29, os.open, []

    def windows_open(path, flags, *args, **kwargs):
        if not flags & (os.O_WRONLY | os.O_RDWR):
            opened.append((os.fspath(path), bool(flags & sentinel)))
        return real_open(path, flags & ~sentinel, *args, **kwargs)

    monkeypatch.setattr(os, "O_BINARY", sentinel, raising=False)
    monkeypatch.setattr(os, "open", windows_open)
    monkeypatch.delattr(os, "pread")
    with open_input(corpus) as handle:
        assert handle.read() == corpus.read_bytes()
    found = StoredBm25(LexicalStore(tmp_path / "windows", BM25_PARAMS).index(str(corpus))).search(queries, 5)
    assert all(np.array_equal(a, b) for pair in zip(found, expected) for a, b in zip(*pair)) and len(found) == len(expected)
    assert opened and all(flagged for _, flagged in opened), [name for name, flagged in opened if not flagged]


def test_stale_temp_files_are_swept_on_windows_without_os_kill(tmp_path, monkeypatch):
    """A write sweeps the temp files killed semrel processes left, asking whether each one's process still runs. It asked
    with os.kill(pid, 0), which on Windows is TerminateProcess: it ended that process (another semrel writing the same
    file, or any program given the pid since). There the process is asked through a handle (_process_running)."""
    import semrel.formats.files as files

    def kill(pid, sig):
        raise AssertionError(f"os.kill({pid}, {sig}) would end process {pid} on Windows")

    running, ended = 4242, 4343
    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setattr(os, "kill", kill)
    monkeypatch.setattr(files, "_process_running", lambda pid: pid == running, raising=False)
    for pid in (running, ended):
        (tmp_path / f".out.txt.{pid}_abcd1234.tmp").write_text("half")
    files.sweep_stale_temps(tmp_path / "out.txt")
    assert os.listdir(tmp_path) == [f".out.txt.{running}_abcd1234.tmp"]


def test_inputs_are_read_where_os_has_no_o_nonblock_nor_set_blocking(tmp_path, monkeypatch):
    """Windows has no O_NONBLOCK, and its os no set_blocking before Python 3.12: every input was opened, then failed with
    AttributeError as it was made blocking again."""
    monkeypatch.delattr(os, "O_NONBLOCK")
    monkeypatch.delattr(os, "set_blocking")
    path = tmp_path / "qrels.txt"
    path.write_bytes(b"q1 0 d1 1\n")
    assert read_bytes(path) == b"q1 0 d1 1\n"


def test_a_folder_has_one_digest_on_every_system(tmp_path, monkeypatch):
    """A folder input's digest (a manifest's record of a documents folder) hashed each file's path inside it with the
    system's separator: 'notes\\a.txt' on Windows, so `semrel verify` there called a folder copied from Linux changed."""
    import ntpath

    from semrel.formats.files import folder_digest

    (tmp_path / "docs" / "notes").mkdir(parents=True)
    (tmp_path / "docs" / "notes" / "a.txt").write_text("alpha\n", encoding="utf-8")
    (tmp_path / "docs" / "b.txt").write_text("beta\n", encoding="utf-8")
    here = folder_digest(tmp_path / "docs")
    monkeypatch.setattr(os, "sep", "\\")
    monkeypatch.setattr(os.path, "relpath", ntpath.relpath)  # Windows' relpath: the same parts, joined by '\\'
    assert folder_digest(tmp_path / "docs") == here


def test_a_folder_given_as_an_input_is_called_one_where_opening_it_is_permission_denied(tmp_path, monkeypatch):
    """Windows refuses to open a folder with EACCES, not EISDIR: a folder given for a file was 'permission denied' there."""
    real_open = os.open

    def windows_open(path, flags, *args, **kwargs):
        if os.path.isdir(path):
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", windows_open)
    with pytest.raises(SemrelError, match=r": is a folder, expected a file$"):
        read_bytes(tmp_path)


def test_two_outputs_apart_only_in_case_or_normal_form_are_one_file(tmp_path):
    """macOS's and Windows' file systems take 'Out.txt' and 'out.txt', or 'café' in NFC and in NFD, for one file: a set of
    outputs holding both was written, the later renamed over the earlier. Refused on every system, before anything is made."""
    for first, second in (("Out.txt", "out.txt"), ("caf\u00e9.txt", "cafe\u0301.txt")):
        with pytest.raises(UsageError, match=f"{second}: named for two outputs of one command"):
            with files_as_one([str(tmp_path / "out" / first), str(tmp_path / "out" / second)]):
                pass
    assert os.listdir(tmp_path) == []


def test_a_folder_is_read_in_one_order_on_every_system(tmp_path, monkeypatch):
    """Windows' Path sorts with case folded ('a.txt' before 'B.txt'), Linux's and macOS's by code point ('B.txt' first):
    sorted by Path, a folder's documents went into the corpus in another order there, and a model folder's files into
    its fingerprint. Both go by their parts now, as Linux sorts them, whatever Path's order."""
    from pathlib import PosixPath

    from helpers import ok

    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("a.txt", "B.txt", "c.txt"):
        (docs / name).write_text(f"The text of {name}.\n", encoding="utf-8")
    monkeypatch.setattr(PosixPath, "__lt__", lambda a, b: str(a).casefold() < str(b).casefold())  # Windows' Path order
    ok("corpus", "chunk", docs, "-o", tmp_path / "corpus.jsonl")
    ids = [json.loads(line)["_id"] for line in (tmp_path / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [i.split("#")[0] for i in ids] == ["B", "a", "c"]


def test_a_file_changed_just_now_is_not_taken_by_its_stamp_where_st_ctime_is_its_creation(tmp_path, monkeypatch):
    """Windows' st_ctime is when the file was made, not when it last changed: a file edited just now (made an hour ago)
    was taken by its stamp at once, so a second edit in the same tick of the clock, size kept, went unseen. There the
    mtime counts too, and a stamp is kept only once the edit is older than RACY_NS."""
    import semrel.formats.files as files

    path = tmp_path / "corpus.jsonl"
    path.write_text('{"_id": "a", "text": "x"}\n', encoding="utf-8")
    real_stat = os.stat

    def windows_stat(name, *args, **kwargs):
        info = real_stat(name, *args, **kwargs)
        made = info.st_mtime_ns - 3600 * 10**9  # an hour before its last edit
        return os.stat_result(tuple(info)[:10] + (info.st_atime, info.st_mtime, made / 1e9, info.st_atime_ns, info.st_mtime_ns, made))

    monkeypatch.setattr(sys, "platform", "win32")
    monkeypatch.setattr(files.os, "stat", windows_stat)
    known, taken = files.StampMemo(tmp_path / "memo.json").recall(path)
    assert known is None and taken is None
