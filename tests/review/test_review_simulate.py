"""A simulated review (a labels file grading the queue), then calibration on the reviewed pairs
measured on the pairs left out: the workflow of the COVID-QA measurement, on a small pool."""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3

import pytest

from helpers import assert_one_error
from review_helpers import R_SCORES, queued_db, write_pool
from semrel.review.engine import Session
from semrel.review.simulate import decisions_by_kind, simulate_decisions
from semrel.review.store import open_db


def pool_options(pool: dict) -> list:
    """The review's files, as `review simulate` and `review start` take them."""
    return ["--judgments", pool["judgments"], "--labels", pool["labels"], "--corpus", pool["corpus"], "--golden", pool["golden"]]


def test_simulate_export_and_calibrate_on_held_out_pairs(tmp_path, write, cli):
    pool = write_pool(tmp_path / "pool")
    relevant = [("q1", "c2"), ("q2", "c3"), ("q2", "c4"), ("q3", "c4")]  # by R: all >= 0.53, the rest <= 0.48
    gold = write("gold.qrels", "".join(f"{q} 0 {c} 1\n" for q, c in relevant))
    db = str(tmp_path / "sim.sqlite")
    files = pool_options(pool)
    simulated = cli("review", "simulate", "--db", db, "--reviewer", "gold", *files, "--thresholds", "0.3",
                    "--limit", "8", "--random-share", "0.34", "--human", gold, "--unlisted-as-zero")
    assert simulated.exit_code == 0, simulated.output
    assert simulated.stderr.endswith(f"gold: graded 8 pairs from {gold}, skipped 0; agreement with the judge: "
                                     f"semrel review stats --db {db}\n"), simulated.stderr

    reviewed = tmp_path / "reviewed.qrels"
    cli("review", "export", "--db", db, "--labels", pool["labels"], "-o", str(reviewed), "--only-reviewed")
    lines = reviewed.read_text().splitlines()
    assert len(lines) == 8
    assert all(int(r) == int((q, c) in relevant) for q, _, c, r in map(str.split, lines))

    result = cli("calibrate", pool["judgments"], str(reviewed), "--test", gold,
                 "--test-unlisted-as-zero", "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    (threshold,) = report["thresholds"]
    reviewed_pairs = {(q, c) for q, _, c, _ in map(str.split, lines)}
    assert report["n"] == 8 and report["test"]["n"] == 12 - 8
    calibrated_scores = sorted(R_SCORES[p] for p in reviewed_pairs)
    assert any(a < threshold <= b for a, b in zip(calibrated_scores, calibrated_scores[1:]))
    assert report["kappa"] == pytest.approx(1.0)
    held_out = {p: int(R_SCORES[p] >= threshold) for p in R_SCORES if p not in reviewed_pairs}
    assert sum(map(sum, report["test"]["confusion"])) == 4
    assert report["test"]["percent_agreement"] == pytest.approx(
        100.0 * sum(held_out[p] == int(p in relevant) for p in held_out) / 4)


def test_a_bad_human_file_is_refused_before_the_database_is_made_or_touched(tmp_path, write, cli):
    pool = write_pool(tmp_path / "pool")
    bad = write("bad.qrels", "q1 0 c1 x\n")
    files = pool_options(pool)
    db = tmp_path / "sim.sqlite"
    simulate = ["review", "simulate", "--db", str(db), "--reviewer", "gold", *files, "--thresholds", "0.5"]
    assert_one_error(cli(*simulate, "--human", bad), "bad.qrels:1", "expected an integer")
    assert not db.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["bad.qrels", "pool"]
    assert cli(*simulate, "--human", write("gold.qrels", "q1 0 c2 1\n")).exit_code == 0
    kept = db.read_bytes()
    assert_one_error(cli(*simulate, "--human", bad), "bad.qrels:1")
    assert db.read_bytes() == kept and sorted(p.name for p in tmp_path.iterdir()) == ["bad.qrels", "gold.qrels", "pool", "sim.sqlite"]


def test_pairs_another_process_under_the_same_name_decided_are_not_counted(tmp_path, write, cli, monkeypatch):
    """Two simulations under one name at once share the held pair: the one that loses a pair to the
    other between taking and grading it counted it all the same (the two counts summed past the queue)."""
    from semrel.review.engine import Session

    pool = write_pool(tmp_path / "pool")
    db = str(tmp_path / "sim.sqlite")
    files = pool_options(pool)
    taken = Session.next_task

    def raced(self):  # the other process grades every second pair the moment this one takes it
        task = taken(self)
        if task is not None and task.position % 2:
            other = Session(open_db(db, create=False), self.reviewer)
            other.grade(taken(other), 0)
            other.conn.close()
        return task

    monkeypatch.setattr(Session, "next_task", raced)
    simulated = cli("review", "simulate", "--db", db, "--reviewer", "gold", *files, "--thresholds", "0.3",
                    "--limit", "8", "--human", write("gold.qrels", "q1 0 c2 1\nq2 0 c3 1\nq3 0 c4 1\n"), "--unlisted-as-zero")
    assert simulated.exit_code == 0, simulated.output
    assert "graded 4 pairs" in simulated.stderr and "skipped 0" in simulated.stderr, simulated.stderr


def test_a_simulation_and_a_person_never_share_a_reviewer_name(tmp_path, write, cli):
    """simulate --reviewer ann recorded its grades as ann's beside her own (stats and export could not tell them apart),
    and ann's next start said every pair was reviewed, with no word of why."""
    files = [*pool_options(write_pool(tmp_path / "pool")), "--thresholds", "0.5"]
    db = str(tmp_path / "r.sqlite")
    by_hand = cli("review", "start", "--db", db, "--reviewer", "ann", "--no-highlight", *files, input="yq")
    assert by_hand.exit_code == 0, by_hand.output
    gold = write("gold.qrels", "q1 0 c2 1\n")
    assert_one_error(cli("review", "simulate", "--db", db, "--reviewer", "ann", "--human", gold, "--unlisted-as-zero"),
                     "r.sqlite: ann has made 1 decision here by hand; a simulation would add its grades under that name")
    assert cli("review", "simulate", "--db", db, "--reviewer", "gold", "--human", gold, "--unlisted-as-zero").exit_code == 0
    again = cli("review", "start", "--db", db, "--reviewer", "gold", "--no-highlight", input="q")
    assert again.exit_code == 0 and "of gold's decisions here were made by `review simulate`" in again.stderr


def test_a_simulation_is_refused_under_the_name_of_a_person_who_has_a_pair_on_screen(tmp_path, write, cli):
    """Its check saw only decisions made by hand: ann signed in with none made yet, and the simulation graded the pair on her
    screen and the rest of the queue under her name (hers refused as decided already), one reviewer in stats and export."""
    conn, _ = queued_db(tmp_path)
    db, gold = str(tmp_path / "r.sqlite"), write("gold.qrels", "q1 0 c2 1\n")
    with contextlib.closing(conn):
        assert Session(conn, "ann").next_task() is not None  # ann is shown her first pair, at a terminal or the page
        assert_one_error(cli("review", "simulate", "--db", db, "--reviewer", "ann", "--human", gold, "--unlisted-as-zero"),
                         "r.sqlite: ann has a pair on screen here now (a person reviewing under that name, at a terminal or the "
                         "page); a simulation would grade it")
        assert conn.execute("SELECT count(*) FROM decisions").fetchone()[0] == 0


def test_piped_keys_record_no_time_and_their_decisions_stay_a_persons(tmp_path, write, cli, monkeypatch):
    """Piped keys were timed by the microseconds between two reads: stats showed a median of 0.0 s and millions of
    decisions per hour. They record no time now, and are still a person's, not taken for a simulation's (which carry
    none either): a simulation under that name is refused and her next start does not call them simulated."""
    from semrel.cli import review_terminal

    files = [*pool_options(write_pool(tmp_path / "pool")), "--thresholds", "0.5"]
    db = str(tmp_path / "r.sqlite")
    piped = cli("review", "start", "--db", db, "--reviewer", "ann", "--no-highlight", *files, input="10sq")
    assert piped.exit_code == 0, piped.output
    assert "this session 2 (-)" in piped.output and "/h)" not in piped.output  # the header's pace was thousands an hour
    table = cli("review", "stats", "--db", db, "--resamples", "20").stdout
    assert next(line.split() for line in table.splitlines() if line.startswith("ann ")) == ["ann", "2", "1", "0", "0", "0", "0", "-", "-"]
    with contextlib.closing(sqlite3.connect(db)) as conn:
        assert conn.execute("SELECT kind, seconds, simulated FROM decisions ORDER BY id").fetchall() == [
            ("grade", None, 0), ("grade", None, 0), ("skip", None, 0)]
    gold = write("gold.qrels", "q1 0 c2 1\n")
    assert_one_error(cli("review", "simulate", "--db", db, "--reviewer", "ann", "--human", gold, "--unlisted-as-zero"),
                     "r.sqlite: ann has made 3 decisions here by hand; a simulation would add its grades under that name")
    again = cli("review", "start", "--db", db, "--reviewer", "ann", "--no-highlight", input="q")
    assert again.exit_code == 0 and "review simulate" not in again.stderr, again.stderr

    keys = iter("1q")  # typed at a terminal: timed
    monkeypatch.setattr(review_terminal, "keys_typed", lambda: True)
    monkeypatch.setattr(review_terminal, "read_key", lambda: next(keys))
    assert cli("review", "start", "--db", db, "--reviewer", "ann", "--no-highlight").exit_code == 0
    with contextlib.closing(sqlite3.connect(db)) as conn:
        seconds, simulated = conn.execute("SELECT seconds, simulated FROM decisions ORDER BY id DESC LIMIT 1").fetchone()
    assert seconds is not None and seconds >= 0 and simulated == 0


@pytest.mark.parametrize("unlisted_as_zero", [False, True])
def test_simulated_grades_are_clipped_to_the_scale_and_unlisted_pairs_skipped_or_graded_zero(tmp_path, unlisted_as_zero):
    """A human file's -1 is a 0 and its 3 the top grade (1) of a binary queue; a pair it does not list is skipped, or with
    unlisted_as_zero graded 0 where its query is listed; a query it does not list is skipped either way."""
    conn, _ = queued_db(tmp_path)
    session = Session(conn, "gold")
    graded, skipped = simulate_decisions(session, {"q1": {"c1": -1, "c2": 3}, "q2": {"c3": 1}}, unlisted_as_zero)
    decided = {f"{q}/{c}": (kind, grade, simulated) for q, c, kind, grade, simulated in conn.execute(
        "SELECT t.query_id, t.chunk_id, l.kind, l.grade, l.simulated FROM live l JOIN tasks t ON t.id = l.task_id")}
    unlisted = ("grade", 0, 1) if unlisted_as_zero else ("skip", None, 1)
    assert decided == {
        "q1/c1": ("grade", 0, 1), "q1/c2": ("grade", 1, 1), "q1/c3": unlisted, "q1/c4": unlisted,
        "q2/c1": unlisted, "q2/c2": unlisted, "q2/c3": ("grade", 1, 1), "q2/c4": unlisted,
        "q3/c1": ("skip", None, 1), "q3/c2": ("skip", None, 1), "q3/c3": ("skip", None, 1), "q3/c4": ("skip", None, 1),
    }
    assert (graded, skipped) == ((8, 4) if unlisted_as_zero else (3, 9))
    assert decisions_by_kind(session) == (0, 12)


def test_a_persons_decisions_are_their_grades_and_skips_undone_ones_too_not_flags_notes_or_undos(tmp_path):
    """What `review simulate` counts in its refusal ("ann has made N decisions here by hand")."""
    conn, _ = queued_db(tmp_path)
    ann = Session(conn, "ann")
    task = ann.next_task()
    ann.flag(task)
    ann.note(task, "odd chunk")
    ann.grade(task, 1)
    ann.undo()
    ann.skip(ann.next_task())
    assert decisions_by_kind(ann) == (2, 0)


def test_binary_labels_simulated_on_a_graded_queue_are_warned_about(tmp_path, write, cli):
    """Gold chunks (grade 1) on a queue graded 0-2: review stats counted each relevant pair the judge graded 2 as a
    disagreement, with no word."""
    pool = write_pool(tmp_path / "pool")
    gold = write("gold.qrels", "q1 0 c2 1\nq2 0 c3 1\n")
    for thresholds, warned in (("0.3,0.5", True), ("0.3", False)):
        db = str(tmp_path / f"sim{len(thresholds)}.sqlite")
        result = cli("review", "simulate", "--db", db, "--reviewer", "gold", *pool_options(pool), "--thresholds", thresholds,
                     "--limit", "4", "--human", gold, "--unlisted-as-zero")
        assert result.exit_code == 0, result.output
        assert ("the labels simulated grade up to 1 and the queue's labels up to 2: review stats compares grades as they "
                "are" in result.stderr) is warned, result.stderr


def test_a_simulation_says_how_many_pairs_it_passed_over_because_people_hold_them(tmp_path, write, cli):
    files = [*pool_options(write_pool(tmp_path / "pool")), "--thresholds", "0.5"]
    db = str(tmp_path / "r.sqlite")
    assert cli("review", "start", "--db", db, "--reviewer", "ann", "--no-highlight", *files, input="q").exit_code == 0
    with contextlib.closing(open_db(db)) as conn:
        assert Session(conn, "ann").next_task() is not None  # ann holds one, shown at her terminal
    gold = write("gold.qrels", "q1 0 c2 1\n")
    simulated = cli("review", "simulate", "--db", db, "--reviewer", "gold", "--human", gold, "--unlisted-as-zero")
    assert simulated.exit_code == 0, simulated.output
    counts = re.search(r"gold: graded (\d+) pairs? from .*, skipped (\d+);", simulated.stderr)
    assert int(counts.group(1)) + int(counts.group(2)) == 11  # of 12: ann's pair was passed over
    assert ("warning: gold: no pair is free for you now: 1 pair of the 12 is not decided yet but held by other reviewers"
            in simulated.stderr)


@pytest.mark.parametrize("limit,said", [(3, True), (7, True), (8, False)])
def test_a_query_sample_limit_that_queues_fewer_than_two_whole_queries_is_said_when_the_queue_is_built(tmp_path, write, cli, limit,
                                                                                                      said):
    """Queries of 4 pairs: --limit 3 queues none whole, 7 one; estimate then refused only after the review."""
    files = [*pool_options(write_pool(tmp_path / "pool")), "--thresholds", "0.5"]
    gold = write("gold.qrels", "q1 0 c2 1\nq2 0 c3 1\nq3 0 c4 1\n")  # every query: a file grading no queued pair is refused
    result = cli("review", "simulate", "--db", str(tmp_path / "r.sqlite"), "--reviewer", "gold", "--human", gold, "--unlisted-as-zero",
                 *files, "--order", "query-sample", "--limit", str(limit))
    assert result.exit_code == 0, result.output
    warned = [line for line in result.stderr.splitlines() if "order query-sample samples only those" in line]
    assert bool(warned) == said, result.stderr
    if said:
        assert warned[0] == (f"semrel: warning: --limit {limit} queues {'0 queries' if limit == 3 else '1 query'} whole, and order "
                             "query-sample samples only those: `semrel estimate` needs 2 or more; build the queue with a larger "
                             "--limit (a new --db)")
