"""Real reviewer processes: one killed with SIGKILL between decisions, two writing at once."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from review_helpers import CHUNKS, QUERIES, R_SCORES, write_judged, write_pool
from terminal_helpers import SRC, at_a_terminal, resize


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
    assert "4/12 graded" in resumed.stdout.splitlines()[0]
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
    assert "saved; 1 decision this session" in shown
    assert query(db, "SELECT count(*) FROM decisions WHERE kind = 'grade'") == [(1,)]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP"])
def test_sigterm_or_sighup_ends_a_review_as_interrupted_with_its_decisions_saved(tmp_path, name):
    """`kill` or a closed terminal is no one's quit: the review took it as q and exited 0, as if the reviewer had chosen
    to stop, where `golden pick` and every other command exit 130."""
    def kill(fd: int) -> None:
        os.killpg(os.tcgetpgrp(fd), getattr(signal, name))

    code, shown, db = review_at_a_terminal(tmp_path, [b"1", kill], [b"q quit", b"this session 1"])
    assert code == 130, shown[-500:]
    assert "saved; 1 decision this session" in shown and "semrel: error: interrupted" in shown
    assert query(db, "SELECT count(*) FROM decisions WHERE kind = 'grade'") == [(1,)]


@pytest.mark.slow
def test_a_key_typed_before_the_pair_is_shown_grades_nothing(tmp_path):
    """docs/review.md: a key pressed before the pair is on the screen (a double press, a key held down) is dropped, so no
    pair is graded unseen. Here a '1' waits in the terminal's input from the start, before the first pair is drawn."""
    def early(fd: int) -> None:
        os.write(fd, b"1")

    code, shown, db = review_at_a_terminal(tmp_path, [early, b"q"], [b"", b"q quit"])
    assert code == 0, shown[-500:]
    assert "saved; 0 decisions this session" in shown
    assert query(db, "SELECT count(*) FROM decisions") == [(0,)]


def review_at_a_terminal(tmp_path, keys: list[bytes], ready) -> tuple[int, str, str]:
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "r.sqlite")
    code, shown = at_a_terminal(["review", "start", "--db", db, "--reviewer", "ann", "--no-highlight", "--judgments", pool["judgments"],
                                 "--labels", pool["labels"], "--corpus", pool["corpus"], "--golden", pool["golden"],
                                 "--thresholds", "0.5"], keys, ready)
    return code, shown, db


@pytest.mark.slow
def test_a_note_typed_at_a_terminal_is_line_edited_and_kept_whole(tmp_path):
    """The note prompt read its line in the terminal's cooked mode without line editing: the arrow keys a person moves
    back with were saved into the note as escape sequences ('ab\\x1b[D\\x1b[DX'), and the kernel's line buffer cut a
    pasted note to 4,095 characters, saying 'note saved'."""
    long = "a pasted paragraph " * 300  # 5,700 characters
    code, shown, db = review_at_a_terminal(tmp_path, [b"m", b"ab\x1b[D\x1b[DX\x1b[C!\r", b"m", long.encode() + b"\r", b"q"],
                                           [b"q quit", b"note", b"note saved", b"note", b"note saved"])
    assert code == 0, shown[-500:]
    assert query(db, "SELECT note FROM decisions WHERE kind = 'note' ORDER BY id") == [("Xa!b",), (long.strip(),)]


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/bin/bash") or not hasattr(signal, "SIGTSTP"), reason="needs a shell with job control")
def test_ctrl_z_at_a_terminal_stops_the_review_until_fg(tmp_path):
    """click reads keys in raw mode, where the terminal sends no SIGTSTP: Ctrl-Z came as the byte 0x1a, answered
    'unknown key', and a person could not put the review in the background."""
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "r.sqlite")
    code, shown = at_a_terminal(["review", "start", "--db", db, "--reviewer", "ann", "--no-highlight", "--judgments", pool["judgments"],
                                 "--labels", pool["labels"], "--corpus", pool["corpus"], "--golden", pool["golden"],
                                 "--thresholds", "0.5"], [b"1", b"\x1a", b"0", b"q"], b"judge:", job_control=True)
    assert code == 0, shown[-500:]  # fg's: the review's own
    assert "Stopped" in shown and "unknown key" not in shown
    assert grades(db) == [(0, "ann", 1), (1, "ann", 0)]


@pytest.mark.slow
def test_a_window_made_smaller_mid_review_gets_pages_that_fit_it(tmp_path):
    """Pages were cut once per pair from the height at the start: in a window made smaller (60 rows to 24) each screen
    stayed 60 lines tall, the query and the start of every page of a long chunk scrolled out of sight."""
    long = "\n".join(f"line {i:03d} of a long chunk" for i in range(120))  # chunk c1 is the first pair
    pool, db = write_judged(tmp_path / "pool", {**CHUNKS, "c1": long}, QUERIES, R_SCORES), str(tmp_path / "r.sqlite")
    code, shown = at_a_terminal(["review", "start", "--db", db, "--reviewer", "ann", "--no-highlight", "--judgments", pool["judgments"],
                                 "--labels", pool["labels"], "--corpus", pool["corpus"], "--golden", pool["golden"],
                                 "--thresholds", "0.5"], [b" ", lambda fd: resize(fd, 24, 100), b"?", b"q"], b"q quit", size=(60, 100))
    assert code == 0, shown[-500:]
    screens = shown.split("\x1b[2J")[1:]  # each draw clears the screen first
    assert "(page 2/3)" in screens[1] and "line 046" not in screens[1] and "line 047" in screens[1]  # 47 lines a page
    assert "(page 5/11)" in screens[2] and "line 047" in screens[2]  # the page that holds the line the one on screen began with
    assert len(screens[2][: screens[2].index("saved;")].splitlines()) <= 23  # and the cursor's line: nothing scrolled out


@pytest.mark.slow
@pytest.mark.parametrize("words", [60, 300])
def test_a_long_reference_answer_leaves_the_header_and_query_on_screen(tmp_path, words):
    """Pages were the window's height less a fixed 18 lines: an answer of sixty words took more, and the header and the
    query scrolled out of a 24-line window; the chunk now gets what the rest of the screen leaves. An answer of 300
    words (25 lines at 80 columns) still made the screen taller than the window: it is now cut to what the window
    leaves beside three chunk lines, and says so."""
    answer = " ".join(f"word{i:03d}" for i in range(words))
    long = "\n".join(f"line {i:03d} of a long chunk" for i in range(40))
    pool = write_judged(tmp_path / "pool", {**CHUNKS, "c1": long}, {**QUERIES, "q1": (QUERIES["q1"][0], answer)}, R_SCORES)
    db = str(tmp_path / "r.sqlite")
    code, shown = at_a_terminal(["review", "start", "--db", db, "--reviewer", "ann", "--no-highlight", "--judgments", pool["judgments"],
                                 "--labels", pool["labels"], "--corpus", pool["corpus"], "--golden", pool["golden"],
                                 "--thresholds", "0.5"], [b"q"], b"q quit", size=(24, 80))
    assert code == 0, shown[-500:]
    screen = shown.split("\x1b[2J")[1]
    lines = screen[: screen.index("saved;")].splitlines()
    assert len(lines) <= 23, screen  # and the cursor's line: nothing scrolled out
    assert "ann · 0/" in lines[0] and QUERIES["q1"][0][:20] in screen  # the header and the query
    assert "line 000" in screen and "line 002" in screen and "(page 1/" in screen  # three chunk lines at least
    cut = "more lines of the answer: a taller window shows it whole"
    last = f"word{words - 1:03d}"
    assert "word000" in screen and (last in screen and cut not in screen if words == 60 else last not in screen and cut in screen)
