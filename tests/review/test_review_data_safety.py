"""Audit of the review database's data safety and bad input: faults found by running the commands on a
database in a read-only folder, and on a database given the files of other judgments (each test says what the command
did before)."""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Iterator

import pytest

from helpers import assert_one_error
from review_helpers import CHUNKS, QUERIES, R_SCORES, queued_db, write_judged
from semrel.review.engine import Session


def _can_write(folder: Path) -> bool:
    try:
        (folder / ".probe").touch()
    except OSError:
        return False
    (folder / ".probe").unlink()
    return True


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """`folder` made read-only, as a read-only mount or an archive leaves it: by its mode, or (as root, whom modes do not
    stop) by chattr +i; skipped where neither can be done."""
    mode = folder.stat().st_mode
    folder.chmod(0o555)
    immutable = False
    if _can_write(folder) and shutil.which("chattr"):
        immutable = subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode == 0
    try:
        if _can_write(folder):
            pytest.skip("no way to make a folder read-only here")
        yield
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
        folder.chmod(mode)


def reviewed_copy(tmp_path: Path, *suffixes: str) -> tuple[Path, Path]:
    """(database, labels): a reviewed database whose last grade is still in its -wal, copied into a folder of its own
    with the files `suffixes` ('' the database, '-wal', '-shm') as they were while the reviewer's connection was open."""
    conn, pool = queued_db(tmp_path)
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    session = Session(conn, "alice")
    session.grade(session.next_task(), 1)
    copy = tmp_path / "copy"
    copy.mkdir()
    for suffix in suffixes:
        shutil.copy(f"{tmp_path / 'r.sqlite'}{suffix}", copy / f"r.sqlite{suffix}")
    conn.close()
    return copy / "r.sqlite", Path(pool["labels"])


def test_stats_and_export_read_a_database_in_a_read_only_folder(tmp_path, cli):
    # before: 'unable to open database file (nothing of this step was saved; try again)': SQLite cannot make the -shm it
    # reads a WAL database with, and trying again gave the same
    db, labels = reviewed_copy(tmp_path, "", "-wal")
    with contextlib.closing(sqlite3.connect(db)) as last:  # the -wal folded in and removed, as a reviewer's last close leaves it
        last.execute("SELECT count(*) FROM decisions").fetchone()
    assert sorted(os.listdir(db.parent)) == ["r.sqlite"]
    out = tmp_path / "reviewed.qrels"
    with read_only(db.parent):
        stats = cli("review", "stats", "--db", str(db), "--format", "json")
        assert stats.exit_code == 0, stats.output
        assert '"graded": 1' in stats.stdout
        exported = cli("review", "export", "--db", str(db), "--labels", str(labels), "-o", str(out))
        assert exported.exit_code == 0, exported.output
        assert "review 1" in exported.stderr
        assert sorted(os.listdir(db.parent)) == ["r.sqlite"]  # nothing was made beside it


def test_a_read_only_database_whose_latest_grades_are_in_its_wal_is_one_line_saying_what_to_do(tmp_path, cli):
    # before: '... (nothing of this step was saved; try again)', which gives the same again
    db, labels = reviewed_copy(tmp_path, "", "-wal")
    with read_only(db.parent):
        for args in (["review", "stats", "--db", str(db)],
                     ["review", "start", "--db", str(db), "--reviewer", "bob", "--no-highlight"]):
            line = assert_one_error(cli(*args, input="1q"), "r.sqlite: unable to open database file", "read-only",
                                    "r.sqlite with its -wal to a folder you can write")
            assert "try again" not in line


def test_a_database_given_the_files_of_other_judgments_is_refused_and_left_as_it_was(tmp_path, cli):
    # before: two warnings and exit 0; `review simulate` then recorded a skip of every free pair of the other queue
    conn, _ = queued_db(tmp_path)
    conn.close()
    db = str(tmp_path / "r.sqlite")
    renamed = {q: f"z{q}" for q in QUERIES}  # the same chunks, asked by queries of another set
    other = write_judged(tmp_path / "other", CHUNKS, {renamed[q]: v for q, v in QUERIES.items()},
                         {(renamed[q], c): r for (q, c), r in R_SCORES.items()})
    files = ["--judgments", other["judgments"], "--labels", other["labels"], "--corpus", other["corpus"], "--golden", other["golden"]]
    before = Path(db).read_bytes()
    for command in (["simulate", "--reviewer", "gold", "--human", other["labels"]], ["start", "--reviewer", "bob", "--no-highlight"]):
        result = cli("review", *command, "--db", db, *files, input="1q")
        assert_one_error(result, "r.sqlite: its queue holds none of the 12 pairs judged in", "other judgments")
    with contextlib.closing(sqlite3.connect(db)) as check:
        assert check.execute("SELECT count(*) FROM decisions").fetchone()[0] == 0
        assert check.execute("SELECT count(*) FROM reviewers").fetchone()[0] == 0
    assert Path(db).read_bytes() == before


@pytest.mark.parametrize("command", ["simulate", "export", "start"])
def test_a_pair_listed_twice_in_human_or_derived_labels_is_refused_naming_its_line(tmp_path, cli, command):
    # before: the last of the two grades was taken without a word (`eval` and `calibrate` refuse such a file): simulate
    # graded the pair by it, export wrote one line fewer than the labels held, start queued it with that proposed grade
    conn, pool = queued_db(tmp_path)
    Session(conn, "alice").grade(Session(conn, "alice").next_task(), 1)
    conn.close()
    db = str(tmp_path / "r.sqlite")
    first = Path(pool["labels"]).read_text().splitlines()[0].split()
    twice = tmp_path / "twice.qrels"
    twice.write_text(Path(pool["labels"]).read_text() + f"{first[0]} 0 {first[2]} {1 - int(first[3])}\n")
    files = ["--judgments", pool["judgments"], "--corpus", pool["corpus"], "--golden", pool["golden"]]
    args = {"simulate": ["--db", str(tmp_path / "new.sqlite"), "--reviewer", "gold", *files, "--labels", pool["labels"],
                         "--thresholds", "0.5", "--human", str(twice)],
            "export": ["--db", db, "--labels", str(twice), "-o", str(tmp_path / "out.qrels")],
            "start": ["--db", str(tmp_path / "new.sqlite"), "--reviewer", "bob", "--no-highlight", *files, "--labels", str(twice),
                      "--thresholds", "0.5"]}[command]
    result = cli("review", command, *args, input="1q")
    assert_one_error(result, "twice.qrels:13: duplicate judgment for query", first[2])
    assert not (tmp_path / "new.sqlite").exists() and not (tmp_path / "out.qrels").exists()


@pytest.mark.parametrize("human", ["", "zq1 0 c1 1\n"])
def test_human_labels_that_grade_no_queued_pair_are_refused_before_a_skip_is_written(tmp_path, cli, human):
    # before: exit 0, "graded 0 pairs, skipped 11": every free pair skipped under gold, so people joining the review
    # were told all its pairs were reviewed, and the skips could only be taken back one undo at a time under gold's name
    conn, _ = queued_db(tmp_path)
    Session(conn, "alice").grade(Session(conn, "alice").next_task(), 1)
    conn.close()
    db = str(tmp_path / "r.sqlite")
    other = tmp_path / "other.qrels"
    other.write_text(human)
    result = cli("review", "simulate", "--db", db, "--reviewer", "gold", "--human", str(other), "--unlisted-as-zero")
    assert_one_error(result, "r.sqlite: the human labels grade none of its 12 queued pairs", "a simulation would only skip them")
    with contextlib.closing(sqlite3.connect(db)) as check:
        assert check.execute("SELECT reviewer, kind FROM decisions").fetchall() == [("alice", "grade")]
        assert check.execute("SELECT name FROM reviewers").fetchall() == [("alice",)]
