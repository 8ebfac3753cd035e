"""Exporting reviewed qrels: human grades override derived ones, conflicts settled by rule."""

from __future__ import annotations

import contextlib
import errno
import gc
import json
import os
import signal
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from review_helpers import queued_db, reviewed_by_two, write_pool
from semrel.errors import SemrelError, UsageError, ValidationError
from semrel.formats import read_qrels
from semrel.formats.files import file_digest, write_error
from semrel.formats.manifest import read_manifest
from semrel.formats.trec import read_judgment_groups
from semrel.review import adjudicate as adjudicate_module
from semrel.review import stats as stats_module
from semrel.review.adjudicate import Stale, adjudicate, export_reviewed, reviewed_labels, reviewed_sample, settle, stale_decisions
from semrel.review.engine import QueueSettings, Session
from semrel.review.stats import judge_label, review_stats
from semrel.review.store import open_db

GENUINE_SIGNAL = signal.signal  # taken when this module is collected, before any test has run

def test_settle_rules():
    assert settle({"a": 2, "b": 2, "c": 1}, "majority") == 2
    assert settle({"a": 2, "b": 1}, "majority") == 1  # a tie goes to the lowest tied grade
    assert settle({"a": 2, "b": 1}, "a") == 2
    assert settle({"b": 1, "c": 1, "d": 0}, "a") == 1  # the named reviewer did not grade it: majority


def test_strict_lists_conflicts_and_unknown_reviewers_are_refused():
    by_pair = {("q1", "c1"): {"a": 1, "b": 0}, ("q1", "c2"): {"a": 1, "b": 1}}
    with pytest.raises(ValidationError, match=r"1 reviewed pairs have conflicting grades: q1/c1: a=1, b=0"):
        adjudicate(by_pair, "strict", {"a", "b"})
    assert adjudicate({("q1", "c2"): {"a": 1, "b": 1}}, "strict", {"a", "b"}) == {("q1", "c2"): 1}
    with pytest.raises(UsageError, match="not majority, strict or a reviewer"):
        adjudicate(by_pair, "zed", {"a", "b"})


def test_strict_lists_the_first_five_conflicts_and_counts_the_rest():
    by_pair = {("q", f"c{i}"): {"a": 1, "b": 0} for i in range(7)} | {("q", "c7"): {"a": 1, "b": 1}}
    listed = "; ".join(f"q/c{i}: a=1, b=0" for i in range(5))
    with pytest.raises(ValidationError, match=rf"^7 reviewed pairs have conflicting grades: {listed} and 2 more; settle"):
        adjudicate(by_pair, "strict", {"a", "b"})
    with pytest.raises(ValidationError, match=rf": {listed}; settle"):
        adjudicate({pair: grades for pair, grades in by_pair.items() if pair[1] not in ("c5", "c6")}, "strict", {"a", "b"})


def test_export_overrides_and_writes_sources(tmp_path):
    pool, db, pairs, extra = reviewed_by_two(tmp_path)
    out = tmp_path / "reviewed.qrels"
    counts = export_reviewed(db, pool["labels"], out, "majority")
    assert counts == {"review": 3, "adjudicated:majority": 1, "judge": 8}
    labels = read_qrels(out).to_dict()
    assert labels[pairs[1].query_id][pairs[1].chunk_id] == 0  # 1 vs 0: lowest tied grade
    assert labels[extra.query_id][extra.chunk_id] == 1 - extra.proposed
    sources = {(r["query_id"], r["chunk_id"]): r for r in map(json.loads, open(f"{out}.sources.jsonl"))}
    assert sources[pairs[1].query_id, pairs[1].chunk_id]["reviewers"] == {"alice": 1, "bob": 0}
    assert sources[extra.query_id, extra.chunk_id]["judge"] == extra.proposed

    by_bob = export_reviewed(db, pool["labels"], out, "bob")
    assert by_bob["adjudicated:bob"] == 1
    assert read_qrels(out).to_dict()[pairs[1].query_id][pairs[1].chunk_id] == 0
    export_reviewed(db, pool["labels"], out, "alice")
    assert read_qrels(out).to_dict()[pairs[1].query_id][pairs[1].chunk_id] == 1
    # a name as a terminal or a keyboard gives it settles by that reviewer, as `review start --reviewer " bob"` records bob
    for typed in (" bob", "bob  ", " alice"):
        export_reviewed(db, pool["labels"], out, typed)
        assert read_qrels(out).to_dict()[pairs[1].query_id][pairs[1].chunk_id] == (0 if "bob" in typed else 1)
    assert reviewed_sample(db, " alice ").grades == reviewed_sample(db, "alice").grades


def test_each_reviewers_grades_export_as_qrels_jg_that_agree_and_eval_read(tmp_path, cli):
    """--by-reviewer writes every standing grade under its reviewer (trec_eval's qrels_jg), unsettled, so `agree --groups`
    sets each reviewer against the judge; a reviewer's spaces become '_'."""
    pool, db, pairs, extra = reviewed_by_two(tmp_path)
    with contextlib.closing(open_db(db)) as conn:
        ana = Session(conn, "Ana Lopez")
        ana.grade(ana.next_task(), 1)
    out, groups = tmp_path / "reviewed.qrels", tmp_path / "by-reviewer.qrels"
    result = cli("review", "export", "--db", db, "--labels", pool["labels"], "-o", str(out), "--by-reviewer", str(groups))
    assert result.exit_code == 0, result.output
    found = {group: qrels.to_dict() for group, qrels in read_judgment_groups(groups)}
    assert set(found) == {"Ana_Lopez", "alice", "bob"}
    assert sorted((q, d, g) for q, docs in found["bob"].items() for d, g in docs.items()) == sorted(
        (t.query_id, t.chunk_id, g) for t, g in zip(pairs, (1, 0, 0)))
    assert sum(len(docs) for docs in found["alice"].values()) == 4 and found["alice"][extra.query_id][extra.chunk_id] == 1 - extra.proposed
    assert found["alice"][pairs[1].query_id][pairs[1].chunk_id] == 1  # alice's own grade, not the settled 0
    made = read_manifest(groups)
    assert made["rows"] == 8 and made["params"]["reviewers"] == ["Ana Lopez", "alice", "bob"]
    agreed = cli("agree", str(groups), pool["labels"], "--groups", "-f", "json")
    assert agreed.exit_code == 0, agreed.output
    each = json.loads(agreed.stdout)["groups"]["each"]
    stats = json.loads(cli("review", "stats", "--db", db, "--format", "json", "--resamples", "20").stdout)["agreement"]
    for reviewer, group in (("bob", "bob"), ("alice", "alice"), ("Ana Lopez", "Ana_Lopez")):  # as review stats has each against the judge
        with_judge = next(a for a in stats if a["with_judge"] and reviewer in (a["first"], a["second"]))
        assert (each[group]["n"], each[group]["kappa"]) == (with_judge["n"], with_judge["kappa"]), reviewer
    with contextlib.closing(open_db(db)) as conn:
        Session(conn, "Ana_Lopez").grade(Session(conn, "Ana_Lopez").next_task(), 0)
    clash = cli("review", "export", "--db", db, "--labels", pool["labels"], "-o", str(out), "--by-reviewer", str(groups))
    assert clash.exit_code == 1 and "reviewers 'Ana Lopez' and 'Ana_Lopez' would both be judgment group 'Ana_Lopez'" in clash.stderr
    assert read_manifest(groups)["rows"] == 8  # nothing written


def test_strict_export_is_one_line_error_and_writes_nothing(tmp_path, cli):
    pool, db, pairs, _ = reviewed_by_two(tmp_path)
    out = tmp_path / "strict.qrels"
    result = cli("review", "export", "--db", db, "--labels", pool["labels"], "-o", str(out), "--adjudicate", "strict")
    assert result.exit_code == 1
    assert f"{pairs[1].query_id}/{pairs[1].chunk_id}: alice=1, bob=0" in result.stderr
    assert result.stderr.count("\n") == 1 and not out.exists()


def test_stats_report_agreement_between_reviewers(tmp_path, cli):
    _, db, _, _ = reviewed_by_two(tmp_path)
    report = json.loads(cli("review", "stats", "--db", db, "--format", "json", "--resamples", "200").stdout)
    between = next(a for a in report["agreement"] if a["second"] == "bob")
    assert between["first"] == "alice" and between["n"] == 3
    assert between["percent_agreement"] == pytest.approx(200 / 3)
    assert between["confusion"] == [[1, 0], [1, 1]]
    assert {a["second"] for a in report["agreement"]} == {"bob", "judge"}
    table = cli("review", "stats", "--db", db, "--resamples", "200").stdout  # graded without seconds: no speed, shown as '-'
    rows = {line.split()[0]: line.split()[-2:] for line in table.splitlines()[4:6]}
    assert rows == {"alice": ["-", "-"], "bob": ["-", "-"]} and "nan" not in table


def test_stats_count_each_reviewers_standing_decisions_flags_notes_undos_stale_and_time(tmp_path):
    """alice and bob grade as in reviewed_by_two, untimed; carol flags a pair twice, notes it and grades it in 2 s, skips
    the next in 4 s and grades the third in 12 s, then undoes that grade; dan grades one in no time; " Judge " only skips."""
    pool, db, pairs, extra = reviewed_by_two(tmp_path)
    with contextlib.closing(open_db(db)) as conn:
        carol = Session(conn, "carol")
        task = carol.next_task()
        carol.flag(task)
        carol.flag(task)
        carol.note(task, "odd")
        carol.grade(task, 1, seconds=2.0)
        carol.skip(carol.next_task(), seconds=4.0)
        carol.grade(carol.next_task(), 0, seconds=12.0)
        carol.undo()
        dan = Session(conn, "dan")
        dan.grade(dan.next_task(), 1, seconds=0.0)
        namesake = Session(conn, " Judge ")
        namesake.skip(namesake.next_task())
        conn.execute("UPDATE tasks SET hash = 'new texts' WHERE id = ?", (extra.id,))  # alice's own pair: her grade is stale
    stats = review_stats(db, resamples=20)
    assert (stats.tasks, stats.reviewed, stats.judge) == (12, 3, "judge (semrel)")  # the shared pairs, graded 8 times
    counts = {r.reviewer: (r.graded, r.skipped, r.flags, r.notes, r.undos, r.stale) for r in stats.reviewers}
    assert counts == {"Judge": (0, 1, 0, 0, 0, 0), "alice": (3, 0, 0, 0, 0, 1), "bob": (3, 0, 0, 0, 0, 0),  # " Judge " trimmed
                      "carol": (1, 1, 1, 1, 1, 0), "dan": (1, 0, 0, 0, 0, 0)}  # a pair flagged twice: one flag, as the page says
    timed = {r.reviewer: (r.median_seconds, r.per_hour) for r in stats.reviewers}
    assert timed["carol"] == (4.0, 600.0)  # the undone grade's 12 s were spent: median of 2, 4, 12; 3600 / their mean 6
    assert timed["dan"][0] == 0.0 and np.isnan(timed["dan"][1]) and all(np.isnan(timed["alice"]))


def test_stats_weigh_the_judge_by_every_grade_up_to_the_highest_proposed(tmp_path):
    """A binary queue of labels graded 0-3 (a graded rule's labels queued on one threshold, which `review start` warns
    of): proposed grades of 3 beside the scale 0..1 were weighted by position among 0, 1, 3, so 3 sat one step from 1."""
    conn, _ = queued_db(tmp_path)
    with contextlib.closing(conn):
        session = Session(conn, "alice")
        mine = []
        while (task := session.next_task()) is not None:
            grade = task.position % 2
            session.grade(task, grade)
            mine.append((task.id, grade))
        proposed = [3 if i % 3 == 0 else 0 for i, _ in enumerate(mine)]  # the graded labels: 3 or 0
        conn.executemany("UPDATE tasks SET proposed = ? WHERE id = ?", [(g, i) for g, (i, _) in zip(proposed, mine)])
    (judge,) = [a.agreement for a in review_stats(tmp_path / "r.sqlite", resamples=10).agreements if a.with_judge]
    assert (judge.labels, judge.weights) == ([0, 1, 2, 3], "quadratic")
    assert judge.kappa == pytest.approx(cohen_kappa_score([g for _, g in mine], proposed, weights="quadratic", labels=[0, 1, 2, 3]))


def test_the_judge_is_named_by_the_first_label_no_reviewer_name_can_be_taken_for():
    assert judge_label(["alice"]) == "judge"
    assert judge_label(["Judge", " JUDGE (semrel) "]) == "judge (semrel 2)"


def test_labels_of_another_set_are_refused(tmp_path, cli):
    """Derived qrels that share no query with the reviewed pairs would be merged with them into one file."""
    _, db, _, _ = reviewed_by_two(tmp_path)
    other = tmp_path / "other.qrels"
    other.write_text("elsewhere 0 x#0 1\n")
    out = tmp_path / "mixed.qrels"
    result = cli("review", "export", "--db", db, "--labels", str(other), "-o", str(out))
    assert result.exit_code == 1 and "other.qrels shares no query with the pairs reviewed in" in result.stderr
    assert result.stderr.count("\n") == 1 and not out.exists()


def sources_of(out) -> dict:
    return {(r["query_id"], r["chunk_id"]): r for r in map(json.loads, open(f"{out}.sources.jsonl"))}


def test_a_named_adjudicator_is_the_source_only_where_they_graded_the_pair(tmp_path):
    """--adjudicate carol on a conflict carol did not grade is settled by majority, and says so
    (it used to say adjudicated:carol)."""
    pool, db, pairs, _ = reviewed_by_two(tmp_path)
    carol = Session(open_db(db), "carol")
    task = carol.next_task()
    assert task.id == pairs[0].id  # alice 1, bob 1
    carol.grade(task, 0)
    out = tmp_path / "carol.qrels"
    counts = export_reviewed(db, pool["labels"], out, "carol")
    sources = sources_of(out)
    mine, theirs = sources[pairs[0].query_id, pairs[0].chunk_id], sources[pairs[1].query_id, pairs[1].chunk_id]
    assert (mine["source"], mine["grade"], mine["reviewers"]) == ("adjudicated:carol", 0, {"alice": 1, "bob": 1, "carol": 0})
    assert (theirs["source"], theirs["grade"], theirs["reviewers"]) == ("adjudicated:majority", 0, {"alice": 1, "bob": 0})
    assert counts == {"review": 2, "adjudicated:carol": 1, "adjudicated:majority": 1, "judge": 8}


def test_export_says_how_many_decisions_it_left_out_because_their_texts_changed(tmp_path, cli):
    pool, db, pairs, _ = reviewed_by_two(tmp_path)
    edited = pairs[1].chunk_id  # alice and bob graded it (in every query it is queued for)
    with sqlite3.connect(db) as conn:
        grades, on_pairs = conn.execute("SELECT count(*), count(DISTINCT d.task_id) FROM decisions d JOIN tasks t"
                                        " ON t.id = d.task_id WHERE d.kind = 'grade' AND t.chunk_id = ?", (edited,)).fetchone()
    assert grades >= 2
    corpus = open(pool["corpus"]).read()

    def start(text: str):
        with open(pool["corpus"], "w") as handle:
            handle.write(text)
        return cli("review", "start", "--db", db, "--reviewer", "alice", "--no-highlight", "--judgments", pool["judgments"],
                   "--labels", pool["labels"], "--corpus", pool["corpus"], "--golden", pool["golden"], "--thresholds", "0.5",
                   input="q")

    rows = [json.loads(line) for line in corpus.splitlines()]
    assert "new texts" in start("".join(json.dumps({**r, "text": r["text"] + " "} if r["_id"] == edited else r) + "\n"
                                        for r in rows)).stderr
    out = tmp_path / "after.qrels"
    result = cli("review", "export", "--db", db, "--labels", pool["labels"], "-o", str(out))
    assert result.exit_code == 0, result.output
    warning = [line for line in result.stderr.splitlines() if "warning" in line]
    assert warning == [f"semrel: warning: left out {grades} reviewed decisions ({grades} grades) on {on_pairs} "
                       f"pair{'s' if on_pairs > 1 else ''} whose texts changed since they were made; they are kept in {db} "
                       "and count again if the texts change back (review the pairs again to label the new texts)"]
    assert sources_of(out)[pairs[1].query_id, edited]["source"] == "judge"
    assert read_manifest(out)["params"]["stale_decisions_left_out"] == grades

    start(corpus)  # the texts as they were: the decisions count again, and nothing is left out
    again = cli("review", "export", "--db", db, "--labels", pool["labels"], "-o", str(out))
    assert again.exit_code == 0 and "warning" not in again.stderr
    assert sources_of(out)[pairs[1].query_id, edited]["reviewers"] == {"alice": 1, "bob": 0}


def test_stats_count_as_stale_the_decisions_export_leaves_out(tmp_path, cli):
    """A grade taken back before the texts changed never stood: stats counted it stale beside the undo, and
    so said 2 where export left out 1."""
    pool = write_pool(tmp_path / "pool")
    db = str(tmp_path / "r.sqlite")
    files = ["--judgments", pool["judgments"], "--labels", pool["labels"], "--corpus", pool["corpus"], "--golden", pool["golden"]]
    assert cli("review", "start", "--db", db, "--reviewer", "alice", "--no-highlight", *files, "--thresholds", "0.5",
               input="1u0q").exit_code == 0
    with sqlite3.connect(db) as conn:
        (chunk_id,) = conn.execute("SELECT t.chunk_id FROM decisions d JOIN tasks t ON t.id = d.task_id LIMIT 1").fetchone()
    rows = [json.loads(line) for line in open(pool["corpus"])]
    with open(pool["corpus"], "w") as handle:
        handle.writelines(json.dumps({**r, "text": r["text"] + " (edited)"} if r["_id"] == chunk_id else r) + "\n" for r in rows)
    assert "new texts" in cli("review", "start", "--db", db, "--reviewer", "alice", "--no-highlight", *files, input="q").stderr
    out = tmp_path / "out.qrels"
    assert cli("review", "export", "--db", db, "--labels", pool["labels"], "-o", str(out)).exit_code == 0
    stats = json.loads(cli("review", "stats", "--db", db, "--format", "json").stdout)
    assert stats["reviewers"][0]["stale"] == read_manifest(out)["params"]["stale_decisions_left_out"] == 1


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="counts open files through /proc")
def test_stats_and_export_close_the_database_they_read(tmp_path):
    """The review page's Stats reads the database at every view; each read left its connection (two open
    files) to the garbage collector, which sqlite3's reference cycles make the only way it is closed."""
    from semrel.review.adjudicate import reviewed_labels
    from semrel.review.stats import review_stats

    pool, db, _, _ = reviewed_by_two(tmp_path)
    review_stats(db, resamples=10)  # what a first call opens for good (a module's files) is not the database's
    reviewed_labels(db, pool["labels"])
    gc.collect()
    gc.disable()
    try:
        before = _open_on(db)
        for _ in range(3):
            review_stats(db, resamples=10)
            reviewed_labels(db, pool["labels"])
        assert _open_on(db) == before
    finally:
        gc.enable()


def _open_on(db):
    """This process's open files on the database (and its -wal, -shm): only those, so that a file another
    thread or module opens meanwhile cannot fail the count."""
    names = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            names.append(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:  # the listing's own descriptor, closed by now
            continue
    return sorted(name for name in names if name.startswith(db))


def export_twice(tmp_path):
    """A first export (majority) in place, and what the second (alice) is to write."""
    pool, db, pairs, _ = reviewed_by_two(tmp_path)
    out = tmp_path / "out" / "reviewed.qrels"
    export_reviewed(db, pool["labels"], out, "majority")
    names = [out, f"{out}.manifest.json", f"{out}.sources.jsonl", f"{out}.sources.jsonl.manifest.json"]
    old = {str(name): open(name, "rb").read() for name in names}
    return pool, db, pairs, out, old


def test_an_interrupt_while_the_export_is_written_leaves_the_old_files_together(tmp_path, monkeypatch):
    """The qrels were written, then their sources: Ctrl-C between the two left new qrels beside old
    sources, whose manifest still vouched for them."""
    pool, db, _, out, old = export_twice(tmp_path)

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(adjudicate_module, "write_jsonl", interrupted)
    with pytest.raises(KeyboardInterrupt):
        export_reviewed(db, pool["labels"], out, "alice")
    assert {name: open(name, "rb").read() for name in old} == old
    assert sorted(os.listdir(out.parent)) == sorted(os.path.basename(name) for name in old)  # no staged file left


def test_an_interrupt_while_the_export_is_renamed_into_place_waits_for_the_whole_set(tmp_path, monkeypatch):
    pool, db, pairs, out, old = export_twice(tmp_path)
    replace, renamed = os.replace, []

    def replace_then_ctrl_c(source, target):
        replace(source, target)
        if os.path.dirname(target) == str(out.parent):  # put in place (not a temp file renamed while staged)
            renamed.append(os.path.basename(target))
            if len(renamed) == 1:  # Ctrl-C once the first file is in place: the handler the interpreter would call
                signal.getsignal(signal.SIGINT)(signal.SIGINT, None)

    monkeypatch.setattr(os, "replace", replace_then_ctrl_c)
    # Ctrl-C as Python has it, whatever ran before in this process: the test failed twice in full runs, never alone
    # (Ray, loaded by earlier tests, can leave signal.signal patched and SIGINT deferred)
    monkeypatch.setattr(signal, "signal", GENUINE_SIGNAL)
    found = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            export_reviewed(db, pool["labels"], out, "alice")
    finally:
        signal.signal(signal.SIGINT, found)
    monkeypatch.undo()
    assert renamed[-1] == "reviewed.qrels"  # the qrels last
    assert all(open(name, "rb").read() != data for name, data in old.items())  # all four are the new ones
    assert read_qrels(out).to_dict()[pairs[1].query_id][pairs[1].chunk_id] == 1  # alice's grade wins
    for name in (out, f"{out}.sources.jsonl"):
        manifest = read_manifest(name)
        assert manifest is not None and manifest["output"] == str(name) and manifest["params"]["adjudicate"] == "alice"
    assert len(os.listdir(out.parent)) == 4
    assert read_manifest(f"{out}.sources.jsonl")["params"]["qrels"] == {"path": str(out), **file_digest(out)}  # a pair


def test_the_export_keeps_the_replaced_files_permissions_and_refuses_stdout(tmp_path):
    pool, db, _, out, _ = export_twice(tmp_path)
    os.chmod(out, 0o640)
    os.chmod(f"{out}.sources.jsonl", 0o600)
    export_reviewed(db, pool["labels"], out, "alice")
    assert (os.stat(out).st_mode & 0o777, os.stat(f"{out}.sources.jsonl").st_mode & 0o777) == (0o640, 0o600)
    with pytest.raises(UsageError, match="output=.-.: the reviewed qrels are written with OUTPUT.sources.jsonl beside them"):
        export_reviewed(db, pool["labels"], "-", "alice")


def test_a_reviewer_called_judge_is_not_taken_for_the_judge_in_stats(tmp_path, cli):
    _, db, pairs, _ = reviewed_by_two(tmp_path)
    namesake = Session(open_db(db), "judge")
    task = namesake.next_task()
    assert task.id == pairs[0].id
    namesake.grade(task, 1)
    report = json.loads(cli("review", "stats", "--db", db, "--format", "json", "--resamples", "20").stdout)
    assert report["judge"] == "judge (semrel)"
    vs_judge = {a["first"]: a["n"] for a in report["agreement"] if a["with_judge"]}
    assert vs_judge == {"alice": 4, "bob": 3, "judge": 1}
    assert all(a["second"] == "judge (semrel)" for a in report["agreement"] if a["with_judge"])
    assert {(a["first"], a["second"]) for a in report["agreement"] if not a["with_judge"]} == {
        ("alice", "bob"), ("alice", "judge"), ("bob", "judge")}
    table = cli("review", "stats", "--db", db, "--resamples", "20").stdout
    assert "judge vs judge (semrel)" in table and "alice vs judge (semrel)" in table
    plain = json.loads(cli("review", "stats", "--db", str(reviewed_by_two(tmp_path / "plain")[1]), "--format", "json",
                           "--resamples", "20").stdout)
    assert plain["judge"] == "judge" and {a["second"] for a in plain["agreement"] if a["with_judge"]} == {"judge"}


def test_a_full_disk_while_the_export_is_staged_names_the_output_and_keeps_the_old_files(tmp_path, monkeypatch):
    pool, db, _, out, old = export_twice(tmp_path)

    def full(qrels, path):
        raise write_error(str(path), OSError(errno.ENOSPC, "No space left on device"), False)

    monkeypatch.setattr(adjudicate_module, "write_qrels", full)
    with pytest.raises(SemrelError) as raised:
        export_reviewed(db, pool["labels"], out, "alice")
    assert str(raised.value) == f"{out}: cannot write (no space left on device); nothing was written, the old files are kept"
    assert {name: open(name, "rb").read() for name in old} == old and len(os.listdir(out.parent)) == 4


def test_the_manifest_names_the_grades_exported_whatever_the_write_ahead_log_holds(tmp_path):
    """The manifest recorded the database by its file's sha256 alone, which misses decisions still in the
    write-ahead log (and moves when SQLite folds the log in, though no grade changed): the grades read are
    recorded by their own digest, which moves with a grade and only with one."""
    from semrel.review.engine import Session
    from semrel.review.store import open_db

    pool, db, pairs, _ = reviewed_by_two(tmp_path)
    out = tmp_path / "reviewed.qrels"
    export_reviewed(db, pool["labels"], out)
    first = read_manifest(out)["params"]["grades_sha256"]
    held = open_db(db)  # a reader left open keeps the next decision in the log
    carol = Session(open_db(db), "carol")
    carol.grade(carol.next_task(), 1)
    export_reviewed(db, pool["labels"], out)
    second = read_manifest(out)["params"]["grades_sha256"]
    carol.conn.close()
    held.close()
    export_reviewed(db, pool["labels"], out)
    assert first != second == read_manifest(out)["params"]["grades_sha256"]
    carol = Session(open_db(db), "carol")
    assert carol.revise(carol.recent()[0].task, 0)  # the same pairs and reviewers: one grade changed
    carol.conn.close()
    export_reviewed(db, pool["labels"], out)
    params = read_manifest(out)["params"]
    assert params["grades_sha256"] != second
    assert (params["reviewed_pairs"], params["reviewers"]) == (4, ["alice", "bob", "carol"])  # 8 grades; carol's one is a 0
    assert params["only_reviewed"] is False
    export_reviewed(db, pool["labels"], out, only_reviewed=True)
    assert read_manifest(out)["params"]["only_reviewed"] is True and sum(map(len, read_qrels(out).to_dict().values())) == 4


def test_the_stale_warning_counts_each_kind_and_the_pairs_in_the_singular_or_plural():
    assert Stale(grades=1, skips=1, pairs=1).describe("r.sqlite").startswith(
        "left out 2 reviewed decisions (1 grade, 1 skip) on 1 pair whose texts changed since they were made; they are kept in r.sqlite")
    assert Stale(grades=0, skips=3, pairs=2).describe("r.sqlite").startswith("left out 3 reviewed decisions (3 skips) on 2 pairs whose")
    assert Stale(grades=1, skips=0, pairs=1).describe("r.sqlite").startswith("left out 1 reviewed decision (1 grade) on 1 pair whose")


def test_a_pair_reviewed_again_on_its_new_texts_leaves_only_the_other_reviewers_decision_stale(tmp_path):
    """A decision on texts that changed since is left out until its reviewer decides the pair again: then it is replaced,
    no longer counted stale, for that reviewer alone (stats count each reviewer's own)."""
    pool, db, pairs, _ = reviewed_by_two(tmp_path)
    with contextlib.closing(open_db(db)) as conn:
        conn.execute("UPDATE tasks SET chunk = chunk || ' (edited)', hash = 'new texts' WHERE id = ?", (pairs[0].id,))
        assert stale_decisions(conn) == Stale(grades=2, skips=0, pairs=1)
        alice = Session(conn, "alice")
        assert alice.next_task().id == pairs[0].id
        alice.grade(alice.next_task(), 0)
        assert stale_decisions(conn) == stale_decisions(conn, "bob") == Stale(grades=1, skips=0, pairs=1)
        assert stale_decisions(conn, "alice") == Stale(grades=0, skips=0, pairs=0)
    result = reviewed_labels(db, pool["labels"])
    assert result.params["stale_decisions_left_out"] == 1
    row = next(r for r in result.sources if (r["query_id"], r["chunk_id"]) == (pairs[0].query_id, pairs[0].chunk_id))
    assert (row["source"], row["grade"], row["reviewers"]) == ("review", 0, {"alice": 0})


def test_a_reviewed_pair_the_derived_labels_lack_is_exported_with_no_judge_grade(tmp_path):
    """The queue takes a proposed grade from the thresholds where the derived qrels lack a pair: its human grade is
    exported all the same, and its source says the judge gave none (mutants left the pair out, or said 0)."""
    pool, db, _, extra = reviewed_by_two(tmp_path)
    lines = Path(pool["labels"]).read_text().splitlines(keepends=True)
    Path(pool["labels"]).write_text("".join(line for line in lines if line.split()[::2] != [extra.query_id, extra.chunk_id]))
    out = tmp_path / "reviewed.qrels"
    counts = export_reviewed(db, pool["labels"], out)
    assert read_qrels(out).to_dict()[extra.query_id][extra.chunk_id] == 1 - extra.proposed
    row = sources_of(out)[extra.query_id, extra.chunk_id]
    assert (row["source"], row["judge"], row["reviewers"]) == ("review", None, {"alice": 1 - extra.proposed})
    assert counts == {"review": 3, "adjudicated:majority": 1, "judge": 8}


def test_derived_labels_one_grade_above_the_reviews_scale_are_refused(tmp_path):
    """A binary review merged with labels graded 0-2 would read one scale as two (the judge's 2 beside a reviewer's 1)."""
    pool, db, _, _ = reviewed_by_two(tmp_path)
    graded = tmp_path / "graded.qrels"
    graded.write_text(Path(pool["labels"]).read_text().replace(" 1\n", " 2\n"))
    with pytest.raises(ValidationError, match=r"graded.qrels grade up to 2, and the review in .* grades 0..1"):
        reviewed_labels(db, graded)


def test_the_random_sample_of_a_review_is_its_decided_prefix_less_the_skips_and_none_is_an_error(tmp_path):
    """A skip decides a sample pair (the prefix goes on past it, without it); with nothing decided there is no sample
    to correct by, which is an error, not an empty sample (an estimate from no pair)."""
    conn, _ = queued_db(tmp_path, QueueSettings(order="random"))
    db = str(tmp_path / "r.sqlite")
    with pytest.raises(ValidationError, match="no pair of the random sample is reviewed yet"):
        reviewed_sample(db)
    alice = Session(conn, "alice")
    skipped = alice.next_task()
    assert skipped.sample_rank == 0
    alice.skip(skipped)
    for _ in range(2):
        alice.grade(alice.next_task(), 1)
    decided = {(d.task.query_id, d.task.chunk_id) for d in alice.recent() if d.grade is not None}
    sample = reviewed_sample(db)
    assert set(sample.grades) == decided and len(decided) == 2 and set(sample.grades.values()) == {1} and sample.pool == 12
    conn.close()


def test_the_random_sample_goes_on_past_a_pair_withdrawn_undecided(tmp_path):
    """A sample pair that re-judged files no longer list is withdrawn, shown to nobody, so never decided: the decided
    prefix stopped at it for good, and pairs graded after it never counted in an estimate."""
    from semrel.review.engine import refresh_tasks
    from semrel.review.tasks import Labelling, load_tasks

    conn, pool = queued_db(tmp_path, QueueSettings(order="random"))
    tasks = load_tasks(pool["judgments"], pool["labels"], pool["corpus"], pool["golden"], Labelling("R", (0.5,)))
    alice = Session(conn, "alice")
    first = alice.next_task()
    alice.grade(first, 1)
    withdrawn = alice.following(first, 1)[0]
    assert (first.sample_rank, withdrawn.sample_rank) == (0, 1)
    refresh_tasks(conn, [t for t in tasks if (t.query_id, t.chunk_id) != (withdrawn.query_id, withdrawn.chunk_id)], "j.jsonl")
    third = alice.next_task()
    assert third.sample_rank == 2
    alice.grade(third, 0)
    assert reviewed_sample(str(tmp_path / "r.sqlite")).grades == {(first.query_id, first.chunk_id): 1, (third.query_id, third.chunk_id): 0}
    conn.close()


def test_a_query_sample_queue_whose_limit_cuts_its_first_query_is_said_to_hold_no_sample(tmp_path):
    """--limit 3 of queries of 4 pairs queues no query whole, so no pair has a sample rank: once every queued pair was
    graded, estimate still said 'no pair of the random sample is reviewed yet (review in ... query-sample ...)', to one
    who had reviewed the whole queue in that order."""
    conn, _ = queued_db(tmp_path, QueueSettings(order="query-sample", limit=3))
    alice = Session(conn, "alice")
    while (task := alice.next_task()) is not None:
        alice.grade(task, 1)
    with pytest.raises(ValidationError, match=r"r.sqlite: the queue's --limit 3 cuts its first query, and order "
                                              r"query-sample samples only queries queued whole: it holds no random sample; "
                                              r"build a queue \(a new --db\) whose --limit takes 2 queries or more"):
        reviewed_sample(str(tmp_path / "r.sqlite"))
    conn.close()


def test_an_uncertain_queue_stores_no_rank_for_unsampled_pairs_and_its_sample_is_the_decided_rank_prefix(tmp_path):
    """Of the first four pairs of the default queue (ranks 6, 2, 9, 0), only rank 0 starts the sample while rank 1 is open;
    the one pair the seeded sample never reached holds no rank (a -1 there opened the sample before its first rank)."""
    conn, _ = queued_db(tmp_path)
    ranks = [rank for (rank,) in conn.execute("SELECT sample_rank FROM tasks ORDER BY position")]
    assert ranks == [6, 2, 9, 0, 4, 7, 8, 1, 3, 5, None, 10]
    alice = Session(conn, "alice")
    for _ in range(4):
        alice.grade(alice.next_task(), 1)
    sample = reviewed_sample(tmp_path / "r.sqlite")
    assert (sample.grades, sample.pool) == ({("q3", "c2"): 1}, 12)
    for _ in range(7):  # through position 10, the pair the sample never reached
        alice.grade(alice.next_task(), 0)
    alice.skip(alice.next_task())  # rank 10: every sampled pair decided, one pair of the pool not graded
    sample = reviewed_sample(tmp_path / "r.sqlite")
    assert len(sample.grades) == 10 and ("q1", "c2") not in sample.grades  # the ten graded of the sample, not the one outside it
    conn.close()


def test_an_export_before_any_review_says_so(tmp_path, cli):
    """It wrote 'wrote e.qrels: 0 labels ()' and exit 0, and calibrate then refused the empty file."""
    conn, pool = queued_db(tmp_path, QueueSettings())
    conn.close()
    db = str(tmp_path / "r.sqlite")
    empty = cli("review", "export", "--db", db, "--labels", pool["labels"], "-o", str(tmp_path / "e.qrels"), "--only-reviewed")
    assert empty.exit_code == 0, empty.output
    assert f"warning: {db} holds no reviewed pair yet: the file holds no label" in empty.stderr
    judged = cli("review", "export", "--db", db, "--labels", pool["labels"], "-o", str(tmp_path / "j.qrels"))
    assert f"warning: {db} holds no reviewed pair yet: every label is the judge's" in judged.stderr


def test_stats_and_agree_give_two_reviewers_the_same_interval(tmp_path, cli):
    """The same pairs gave bob vs carol -0.667 to 0.348 in review stats and -0.667 to 0.400 in agree --groups: the
    bootstrap drew from the pairs in queue order in one and in (query, chunk) order in the other."""
    conn, pool = queued_db(tmp_path, QueueSettings(overlap=12))
    db = str(tmp_path / "r.sqlite")
    grades: dict[str, dict[tuple[str, str], int]] = {"alice": {}, "bob": {}}
    for reviewer, pattern in (("alice", [1, 1, 0, 1, 1, 1, 1, 1, 1, 0, 0, 1]), ("bob", [0, 0, 1, 0, 1, 0, 0, 1, 1, 0, 1, 1])):
        session = Session(open_db(db), reviewer)
        for grade in pattern:
            task = session.next_task()
            session.grade(task, grade)
            grades[reviewer][task.query_id, task.chunk_id] = grade
        session.conn.close()
    conn.close()
    assert list(grades["alice"]) != sorted(grades["alice"])  # the queue's order is not the pairs' sorted order
    jg = tmp_path / "people.qrels"
    jg.write_text("".join(f"{q} {reviewer} {c} {g}\n" for reviewer, pairs in grades.items() for (q, c), g in pairs.items()))
    stats = json.loads(cli("review", "stats", "--db", db, "--format", "json").stdout)
    between = next(a for a in stats["agreement"] if (a["first"], a["second"]) == ("alice", "bob"))
    agreed = json.loads(cli("agree", str(jg), pool["labels"], "--groups", "--format", "json").stdout)
    (people,) = agreed["groups"]["between"]
    assert (people["kappa"], people["n"]) == (between["kappa"], between["n"]) == (pytest.approx(cohen_kappa_score(
        [grades["alice"][p] for p in sorted(grades["alice"])], [grades["bob"][p] for p in sorted(grades["alice"])])), 12)
    assert (people["kappa_low"], people["kappa_high"]) == (between["kappa_low"], between["kappa_high"])


def test_stats_read_the_database_as_of_one_moment_while_reviewers_decide(tmp_path, monkeypatch):
    """bob grades a pair while stats read (between the grades and the per-reviewer counts): the figures are all of the
    moment before or all after, never 2 pairs reviewed beside a reviewer with a grade of none of them."""
    conn, _ = queued_db(tmp_path)
    db = str(tmp_path / "r.sqlite")
    alice = Session(conn, "alice")
    for _ in range(2):
        alice.grade(alice.next_task(), 1)
    read = stats_module.human_grades

    def then_bob_grades(reader):
        grades = read(reader)
        with contextlib.closing(open_db(db)) as other:
            bob = Session(other, "bob")
            bob.grade(bob.next_task(), 0)
        return grades

    monkeypatch.setattr(stats_module, "human_grades", then_bob_grades)
    stats = review_stats(db, resamples=10)
    assert stats.reviewed == 2 and [(r.reviewer, r.graded) for r in stats.reviewers] == [("alice", 2)]
    monkeypatch.undo()
    stats = review_stats(db, resamples=10)
    assert stats.reviewed == 3 and [(r.reviewer, r.graded) for r in stats.reviewers] == [("alice", 2), ("bob", 1)]
    conn.close()


def test_the_random_sample_is_read_as_of_one_moment_while_reviewers_undo(tmp_path, monkeypatch):
    """alice grades rank 0 and bob rank 1; alice undoes hers while the sample is read (after its open rank, before its
    grades): the sample is both pairs (before) or none (after), never rank 1 alone, which is no prefix of the sample."""
    conn, _ = queued_db(tmp_path, QueueSettings(order="random"))
    db = str(tmp_path / "r.sqlite")
    alice, bob = Session(conn, "alice"), Session(open_db(db), "bob")
    first = alice.next_task()
    alice.grade(first, 1)
    second = bob.next_task()
    bob.grade(second, 0)
    assert (first.sample_rank, second.sample_rank) == (0, 1)
    read = adjudicate_module.human_grades

    def alice_undoes_then_read(reader):
        alice.undo()
        return read(reader)

    monkeypatch.setattr(adjudicate_module, "human_grades", alice_undoes_then_read)
    sample = reviewed_sample(db)
    assert sample.grades == {(first.query_id, first.chunk_id): 1, (second.query_id, second.chunk_id): 0}
    monkeypatch.undo()
    with pytest.raises(ValidationError, match="no pair of the random sample is reviewed yet"):
        reviewed_sample(db)
    bob.conn.close()
    conn.close()


def test_calibrate_refuses_an_export_the_judge_filled_out_and_takes_the_reviewed_pairs_alone(tmp_path, cli):
    """Exported without --only-reviewed, 8 of the 12 labels were the judge's: calibrate fitted the judge to them as
    '12 reviewed pairs', and its warning on a fit to too few pairs never fired."""
    pool, db, _, _ = reviewed_by_two(tmp_path)
    out = tmp_path / "reviewed.qrels"
    assert cli("review", "export", "--db", db, "--labels", pool["labels"], "-o", str(out)).exit_code == 0
    for given in ([str(out)], [pool["labels"], "--test", str(out)]):
        refused = cli("calibrate", pool["judgments"], *given, "--on", "R")
        assert refused.exit_code == 1 and refused.stderr == (
            f"semrel: error: {out}: 8 of its 12 labels are the judge's own, not a person's (`semrel review export` without "
            "--only-reviewed: 4 pairs reviewed); export again with --only-reviewed to fit the labels to the reviewed pairs alone\n")
    assert cli("review", "export", "--db", db, "--labels", pool["labels"], "-o", str(out), "--only-reviewed").exit_code == 0
    fitted = cli("calibrate", pool["judgments"], str(out), "--on", "R")
    assert fitted.exit_code == 0 and fitted.stdout.splitlines()[3].split()[:3] == ["human", "judge", "4"], fitted.output
