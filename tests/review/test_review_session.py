"""A whole review session through the CLI: grades, undo, skip, quit, resume, then the
database, stats and export; plus the engine's rules (queue order, staleness, schema)."""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from helpers import assert_one_error, drawn_features
from review_helpers import R_SCORES, queued_db, reviewed_by_two, write_pool
from semrel.errors import SemrelError
from semrel.review.engine import QueueSettings, Refreshed, Session, create_queue, refresh_tasks
from semrel.review.keys import grade_keys, note_keys
from semrel.review.order import distance_to_threshold, review_queue
from semrel.review.store import SCHEMA_VERSION, open_db
from semrel.review.tasks import Labelling, Task, judge_line, load_tasks, text_hash


def start(cli, pool, db, reviewer, keys, *extra):
    args = ["review", "start", "--db", db, "--reviewer", reviewer, "--no-highlight"]
    if pool:
        args += ["--judgments", pool["judgments"], "--labels", pool["labels"], "--corpus", pool["corpus"],
                 "--golden", pool["golden"], "--thresholds", "0.5"]
    return cli(*args, *extra, input=keys)


def live(db):
    with sqlite3.connect(db) as conn:
        return conn.execute(
            "SELECT t.query_id || '/' || t.chunk_id, l.kind, l.grade FROM live l JOIN tasks t ON t.id = l.task_id"
            " ORDER BY t.position").fetchall()


def test_session_end_to_end(tmp_path, cli):
    pool = write_pool(tmp_path / "pool")
    db = str(tmp_path / "reviews.sqlite")
    # grade 1, grade 0, undo (takes back the 0), grade 1 again, skip, note, flag, quit
    first = start(cli, pool, db, "alice", "10u1smworth a second look\nfq")
    assert first.exit_code == 0, first.output
    assert "undid your decision" in first.stdout and "note saved" in first.stdout and "flagged" in first.stdout
    assert "judge: P" in first.stdout and "proposed grade" in first.stdout
    assert "saved; 3 decisions this session" in first.stdout  # four grades and a skip, one grade undone
    # the header counts what `review stats` counts, the skip apart (it said "3/12 reviewed" after two grades and a skip)
    assert "alice · 2/12 graded (17%) · yours 2 · 1 skipped · " in first.stdout
    decided = live(db)
    assert [kind for _, kind, _ in decided] == ["grade", "grade", "skip"]
    assert [grade for _, _, grade in decided] == [1, 1, None]
    with sqlite3.connect(db) as conn:
        kinds = [k for (k,) in conn.execute("SELECT kind FROM decisions ORDER BY id")]
        assert kinds == ["grade", "grade", "undo", "grade", "skip", "note", "flag"]
        assert conn.execute("SELECT note FROM decisions WHERE kind = 'note'").fetchone()[0] == "worth a second look"
        undone = conn.execute("SELECT undoes FROM decisions WHERE kind = 'undo'").fetchone()[0]
        assert conn.execute("SELECT kind, grade FROM decisions WHERE id = ?", (undone,)).fetchone() == ("grade", 0)
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        shown_next = conn.execute(
            "SELECT query_id || '/' || chunk_id FROM tasks WHERE position = 3").fetchone()[0]

    # resume without the input files: the fourth task comes first; grade everything left with y/n
    second = start(cli, None, db, "alice", "ynynynynynyn")
    assert second.exit_code == 0, second.output
    first_query = re.search(r"query (\S+) ", second.stdout).group(1)
    first_chunk = re.search(r"chunk (\S+) ", second.stdout).group(1)
    assert f"{first_query}/{first_chunk}" == shown_next
    assert "2/12 graded (17%) · yours 2 · 1 skipped" in second.stdout.splitlines()[0]
    assert "all 12 tasks are reviewed" in second.stdout
    decided = live(db)
    assert len(decided) == 12 and sum(kind == "skip" for _, kind, _ in decided) == 1

    stats = cli("review", "stats", "--db", db, "--format", "json")
    assert stats.exit_code == 0, stats.output
    report = json.loads(stats.stdout)
    (alice,) = report["reviewers"]
    assert (alice["graded"], alice["skipped"], alice["undos"], alice["flags"], alice["notes"]) == (11, 1, 1, 1, 1)
    (vs_judge,) = report["agreement"]
    assert vs_judge["first"] == "alice" and vs_judge["second"] == "judge" and vs_judge["n"] == 11
    human = {pair: grade for pair, kind, grade in decided if kind == "grade"}
    judge = {f"{q}/{c}": int(r >= 0.5) for (q, c), r in R_SCORES.items()}
    agreeing = sum(human[p] == judge[p] for p in human)
    assert vs_judge["percent_agreement"] == pytest.approx(100.0 * agreeing / 11)
    assert sum(map(sum, vs_judge["confusion"])) == 11
    assert "alice vs judge" in cli("review", "stats", "--db", db).stdout

    out = tmp_path / "reviewed.qrels"
    exported = cli("review", "export", "--db", db, "--labels", pool["labels"], "-o", str(out))
    assert exported.exit_code == 0, exported.output
    rows = dict(((q + "/" + d), int(r)) for q, _, d, r in (line.split() for line in out.read_text().splitlines()))
    skipped = next(p for p, kind, _ in decided if kind == "skip")
    assert rows[skipped] == judge[skipped]  # a skipped pair keeps the derived label
    assert all(rows[p] == g for p, g in human.items())
    sources = [json.loads(line) for line in (tmp_path / "reviewed.qrels.sources.jsonl").read_text().splitlines()]
    assert sum(s["source"] == "review" for s in sources) == 11 and sum(s["source"] == "judge" for s in sources) == 1
    assert (tmp_path / "reviewed.qrels.manifest.json").exists()
    assert (tmp_path / "reviewed.qrels.sources.jsonl.manifest.json").exists()


def test_long_chunk_pages_and_blind_hides_the_judge(tmp_path, cli):
    pool = write_pool(tmp_path / "pool")
    corpus = (tmp_path / "pool" / "corpus.jsonl")
    lines = corpus.read_text().splitlines()
    long_text = " ".join(f"sentence{i} about bicycles." for i in range(200))
    lines[0] = json.dumps({"_id": "c1", "title": "", "text": long_text})
    corpus.write_text("\n".join(lines) + "\n")
    db = str(tmp_path / "r.sqlite")
    result = start(cli, pool, db, "bob", " bq", "--blind", "--page-lines", "5", "--order", "query")
    assert result.exit_code == 0, result.output
    assert "page 1/" in result.stdout and "page 2/" in result.stdout
    assert "judge: P" not in result.stdout and "proposed grade" not in result.stdout
    assert live(db) == []


def test_unknown_key_and_help_leave_the_task_undecided(tmp_path, cli):
    pool = write_pool(tmp_path / "pool")
    db = str(tmp_path / "r.sqlite")
    result = start(cli, pool, db, "carol", "x?q")
    assert "unknown key 'x'" in result.stdout and "s skip" in result.stdout
    assert live(db) == []


def test_enter_between_keys_is_passed_over(tmp_path, cli):
    """`printf '1\\n0\\nq'` (or Enter typed after each key) grades two pairs: Enter was an unknown key that
    showed the pair again, once per line."""
    pool = write_pool(tmp_path / "pool")
    db = str(tmp_path / "r.sqlite")
    result = start(cli, pool, db, "erin", "1\n0\r\nq\n")
    assert result.exit_code == 0, result.output
    assert "unknown key" not in result.stdout
    assert result.stdout.count("graded (") == 3  # two pairs graded, the third shown once before q
    assert [(kind, grade) for _, kind, grade in live(db)] == [("grade", 1), ("grade", 0)]


def decided_elsewhere_first(db: str, keys: str, reviewer: str, grade: int):
    """The terminal's read_key pressing `keys`: before the first is read, `reviewer` on a connection of
    their own (the web page, another terminal) grades the pair they are shown."""
    pending, graded = iter(keys), []

    def read_key() -> str:
        if not graded:
            graded.append(True)
            with contextlib.closing(open_db(db)) as conn:
                other = Session(conn, reviewer)
                other.grade(other.next_task(), grade)
        return next(pending)

    return read_key


def test_undoing_an_earlier_sessions_decision_leaves_this_sessions_count(tmp_path, cli):
    """u takes back the last decision, made in an earlier session: this session made none, and counts none."""
    pool = write_pool(tmp_path / "pool")
    db = str(tmp_path / "r.sqlite")
    assert "saved; 1 decision this session" in start(cli, pool, db, "ann", "1q").stdout
    result = start(cli, None, db, "ann", "uq")
    assert "undid your decision" in result.stdout and "saved; 0 decisions this session" in result.stdout
    assert live(db) == []


def test_a_key_on_a_pair_this_name_decided_elsewhere_says_it_was_not_recorded(tmp_path, cli, monkeypatch):
    """Two front ends under one name show the same pair; the second decision is not recorded, and the
    terminal said nothing (it counted no decision and moved on)."""
    from semrel.cli import review_terminal

    pool = write_pool(tmp_path / "pool")
    db = str(tmp_path / "r.sqlite")
    assert start(cli, pool, db, "dave", "q").exit_code == 0
    # meanwhile the web page, signed in as dave, grades the pair the terminal shows
    monkeypatch.setattr(review_terminal, "read_key", decided_elsewhere_first(db, "0q", "dave", 1))
    result = start(cli, pool, db, "dave", "")
    shown = live(db)
    assert [(kind, grade) for _, kind, grade in shown] == [("grade", 1)]
    said = " ".join(result.stdout.split())  # the console wraps long lines
    assert f"you had decided {shown[0][0]} already (under this name elsewhere): that key was not recorded" in said
    assert "0 decisions this session" in result.stdout


@pytest.mark.parametrize(("key", "what"), [("1", "that key"), ("f", "the flag")])
def test_a_key_on_a_pair_another_reviewer_decided_meanwhile_is_not_recorded(tmp_path, cli, monkeypatch, key, what):
    """The terminal shows ann a pair; her claim goes stale, and bob, on his own connection (the web
    page, another terminal), is shown it and grades it before her key: her grade or flag is refused,
    not written beside his on a pair that is not shared."""
    from semrel.cli import review_terminal
    from semrel.review import engine

    pool = write_pool(tmp_path / "pool")
    db = str(tmp_path / "r.sqlite")
    assert start(cli, pool, db, "ann", "q").exit_code == 0
    monkeypatch.setattr(engine, "CLAIM_SECONDS", -1.0)
    monkeypatch.setattr(review_terminal, "read_key", decided_elsewhere_first(db, key + "q", "bob", 0))
    result = start(cli, pool, db, "ann", "")
    with contextlib.closing(sqlite3.connect(db)) as conn:
        decided = conn.execute("SELECT t.query_id || '/' || t.chunk_id, d.reviewer, d.kind FROM decisions d"
                               " JOIN tasks t ON t.id = d.task_id").fetchall()
    assert [(reviewer, kind) for _, reviewer, kind in decided] == [("bob", "grade")]
    said = " ".join(result.stdout.split())  # the console wraps long lines
    assert f"{decided[0][0]} was decided elsewhere meanwhile: {what} was not recorded" in said
    assert "0 decisions this session" in result.stdout


def test_a_decision_is_recorded_only_on_the_pair_held_for_the_reviewer(tmp_path, monkeypatch):
    """Three connections to one database, as separate processes have: once bob has graded the pair
    shown to alice (her claim gone stale), nothing of hers is written on it; under one name in two
    places, the second grade is "already decided" and a revision of a decision undone elsewhere is refused."""
    from semrel.review import engine
    from semrel.review.engine import Outcome

    monkeypatch.setattr(engine, "CLAIM_SECONDS", -1.0)
    conn, _ = queued_db(tmp_path)
    alice, bob = Session(conn, "alice"), Session(open_db(tmp_path / "r.sqlite"), "bob")
    alice_elsewhere = Session(open_db(tmp_path / "r.sqlite"), "alice")
    first = alice.next_task()
    assert bob.next_task() == first and bob.grade(first, 0) is Outcome.RECORDED
    assert {alice.grade(first, 1), alice.skip(first), alice.flag(first), alice.note(first, "mine")} == {Outcome.NOT_HELD}
    second = alice.next_task()
    assert alice_elsewhere.next_task() == second and alice.grade(second, 1) is Outcome.RECORDED
    assert alice_elsewhere.grade(second, 0) is alice_elsewhere.skip(second) is Outcome.ALREADY_DECIDED
    assert alice_elsewhere.flag(second) is alice_elsewhere.note(second, "") is Outcome.NOT_HELD
    assert alice_elsewhere.undo() == second and not alice.revise(second, 0)
    kinds = [tuple(r) for r in conn.execute("SELECT task_id, reviewer, kind, grade FROM decisions ORDER BY id")]
    assert kinds == [(first.id, "bob", "grade", 0), (second.id, "alice", "grade", 1), (second.id, "alice", "undo", None)]
    for session in (bob, alice_elsewhere):
        session.conn.close()


def test_a_decision_on_a_pair_other_than_the_one_held_is_not_recorded_nor_an_empty_note(tmp_path):
    """A front end names the pair a decision is for: any pair but the one held for the reviewer is refused, even while
    they hold one; an empty note on the held pair is recorded as nothing."""
    from semrel.review.engine import Outcome

    conn, _ = queued_db(tmp_path)
    alice = Session(conn, "alice")
    shown = alice.next_task()
    (other,) = alice.following(shown, 1)
    assert {alice.grade(other, 1), alice.skip(other), alice.flag(other), alice.note(other, "mine")} == {Outcome.NOT_HELD}
    assert alice.note(shown, "") is Outcome.RECORDED
    assert conn.execute("SELECT count(*) FROM decisions").fetchone()[0] == 0
    assert alice.next_task() == shown
    for task_id in (0, -1, 2**63, 10**30):  # an id a front end was sent: no such task, not an SQLite overflow
        with pytest.raises(SemrelError, match=f"no task {task_id} in this review database"):
            alice.task(task_id)


def test_a_pair_another_reviewer_flagged_graded_and_undid_then_left_goes_to_the_next_reviewer(tmp_path, monkeypatch):
    """Only a standing grade or skip keeps others off a pair that is not shared: bob's flag and his undone grade do not."""
    from semrel.review import engine
    from semrel.review.engine import Outcome

    monkeypatch.setattr(engine, "CLAIM_SECONDS", -1.0)  # bob's claim has gone stale: he left
    conn, _ = queued_db(tmp_path)
    bob = Session(conn, "bob")
    first = bob.next_task()
    bob.flag(first)
    bob.grade(first, 1)
    assert bob.undo() == first
    alice = Session(open_db(tmp_path / "r.sqlite"), "alice")
    assert alice.next_task() == first and alice.grade(first, 0) is Outcome.RECORDED
    alice.conn.close()


def test_a_reviewer_name_is_1_to_80_printable_characters():
    from semrel.review.engine import check_reviewer_name

    assert check_reviewer_name("x" * 80) == "x" * 80 and check_reviewer_name("Zoë") == "Zoë"
    for name in ("x" * 81, " ", "", "a\x1b[2Jb", "a\u202eb"):
        with pytest.raises(SemrelError, match="a reviewer name is 1 to 80 printable characters"):
            check_reviewer_name(name)


def test_a_reviewer_cannot_take_the_name_of_an_adjudication_rule():
    """`--adjudicate majority` names the rule, so a reviewer called majority could never be picked by name."""
    from semrel.review.engine import check_reviewer_name

    assert check_reviewer_name("Majority") == "Majority"
    for name in ("majority", " strict "):
        with pytest.raises(SemrelError, match=f"a reviewer cannot be called '{name.strip()}': --adjudicate {name.strip()} names a rule"):
            check_reviewer_name(name)


def test_an_undone_pair_comes_back_next_even_before_an_earlier_pair_shown(tmp_path, monkeypatch):
    """alice passes over the pair bob holds and grades the next; bob leaves, so she is shown his pair. `u` takes
    back her grade, but the pair earlier in the queue (bob's) stayed on screen: her next key, meant for the pair
    she undid, graded that one."""
    from semrel.review import engine

    conn, _ = queued_db(tmp_path)
    alice, bob = Session(conn, "alice"), Session(open_db(tmp_path / "r.sqlite"), "bob")
    held_by_bob = bob.next_task()
    mine = alice.next_task()
    alice.grade(mine, 1)
    monkeypatch.setattr(engine, "CLAIM_SECONDS", -1.0)  # bob's claim gone stale
    assert alice.next_task() == held_by_bob
    assert alice.undo() == mine
    assert alice.next_task() == mine
    alice.grade(mine, 0)
    assert alice.next_task() == held_by_bob  # and then the pair that was on screen
    bob.conn.close()


def test_a_note_typed_in_a_terminal_that_is_not_utf8_is_kept(tmp_path):
    """Python holds such bytes as lone surrogates, which SQLite cannot store: the note was lost to a traceback."""
    pool = write_pool(tmp_path / "pool")
    db = str(tmp_path / "r.sqlite")
    args = ["review", "start", "--db", db, "--reviewer", "ann", "--no-highlight", "--judgments", pool["judgments"], "--labels",
            pool["labels"], "--corpus", pool["corpus"], "--golden", pool["golden"], "--thresholds", "0.5"]
    result = subprocess.run([sys.executable, "-m", "semrel", *args], input=b"mcaf\xe9 au lait\nq", capture_output=True,
                            env={**os.environ, "PYTHONIOENCODING": "utf-8:surrogateescape"}, check=False)
    assert result.returncode == 0 and b"Traceback" not in result.stderr, result.stderr
    assert b"note saved (bytes that were not UTF-8 became" in result.stdout
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT note FROM decisions WHERE kind = 'note'").fetchone()[0] == "caf\ufffd au lait"


def test_queue_options_a_database_already_holds_otherwise_are_warned_about(tmp_path, cli):
    """--overlap 3 on a queue built without shared pairs gave no shared pairs and said nothing."""
    pool = write_pool(tmp_path / "pool")
    db = str(tmp_path / "r.sqlite")
    assert start(cli, pool, db, "ann", "q", "--limit", "5").exit_code == 0
    again = start(cli, pool, db, "ann", "q", "--limit", "5")  # as it was built: nothing to say
    assert again.exit_code == 0 and "was built with" not in again.stderr
    assert "was built with" not in start(cli, None, db, "ann", "q").stderr  # resumed without options
    other = start(cli, pool, db, "ann", "q", "--order", "random", "--overlap", "3", "--seed", "9")
    assert other.exit_code == 0
    assert ("warning: this queue was built with --order uncertain, --seed 0, --overlap 0; it keeps its order and shared "
            "pairs (a new --db builds a queue with yours)") in " ".join(other.stderr.split())


def test_resuming_a_limited_queue_with_its_files_does_not_call_the_pairs_limit_kept_out_unqueued(tmp_path, cli):
    """Every start of a --limit 5 queue given its files warned that the 7 other judged pairs were not in the
    queue and to review them with a new --db; only judged pairs beyond those the queue was built from are."""
    pool = write_pool(tmp_path / "pool")
    db = str(tmp_path / "r.sqlite")
    assert start(cli, pool, db, "ann", "q", "--limit", "5").exit_code == 0
    again = start(cli, pool, db, "ann", "q", "--limit", "5")
    assert again.exit_code == 0 and "not in this database's queue" not in again.stderr
    with open(pool["corpus"], "a") as corpus, open(pool["judgments"], "a") as judgments:
        corpus.write(json.dumps({"_id": "c5", "title": "", "text": "Brakes squeal when wet.", "doc_id": "d", "start": 0, "end": 23}) + "\n")
        judgments.write(json.dumps({"query_id": "q1", "chunk_id": "c5", "P": 0.3, "R": 0.3, "F": 0.3, "source": "bm25"}) + "\n")
    grown = start(cli, pool, db, "ann", "q")
    assert "warning: 8 judged pairs are not in this database's queue" in grown.stderr


def test_edited_texts_make_old_decisions_stale(tmp_path, cli):
    pool = write_pool(tmp_path / "pool")
    db = str(tmp_path / "r.sqlite")
    start(cli, pool, db, "alice", "11q")
    (first_pair, _, _), _ = live(db)
    chunk_id = first_pair.split("/")[1]
    corpus = tmp_path / "pool" / "corpus.jsonl"
    corpus.write_text("".join(
        json.dumps({**row, "text": row["text"] + " (edited)"} if row["_id"] == chunk_id else row) + "\n"
        for row in map(json.loads, corpus.read_text().splitlines())))
    again = start(cli, pool, db, "alice", "q")
    assert "new texts" in again.stderr
    assert all(chunk_id != pair.split("/")[1] for pair, _, _ in live(db))
    report = json.loads(cli("review", "stats", "--db", db, "--format", "json").stdout)
    assert report["reviewers"][0]["stale"] >= 1


def test_a_refresh_counts_only_the_pairs_whose_texts_or_proposed_grades_changed(tmp_path):
    """Each resume with its files tells how many pairs have new texts (their decisions now stale) or another proposed
    grade: a count of the unchanged pairs instead went unnoticed, as the CLI test's "1 pairs" is also in "11 pairs"."""
    conn, pool = queued_db(tmp_path)
    tasks = load_tasks(pool["judgments"], pool["labels"], pool["corpus"], pool["golden"], Labelling("R", (0.5,)))
    assert refresh_tasks(conn, tasks, "j.jsonl") == Refreshed(texts=0, proposed=0, left_out=0, withdrawn=0, decided_unjudged=0)
    session = Session(conn, "alice")
    edited = session.next_task()
    session.grade(edited, 1)
    regraded = session.next_task()
    session.grade(regraded, 0)
    changed = [dataclasses.replace(t, chunk=t.chunk + " (edited)") if (t.query_id, t.chunk_id) == (edited.query_id, edited.chunk_id)
               else dataclasses.replace(t, proposed=1 - t.proposed) if (t.query_id, t.chunk_id) == (regraded.query_id, regraded.chunk_id)
               else t for t in tasks]
    assert refresh_tasks(conn, changed, "j.jsonl") == Refreshed(texts=1, proposed=1, left_out=0, withdrawn=0, decided_unjudged=0)
    assert [d.task.id for d in session.recent()] == [regraded.id]  # another proposed grade leaves the decision standing
    assert session.next_task().id == edited.id  # new texts: shown again
    assert refresh_tasks(conn, changed, "j.jsonl") == Refreshed(texts=0, proposed=0, left_out=0, withdrawn=0, decided_unjudged=0)


def test_a_refresh_withdraws_the_pairs_the_judgments_no_longer_list_and_keeps_their_decisions(tmp_path):
    """Re-judged files that no longer list a pair left it queued with the old texts and scores: a reviewer was shown it,
    on screen even then, and asked to grade a pair nobody judges now. It is withdrawn (a decision on it stands), and comes
    back when listed again."""
    conn, pool = queued_db(tmp_path)
    tasks = load_tasks(pool["judgments"], pool["labels"], pool["corpus"], pool["golden"], Labelling("R", (0.5,)))
    alice, bob = Session(conn, "alice"), Session(open_db(tmp_path / "r.sqlite"), "bob")
    decided = alice.next_task()
    alice.grade(decided, 1)
    shown = bob.next_task()  # on bob's screen while the files are refreshed
    assert bob.on_screen()
    idle = alice.next_task()
    alice.release()
    gone = {(t.query_id, t.chunk_id) for t in (decided, shown, idle)}
    fewer = [dataclasses.replace(t, R=0.99) for t in tasks if (t.query_id, t.chunk_id) not in gone]
    assert refresh_tasks(conn, fewer, "j.jsonl") == Refreshed(texts=0, proposed=0, left_out=0, withdrawn=2, decided_unjudged=1)
    assert not bob.on_screen() and bob.grade(shown, 0).name == "NOT_HELD" and bob.skip(shown).name == "NOT_HELD"  # nothing recorded
    served = []
    while (task := bob.next_task()) is not None:
        served.append(task)
        bob.skip(task)
    assert {(t.query_id, t.chunk_id) for t in served} == {(t.query_id, t.chunk_id) for t in fewer}  # the 9 listed, all rescored
    assert {t.R for t in served} == {0.99}
    assert [(d.task.id, d.grade) for d in alice.recent()] == [(decided.id, 1)]  # alice's grade stands
    assert bob.progress().total == 10 and bob.progress().done == 10  # the 9 listed and the decided one
    assert gone.isdisjoint((t.query_id, t.chunk_id) for t in bob.following(decided, 12))  # nor prepared for the page
    assert refresh_tasks(conn, fewer, "j.jsonl").withdrawn == 0  # said once
    assert refresh_tasks(conn, tasks, "j.jsonl") == Refreshed(texts=0, proposed=0, left_out=0, withdrawn=0, decided_unjudged=0)
    back = []
    while (task := bob.next_task()) is not None:
        back.append(task.id)
        bob.skip(task)
    assert sorted(back) == sorted([shown.id, idle.id])  # listed again: back in the queue
    assert bob.progress().total == 12


def test_a_refresh_cut_short_leaves_the_queue_as_it_was(tmp_path, monkeypatch):
    """Rescoring the listed pairs and withdrawing the others are one transaction: Ctrl-C at the withdrawal leaves every
    task with its old texts, scores and place in the queue."""
    from semrel.review.store import ReviewConnection

    conn, pool = queued_db(tmp_path)
    tasks = load_tasks(pool["judgments"], pool["labels"], pool["corpus"], pool["golden"], Labelling("R", (0.5,)))
    before = conn.execute("SELECT * FROM tasks ORDER BY id").fetchall()
    executemany = ReviewConnection.executemany

    def interrupted(self, sql, parameters):
        if sql.startswith("UPDATE tasks SET withdrawn = 1"):
            raise KeyboardInterrupt
        return executemany(self, sql, parameters)

    monkeypatch.setattr(ReviewConnection, "executemany", interrupted)
    with pytest.raises(KeyboardInterrupt):
        refresh_tasks(conn, [dataclasses.replace(t, R=0.99) for t in tasks[1:]], "j.jsonl")
    assert conn.execute("SELECT * FROM tasks ORDER BY id").fetchall() == before


def test_a_start_on_rejudged_files_shows_no_pair_they_no_longer_judge_and_exports_its_grade(tmp_path, cli):
    """`review start` on files judged again: a pair they no longer list was shown next with its old chunk and scores.
    Withdrawn now, with the counts on stderr; a grade given on a pair no longer listed stays in the export."""
    pool = write_pool(tmp_path / "pool")
    db = str(tmp_path / "r.sqlite")
    assert start(cli, pool, db, "alice", "yq").exit_code == 0  # alice grades q1/c1 (nearest 0.5) relevant
    with sqlite3.connect(db) as conn:
        first, second = conn.execute("SELECT query_id, chunk_id FROM tasks ORDER BY position LIMIT 2").fetchall()
    assert (first, second) == (("q1", "c1"), ("q2", "c4"))
    unlisted = (f'"query_id": "{first[0]}", "chunk_id": "{first[1]}"', f'"query_id": "{second[0]}", "chunk_id": "{second[1]}"')
    for name, kept in (("judgments", lambda line: not line.startswith(tuple("{" + u for u in unlisted))),
                       ("labels", lambda line: line.split()[::2] not in ([*first], [*second]))):
        lines = Path(pool[name]).read_text().splitlines()
        Path(pool[name]).write_text("".join(f"{line}\n" for line in lines if kept(line)))
    resumed = start(cli, pool, db, "bob", "q")
    assert resumed.exit_code == 0, resumed.output
    assert "1 undecided pair of this queue is no longer judged in these files: withdrawn, shown to nobody" in resumed.stderr
    assert "1 decided pair of this queue is no longer judged in these files: kept with the decisions made" in resumed.stderr
    assert "query q2" not in resumed.stdout and "chunk c4" not in resumed.stdout and "chunk c3" in resumed.stdout  # q3/c3 next
    assert json.loads(cli("review", "stats", "--db", db, "--format", "json").stdout)["tasks"] == 11
    out = tmp_path / "out.qrels"
    assert cli("review", "export", "--db", db, "--labels", pool["labels"], "-o", out).exit_code == 0
    assert "q1 0 c1 1" in out.read_text().splitlines() and "q2 0 c4" not in out.read_text()


def test_a_queue_another_process_built_first_is_joined_not_added_to(tmp_path):
    """Two reviewers starting a new database at once both build its queue: the second finds the first's in the
    transaction that would write its own and writes nothing (without that check its rows broke the queue's
    UNIQUE positions, a traceback)."""
    conn, pool = queued_db(tmp_path)
    labelling = Labelling("R", (0.5,))
    tasks = load_tasks(pool["judgments"], pool["labels"], pool["corpus"], pool["golden"], labelling)
    before = conn.execute("SELECT * FROM tasks ORDER BY id").fetchall()
    assert create_queue(conn, tasks, labelling, QueueSettings(order="random", seed=5)) == 0
    assert conn.execute("SELECT * FROM tasks ORDER BY id").fetchall() == before
    assert json.loads(conn.execute("SELECT value FROM meta WHERE key = 'order'").fetchone()[0]) == "uncertain"


def test_a_grade_outside_the_scale_is_refused_below_it_too(tmp_path):
    """The front ends check the grades they take, but Session is the last word: a grade of -1 from Python was
    recorded, and exported as a label of -1."""
    conn, _ = queued_db(tmp_path)
    session = Session(conn, "alice")
    task = session.next_task()
    session.grade(task, 1)
    for bad in (-1, 2):
        with pytest.raises(SemrelError, match=f"grade {bad} is outside 0..1"):
            session.revise(task, bad)
    session.undo()
    for bad in (-1, 2):
        with pytest.raises(SemrelError, match=f"grade {bad} is outside 0..1"):
            session.grade(task, bad)
    assert [tuple(r) for r in conn.execute("SELECT kind, grade FROM decisions ORDER BY id")] == [("grade", 1), ("undo", None)]


def test_progress_counts_a_pair_once_however_many_reviewers_decided_or_flagged_it(tmp_path):
    """Done counts pairs, not decisions: the three shared pairs two reviewers graded were counted twice each; and a
    pair flagged twice is one flagged pair."""
    _, db, _, _ = reviewed_by_two(tmp_path)
    alice = Session(open_db(db), "alice")
    task = alice.next_task()
    alice.flag(task)
    alice.flag(task)
    progress = alice.progress()
    assert (progress.total, progress.done, progress.mine, progress.flagged) == (12, 4, 4, 1)
    alice.conn.close()


def test_resume_needs_all_four_inputs_or_none(tmp_path, cli):
    pool = write_pool(tmp_path / "pool")
    result = cli("review", "start", "--db", str(tmp_path / "r.sqlite"), "--reviewer", "a", "--judgments", pool["judgments"])
    assert result.exit_code == 2 and "give all of --judgments" in result.stderr
    fresh = cli("review", "start", "--db", str(tmp_path / "new.sqlite"), "--reviewer", "a", "--no-highlight")
    assert fresh.exit_code == 1 and "the review database is new: give --judgments, --labels, --corpus and --golden\n" in fresh.stderr


def test_a_failed_start_leaves_no_new_database_behind_and_an_existing_one_as_it_was(tmp_path, cli, monkeypatch):
    pool = write_pool(tmp_path / "pool")
    db = tmp_path / "new.sqlite"

    def ctrl_c(*args):
        raise KeyboardInterrupt

    def no_hard_links(*args):
        raise PermissionError(errno.EPERM, "Operation not permitted")

    assert_one_error(start(cli, None, str(db), "a", "q"), "the review database is new")
    with monkeypatch.context() as patch:
        patch.setattr("semrel.review.engine.review_queue", ctrl_c)  # while the new queue is written
        assert_one_error(start(cli, pool, str(db), "a", "q"), "interrupted", code=130)
    assert [p.name for p in tmp_path.iterdir()] == ["pool"]  # no database, no -wal, no hidden half-built file
    with monkeypatch.context() as patch:
        patch.setattr(os, "link", no_hard_links)  # FAT: the built database is moved into place instead
        assert start(cli, pool, str(db), "a", "1q").exit_code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new.sqlite", "pool"]
    decided, kept = live(db), db.read_bytes()
    assert len(decided) == 1
    with monkeypatch.context() as patch:
        patch.setattr("semrel.review.engine.refresh_tasks", ctrl_c)  # while an existing queue is refreshed
        assert_one_error(start(cli, pool, str(db), "a", "q"), "interrupted", code=130)
    assert db.read_bytes() == kept and live(db) == decided


def test_an_empty_file_at_db_is_a_new_database_and_stays_empty_when_the_start_fails(tmp_path, cli):
    """A touched or mktemp'd --db got the schema written into it (and -wal, -shm beside it) by a start
    that then failed, after which stats no longer called it empty."""
    pool = write_pool(tmp_path / "pool")
    db = tmp_path / "e.sqlite"
    db.touch()
    assert_one_error(start(cli, None, str(db), "bob", "q"), "the review database is new")
    broken = dict(pool, judgments=str(tmp_path / "missing.jsonl"))
    assert start(cli, broken, str(db), "bob", "q").exit_code != 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["e.sqlite", "pool"] and db.stat().st_size == 0
    assert start(cli, pool, str(db), "bob", "1q").exit_code == 0
    assert len(live(db)) == 1


def test_an_sqlite_file_without_the_review_tables_or_an_empty_file_is_refused_as_it_is(tmp_path, cli):
    """A file whose user_version says review database but which lacks its tables is another program's, and an empty file
    holds no review: both are refused by name and left byte for byte as they were."""
    other = tmp_path / "other.sqlite"
    with contextlib.closing(sqlite3.connect(other)) as conn:
        conn.execute("CREATE TABLE notes (text TEXT)")
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    before = other.read_bytes()
    with pytest.raises(SemrelError, match="other.sqlite: an SQLite file that is not a review database .its review tables are missing"):
        open_db(other)
    assert_one_error(cli("review", "stats", "--db", other), "other.sqlite: an SQLite file that is not a review database")
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    assert_one_error(cli("review", "stats", "--db", empty), "empty.sqlite: empty: not a review database")
    assert other.read_bytes() == before and empty.read_bytes() == b""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["empty.sqlite", "other.sqlite"]


def test_a_database_another_process_gave_the_schema_while_this_one_opened_it_is_joined(tmp_path, monkeypatch):
    """Two processes open one new file at once: the second to take the write lock finds the schema the first made
    (user_version set) and joins it, rather than calling the file another program's for the tables it sees."""
    from semrel.review import store
    from semrel.review.store import read_meta, write_meta

    db = tmp_path / "r.sqlite"
    checked = store._check_review_db

    def raced(conn, name, allow_new):
        version = checked(conn, name, allow_new)
        monkeypatch.setattr(store, "_check_review_db", checked)
        with contextlib.closing(open_db(db)) as theirs:  # read the file as new; the other process makes it before we write
            write_meta(theirs, {"built_by": "theirs"})
        return version

    monkeypatch.setattr(store, "_check_review_db", raced)
    with contextlib.closing(open_db(db)) as conn:
        assert read_meta(conn) == {"built_by": "theirs"}
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_a_database_another_process_put_in_place_while_this_one_was_built_is_joined_not_replaced(tmp_path):
    """Two reviewers starting one new --db at once each build a database aside: the second to finish must keep the
    first's, in which its reviewer may have graded already, and drop its own."""
    from semrel.review.store import create_db, read_meta, write_meta

    target = tmp_path / "r.sqlite"

    def build(conn):
        write_meta(conn, {"built_by": "mine"})
        with contextlib.closing(open_db(target)) as theirs:  # meanwhile, the other start puts its database there
            write_meta(theirs, {"built_by": "theirs"})

    with contextlib.closing(create_db(target, build)) as conn:
        assert read_meta(conn)["built_by"] == "theirs"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_a_schema_2_database_is_upgraded_to_mark_simulated_decisions_keeping_every_decision(tmp_path):
    """Each step of the upgrade is for every older schema: a schema-2 database (tasks.probability there already) has to
    get decisions.simulated too, else its first new decision fails."""
    _, db, _, _ = reviewed_by_two(tmp_path)
    with contextlib.closing(sqlite3.connect(db)) as conn:
        conn.execute("ALTER TABLE decisions DROP COLUMN simulated")
        conn.execute("ALTER TABLE tasks DROP COLUMN withdrawn")  # nor had tasks.withdrawn (schema 4)
        conn.execute("PRAGMA user_version = 2")
        decisions = conn.execute("SELECT * FROM decisions ORDER BY id").fetchall()
    session = Session(open_db(db), "carol")
    session.grade(session.next_task(), 1)
    rows = [tuple(r) for r in session.conn.execute("SELECT * FROM decisions ORDER BY id")]
    assert [r[:-1] for r in rows[:-1]] == decisions and [r[-1] for r in rows] == [None] * len(decisions) + [0]
    assert session.conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert session.conn.execute("SELECT count(*) FROM tasks WHERE withdrawn = 0").fetchone()[0] == 12  # none withdrawn
    session.conn.close()


def test_a_transaction_cut_short_by_ctrl_c_or_rolled_back_by_sqlite_leaves_no_lock_and_tells_its_own_error(tmp_path):
    """Ctrl-C inside a transaction rolls it back as an error does: left open, the connection kept the write lock and
    every other reviewer waited out the busy timeout. Where SQLite rolled back itself (a full disk), the error that did it
    is the one raised, not "no transaction is active"."""
    from semrel.review.store import transaction

    conn, _ = queued_db(tmp_path)
    with pytest.raises(KeyboardInterrupt):
        with transaction(conn):
            conn.execute("INSERT INTO reviewers (name, created) VALUES ('ann', 0)")
            raise KeyboardInterrupt
    assert not conn.in_transaction
    with pytest.raises(ValueError, match="the disk is full"):
        with transaction(conn):
            conn.execute("ROLLBACK")  # as SQLite does itself on SQLITE_FULL
            raise ValueError("the disk is full")
    with contextlib.closing(open_db(tmp_path / "r.sqlite")) as other:
        Session(other, "bob")  # takes the write lock
        assert [name for (name,) in other.execute("SELECT name FROM reviewers")] == ["bob"]


def test_only_a_missing_path_or_a_plain_empty_file_with_no_log_is_a_new_database(tmp_path):
    """A new database is put in place over its path, replacing what is there: an empty file beside a write-ahead log that
    holds pages is not new, nor is a link to an empty file (the link would become a file); and where a server's
    connection asks for an existing database (create=False), none is made where it was removed."""
    from semrel.review.store import is_new_db

    empty, missing, link = tmp_path / "e.sqlite", tmp_path / "missing.sqlite", tmp_path / "link.sqlite"
    empty.touch()
    link.symlink_to(empty)
    assert is_new_db(missing) and is_new_db(empty) and not is_new_db(link)
    Path(f"{empty}-wal").write_bytes(b"pages")
    assert not is_new_db(empty)
    with pytest.raises(SemrelError, match="missing.sqlite: no such review database"):
        open_db(missing, create=False)
    assert not missing.exists()


def test_an_open_database_is_an_input_no_output_replaces_and_a_folder_is_refused_as_one(tmp_path):
    """open_db notes the database (and the SQLite files beside it) as an input of the command: an output over it is
    refused like one over any input; and a folder given as --db is named as such, not left to SQLite's words."""
    from semrel.formats.files import atomic_writer, input_guard

    conn, _ = queued_db(tmp_path)
    conn.close()
    db = tmp_path / "r.sqlite"
    with input_guard(), contextlib.closing(open_db(db)):
        for name in (db, f"{db}-wal"):
            with pytest.raises(SemrelError, match="semrel never writes its output over an input"):
                with atomic_writer(name) as out:
                    out.write("oops\n")
    (tmp_path / "folder.sqlite").mkdir()
    with pytest.raises(SemrelError, match="folder.sqlite: is a folder, expected a file"):
        open_db(tmp_path / "folder.sqlite")


def test_a_new_database_removes_the_temp_files_a_killed_start_left_and_only_those(tmp_path):
    """A start killed while it built the database aside leaves its hidden temp file (and SQLite's beside it): the next
    start removes them; a live process's temp, and the user's hidden files, stay."""
    from semrel.review.store import create_db

    dead = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                              check=True).stdout)
    left = [f".r.sqlite.{dead}_abcd1234.tmp", f".r.sqlite.{dead}_abcd1234.tmp-wal"]
    kept = [f".r.sqlite.{os.getpid()}_live1234.tmp", ".r.sqlite.notes"]
    for name in left + kept:
        (tmp_path / name).write_text("x")
    with contextlib.closing(create_db(tmp_path / "r.sqlite", lambda conn: None)):
        pass
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == sorted(kept)


def test_a_database_from_a_newer_version_is_refused(tmp_path, cli):
    db = tmp_path / "future.sqlite"
    open_db(db).close()
    with sqlite3.connect(db) as conn:
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(SemrelError, match="newer semrel"):
        open_db(db)
    result = cli("review", "stats", "--db", str(db))
    assert result.exit_code == 1 and result.stderr.count("\n") == 1 and "upgrade semrel" in result.stderr


def test_decisions_are_append_only(tmp_path):
    conn, _ = queued_db(tmp_path)
    session = Session(conn, "alice")
    session.grade(session.next_task(), 1)
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("UPDATE decisions SET grade = 0")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("DELETE FROM decisions")


def test_overlap_items_go_to_every_reviewer_the_rest_to_one(tmp_path):
    conn, _ = queued_db(tmp_path, QueueSettings(overlap=3))
    alice, bob = Session(conn, "alice"), Session(open_db(tmp_path / "r.sqlite"), "bob")
    seen = {"alice": [], "bob": []}
    while True:  # alternate until both run dry
        progressed = False
        for name, session in (("alice", alice), ("bob", bob)):
            task = session.next_task()
            if task is not None:
                seen[name].append(task.position)
                session.grade(task, 1)
                progressed = True
        if not progressed:
            break
    shared = set(seen["alice"]) & set(seen["bob"])
    assert shared == {0, 1, 2}
    assert sorted(set(seen["alice"]) | set(seen["bob"])) == list(range(12))
    assert len(seen["alice"]) + len(seen["bob"]) == 12 + 3


def test_uncertain_order_mixes_a_random_sample_that_is_a_permutation_prefix():
    rng = np.random.default_rng(0)
    distance = rng.uniform(size=200)
    queue = review_queue(distance, ["q"] * 200, "uncertain", random_share=0.25, seed=3, limit=80)
    assert len(queue.order) == 80 and len(set(queue.order.tolist())) == 80
    permutation = np.random.default_rng(3).permutation(200)
    ranked = np.flatnonzero(queue.sample_rank >= 0)
    assert set(ranked.tolist()) <= set(queue.order.tolist())  # every sampled item is queued
    assert sorted(queue.sample_rank[ranked].tolist()) == list(range(len(ranked)))
    assert set(ranked.tolist()) == set(permutation[: len(ranked)].tolist())  # a prefix of the permutation
    unsampled = [i for i in queue.order.tolist() if queue.sample_rank[i] < 0]
    assert distance[unsampled].tolist() == sorted(distance[unsampled].tolist())  # the rest: nearest first
    assert len(ranked) >= 20
    assert queue.order[0] == int(np.argmin(distance))


@pytest.mark.parametrize("order", ["uncertain", "random", "query", "query-sample"])
def test_a_queue_is_the_same_whatever_the_judgments_line_order(tmp_path, order):
    """The seeded sample permuted the tasks' indices in the judgments' line order, and ties of distance went by it: a
    shuffled judgments.jsonl queued another sample. Taken in (query, chunk) order, the queue is a seeded function of
    the pairs alone."""
    pool = write_pool(tmp_path / "pool")
    labelling = Labelling("R", (0.5,))
    tasks = load_tasks(pool["judgments"], pool["labels"], pool["corpus"], pool["golden"], labelling)
    queued = []
    for name, given in (("a", tasks), ("b", tasks[::-1]), ("c", tasks[5:] + tasks[:5])):
        conn = open_db(tmp_path / f"{name}.sqlite")
        create_queue(conn, given, labelling, QueueSettings(order=order, limit=8))
        queued.append(conn.execute("SELECT query_id, chunk_id, sample_rank FROM tasks ORDER BY position").fetchall())
        conn.close()
    assert [tuple(row) for row in queued[0]] == [tuple(row) for row in queued[1]] == [tuple(row) for row in queued[2]]


def test_the_default_uncertain_order_gives_every_fourth_place_to_the_sample_and_ranks_those_queued_already():
    """Items at distances 0..11 come in that order but for places 3, 7 and 11, the seeded sample's (RANDOM_SHARE 0.25):
    the seed-0 permutation is 9, 2, 7, 4, 5, 11, ...; 2, 4 and 5 were queued by distance already and rank in place."""
    queue = review_queue(np.arange(12.0), ["q"] * 12)
    assert queue.order.tolist() == [0, 1, 2, 9, 3, 4, 5, 7, 6, 8, 10, 11]
    assert queue.sample_rank.tolist() == [-1, -1, 1, -1, 3, 4, -1, 2, -1, 0, -1, 5]


def test_the_distance_to_a_threshold_is_to_the_nearest_of_several():
    """Graded labels: the judge is unsure near any cut, not near the farthest."""
    gaps = distance_to_threshold(np.array([0.1, 0.45, 0.9, 0.62]), [0.4, 0.8])
    assert gaps.tolist() == pytest.approx([0.3, 0.05, 0.1, 0.18])


def test_binary_labels_take_y_and_n_as_grades_and_graded_labels_keep_n_for_a_note():
    binary, graded = Labelling("R", (0.5,)), Labelling("R", (0.3, 0.6, 0.9))
    assert grade_keys(binary) == {"0": 0, "1": 1, "y": 1, "n": 0} and note_keys(binary) == ("m",)
    assert grade_keys(graded) == {"0": 0, "1": 1, "2": 2, "3": 3} and note_keys(graded) == ("n", "m")


def test_a_database_locked_past_the_timeout_is_one_clear_error(tmp_path, monkeypatch):
    from semrel.review import store

    db = tmp_path / "r.sqlite"
    open_db(db).close()
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process holding the write lock
    try:
        monkeypatch.setattr(store, "BUSY_TIMEOUT_MS", 50)
        conn = open_db(db)
        with pytest.raises(SemrelError, match="database is locked.*nothing of this step was saved"):
            Session(conn, "alice")
    finally:
        holder.execute("ROLLBACK")


def test_the_switch_to_wal_tries_again_while_another_opener_holds_the_new_file_and_only_then():
    """Two processes opening a new file at once: the pragma can meet a lock without waiting on the busy timeout."""
    from semrel.review import store

    class Opening:
        def __init__(self, *errors: str):
            self.errors, self.tries = list(errors), 0

        def execute(self, sql: str) -> None:
            self.tries += 1
            if self.errors:
                raise sqlite3.OperationalError(self.errors.pop(0))

    locked = Opening("database is locked", "database is locked")
    store._wal(locked)
    assert locked.tries == 3
    failing = Opening("disk I/O error")
    with pytest.raises(sqlite3.OperationalError, match="disk I/O error"):
        store._wal(failing)
    assert failing.tries == 1


def test_a_database_locked_while_it_is_opened_is_not_called_another_file(tmp_path, monkeypatch):
    from semrel.review import store

    conn, _ = queued_db(tmp_path)
    conn.execute("PRAGMA journal_mode = DELETE")  # a rollback journal: a writer's exclusive lock keeps readers out
    conn.close()
    db = tmp_path / "r.sqlite"
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("INSERT INTO reviewers (name, created) VALUES ('zoe', 0)")
    try:
        monkeypatch.setattr(store, "BUSY_TIMEOUT_MS", 50)
        for opening in (store.open_db, store.open_db_read_only):
            with pytest.raises(SemrelError) as caught:
                opening(db)
            assert "database is locked" in str(caught.value) and "not a review database" not in str(caught.value)
    finally:
        holder.execute("ROLLBACK")


def damaged_db(tmp_path: Path) -> Path:
    """A review database whose tasks table is overwritten, as a copy cut short or a bad disk leaves it: its
    header and schema read well, so it opens, and it fails when a statement reads the tasks."""
    conn, _ = queued_db(tmp_path)
    Session(conn, "alice").grade(Session(conn, "alice").next_task(), 1)
    conn.execute("PRAGMA journal_mode = DELETE")
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'tasks'").fetchone()[0]
    conn.close()
    db = tmp_path / "r.sqlite"
    with open(db, "r+b") as f:
        f.seek((root - 1) * size)
        f.write(b"\xff" * size)
    return db


def test_a_database_damaged_past_its_schema_is_one_line_for_every_command(tmp_path, cli):
    db = damaged_db(tmp_path)
    labels = tmp_path / "pool" / "labels.qrels"
    for args in (["review", "stats", "--db", db], ["review", "export", "--db", db, "--labels", labels, "-o", tmp_path / "x.qrels"],
                 ["review", "start", "--db", db, "--reviewer", "bob", "--no-highlight"]):
        result = cli(*map(str, args), input="1q")
        assert_one_error(result, "r.sqlite", "damaged", "malformed")
    assert not (tmp_path / "x.qrels").exists()


def test_the_end_of_piped_input_at_the_note_prompt_quits_as_q_does(tmp_path, cli):
    pool = write_pool(tmp_path / "pool")
    db = str(tmp_path / "r.sqlite")
    result = start(cli, pool, db, "alice", "1m")  # the input ends while the note is typed (or Ctrl-C there)
    assert result.exit_code == 0, result.output
    assert "saved; 1 decision this session" in result.stdout and "Aborted" not in result.output
    assert [kind for _, kind, _ in live(db)] == ["grade"]


def test_revising_an_earlier_decision_replaces_it_and_keeps_the_history(tmp_path):
    conn, _ = queued_db(tmp_path)
    session = Session(conn, "alice")
    first = session.next_task()
    session.grade(first, 1)
    second = session.next_task()
    session.skip(second)
    assert [(d.task.id, d.grade) for d in session.recent()] == [(second.id, None), (first.id, 1)]
    session.revise(first, 0)
    session.revise(second, 1)
    assert [(d.task.id, d.grade) for d in session.recent()] == [(second.id, 1), (first.id, 0)]
    assert session.progress().mine == 2 and session.next_task().position == 2
    kinds = [tuple(r) for r in conn.execute("SELECT kind, grade FROM decisions ORDER BY id")]
    assert kinds == [("grade", 1), ("skip", None), ("undo", None), ("grade", 0), ("undo", None), ("grade", 1)]
    with pytest.raises(SemrelError, match="outside 0..1"):
        session.revise(first, 2)
    assert session.task(first.id) == first and session.following(first, 2) == [second, session.task(session.next_task().id)]
    assert session.revise(first, None)  # back to a skip: recorded as one, not as a grade of no value an export would write
    assert [tuple(r) for r in conn.execute("SELECT kind, grade FROM live WHERE task_id = ?", (first.id,))] == [("skip", None)]


def test_a_queue_from_probability_labels_puts_the_pairs_nearest_the_cut_on_p_first(tmp_path):
    """`semrel label` records the probability rule as thresholds on p; the review queue orders by |p - cut|."""
    from semrel.judging import labels
    from semrel.review.engine import create_queue
    from semrel.review.store import open_db
    from semrel.review.tasks import load_tasks, parse_labelling

    pool = write_pool(tmp_path / "pool")
    rows = [json.loads(line) for line in Path(pool["judgments"]).read_text().splitlines()]
    p = {(r["query_id"], r["chunk_id"]): round(1 - r["R"], 3) for r in rows}  # p unrelated to R's order
    Path(pool["judgments"]).write_text("".join(json.dumps({**r, "p": p[r["query_id"], r["chunk_id"]]}) + "\n" for r in rows))
    labels.label(pool["judgments"], pool["labels"])
    labelling = parse_labelling(None, None, pool["labels"])
    assert labelling.on == "p" and labelling.thresholds == (labels.CUT,)
    conn = open_db(tmp_path / "r.sqlite")
    create_queue(conn, load_tasks(pool["judgments"], pool["labels"], pool["corpus"], pool["golden"], labelling), labelling,
                 QueueSettings(random_share=0.0))
    queued = [(r["query_id"], r["chunk_id"]) for r in conn.execute("SELECT query_id, chunk_id FROM tasks ORDER BY position")]
    distance = [abs(p[pair] - labels.CUT) for pair in queued]
    assert distance == sorted(distance)
    assert [r["proposed"] for r in conn.execute("SELECT proposed FROM tasks ORDER BY position")] == \
        [int(p[pair] >= labels.CUT) for pair in queued]
    stored = [r["probability"] for r in conn.execute("SELECT probability FROM tasks ORDER BY position")]
    assert stored == [p[pair] for pair in queued]  # kept, so both review screens show the p the queue is ordered by


def test_a_queue_from_a_refit_of_every_coefficient_orders_by_the_refitted_p(tmp_path):
    """`calibrate --fit features` labels by p recomputed from the features: the queue orders by that p, keeps it as the
    probability both review screens show, and the database remembers the refit."""
    from semrel.judging import labels
    from semrel.review.engine import create_queue, labelling_of
    from semrel.review.store import open_db
    from semrel.review.tasks import load_tasks, parse_labelling

    pool = write_pool(tmp_path / "pool")
    rows = [json.loads(line) for line in Path(pool["judgments"]).read_text().splitlines()]
    rng = np.random.default_rng(1)
    x = drawn_features(rng, len(rows))
    Path(pool["judgments"]).write_text("".join(
        json.dumps({**r, "p": float(labels.probability(x[i], True)[0]),
                    "features": {**dict(zip(labels.FEATURES, x[i].tolist())), "with_gold": 1.0}}) + "\n" for i, r in enumerate(rows)))
    refit = (1.0, -2.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0)
    (tmp_path / "cal.json").write_text(json.dumps(labels.ProbabilityRule(cut=0.4, calibration={"fit": "features"}, refit=refit).params()))
    with pytest.warns(UserWarning, match=r"^1 of 3 queries has no pair labelled relevant \(e\.g\. 'q3'\)"):
        labels.label(pool["judgments"], pool["labels"], calibration=tmp_path / "cal.json")
    labelling = parse_labelling(None, str(tmp_path / "cal.json"))
    conn = open_db(tmp_path / "r.sqlite")
    create_queue(conn, load_tasks(pool["judgments"], pool["labels"], pool["corpus"], pool["golden"], labelling), labelling,
                 QueueSettings(random_share=0.0))
    q = dict(zip([(r["query_id"], r["chunk_id"]) for r in rows], labels.probability(x, True, refit).tolist()))
    queued = [(r["query_id"], r["chunk_id"]) for r in conn.execute("SELECT query_id, chunk_id FROM tasks ORDER BY position")]
    distance = [abs(q[pair] - 0.4) for pair in queued]
    judge_p = dict(zip([(r["query_id"], r["chunk_id"]) for r in rows], labels.probability(x, True).tolist()))
    assert distance == sorted(distance) and queued != sorted(queued, key=lambda pair: abs(judge_p[pair] - 0.4))  # not the judge's order
    assert [r["probability"] for r in conn.execute("SELECT probability FROM tasks ORDER BY position")] == [q[pair] for pair in queued]
    assert [r["proposed"] for r in conn.execute("SELECT proposed FROM tasks ORDER BY position")] == [int(q[pair] >= 0.4) for pair in queued]
    assert labelling_of(conn) == labelling


def test_a_schema_1_database_is_read_as_it_is_and_upgraded_by_a_session_keeping_every_decision(tmp_path, cli):
    pool, db, _, _ = reviewed_by_two(tmp_path)
    conn = sqlite3.connect(db)
    conn.execute("ALTER TABLE tasks DROP COLUMN probability")  # as semrel wrote it before tasks kept the judge's p
    conn.execute("PRAGMA user_version = 1")
    conn.execute("ALTER TABLE decisions DROP COLUMN simulated")  # as semrel wrote it before it marked a simulation's decisions
    conn.execute("ALTER TABLE tasks DROP COLUMN withdrawn")  # and before it withdrew pairs the judgments no longer list
    decisions = conn.execute("SELECT * FROM decisions ORDER BY id").fetchall()
    conn.close()

    def version_and_columns():
        with contextlib.closing(sqlite3.connect(db)) as c:
            return c.execute("PRAGMA user_version").fetchone()[0], [r[1] for r in c.execute("PRAGMA table_info(tasks)")]

    assert cli("review", "stats", "--db", db, "--format", "json").exit_code == 0
    exported = cli("review", "export", "--db", db, "--labels", pool["labels"], "-o", str(tmp_path / "out.qrels"))
    assert exported.exit_code == 0, exported.output
    version, columns = version_and_columns()
    assert version == 1 and "probability" not in columns  # export and stats read it as it is: nothing converted

    session = cli("review", "start", "--db", db, "--reviewer", "carol", "--no-highlight", input="q")
    assert session.exit_code == 0, session.output
    version, columns = version_and_columns()
    assert version == SCHEMA_VERSION and "probability" in columns
    with contextlib.closing(sqlite3.connect(db)) as c:
        columns = [r[1] for r in c.execute("PRAGMA table_info(decisions)")]
        assert c.execute(f"SELECT {', '.join(columns[:-1])} FROM decisions ORDER BY id").fetchall() == decisions
        assert columns[-1] == "simulated" and c.execute("SELECT count(simulated) FROM decisions").fetchone()[0] == 0  # none made up
        assert c.execute("SELECT count(*) FROM tasks WHERE probability IS NOT NULL").fetchone()[0] == 0  # no p was judged then
    # alice's grades carry no seconds, and nothing said whose they were: taken for a simulation's, as semrel told them then
    again = cli("review", "start", "--db", db, "--reviewer", "alice", "--no-highlight", input="q")
    assert "4 of alice's decisions here were made by `review simulate`" in again.stderr, again.output


def test_the_text_hash_is_the_one_every_database_holds():
    """Decisions name the texts they were made on by this hash: computed otherwise (ASCII escapes, another layout), every
    decision of an existing database would turn stale, left out of every export."""
    assert text_hash("Où est la roue ?", ["À gauche.", "Derrière"], "La roue arrière — voir §2.") == (
        "0c9657c208df5e62f71ca254217875eb389f3fb636f335656fef2f64f722d843")
    assert text_hash("q", [], "c") == "6d772d5ba97885b6d48c435108d07353ca5f6e6215e21b9ad223cbc1a209d704"
    assert text_hash("q", ["a"], "c") != text_hash("q", [], "ac") != text_hash("qa", [], "c")


def test_judgments_with_no_pair_or_a_query_the_golden_set_lacks_are_one_error_naming_the_file(tmp_path):
    pool = write_pool(tmp_path / "pool")
    labelling = Labelling("R", (0.5,))
    judged = Path(pool["judgments"]).read_text()
    Path(pool["judgments"]).write_text("")
    with pytest.raises(SemrelError, match=r"judgments.jsonl: no judged pairs to review$"):
        load_tasks(pool["judgments"], pool["labels"], pool["corpus"], pool["golden"], labelling)
    Path(pool["judgments"]).write_text(judged + judged.splitlines(keepends=True)[0].replace('"q1"', '"q9"'))
    with pytest.raises(SemrelError, match=r"judgments.jsonl: query 'q9' is not in .*golden.jsonl$"):
        load_tasks(pool["judgments"], pool["labels"], pool["corpus"], pool["golden"], labelling)


def test_a_calibrated_probability_rule_queues_on_its_cuts_moved_to_the_judges_p():
    """p' = sigmoid(2 logit(p) + 1) >= 0.5 is p >= sigmoid(-1 / 2): the queue grades the judge's own p by that cut."""
    from semrel.judging.labels import ProbabilityRule
    from semrel.review.tasks import labelling_of_rule

    labelling = labelling_of_rule(ProbabilityRule(cut=0.5, slope=2.0, shift=1.0))
    assert (labelling.on, labelling.refit) == ("p", None)
    assert labelling.thresholds == pytest.approx((1 / (1 + np.exp(0.5)),))


def test_the_judge_line_leads_with_p_where_the_judge_computed_it():
    task = Task("q1", "c1", "query", ("answer",), "chunk", P=0.61, R=0.72, F=0.66, proposed=1, distance=0.1, p=0.734)
    line = judge_line(task, Labelling("p", (0.4,)))
    assert line == "judge: p 0.734  P 0.610  R 0.720  F 0.660 -> proposed grade 1 (p thresholds 0.4)"
    without = dataclasses.replace(task, p=None)
    assert judge_line(without, Labelling("R", (0.5, 0.7))).startswith("judge: P 0.610  R 0.720")
    refitted = judge_line(task, Labelling("p", (0.4, 0.6), refit=(0.1, 2.0, -1.0)))
    assert refitted.endswith("-> proposed grade 1 (p thresholds 0.4, 0.6, p refitted on every coefficient)")


def test_the_queue_keeps_the_judged_chunks_texts_not_the_corpus(tmp_path):
    """A review of a few pairs over a large corpus: only the judged chunks' texts are held (every text was)."""
    import tracemalloc

    from semrel.review.tasks import load_tasks

    def peak(pool):
        tracemalloc.start()
        tasks = load_tasks(pool["judgments"], pool["labels"], pool["corpus"], pool["golden"], Labelling("R", (0.5,)))
        most = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        assert len(tasks) == len(R_SCORES) and {t.chunk for t in tasks if t.chunk_id == "c2"} == {
            "Patch the inner tube with glue and a rubber patch, then let it dry."}
        return most

    small, large = write_pool(tmp_path / "small"), write_pool(tmp_path / "large")
    with open(large["corpus"], "a") as corpus:  # ~25 MB of texts no pair judges
        corpus.writelines(json.dumps({"_id": f"x{i}", "text": f"unjudged filler {i} " * 60}) + "\n" for i in range(20_000))
    peak(small)  # the imports
    assert peak(large) < peak(small) + 4_000_000  # the corpus's ids while it streams by (25 MB more before)


def test_stats_say_why_kappa_is_nan_where_reviewer_and_judge_both_give_one_grade(tmp_path, cli):
    """kappa showed nan, with no word, for a reviewer who agreed with the judge on pairs that were all 0."""
    conn, _ = queued_db(tmp_path, QueueSettings(order="random"))
    session = Session(conn, "alice")
    graded = 0
    while graded < 3 and (task := session.next_task()) is not None:
        if task.proposed == 0:
            session.grade(task, 0)
            graded += 1
        else:
            session.skip(task)
    result = cli("review", "stats", "--db", tmp_path / "r.sqlite")
    assert result.exit_code == 0 and graded == 3, result.output
    assert ("kappa is undefined (nan) for alice vs judge: both give all 3 compared pairs grade 0, so they agree on every pair, "
            "but chance alone would agree as much") in result.stdout.splitlines()


def test_resuming_on_other_labels_or_fewer_pairs_says_so_and_export_refuses_another_scale(tmp_path, cli):
    """Labels of another rule silently replaced the queue's proposed grades (agreement with the judge then measured
    against them), a pair dropped from the files stayed queued without a word, and graded labels (0-3) were merged
    with a two-grade review's 1s."""
    pool = write_pool(tmp_path / "pool")
    db = str(tmp_path / "r.sqlite")
    assert start(cli, pool, db, "alice", "yq").exit_code == 0
    lines = Path(pool["labels"]).read_text().splitlines()
    q, _, c, grade = lines[0].split()
    Path(pool["labels"]).write_text("\n".join([f"{q} 0 {c} {1 - int(grade)}", *lines[1:]]) + "\n")  # another rule's grade
    resumed = start(cli, pool, db, "alice", "q")
    assert resumed.exit_code == 0 and "1 pair has another proposed grade in these labels than the queue held" in resumed.stderr
    judged = Path(pool["judgments"]).read_text().splitlines()
    Path(pool["judgments"]).write_text("\n".join(judged[1:]) + "\n")
    Path(pool["labels"]).write_text("\n".join(lines[1:]) + "\n")
    fewer = start(cli, pool, db, "alice", "q")
    assert fewer.exit_code == 0 and "1 decided pair of this queue is no longer judged in these files" in fewer.stderr
    graded = tmp_path / "graded.qrels"
    graded.write_text("".join(f"{a} 0 {b} 3\n" for a, _, b, _ in map(str.split, lines)))
    assert_one_error(cli("review", "export", "--db", db, "--labels", graded, "-o", tmp_path / "out.qrels"),
                     "graded.qrels grade up to 3, and the review in", "grades 0..1")


def test_ctrl_z_in_piped_keys_is_an_unknown_key_and_stops_nothing(tmp_path, cli):
    """Only Ctrl-Z pressed at a terminal stops a review (until fg): the byte 0x1a in piped keys is data, and stopping
    there would stop the script's whole pipeline."""
    pool = write_pool(tmp_path / "pool")
    db = str(tmp_path / "r.sqlite")
    result = start(cli, pool, db, "dora", "\x1a1q")
    assert result.exit_code == 0, result.output
    assert "unknown key '\\x1a'" in result.stdout
    assert live(db) == [("q1/c1", "grade", 1)]


def test_ctrl_c_while_waiting_for_a_key_quits_and_sigterm_stops_the_command(monkeypatch):
    """Ctrl-C at the key prompt is a person quitting (everything decided is saved); SIGTERM or SIGHUP, which arrive as the same
    KeyboardInterrupt, stop the command as an interrupted one (exit 130), not as a person quitting."""
    import semrel.cli.base as base

    def interrupted(size):
        raise KeyboardInterrupt

    monkeypatch.setattr(base, "keys_typed", lambda: False)
    monkeypatch.setattr(sys, "stdin", dataclasses.make_dataclass("Keys", [("read", object)])(interrupted))
    monkeypatch.setattr(base, "terminated", lambda: False)
    assert base.read_key() == ""
    monkeypatch.setattr(base, "terminated", lambda: True)
    with pytest.raises(KeyboardInterrupt):
        base.read_key()


def test_resuming_with_other_thresholds_says_the_queue_keeps_its_own(tmp_path):
    """A queue's proposed grades and order come from the labelling it was built with: other thresholds given on a resume
    are not taken, and that is said rather than silently ignored."""
    from semrel.review.engine import QueueRequest, join_queue

    pool = write_pool(tmp_path / "pool")
    files = {k: pool[k] for k in ("judgments", "labels", "corpus", "golden")}
    db = str(tmp_path / "r.sqlite")
    heard: list[str] = []
    join_queue(db, QueueRequest(**files, on="R", thresholds="0.5"), heard.append).close()
    join_queue(db, QueueRequest(**files, on="R", thresholds="0.5"), heard.append).close()
    assert heard == []
    with contextlib.closing(join_queue(db, QueueRequest(**files, on="R", thresholds="0.7"), heard.append)) as conn:
        assert heard == ["this queue was built with --on R --thresholds 0.5; it keeps them"]
        assert json.loads(conn.execute("SELECT value FROM meta WHERE key = 'thresholds'").fetchone()[0]) == [0.5]
    heard.clear()  # resumed without the files: the same is said (it said nothing), and nothing when they are the queue's own
    for asked in ({"thresholds": "0.7"}, {"on": "P"}, {"on": "R", "thresholds": "0.5"}, {"on": "R"}):
        join_queue(db, QueueRequest(**asked), heard.append).close()
    assert heard == ["this queue was built with --on R --thresholds 0.5; it keeps them"] * 2


@pytest.mark.parametrize("options, message", [
    (["--blind", "--model", "x"], "--model chooses the encoder of the highlights, which --blind leaves out"),
    (["--no-highlight", "--layer", "3"], "--layer chooses the encoder of the highlights, which --no-highlight leaves out"),
])
def test_a_highlight_encoder_where_nothing_is_highlighted_is_refused(tmp_path, monkeypatch, options, message):
    """Both were ignored in silence (`review serve` checks as start does; run here it would serve on); SEMREL_REVIEW_START_MODEL,
    a per-machine encoder, stays a default for the highlights."""
    from helpers import run

    pool = write_pool(tmp_path / "pool")
    files = ["--judgments", pool["judgments"], "--labels", pool["labels"], "--corpus", pool["corpus"], "--golden", pool["golden"]]
    refused = run("review", "start", "--db", tmp_path / "r.sqlite", "--reviewer", "alice", *files, "--thresholds", "0.5", *options)
    assert refused.exit_code == 2 and refused.stderr == f"semrel: error: {message}: give one or the other\n"
    assert not (tmp_path / "r.sqlite").exists()
    monkeypatch.setenv("SEMREL_REVIEW_START_MODEL", "x")
    quit_at_once = run("review", "start", "--db", tmp_path / "r.sqlite", "--reviewer", "alice", *files, "--thresholds", "0.5", "--blind",
                       input="q")
    assert quit_at_once.exit_code == 0, quit_at_once.output


def test_the_end_of_the_queue_counts_pairs_another_reviewer_still_holds_instead_of_calling_all_reviewed(tmp_path, cli):
    pool = write_pool(tmp_path / "pool")
    db = str(tmp_path / "reviews.sqlite")
    assert start(cli, pool, db, "carol", "q").exit_code == 0  # the queue built
    with contextlib.closing(open_db(db)) as conn:
        assert Session(conn, "bob").next_task() is not None  # bob is shown the first pair, at another terminal: his for 10 minutes
    alice = start(cli, None, db, "alice", "1" * 12)
    assert alice.exit_code == 0, alice.output
    assert len(live(db)) == 11  # bob's pair is not decided
    assert "all 12 tasks are reviewed" not in alice.stdout
    told = " ".join(alice.stdout.split())  # the terminal wraps the line
    assert "no pair is free for you now: 1 pair of the 12 is not decided yet but held by other reviewers" in told


def test_a_reviewer_who_quits_leaves_the_pair_on_screen_to_others_and_resumes_at_it_if_none_took_it(tmp_path, cli):
    """A quit pair was held from everyone for 10 minutes: the last pairs of a labelling day waited on whoever went home."""
    pool = write_pool(tmp_path / "pool")
    db = str(tmp_path / "reviews.sqlite")
    assert start(cli, pool, db, "bob", "q").exit_code == 0  # bob is shown the first pair and quits
    with contextlib.closing(open_db(db)) as conn:
        first = conn.execute("SELECT query_id || '/' || chunk_id FROM tasks WHERE position = 0").fetchone()[0]
    resumed = start(cli, None, db, "bob", "q")  # nobody took it: bob comes back to it
    assert f"query {first.split('/')[0]} " in resumed.stdout and f"chunk {first.split('/')[1]} " in resumed.stdout
    assert start(cli, None, db, "alice", "1q").exit_code == 0  # bob quit again: alice is given his pair at once
    assert live(db) == [(first, "grade", 1)]


def test_thresholds_other_than_the_rule_the_labels_manifest_records_are_warned_about(tmp_path, cli):
    pool = write_pool(tmp_path / "pool")
    assert cli("label", pool["judgments"], "--threshold", "0.6", "-o", pool["labels"]).exit_code == 0  # R >= 0.6, in its manifest
    files = ["--judgments", pool["judgments"], "--labels", pool["labels"], "--corpus", pool["corpus"], "--golden", pool["golden"]]
    other = cli("review", "start", "--db", str(tmp_path / "a.sqlite"), "--reviewer", "alice", "--no-highlight", *files,
                "--thresholds", "0.5", input="q")
    assert other.exit_code == 0, other.output
    assert (f"warning: {pool['labels']} holds labels of --on R --thresholds 0.6 (its manifest), and the queue is built on "
            "--on R --thresholds 0.5") in other.stderr
    for given in ([], ["--thresholds", "0.6"], ["--on", "R", "--thresholds", "0.6"]):  # the labels' own rule
        same = cli("review", "start", "--db", str(tmp_path / f"b{len(given)}.sqlite"), "--reviewer", "alice", "--no-highlight",
                   *files, *given, input="q")
        assert same.exit_code == 0 and "warning" not in same.stderr, (given, same.output)


def test_a_name_typed_with_spaces_around_or_doubled_is_the_same_reviewer_at_the_terminal_as_on_the_page(tmp_path, cli):
    pool = write_pool(tmp_path / "pool")
    db = str(tmp_path / "reviews.sqlite")
    assert start(cli, pool, db, "alice smith", "1q").exit_code == 0
    again = start(cli, None, db, " alice  smith ", "0q")  # as the page's sign-in records it: "alice smith"
    assert again.exit_code == 0, again.output
    assert "1/12 graded" in again.stdout.splitlines()[0] and "yours 1" in again.stdout.splitlines()[0]
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT name FROM reviewers").fetchall() == [("alice smith",)]
        assert conn.execute("SELECT DISTINCT reviewer FROM decisions").fetchall() == [("alice smith",)]


def test_a_start_that_joins_a_queue_another_start_built_meanwhile_warns_of_the_options_it_keeps(tmp_path, monkeypatch):
    """Two starts of one new --db at once, with --overlap 3 and --overlap 10: the one that finishes second joins the
    first's queue, and says so as a start on an existing queue does (it served the other's queue and said nothing)."""
    from semrel.review import engine
    from semrel.review.engine import QueueRequest, join_queue
    from semrel.review.store import read_meta

    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "r.sqlite")
    files = {"judgments": pool["judgments"], "labels": pool["labels"], "corpus": pool["corpus"], "golden": pool["golden"],
             "thresholds": "0.5"}
    build = engine.create_queue

    def theirs_first(conn, *args):
        monkeypatch.setattr(engine, "create_queue", build)
        join_queue(db, QueueRequest(**files, settings=QueueSettings(overlap=3)), lambda message: None).close()
        return build(conn, *args)

    monkeypatch.setattr(engine, "create_queue", theirs_first)
    told: list[str] = []
    with contextlib.closing(join_queue(db, QueueRequest(**files, settings=QueueSettings(overlap=10)), told.append)) as conn:
        assert read_meta(conn)["overlap"] == 3
        assert conn.execute("SELECT sum(shared) FROM tasks").fetchone()[0] == 3
    assert told == ["this queue was built with --overlap 3; it keeps its order and shared pairs (a new --db builds a queue with yours)"]
