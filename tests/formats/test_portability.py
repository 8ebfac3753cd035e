"""What semrel does differently on Windows, simulated on Linux: calls that module `os` lacks there (fchmod, pread), the
modules it lacks (fcntl), and the calls whose meaning differs (os.kill, os.open's text mode)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

from semrel.formats.files import atomic_writer, current_umask

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
