"""`semrel review serve` over HTTP: a real server process, a real SQLite file, cookies as a
browser keeps them. The browser itself is in test_review_browser.py."""

from __future__ import annotations

import html
import json
import re
import socket
import subprocess
import sys
import threading
import urllib.request

import pytest
from test_review_processes import grades, query, wait_until

from helpers import assert_one_error
from review_helpers import write_pool
from review_web_helpers import SRC, Client, Server
from semrel.review.stats import review_stats


@pytest.mark.slow
def test_posts_without_the_csrf_token_or_the_access_token_are_refused(tmp_path):
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "r.sqlite")
    with Server(db, pool, "--no-highlight", "--token", "s3cret") as server:
        assert server.link == server.base + "/?token=s3cret"
        stranger = Client(server.base)
        status, page = stranger.get("/")
        assert status == 403 and "needs the link" in page and stranger.csrf  # a valid CSRF token, but no access
        # whoever had opened the link before a restart was told to ask for it, their address bar left without the token
        assert "open the link you were given again (the review server signs everyone out when it restarts)" in html.unescape(page)
        assert stranger.form("/login", {"name": "mallory"})[0] == 403
        assert stranger.api({"action": "skip", "task_id": 1})[0] == 403
        assert stranger.get("/api/task")[0] == 403 and stranger.get("/stats")[0] == 403
        assert stranger.get("/?token=wrong")[0] == 403

        alice = Client(server.base)
        status, page = alice.get("/?token=s3cret")
        assert status == 302 and 'href="/"' in page  # access is kept in the session, the token dropped from the URL
        assert alice.get("/")[0] == 200
        assert alice.form("/login", {"name": "alice"}, csrf=False)[0] == 403
        assert alice.form("/login", {"name": "alice"})[0] == 303
        task = alice.task()["task"]
        assert alice.api({"action": "grade", "task_id": task["id"], "grade": 1}, csrf=False)[0] == 403
        alice.csrf = "forged"
        assert alice.api({"action": "grade", "task_id": task["id"], "grade": 1})[0] == 403
        assert grades(db) == []
        alice.get("/")
        status, state = alice.api({"action": "grade", "task_id": task["id"], "grade": 1})
        assert status == 200 and state["progress"]["mine"] == 1
    assert grades(db) == [(0, "alice", 1)]
    assert query(db, "SELECT name FROM reviewers") == [("alice",)]


def reviewer_links(server: Server) -> dict[str, str]:
    return dict(re.findall(r"semrel: (.+)'s link: (http://\S+)", "".join(server.lines)))


def alice_grades_one_pair(tmp_path, env: dict[str, str]) -> tuple[str, dict[str, str]]:
    """A new review served with reviewers' links (env), alice signed in through hers, one pair graded 1: (db, the links)."""
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "r.sqlite")
    with Server(db, pool, "--no-highlight", env=env) as server:
        links = reviewer_links(server)
        assert sorted(links) == ["alice", "bob"] and all(link.startswith(server.base + "/?key=") for link in links.values())
        assert Client(server.base).get("/")[0] == 403  # no token: only the reviewers' links open the page
        alice = Client(server.base)
        alice.sign_in("alice", links["alice"])
        assert alice.api({"action": "grade", "task_id": alice.task()["task"]["id"], "grade": 1})[0] == 200
    return db, links


@pytest.mark.slow
def test_reviewer_links_are_printed_and_stay_valid_across_a_restart(tmp_path):
    env = {"SEMREL_REVIEW_SERVE_REVIEWERS": "alice, bob"}
    db, links = alice_grades_one_pair(tmp_path, env)
    with Server(db, None, "--no-highlight", "--host", "0.0.0.0", env=env) as server:  # mid-day: the same database again
        again = reviewer_links(server)
        assert {n: link.split("?")[1] for n, link in again.items()} == {n: link.split("?")[1] for n, link in links.items()}
        assert "without --token" not in "".join(server.lines)  # the links are the access control
        alice = Client(server.base)
        alice.sign_in("alice", again["alice"])
        assert alice.task()["progress"]["mine"] == 1
        bob = Client(server.base)
        assert bob.get(again["bob"][len(server.base):])[0] == 302
        assert bob.form("/login", {"name": "alice"})[0] == 403
    assert grades(db) == [(0, "alice", 1)]
    assert query(db, "SELECT name FROM reviewers") == [("alice",)]


@pytest.mark.slow
def test_new_links_end_the_old_ones_and_keep_every_decision(tmp_path):
    """A leaked reviewer link stayed valid for the life of the database: nothing made a new key."""
    env = {"SEMREL_REVIEW_SERVE_REVIEWERS": "alice,bob"}
    db, old = alice_grades_one_pair(tmp_path, env)
    with Server(db, None, "--no-highlight", "--new-links", env=env) as server:
        new = reviewer_links(server)
        assert sorted(new) == ["alice", "bob"] and all(new[n].split("?")[1] != old[n].split("?")[1] for n in new)
        for name in ("alice", "bob"):
            status, page = Client(server.base).get("/?" + old[name].split("?")[1])
            assert status == 403 and "this reviewer link is not one of this review&#39;s" in page, name
        alice = Client(server.base)
        alice.sign_in("alice", new["alice"])
        assert alice.task()["progress"]["mine"] == 1  # her decision stayed
    with Server(db, None, "--no-highlight", env=env) as server:  # a restart without --new-links keeps the new ones
        assert reviewer_links(server) == {n: link.replace(link.split("/?")[0], server.base) for n, link in new.items()}
    assert grades(db) == [(0, "alice", 1)]


def test_new_links_without_reviewers_is_one_line(tmp_path, cli):
    db = tmp_path / "r.sqlite"
    assert_one_error(cli("review", "serve", "--db", db, "--new-links", "--no-highlight"),
                     "--new-links makes new links for the reviewers --reviewers lists; give them too", code=2)
    assert not db.exists()


@pytest.mark.slow
@pytest.mark.parametrize(("listed", "said"), [("alice,,bob", "a reviewer name is 1 to 80 printable characters"),
                                              ("alice,Alice", "--reviewers names Alice twice"),
                                              ("alice,\u0430lice", "--reviewers names \u0430lice twice")])
def test_bad_reviewer_lists_are_one_line(tmp_path, listed, said):
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "r.sqlite")
    run = [sys.executable, "-c", "from semrel.cli import main; main()", "review", "serve", "--db", db, "--no-highlight",
           "--judgments", pool["judgments"], "--labels", pool["labels"], "--corpus", pool["corpus"], "--golden", pool["golden"],
           "--thresholds", "0.5", "--reviewers", listed]
    done = subprocess.run(run, capture_output=True, text=True, env={"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin"}, timeout=60)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and said in done.stderr, done.stderr


@pytest.mark.parametrize(("variables", "options", "said"), [
    ({"SEMREL_REVIEW_SERVE_TOKEN": ""}, [], "the environment variable SEMREL_REVIEW_SERVE_TOKEN is set but empty: the page would "
                                            "be served without an access token; give a token, or leave it out"),
    ({"SEMREL_REVIEW_SERVE_REVIEWERS": ""}, [], "SEMREL_REVIEW_SERVE_REVIEWERS is set but empty: the page would be served "
                                                "without reviewers' own links; give names, e.g. alice,bob"),
    ({}, ["--token", ""], "--token is empty: the page would be served without an access token"),
    ({"SEMREL_REVIEW_SERVE_TOKEN": "ok"}, ["--token", "  "], "--token is empty"),
])
def test_an_empty_token_or_reviewer_list_is_refused_not_taken_for_none(tmp_path, monkeypatch, cli, variables, options, said):
    """click takes a variable set to "" for one not set: `export SEMREL_REVIEW_SERVE_TOKEN=$(...)` whose command printed
    nothing served the page with no token at all (on --host 0.0.0.0 to anyone, after a warning among others)."""
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    db = tmp_path / "r.sqlite"
    assert_one_error(cli("review", "serve", "--db", db, "--host", "0.0.0.0", "--no-highlight", *options), said, code=2)
    assert not db.exists()  # refused before the database is opened


@pytest.mark.slow
def test_limits_headers_and_no_path_to_files(tmp_path):
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "r.sqlite")
    with Server(db, pool, "--no-highlight") as server:
        client = Client(server.base)
        status, page = client.get("/")
        assert status == 200 and 'name="csrf_token"' in page
        client.form("/login", {"name": "alice"})
        status, text = client.request("POST", "/api/decide", b"{" + b" " * 200_000 + b"}",
                                      {"Content-Type": "application/json", "X-CSRF-Token": client.csrf})
        assert status == 413
        for path in ("/assets/../pyproject.toml", "/assets/..%2F..%2Fpyproject.toml", "/assets/review.html", "/templates/review/base.html"):
            assert client.get(path)[0] == 404, path
        with client.opener.open(urllib.request.Request(server.base + "/assets/review.js")) as response:
            headers = response.headers
            assert "addEventListener" in response.read().decode()
        assert "script-src 'self'" in headers["Content-Security-Policy"] and "unsafe-inline" not in headers["Content-Security-Policy"]
        assert headers["X-Content-Type-Options"] == "nosniff" and headers["Referrer-Policy"] == "no-referrer"
        injected = {"action": "grade", "task_id": "1; DROP TABLE tasks", "grade": 1}
        assert client.api(injected) == (400, {"error": "task_id must be an integer"})
        assert client.api({"action": "grade", "task_id": 1, "grade": 7}) == (400, {"error": "grade must be between 0 and 1"})  # was 409
        assert client.api({"action": "explode", "task_id": 1})[0] == 400
        port = server.base.rsplit(":", 1)[1]
        for host, status in [("evil.example:" + port, 403), ("127.0.0.1.evil.example", 403), ("localhost:" + port, 200),
                             ("[::1]:" + port, 200)]:  # a rebound name is refused
            assert client.request("GET", "/", headers={"Host": host})[0] == status, host
        log = server.stop()
    assert "Traceback" not in log and log.rstrip().endswith("review page stopped; every decision is saved")
    assert grades(db) == []


@pytest.mark.slow
def test_decisions_revisions_and_stats_match_the_engine(tmp_path):
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "r.sqlite")
    with Server(db, pool, "--no-highlight", "--blind") as server:
        alice = Client(server.base)
        alice.sign_in("alice")
        first = alice.task()
        assert first["task"]["judge"] is None
        assert first["progress"] == {"total": 12, "done": 0, "mine": 0, "flagged": 0, "graded": 0, "skipped": 0}
        ids = []
        for grade in (1, 0, 1):
            task = alice.task()["task"]
            ids.append(task["id"])
            alice.api({"action": "grade", "task_id": task["id"], "grade": grade, "seconds": 2.5})
        again = alice.api({"action": "grade", "task_id": ids[0], "grade": 0})[1]  # a stale second tab
        assert "already" in again["message"] and again["progress"]["mine"] == 3
        state = alice.api({"action": "flag", "task_id": alice.task()["task"]["id"]})[1]
        assert state["message"] == "flagged" and state["progress"]["flagged"] == 1
        state = alice.api({"action": "note", "task_id": state["task"]["id"], "text": "<b>unsure</b>"})[1]
        assert state["message"] == "note saved"
        status, page = alice.get("/recent")
        assert status == 200 and page.count('action="/revise"') == 3
        assert "&lt;b&gt;" not in page  # notes are not listed; texts are escaped where shown
        assert alice.form("/revise", {"task_id": ids[1], "grade": "1"})[0] == 303
        assert alice.form("/revise", {"task_id": ids[2], "grade": "skip"})[0] == 303
        status, page = alice.get("/stats")
        assert status == 200
    live = query(db, "SELECT t.id, l.kind, l.grade FROM live l JOIN tasks t ON t.id = l.task_id ORDER BY t.id")
    assert sorted(live) == sorted([(ids[0], "grade", 1), (ids[1], "grade", 1), (ids[2], "skip", None)])
    assert query(db, "SELECT kind, note FROM decisions WHERE kind IN ('flag', 'note')") == [("flag", None), ("note", "<b>unsure</b>")]
    stats = review_stats(db)
    assert f"{stats.reviewed} of {stats.tasks} pairs have a human grade" == "2 of 12 pairs have a human grade"
    assert any(a.second == "judge" for a in stats.agreements)
    assert "<bdi>judge</bdi>" not in page and "agreement with the judge is left out" in page  # blind: the judge's labels stay hidden


@pytest.mark.slow
def test_a_terminal_reviewer_and_a_web_reviewer_writing_at_once_lose_nothing(tmp_path):
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "r.sqlite")
    with Server(db, pool, "--no-highlight") as server:
        terminal = subprocess.Popen(
            [sys.executable, "-c", "from semrel.cli import main; main()", "review", "start", "--db", db, "--reviewer", "bob",
             "--no-highlight"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            env={"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin"},
        )
        web = Client(server.base)
        web.sign_in("alice")

        def review_in_browser() -> None:
            while (task := web.task()["task"]) is not None:
                assert web.api({"action": "grade", "task_id": task["id"], "grade": 0})[0] == 200

        web.task()
        wait_until(lambda: len(query(db, "SELECT DISTINCT reviewer FROM claims")) == 2, "both reviewers to hold a task")
        worker = threading.Thread(target=review_in_browser)
        worker.start()
        terminal.communicate(b"1" * 12, timeout=120)
        worker.join(timeout=120)
        assert terminal.returncode == 0
    decided = grades(db)
    assert sorted(position for position, _, _ in decided) == list(range(12))  # each task once: none lost, none twice
    assert {r for _, r, _ in decided} == {"alice", "bob"}
    assert all(grade == (1 if r == "bob" else 0) for _, r, grade in decided)


@pytest.mark.slow
def test_serve_says_what_is_wrong_in_one_line(tmp_path):
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "r.sqlite")
    run = [sys.executable, "-c", "from semrel.cli import main; main()", "review", "serve", "--db"]
    env = {"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin"}
    new = subprocess.run(run + [db], capture_output=True, text=True, env=env, timeout=60)
    assert new.returncode == 1 and new.stderr.count("\n") == 1 and "the review database is new" in new.stderr
    with Server(db, pool, "--no-highlight", "--host", "0.0.0.0") as server:
        assert "without --token" in "".join(server.lines)
        other = Client(server.base)
        status, body = other.request("GET", "/", headers={"Host": "review.example.org"})  # a page that rebinds its name
        assert status == 403 and "has no access token, so it answers only to this machine's addresses and names" in html.unescape(body)
        port = server.base.rsplit(":", 1)[1]
        for name in (f"127.0.0.1:{port}", f"{socket.gethostname()}:{port}", f"{socket.gethostname().upper()}.:{port}", "[::1]"):
            assert other.request("GET", "/", headers={"Host": name})[0] == 200, name
        taken = subprocess.run(run + [db, "--port", port, "--host", "0.0.0.0", "--token", "t"], capture_output=True,
                               text=True, env=env, timeout=60)
        assert taken.returncode == 1 and taken.stderr.count("\n") == 1 and f"cannot listen on 0.0.0.0:{port}" in taken.stderr
    with Server(db, None, "--no-highlight") as server:  # resumes the database without the files
        assert not any("warning" in line for line in server.lines)
        assert query(db, "SELECT count(*) FROM meta WHERE key = 'reviewer_link_key'") == [(0,)]  # no --reviewers: no key
        client = Client(server.base)
        client.sign_in("carol")
        assert json.loads(client.get("/api/task")[1])["progress"]["total"] == 12


@pytest.mark.slow
def test_graded_labels_take_grades_up_to_the_top_and_n_is_a_note_key(tmp_path):
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "r.sqlite")
    with Server(db, pool, "--no-highlight", "--thresholds", "0.3,0.6,0.9") as server:
        client = Client(server.base)
        client.sign_in("alice")
        page = client.get("/")[1]
        config = json.loads(re.search(r"data-config='([^']*)'", page).group(1))
        assert config == {"grades": {"0": 0, "1": 1, "2": 2, "3": 3}, "notes": ["n", "m"], "top": 3, "reviewer": "alice",
                          "boot": config["boot"], "review": config["review"]}
        task = client.task()["task"]
        assert task["judge"]["thresholds"] == [0.3, 0.6, 0.9] and task["judge"]["on"] == "R"
        assert client.api({"action": "grade", "task_id": task["id"], "grade": 3})[0] == 200
        status, answer = client.api({"action": "grade", "task_id": client.task()["task"]["id"], "grade": 4})
        assert status == 400 and answer["error"] == "grade must be between 0 and 3"
    assert grades(db) == [(0, "alice", 3)]


@pytest.mark.slow
def test_two_review_servers_on_one_machine_keep_their_reviewers_signed_in(tmp_path):
    pool = write_pool(tmp_path / "pool")
    first_db, second_db = str(tmp_path / "first.sqlite"), str(tmp_path / "second.sqlite")
    with Server(first_db, pool, "--no-highlight") as first, Server(second_db, pool, "--no-highlight") as second:
        one = Client(first.base)
        one.sign_in("alice")
        other = Client(second.base, jar=one.jar)  # the same browser, another tab (cookies ignore ports)
        other.sign_in("bob")
        for client in (one, other):
            assert client.api({"action": "grade", "task_id": client.task()["task"]["id"], "grade": 1})[0] == 200
    assert grades(first_db) == [(0, "alice", 1)] and grades(second_db) == [(0, "bob", 1)]


@pytest.mark.slow
def test_a_web_grade_on_texts_changed_while_shown_is_stale_on_the_new_texts(tmp_path):
    """The page sends back the hash of the texts it showed: a grade given after another start refreshed the pair's texts
    is a label of the old ones (stale, left out of the export), where it was recorded with the new texts' hash."""
    from review_helpers import CHUNKS, QUERIES, R_SCORES, write_judged
    from semrel.review.adjudicate import stale_decisions
    from semrel.review.engine import refresh_tasks
    from semrel.review.store import open_db
    from semrel.review.tasks import Labelling, load_tasks

    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "r.sqlite")
    with Server(db, pool, "--no-highlight", "--blind") as server:
        alice = Client(server.base)
        alice.sign_in("alice")
        shown = alice.task()["task"]
        edited = write_judged(tmp_path / "edited", {**CHUNKS, shown["chunk_id"]: "Another text, not the one shown."}, QUERIES, R_SCORES)
        conn = open_db(db)
        refresh_tasks(conn, load_tasks(edited["judgments"], edited["labels"], edited["corpus"], edited["golden"], Labelling("R", (0.5,))),
                      edited["judgments"])
        conn.close()
        status, body = alice.api({"action": "grade", "task_id": shown["id"], "grade": 1, "shown": "not a hash"})
        assert status == 400 and "shown must be the hash of the texts shown" in json.dumps(body)
        status, _ = alice.api({"action": "grade", "task_id": shown["id"], "grade": 1, "shown": shown["shown"]})
        assert status == 200
    assert query(db, "SELECT task_hash FROM decisions WHERE kind = 'grade'") == [(shown["shown"],)]
    conn = open_db(db)
    assert stale_decisions(conn).grades == 1
    conn.close()


@pytest.mark.slow
def test_requests_waiting_for_a_thread_leave_the_servers_stderr_to_its_own_lines(tmp_path):
    """More requests than the server's 8 threads (here: each waits on a write lock held meanwhile) queue in waitress,
    which warned 'Task queue depth is N' on stderr for each: 1,078 lines in 40 s of 10 reviewers on one server."""
    from semrel.review.store import open_db

    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "r.sqlite")
    with Server(db, pool, "--no-highlight") as server:
        clients = [Client(server.base) for _ in range(12)]
        for i, client in enumerate(clients):
            client.sign_in(f"r{i}")
        lock = open_db(db)
        lock.execute("BEGIN IMMEDIATE")  # every request waits on it (busy timeout), holding its thread
        answers: list[int] = []
        threads = [threading.Thread(target=lambda c=c: answers.append(c.get("/api/task")[0])) for c in clients]
        for thread in threads:
            thread.start()
        threading.Event().wait(1.0)  # for them to reach the server: 8 held by a thread, 4 queued
        lock.execute("COMMIT")
        lock.close()
        for thread in threads:
            thread.join(60)
        log = server.stop()
    assert answers == [200] * 12
    assert [line for line in log.splitlines() if not line.startswith("semrel: ")] == []


@pytest.mark.slow
def test_a_name_that_reads_as_a_reviewers_is_warned_of_at_the_terminal_and_in_reviewers(tmp_path, cli):
    """The page refuses a look-alike of a reviewer's name; `review start --reviewer Alice` beside alice, and
    `review serve --reviewers Аlice` (a Cyrillic A), made a second reviewer without a word. Both now warn, and go on."""
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "r.sqlite")
    files = ["--judgments", pool["judgments"], "--labels", pool["labels"], "--corpus", pool["corpus"], "--golden", pool["golden"],
             "--thresholds", "0.5"]
    assert cli("review", "start", "--db", db, "--reviewer", "alice", "--no-highlight", *files, input="1q").exit_code == 0
    again = cli("review", "start", "--db", db, "--reviewer", "alice", "--no-highlight", input="q")
    assert again.exit_code == 0 and "reads as" not in again.stderr
    other = cli("review", "start", "--db", db, "--reviewer", "Alice", "--no-highlight", input="q")
    assert other.exit_code == 0
    assert (f"semrel: warning: --reviewer: Alice reads as alice, a reviewer of {db} already, but is not written the same (case, "
            "width, or a letter of another alphabet): Alice's decisions would count as another reviewer's; quit (q) and start "
            "again with --reviewer 'alice' if you are them") in other.stderr
    with Server(db, None, "--no-highlight", "--reviewers", "\u0410lice,bob") as server:
        pass
    said = "".join(server.lines)
    assert "--reviewers: \u0410lice reads as alice" in said and "list alice instead if they are one person" in said
