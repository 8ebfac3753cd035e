"""The review page's JSON API checks what a decision is for and what it holds: a grade, skip,
flag or note only for the pair the page shows the reviewer now, a revision only for one of
their recent decisions (409 otherwise); a grade is a JSON integer, a note a JSON string of
valid Unicode within the length limit (400 otherwise, never 500, never a value changed)."""

from __future__ import annotations

import re
import threading
import time

import pytest
from test_review_processes import query

from catalogue import TALLY
from review_helpers import queued_db, write_pool
from review_web_helpers import Client, Server, alice_at_her_first_pair
from semrel.review import engine
from semrel.review.engine import Session
from semrel.review.store import open_db
from semrel.review.web.app import WebSettings, create_app

MAX_NOTE = 4000


def live(db: str) -> list[tuple]:
    return sorted(query(db, "SELECT task_id, reviewer, kind, grade FROM live"))


@pytest.mark.slow
def test_decisions_only_for_the_pair_shown_to_the_reviewer(tmp_path):
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "r.sqlite")
    with Server(db, pool, "--no-highlight") as server:
        alice, bob = Client(server.base), Client(server.base)
        alice.sign_in("alice")
        bob.sign_in("bob")
        mine, his = alice.task()["task"]["id"], bob.task()["task"]["id"]
        assert mine != his
        never_shown = max(mine, his) + 5
        for task_id, whose in [(his, "bob's current pair"), (never_shown, "a pair nobody was shown")]:
            for body in ({"action": "grade", "grade": 1}, {"action": "skip"}, {"action": "flag"},
                         {"action": "note", "text": "mine now"}):
                status, answer = alice.api({**body, "task_id": task_id})
                TALLY.record(f"web: {body['action']} on {whose}", refused=status == 409, traceback=status >= 500)
                assert status == 409, (whose, body, answer)
                assert "not the pair shown to you" in answer["error"] and "\n" not in answer["error"]
        assert alice.api({"action": "grade", "task_id": 10**9, "grade": 1})[0] == 409  # no such task: as before
        assert live(db) == [] and query(db, "SELECT count(*) FROM decisions") == [(0,)]

        assert alice.api({"action": "grade", "task_id": mine, "grade": 1})[0] == 200
        status, answer = bob.api({"action": "grade", "task_id": mine, "grade": 0})  # decided by alice, never bob's
        assert status == 409 and "not the pair shown to you" in answer["error"]
        assert bob.api({"action": "grade", "task_id": his, "grade": 0})[0] == 200

        status, answer = alice.api({"action": "grade", "task_id": mine, "grade": 0})  # a stale second tab of hers
        assert status == 200 and "already" in answer["message"]

        status, page = alice.form("/revise", {"task_id": his, "grade": "1"})  # bob's decision, not among hers
        assert status == 409 and "not among your last 50 decisions" in page
        assert alice.form("/revise", {"task_id": never_shown, "grade": "skip"})[0] == 409
        assert alice.form("/revise", {"task_id": mine, "grade": "0"})[0] == 303  # hers: changed
        following = alice.task()["task"]["id"]
        state = alice.api({"action": "note", "task_id": following, "text": "unsure"})[1]
        assert state["message"] == "note saved"
    assert live(db) == sorted([(mine, "alice", "grade", 0), (his, "bob", "grade", 0)])  # one standing grade a pair
    assert query(db, "SELECT task_id, reviewer, note FROM decisions WHERE kind IN ('flag', 'note')") == [(following, "alice", "unsure")]


@pytest.mark.slow
def test_shared_pairs_take_a_grade_from_every_reviewer_shown_them(tmp_path):
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "r.sqlite")
    with Server(db, pool, "--no-highlight", "--overlap", "1") as server:
        alice, bob = Client(server.base), Client(server.base)
        alice.sign_in("alice")
        bob.sign_in("bob")
        shared = alice.task()["task"]
        assert shared["shared"] and bob.task()["task"]["id"] == shared["id"]
        assert alice.api({"action": "grade", "task_id": shared["id"], "grade": 1})[0] == 200
        assert bob.api({"action": "grade", "task_id": shared["id"], "grade": 0})[0] == 200
    assert live(db) == sorted([(shared["id"], "alice", "grade", 1), (shared["id"], "bob", "grade", 0)])


def refused(client: Client, task_id: int, loose: dict[str, tuple[dict, str]]) -> None:
    """Each body is answered 400 with one line saying what is wrong."""
    for name, (body, says) in loose.items():
        status, answer = client.api({"task_id": task_id, **body})  # json.dumps writes a lone surrogate as \\ud800
        TALLY.record(f"web: {name}", refused=status == 400, traceback=status >= 500)
        assert status == 400 and says in answer["error"] and "\n" not in answer["error"], (name, status, answer)


@pytest.mark.slow
def test_a_grade_or_id_must_be_a_json_integer(tmp_path):
    with alice_at_her_first_pair(tmp_path) as (alice, task_id, db):
        refused(alice, task_id, {
            "grade true": ({"action": "grade", "grade": True}, "grade must be an integer"),
            "grade false": ({"action": "grade", "grade": False}, "grade must be an integer"),
            "grade as a string": ({"action": "grade", "grade": "1"}, "grade must be an integer"),
            "task_id true": ({"action": "skip", "task_id": True}, "task_id must be an integer"),
        })
        status, page = alice.form("/revise", {"task_id": str(task_id), "grade": "\u0661"})  # an Arabic-Indic one
        assert status == 400 and "grade must be an integer" in page
        assert alice.task()["task"]["id"] == task_id  # nothing was decided
        assert alice.api({"action": "grade", "task_id": task_id, "grade": 1.0})[0] == 200  # an integral number is a grade
    assert query(db, "SELECT kind, grade FROM decisions") == [("grade", 1)]


@pytest.mark.slow
def test_a_note_must_be_a_json_string_within_the_limit(tmp_path):
    with alice_at_her_first_pair(tmp_path) as (alice, task_id, db):
        refused(alice, task_id, {
            "note an object": ({"action": "note", "text": {"a": 1}}, "must be a JSON string"),
            "note a list": ({"action": "note", "text": ["unsure"]}, "must be a JSON string"),
            "note a number": ({"action": "note", "text": 12}, "must be a JSON string"),
            "note null": ({"action": "note", "text": None}, "must be a JSON string"),
            "note over the limit": ({"action": "note", "text": "x" * (MAX_NOTE + 1)}, "at most 4,000 characters"),
        })
        longest = "y" * MAX_NOTE
        assert alice.api({"action": "note", "task_id": task_id, "text": f"  {longest}  "})[1]["message"] == "note saved"
        assert alice.api({"action": "note", "task_id": task_id})[1]["message"] == "empty note: nothing saved"
    assert query(db, "SELECT kind, note FROM decisions") == [("note", longest)]  # whole, never cut


@pytest.mark.slow
def test_a_note_that_is_not_valid_unicode_is_refused_not_a_500(tmp_path):
    with alice_at_her_first_pair(tmp_path) as (alice, task_id, db):
        refused(alice, task_id, {
            "note with a lone surrogate": ({"action": "note", "text": "unsure \ud800"}, "not valid Unicode"),
            "note of a lone low surrogate": ({"action": "note", "text": "\udfff"}, "not valid Unicode"),
        })
        assert alice.api({"action": "note", "task_id": task_id, "text": "ok \U0001f600"})[1]["message"] == "note saved"
    # Server.__exit__ checks its log: no traceback
    assert query(db, "SELECT kind, note FROM decisions") == [("note", "ok \U0001f600")]


def signed_in(app, name: str):
    """A Flask test client signed in as `name`, with its CSRF token."""
    client = app.test_client()
    page = client.get("/").get_data(as_text=True)
    csrf = re.search(r'name="csrf-token" content="([^"]+)"', page).group(1)
    assert client.post("/login", data={"name": name, "csrf_token": csrf}).status_code == 303
    page = client.get("/").get_data(as_text=True)
    return client, re.search(r'name="csrf-token" content="([^"]+)"', page).group(1)


def test_reviewers_racing_for_one_pair_leave_one_grade(tmp_path, monkeypatch):
    """Claims gone stale at once: eight reviewers are shown the same (not shared) pair and grade
    it at the same moment; one grade stands, the others are told 409."""
    monkeypatch.setattr(engine, "CLAIM_SECONDS", -1.0)
    original = engine.Session._append

    def slow_write(self, *args, **kwargs):  # after the check, inside its transaction: the others must wait
        time.sleep(0.05)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(engine.Session, "_append", slow_write)
    conn, _ = queued_db(tmp_path)
    conn.close()
    db = str(tmp_path / "r.sqlite")
    app = create_app(WebSettings(db, secret="test"))
    reviewers = [signed_in(app, f"r{i}") for i in range(8)]
    shown = {client.get("/api/task").get_json()["task"]["id"] for client, _ in reviewers}
    assert len(shown) == 1  # every claim is stale at once: all are shown the first pair
    (task_id,) = shown
    start, statuses = threading.Barrier(len(reviewers)), []

    def grade(client, csrf) -> None:
        start.wait()
        answer = client.post("/api/decide", json={"action": "grade", "task_id": task_id, "grade": 1},
                             headers={"X-CSRF-Token": csrf})
        statuses.append(answer.status_code)

    threads = [threading.Thread(target=grade, args=reviewer) for reviewer in reviewers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(statuses) == [200] + [409] * 7
    assert len(live(db)) == 1


@pytest.mark.parametrize("terminal_name", ["bob", "alice"])
def test_a_pair_graded_in_a_terminal_while_the_web_request_is_under_way_is_not_graded_again(tmp_path, monkeypatch,
                                                                                            terminal_name):
    """The page shows alice a pair; a terminal on its own connection to the database (bob once her
    claim went stale, or alice under her own name) grades it after the server took her request and
    before it wrote. The server's check and write are one transaction, so her grade is refused
    (409; "already" when it was her own) rather than written beside the terminal's."""
    monkeypatch.setattr(engine, "CLAIM_SECONDS", -1.0)
    conn, _ = queued_db(tmp_path)
    conn.close()
    db = str(tmp_path / "r.sqlite")
    app = create_app(WebSettings(db, secret="test"))
    alice, csrf = signed_in(app, "alice")
    shown = alice.get("/api/task").get_json()["task"]
    terminal, keys = Session(open_db(db), terminal_name), ["1"]
    original = engine.Session._check_grade

    def terminal_grades_first(self, grade):  # the web request is read, its grade checked: the terminal's key lands now
        if self is not terminal and keys:
            keys.pop()
            task = terminal.next_task()
            assert task.id == shown["id"]
            terminal.grade(task, 0)
        original(self, grade)

    monkeypatch.setattr(engine.Session, "_check_grade", terminal_grades_first)
    answer = alice.post("/api/decide", json={"action": "grade", "task_id": shown["id"], "grade": 1},
                        headers={"X-CSRF-Token": csrf})
    assert not keys  # the terminal did grade while the request was under way
    if terminal_name == "bob":
        assert answer.status_code == 409 and "is not the pair shown to you now" in answer.get_json()["error"]
    else:
        assert answer.status_code == 200
        assert answer.get_json()["message"].startswith(f"you had decided {shown['query_id']}/{shown['chunk_id']} already")
    assert query(db, "SELECT task_id, reviewer, kind, grade FROM decisions") == [(shown["id"], terminal_name, "grade", 0)]
    terminal.conn.close()
