"""Real reviewer processes: one killed with SIGKILL between decisions, two writing at once."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Sequence

import pytest

import semrel
from review_helpers import write_pool

SRC = str(Path(semrel.__file__).resolve().parents[1])


def reviewer_process(pool: dict, db: str, name: str) -> subprocess.Popen:
    command = [sys.executable, "-c", "from semrel.cli import main; main()", "review", "start", "--db", db,
               "--reviewer", name, "--no-highlight", "--judgments", pool["judgments"], "--labels", pool["labels"],
               "--corpus", pool["corpus"], "--golden", pool["golden"], "--thresholds", "0.5"]
    return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": SRC})


def query(db: str, sql: str) -> list[tuple]:
    """Rows of `sql`, or [] while the database does not exist yet or is being created."""
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
        try:
            return conn.execute(sql).fetchall()
        finally:
            conn.close()
    except sqlite3.OperationalError:
        return []


def wait_until(condition, what: str, limit: float = 120.0) -> None:
    """Poll until `condition()` holds; the limit only guards against a hung test."""
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.02)


def grades(db: str) -> list[tuple]:
    return query(db, "SELECT t.position, d.reviewer, d.grade FROM decisions d JOIN tasks t ON t.id = d.task_id"
                     " WHERE d.kind = 'grade' ORDER BY d.id")


@pytest.mark.slow
def test_sigkill_between_decisions_loses_nothing(tmp_path, cli):
    pool = write_pool(tmp_path / "pool")
    db = str(tmp_path / "reviews.sqlite")
    proc = reviewer_process(pool, db, "alice")
    try:
        wait_until(lambda: query(db, "SELECT 1 FROM claims"), "the first task to be shown")
        for done, key in enumerate(b"1010", start=1):
            proc.stdin.write(bytes([key]))
            proc.stdin.flush()
            wait_until(lambda done=done: len(grades(db)) == done, f"decision {done} to be committed")
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL
    assert grades(db) == [(0, "alice", 1), (1, "alice", 0), (2, "alice", 1), (3, "alice", 0)]
    resumed = cli("review", "start", "--db", db, "--reviewer", "alice", "--no-highlight", input="1q")
    assert resumed.exit_code == 0, resumed.output
    assert "4/12 reviewed" in resumed.stdout.splitlines()[0]
    assert grades(db)[-1] == (4, "alice", 1)


@pytest.mark.slow
def test_two_reviewers_writing_at_once_lose_and_repeat_nothing(tmp_path):
    pool = write_pool(tmp_path / "pool")
    db = str(tmp_path / "reviews.sqlite")
    procs = [reviewer_process(pool, db, name) for name in ("alice", "bob")]
    try:
        # both build-or-join the queue at once, then both hold a task before any key is sent
        wait_until(lambda: len(query(db, "SELECT DISTINCT reviewer FROM claims")) == 2, "both reviewers to hold a task")
        for proc in procs:
            proc.stdin.write(b"1" * 12)
            proc.stdin.close()  # the end of input quits once the queue is empty or the keys run out
        for proc in procs:
            proc.wait(timeout=120)
            assert proc.returncode == 0, proc.stderr.read().decode()
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    decided = grades(db)
    positions = sorted(position for position, _, _ in decided)
    assert positions == list(range(12))  # every task once: none lost, none graded twice
    by_reviewer = {name: sum(r == name for _, r, _ in decided) for name in ("alice", "bob")}
    assert by_reviewer["alice"] >= 1 and by_reviewer["bob"] >= 1 and sum(by_reviewer.values()) == 12
    assert query(db, "SELECT count(*) FROM tasks") == [(12,)]


def at_a_terminal(command: list[str], keys: Sequence[bytes], ready: bytes) -> tuple[int, str]:
    """Run `command` with a pseudo-terminal as its stdin and stdout (keys are read raw, as a person's are), pressing
    each of `keys` once `ready` is shown anew; (exit code, what it showed)."""
    import pty
    import select

    pid, fd = pty.fork()
    if pid == 0:  # the child: exec at once, so nothing of pytest runs here
        os.execve(sys.executable, [sys.executable, "-c", "from semrel.cli import main; main()", *command],
                  {**os.environ, "PYTHONPATH": SRC, "COLUMNS": "100"})
    shown, pressed = b"", 0
    while True:
        if pressed < len(keys) and shown.count(ready) > pressed:
            time.sleep(0.3)  # the prompt is printed before the terminal is put in raw mode to read a key
            os.write(fd, keys[pressed])
            pressed += 1
        if not select.select([fd], [], [], 60)[0]:
            os.kill(pid, signal.SIGKILL)
            raise AssertionError(f"no output for 60 s: {shown.decode(errors='replace')[-500:]}")
        try:
            data = os.read(fd, 65536)
        except OSError:  # the child closed the terminal
            data = b""
        if not data:
            break
        shown += data
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), shown.decode(errors="replace")


@pytest.mark.slow
@pytest.mark.parametrize("key", [b"\x04", b"\x03"])
def test_ctrl_d_or_ctrl_c_at_a_terminal_quits_a_review_with_its_decisions_saved(tmp_path, key):
    """At a terminal click reads Ctrl-D as EOFError, which the review did not catch: the reviewer saw 'Aborted!' and
    exit code 1 for what piped input's end, q and Ctrl-C all do quietly."""
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "r.sqlite")
    code, shown = at_a_terminal(["review", "start", "--db", db, "--reviewer", "ann", "--no-highlight", "--judgments", pool["judgments"],
                                 "--labels", pool["labels"], "--corpus", pool["corpus"], "--golden", pool["golden"],
                                 "--thresholds", "0.5"], [b"1", key], b"q quit")
    assert (code, "Aborted" in shown) == (0, False), shown[-500:]
    assert "saved; 1 decisions this session" in shown
    assert query(db, "SELECT count(*) FROM decisions WHERE kind = 'grade'") == [(1,)]
