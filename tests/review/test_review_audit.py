"""Mutation audit of the review package: behaviour of the session, the store and the export that no other test
pinned (each test names the mutant it was written against), and a fault it found: a grade on texts refreshed while
they were shown was recorded as a label of the new texts."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from review_helpers import CHUNKS, QUERIES, R_SCORES, queued_db, reviewed_by_two, write_judged
from semrel.errors import SemrelError
from semrel.review import store
from semrel.review.adjudicate import export_reviewed, reviewed_labels, stale_decisions
from semrel.review.engine import QueueSettings, Session, create_queue, refresh_tasks
from semrel.review.order import review_queue
from semrel.review.stats import review_stats
from semrel.review.store import create_db, open_db, read_meta, write_meta
from semrel.review.tasks import Labelling, load_tasks


def standing(conn: sqlite3.Connection) -> list[tuple[str, str, str, str, int | None]]:
    """Every standing decision: (reviewer, query, chunk, kind, grade), by reviewer then queue position."""
    return [
        tuple(row)
        for row in conn.execute(
            "SELECT l.reviewer, t.query_id, t.chunk_id, l.kind, l.grade FROM live l JOIN tasks t ON t.id = l.task_id"
            " ORDER BY l.reviewer, t.position"
        )
    ]


def test_undo_and_recent_touch_only_this_reviewers_decisions(tmp_path):
    """alice's undo takes back alice's latest decision even where bob decided after her, and recent() lists hers alone
    (mutants: undo took back the newest decision of anyone, bob's grade lost; recent listed bob's too)."""
    conn, _ = queued_db(tmp_path)
    alice, bob = Session(conn, "alice"), Session(open_db(tmp_path / "r.sqlite"), "bob")
    first = alice.next_task()
    alice.grade(first, 1)
    theirs = bob.next_task()
    bob.grade(theirs, 0)
    assert theirs.id != first.id
    assert [(d.task.id, d.grade) for d in alice.recent()] == [(first.id, 1)]
    assert [(d.task.id, d.grade) for d in bob.recent()] == [(theirs.id, 0)]
    undone = alice.undo()
    assert undone is not None and undone.id == first.id
    assert standing(conn) == [("bob", theirs.query_id, theirs.chunk_id, "grade", 0)]
    assert alice.next_task().id == first.id  # her undone pair comes back to her
    assert bob.undo().id == theirs.id and standing(conn) == []
    bob.conn.close()


def test_a_grade_on_texts_changed_while_they_were_shown_is_not_a_label_of_the_new_texts(tmp_path):
    conn, pool = queued_db(tmp_path)
    labelling = Labelling("R", (0.5,))
    alice = Session(conn, "alice")
    shown = alice.next_task()
    chunks = {**CHUNKS, shown.chunk_id: "A different chunk of text, which alice has not read."}
    edited = write_judged(tmp_path / "edited", chunks, QUERIES, R_SCORES)
    edited_tasks = load_tasks(edited["judgments"], edited["labels"], edited["corpus"], edited["golden"], labelling)
    assert refresh_tasks(conn, edited_tasks, edited["judgments"]).texts >= 1
    alice.grade(shown, 1 - shown.proposed)
    (recorded,) = [row[0] for row in conn.execute("SELECT task_hash FROM decisions WHERE kind = 'grade'")]
    assert recorded == shown.hash  # the texts alice judged
    assert standing(conn) == []  # a label of the old texts is stale on the new ones
    assert stale_decisions(conn).grades == 1
    assert alice.next_task().id == shown.id  # and the pair is shown again, with its new texts


def test_a_start_on_a_file_system_without_hard_links_keeps_the_database_another_start_put_in_place(tmp_path, monkeypatch):
    """Where os.link fails (FAT: no hard links), the built database is moved into place only while the path is free:
    one another reviewer's start put there meanwhile is joined, with its decisions (mutant: moved over it)."""
    target = tmp_path / "r.sqlite"

    def build(conn):
        write_meta(conn, {"built_by": "mine"})
        with contextlib.closing(open_db(target)) as theirs:
            write_meta(theirs, {"built_by": "theirs"})

    def no_links(source, destination):
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(store.os, "link", no_links)
    with contextlib.closing(create_db(target, build)) as conn:
        assert read_meta(conn)["built_by"] == "theirs"
    fresh = tmp_path / "fresh.sqlite"
    with contextlib.closing(create_db(fresh, lambda conn: write_meta(conn, {"built_by": "mine"}))) as conn:
        assert read_meta(conn)["built_by"] == "mine"  # a free path is moved to
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")) == []


def test_a_database_file_named_memory_is_the_file_and_an_empty_path_is_one_error(tmp_path, monkeypatch):
    """SQLite takes the name ':memory:' for a database in memory: a start built the file, then opened an empty database
    in memory ('no queue yet'), where writes would vanish at exit, while stats read the file. An empty path (SQLite's temporary
    database) was Path's ValueError traceback."""
    monkeypatch.chdir(tmp_path)
    with contextlib.closing(create_db(":memory:", lambda conn: write_meta(conn, {"built_by": "this start"}))):
        pass
    with contextlib.closing(open_db(":memory:")) as conn:
        assert read_meta(conn) == {"built_by": "this start"}
        write_meta(conn, {"decided": True})
    with contextlib.closing(store.open_db_read_only(":memory:")) as conn:
        assert read_meta(conn) == {"built_by": "this start", "decided": True}
    for call in (lambda: create_db("", write_meta), lambda: open_db(""), lambda: store.open_db_read_only(""),
                 lambda: store.is_new_db("")):
        with pytest.raises(SemrelError, match="^the review database's path is empty; give db= a file name"):
            call()


def test_export_and_stats_leave_a_killed_reviewers_write_ahead_log_as_it_is(tmp_path):
    """A reviewer killed mid-session leaves decisions in r.sqlite-wal; export and stats read them without folding the
    log into the database or removing it (mutant: opened read-write, which checkpointed on close: both files changed)."""
    pool, db, _, _ = reviewed_by_two(tmp_path)
    killed = (
        f"import os, sqlite3\nc = sqlite3.connect({db!r}, isolation_level=None)\nc.execute('PRAGMA wal_autocheckpoint = 0')\n"
        "c.execute(\"INSERT INTO reviewers (name, created) VALUES ('zed', 0)\")\nos._exit(0)\n"
    )
    subprocess.run([sys.executable, "-c", killed], check=True)
    files = [Path(db), Path(f"{db}-wal")]

    def digests() -> list[str]:
        return [hashlib.sha256(path.read_bytes()).hexdigest() for path in files]

    before = digests()
    assert os.path.getsize(files[1]) > 0
    result = reviewed_labels(db, pool["labels"])
    assert result.params["reviewers"] == ["alice", "bob"]
    assert [r.reviewer for r in review_stats(db, resamples=10).reviewers] == ["alice", "bob", "zed"]  # read from the log
    assert digests() == before


def test_a_resume_with_other_thresholds_refreshes_with_the_queues_own(tmp_path):
    """Resumed with files and other thresholds, the queue keeps its own: a pair the labels lack keeps the proposed
    grade of the queue's thresholds (mutant: refreshed with the new ones, and the warning said it kept them)."""
    from semrel.review.engine import TaskFiles, prepare_queue

    conn, pool = queued_db(tmp_path)
    lines = Path(pool["labels"]).read_text().splitlines(keepends=True)
    Path(pool["labels"]).write_text("".join(line for line in lines if not line.startswith("q1 0 c1 ")))  # R 0.48
    files = TaskFiles(pool["judgments"], pool["labels"], pool["corpus"], pool["golden"])
    warnings: list[str] = []
    prepare_queue(conn, files, Labelling("R", (0.4,)), QueueSettings(), warnings.append)
    assert any("it keeps them" in w for w in warnings)
    assert conn.execute("SELECT proposed FROM tasks WHERE query_id = 'q1' AND chunk_id = 'c1'").fetchone()[0] == 0


def test_a_file_another_program_gave_tables_while_it_was_opened_is_refused_and_left_without_the_schema(tmp_path, monkeypatch):
    """A new file is checked as new (user_version 0, no tables), then another program creates its own table before the
    write lock is taken: the check made again under the lock refuses it, and its file gets no review table (mutant: the
    schema was written into the other program's database)."""
    db = tmp_path / "r.sqlite"
    checked = store._check_review_db

    def raced(conn, name, allow_new):
        version = checked(conn, name, allow_new)
        with contextlib.closing(sqlite3.connect(db)) as theirs:
            theirs.execute("CREATE TABLE notes (text TEXT)")
            theirs.commit()
        return version

    monkeypatch.setattr(store, "_check_review_db", raced)
    with pytest.raises(SemrelError, match="r.sqlite: an SQLite file that is not a review database; give another path"):
        open_db(db)
    with contextlib.closing(sqlite3.connect(db)) as conn:
        assert [name for (name,) in conn.execute("SELECT name FROM sqlite_master")] == ["notes"]
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 0


def test_the_query_order_groups_the_pairs_by_query_nearest_the_threshold_first(tmp_path):
    """--order query: by query, then by distance to the threshold, with no random sample (mutant: the two keys swapped,
    a queue by distance alone)."""
    conn, _ = queued_db(tmp_path, QueueSettings(order="query"))
    rows = conn.execute("SELECT query_id || '/' || chunk_id, sample_rank FROM tasks ORDER BY position").fetchall()
    assert [pair for pair, _ in rows] == [
        "q1/c1",
        "q1/c4",
        "q1/c3",
        "q1/c2",
        "q2/c4",
        "q2/c2",
        "q2/c3",
        "q2/c1",
        "q3/c3",
        "q3/c4",
        "q3/c2",
        "q3/c1",
    ]
    assert {rank for _, rank in rows} == {None}
    conn.close()


def test_the_query_sample_order_takes_whole_queries_in_a_seeded_order_and_ranks_only_those_the_limit_leaves_whole():
    """Each query's pairs together, nearest the threshold first; the queries' order is the seed's; a query the limit cuts
    has no sample rank, as it cannot be reviewed whole (estimate corrects by whole queries)."""
    distance = np.array([0.3, 0.1, 0.2, 0.5, 0.4, 0.0, 0.6])
    names = ["a", "a", "b", "b", "c", "c", "c"]
    queue = review_queue(distance, names, "query-sample", seed=0, limit=5)  # c, then a; b is not queued
    assert queue.order.tolist() == [5, 4, 6, 1, 0] and queue.sample_rank.tolist() == [1, 1, -1, -1, 0, 0, 0]
    queue = review_queue(distance, names, "query-sample", seed=1, limit=5)  # a, b, then c cut after its first pair
    assert queue.order.tolist() == [1, 0, 2, 3, 5] and queue.sample_rank.tolist() == [0, 0, 1, 1, -1, -1, -1]
    orders = {tuple(review_queue(distance, names, "query-sample", seed=seed).order.tolist()) for seed in range(30)}
    assert len(orders) == 6  # every order of the three queries


def test_an_uncertain_queue_whose_random_share_is_one_is_the_random_queue():
    """Every position taken by the sample, the first too (mutant: position 0 went to the nearest pair)."""
    distance = np.array([abs(r - 0.5) for r in R_SCORES.values()])
    queries = [q for q, _ in R_SCORES]
    whole, random = review_queue(distance, queries, "uncertain", random_share=1.0), review_queue(distance, queries, "random")
    assert whole.order.tolist() == random.order.tolist() and whole.order[0] != np.argmin(distance)
    assert whole.sample_rank.tolist() == random.sample_rank.tolist()


def test_the_manifest_and_warning_count_a_stale_skip_beside_a_stale_grade(tmp_path):
    """A skip on texts changed since is a stale decision as a grade is: the export's manifest counts both (mutant: grades
    only)."""
    conn, pool = queued_db(tmp_path)
    alice = Session(conn, "alice")
    skipped = alice.next_task()
    alice.skip(skipped)
    graded = alice.next_task()
    alice.grade(graded, 1)
    chunks = {**CHUNKS, skipped.chunk_id: "Edited text one.", graded.chunk_id: "Edited text two."}
    edited = write_judged(tmp_path / "edited", chunks, QUERIES, R_SCORES)
    refresh_tasks(conn, load_tasks(edited["judgments"], edited["labels"], edited["corpus"], edited["golden"], Labelling("R", (0.5,))),
                  edited["judgments"])
    conn.close()
    result = reviewed_labels(tmp_path / "r.sqlite", pool["labels"])
    assert result.params["stale_decisions_left_out"] == 2 and result.params["reviewed_pairs"] == 0
    assert len(result.warnings) == 1 and "left out 2 reviewed decisions (1 grade, 1 skip) on 2 pairs" in result.warnings[0]


def test_the_sources_list_each_pairs_reviewers_in_name_order(tmp_path):
    """The sources' file is the same for the same decisions, its reviewers by name (mutant: grades read in reverse)."""
    pool, db, pairs, _ = reviewed_by_two(tmp_path)
    out = tmp_path / "reviewed.qrels"
    export_reviewed(db, pool["labels"], out)
    rows = {(r["query_id"], r["chunk_id"]): r for r in map(json.loads, Path(f"{out}.sources.jsonl").read_text().splitlines())}
    assert [list(rows[p.query_id, p.chunk_id]["reviewers"].items()) for p in pairs] == [
        [("alice", 1), ("bob", 1)],
        [("alice", 1), ("bob", 0)],
        [("alice", 0), ("bob", 0)],
    ]


def test_a_page_of_tasks_damaged_past_the_first_rows_read_is_one_error_naming_the_file(tmp_path):
    """A damaged page met while rows are fetched one by one (after the statement read its first row well) is the same
    one line as a damaged page met by the statement (mutant: only execute and fetch* were told; iterating over a
    cursor raised SQLite's bare DatabaseError, a traceback)."""
    chunks = {f"c{i:03}": f"Chunk {i:03}: " + "a sentence about bicycles and their upkeep. " * 7 for i in range(80)}
    scores = {(q, c): 0.3 + 0.4 * (i % 7) / 7 for q in QUERIES for i, c in enumerate(chunks)}
    pool = write_judged(tmp_path / "pool", chunks, QUERIES, scores)
    labelling = Labelling("R", (0.5,))
    db = tmp_path / "r.sqlite"
    conn = open_db(db)
    create_queue(
        conn,
        load_tasks(pool["judgments"], pool["labels"], pool["corpus"], pool["golden"], labelling),
        labelling,
        QueueSettings(order="query"),
    )
    first = Session(conn, "alice").next_task()
    (late,) = conn.execute("SELECT chunk FROM tasks ORDER BY position DESC LIMIT 1").fetchone()
    conn.execute("PRAGMA journal_mode = DELETE")
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    data = db.read_bytes()
    page = data.index(late.encode()) // size
    assert page > data.index(first.chunk.encode()) // size
    with open(db, "r+b") as f:
        f.seek(page * size)
        f.write(b"\xff" * size)
    with contextlib.closing(open_db(db)) as conn:
        session = Session(conn, "alice")
        with pytest.raises(SemrelError, match=r"r.sqlite: not a review database, or a damaged one \(.*malformed"):
            session.following(first, 1000)
