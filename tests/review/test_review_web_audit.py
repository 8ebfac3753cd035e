"""What a mutation audit of `semrel review serve` found the other web tests leave open: the exact
headers of every answer, asset types, the seconds and `shown` a decision carries, ids at the edges
of SQLite's range, the nesting limit, undo through the API, the task as the page gets it, shading
segments, the highlight cache, sessions (sign-out cookie, ids renewed at sign-in, least recently
used kept), the recent-decisions window, the request size limit and the command's link and signals."""

from __future__ import annotations

import contextlib
import html
import http.cookiejar
import json
import os
import re
import signal
import socket
import threading
import time
import urllib.parse
import urllib.request

import pytest
from test_review_processes import query
from test_web_api_checks import signed_in

from review_helpers import queued_db, write_judged, write_pool
from review_web_helpers import Client, Server, alice_at_her_first_pair, write_large_pool
from semrel.review.engine import QueueSettings, Session, create_queue
from semrel.review.simulate import simulate_decisions
from semrel.review.stats import review_stats
from semrel.review.store import open_db
from semrel.review.tasks import Labelling, load_tasks
from semrel.review.web.app import HIGHLIGHT_WAITING, MAX_ID, THREADS, WebSettings, cookie_name, create_app
from semrel.review.web.guard import HEADERS
from semrel.review.web.server import ReviewServer
from semrel.terminal import safe

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; "
       "frame-ancestors 'none'; base-uri 'none'")
SECURITY = {"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY",
            "Referrer-Policy": "no-referrer", "Cross-Origin-Opener-Policy": "same-origin",
            "Cross-Origin-Resource-Policy": "same-origin", "Cache-Control": "no-store"}


def new_app(tmp_path, **settings):
    """The review app over a new queue of write_pool's 12 pairs; its database path."""
    conn, _ = queued_db(tmp_path)
    conn.close()
    db = str(tmp_path / "r.sqlite")
    return create_app(WebSettings(db, secret="test", **settings)), db


def decide(client, csrf: str, body: dict):
    return client.post("/api/decide", json=body, headers={"X-CSRF-Token": csrf})


def held(client) -> dict:
    return client.get("/api/task").get_json()["task"]


def test_every_answer_carries_the_security_headers(tmp_path):
    app, _ = new_app(tmp_path, token="s3cret")
    stranger = app.test_client()
    answers = {
        "a page refused without the link": stranger.get("/"),
        "an asset": stranger.get("/assets/review.css"),
        "no such asset": stranger.get("/assets/nope.js"),
        "another Host": stranger.get("/", headers={"Host": "evil.example"}),
        "the link": stranger.get("/?token=s3cret"),
        "the sign-in page": stranger.get("/"),
        "a POST without the CSRF token": stranger.post("/login", data={"name": "x"}),
    }
    assert [a.status_code for a in answers.values()] == [403, 200, 404, 403, 302, 200, 403]
    assert HEADERS == SECURITY
    for name, answer in answers.items():
        assert {key: answer.headers.get(key) for key in SECURITY} == SECURITY, name


def test_assets_are_served_to_anyone_who_reaches_the_page_with_their_types(tmp_path):
    """The error page a stranger is shown uses the style sheet: assets need no access; with nosniff a wrong type breaks them."""
    app, _ = new_app(tmp_path, token="s3cret")
    stranger = app.test_client()
    for name, mimetype, fragment in [("review.css", "text/css", "{"), ("review.js", "text/javascript", "addEventListener")]:
        answer = stranger.get(f"/assets/{name}")
        assert answer.status_code == 200 and answer.mimetype == mimetype and answer.mimetype_params == {"charset": "utf-8"}, name
        assert fragment in answer.get_data(as_text=True)
    assert stranger.get("/api/task").status_code == 403


def test_an_assets_content_type_names_its_charset_once(tmp_path):
    app, _ = new_app(tmp_path)
    client = app.test_client()
    assert client.get("/assets/review.css").headers["Content-Type"] == "text/css; charset=utf-8"
    assert client.get("/assets/review.js").headers["Content-Type"] == "text/javascript; charset=utf-8"


def test_sign_in_records_the_name_with_its_spaces_collapsed(tmp_path):
    app, db = new_app(tmp_path)
    client = app.test_client()
    csrf = re.search(r'name="csrf-token" content="([^"]+)"', client.get("/").get_data(as_text=True)).group(1)
    assert len(csrf) == 43  # secrets.token_urlsafe(32): 256 random bits
    answer = client.post("/login", data={"name": "  Zoë \t  van   Dijk ", "csrf_token": csrf})
    assert answer.status_code == 303 and answer.headers["Location"] == "/"
    assert query(db, "SELECT name FROM reviewers") == [("Zoë van Dijk",)]  # recorded at sign-in, before any pair is asked for


def test_a_name_typed_with_a_combining_accent_is_the_same_reviewer_as_with_the_accented_letter(tmp_path):
    """Two reviewers who look the same on every page and table counted twice in a majority."""
    app, db = new_app(tmp_path)
    for name in ["Bo\u0301b", "B\u00f3b"]:
        client, csrf = signed_in(app, name)
        assert decide(client, csrf, {"action": "grade", "task_id": held(client)["id"], "grade": 1}).status_code == 200
        assert "B\u00f3b</bdi>" in client.get("/").get_data(as_text=True)
    assert query(db, "SELECT name FROM reviewers") == [("B\u00f3b",)]
    assert query(db, "SELECT reviewer, count(*) FROM live GROUP BY reviewer") == [("B\u00f3b", 2)]


def test_a_link_with_the_token_to_another_page_lands_there_without_it(tmp_path):
    app, _ = new_app(tmp_path, token="s3cret")
    alice = app.test_client()
    answer = alice.get("/stats?token=s3cret")
    assert answer.status_code == 302 and answer.headers["Location"] == "/stats"
    assert alice.get("/stats").status_code == 200
    assert alice.get("/?token=wrong").status_code == 302  # access already held: the stray token is dropped from the URL
    csrf = re.search(r'name="csrf-token" content="([^"]+)"', alice.get("/").get_data(as_text=True)).group(1)
    assert alice.post("/login", data={"name": "alice", "csrf_token": csrf}).status_code == 303
    csrf = re.search(r'name="csrf-token" content="([^"]+)"', alice.get("/").get_data(as_text=True)).group(1)  # renewed at sign-in
    task = held(alice)
    answer = alice.post("/api/decide?token=s3cret", json={"action": "skip", "task_id": task["id"]}, headers={"X-CSRF-Token": csrf})
    assert answer.status_code == 200 and answer.get_json()["progress"]["skipped"] == 1  # a POST is decided, never redirected


def test_undo_through_the_api_takes_back_the_latest_grade_and_shows_its_pair_again(tmp_path):
    app, db = new_app(tmp_path)
    alice, csrf = signed_in(app, "alice")
    answer = decide(alice, csrf, {"action": "undo"})
    assert answer.status_code == 200 and answer.get_json()["message"] == "nothing to undo"
    first = held(alice)
    assert decide(alice, csrf, {"action": "grade", "task_id": first["id"], "grade": 1}).status_code == 200
    state = decide(alice, csrf, {"action": "undo"}).get_json()
    assert state["message"] == f"undid your decision on {first['query_id']}/{first['chunk_id']}"
    assert state["task"]["id"] == first["id"] and state["progress"]["mine"] == 0
    assert query(db, "SELECT task_id, kind FROM decisions ORDER BY id") == [(first["id"], "grade"), (first["id"], "undo")]


def test_the_seconds_a_decision_took_are_kept_only_when_a_finite_number_not_below_zero(tmp_path):
    app, db = new_app(tmp_path)
    alice, csrf = signed_in(app, "alice")
    sent = [0, 2.5, True, -1, "3", None]
    for seconds in sent:
        assert decide(alice, csrf, {"action": "grade", "task_id": held(alice)["id"], "grade": 0, "seconds": seconds}).status_code == 200
    for raw in ["1e999", "NaN"]:  # infinity and NaN as Python's json reads them
        body = '{"action": "skip", "task_id": %d, "seconds": %s}' % (held(alice)["id"], raw)
        answer = alice.post("/api/decide", data=body, content_type="application/json", headers={"X-CSRF-Token": csrf})
        assert answer.status_code == 200, raw
    task_id = held(alice)["id"]
    answer = decide(alice, csrf, {"action": "skip", "task_id": task_id, "seconds": 10**400})
    assert answer.status_code == 400 and answer.get_json() == {"error": "a number in the request is out of range"}
    assert held(alice)["id"] == task_id
    assert query(db, "SELECT seconds FROM decisions ORDER BY id") == [(0.0,), (2.5,), (None,), (None,), (None,), (None,), (None,), (None,)]


def test_shown_is_exactly_64_lowercase_hexadecimal_digits(tmp_path):
    app, db = new_app(tmp_path)
    alice, csrf = signed_in(app, "alice")
    task = held(alice)
    for shown in ["", "a" * 65, "a" * 64 + "\n", "A" * 64, "g" * 64, 12]:
        answer = decide(alice, csrf, {"action": "grade", "task_id": task["id"], "grade": 1, "shown": shown})
        assert answer.status_code == 400, shown
        assert answer.get_json()["error"] == "shown must be the hash of the texts shown, 64 hexadecimal digits"
    assert query(db, "SELECT count(*) FROM decisions") == [(0,)]
    assert decide(alice, csrf, {"action": "grade", "task_id": task["id"], "grade": 1, "shown": task["shown"]}).status_code == 200


def test_ids_and_grades_at_the_edges_of_their_ranges(tmp_path):
    app, db = new_app(tmp_path)
    alice, csrf = signed_in(app, "alice")
    task_id = held(alice)["id"]
    between = f"task_id must be between 1 and {MAX_ID}"
    for body, status, error in [
        ({"action": "skip", "task_id": MAX_ID}, 409, f"no task {MAX_ID} in this review database"),
        ({"action": "skip", "task_id": MAX_ID + 1}, 400, between),
        ({"action": "skip", "task_id": 0}, 400, between),
        ({"action": "skip", "task_id": "5"}, 400, "task_id must be an integer"),
        ({"action": "grade", "task_id": task_id, "grade": 0.5}, 400, "grade must be an integer"),
        ({"action": "grade", "task_id": task_id, "grade": -1}, 400, "grade must be between 0 and 1"),
    ]:
        answer = decide(alice, csrf, body)
        assert (answer.status_code, answer.get_json()) == (status, {"error": error}), body
    assert decide(alice, csrf, {"action": "grade", "task_id": task_id, "grade": 0}).status_code == 200
    for grade in ["1 ", " 1", "1\n", "+1"]:  # a form's grade is ASCII digits, nothing around them
        answer = alice.post("/revise", data={"task_id": str(task_id), "grade": grade, "csrf_token": csrf})
        assert answer.status_code == 400 and "grade must be an integer" in answer.get_data(as_text=True), grade
        assert "<h1>400 Bad Request</h1>" in answer.get_data(as_text=True)  # the error page had no heading to find it by
    assert query(db, "SELECT kind, grade FROM live") == [("grade", 0)]
    assert '<bdi class="who">alice</bdi>' in alice.get("/stats").get_data(as_text=True)  # the stats page says who is signed in


def test_only_loopback_names_are_answered_when_bound_to_loopback(tmp_path):
    app, _ = new_app(tmp_path)
    client = app.test_client()
    for host, status in [("LocalHost:8765", 200), ("LOCALHOST", 200), ("[::1]:8765", 200), ("127.0.0.2:8765", 200),
                         ("localhost.evil.example:8765", 403), ("evil.example", 403), ("", 403)]:
        assert client.get("/", headers={"Host": host}).status_code == status, host


def test_a_body_may_nest_8_levels_and_no_more(tmp_path):
    app, db = new_app(tmp_path)
    alice, csrf = signed_in(app, "alice")
    for depth, status in [(8, 200), (9, 400)]:  # the object itself is the first level
        extra = "[" * (depth - 1) + "]" * (depth - 1)
        body = '{"action": "skip", "task_id": %d, "extra": %s}' % (held(alice)["id"], extra)
        answer = alice.post("/api/decide", data=body, content_type="application/json", headers={"X-CSRF-Token": csrf})
        assert answer.status_code == status, depth
    assert answer.get_json() == {"error": "the request body is nested too deeply"}
    assert query(db, "SELECT count(*) FROM decisions") == [(1,)]
    body = json.dumps({"action": "skip", "task_id": held(alice)["id"]})
    for content_type in ["text/plain", "application/x-www-form-urlencoded"]:  # what a form of another site may send
        answer = alice.post("/api/decide", data=body, content_type=content_type, headers={"X-CSRF-Token": csrf})
        assert answer.get_json() == {"error": "expected a JSON object (Content-Type: application/json)"}, content_type
    assert query(db, "SELECT count(*) FROM decisions") == [(1,)]


def controlled_db(tmp_path) -> str:
    """A queue of one pair whose texts hold an escape sequence and a bidi override, with a judge's p."""
    chunk = "ab\x1b[2Jcd efgh ijkl\u202emnop"
    pool = write_judged(tmp_path / "pool", {"c1": chunk}, {"q1": ("which\x07?", "the \u202eanswer")}, {("q1", "c1"): 0.7})
    judgments = [dict(json.loads(line), p=0.25) for line in open(pool["judgments"])]
    with open(pool["judgments"], "w") as out:
        out.write("".join(json.dumps(j) + "\n" for j in judgments))
    db = str(tmp_path / "r.sqlite")
    labelling = Labelling("R", (0.5,))
    conn = open_db(db)
    create_queue(conn, load_tasks(pool["judgments"], pool["labels"], pool["corpus"], pool["golden"], labelling), labelling,
                 QueueSettings())
    conn.close()
    return db


def test_the_page_gets_the_task_as_the_engine_holds_it_with_controls_shown(tmp_path):
    db = controlled_db(tmp_path)
    app = create_app(WebSettings(db, secret="test"))
    alice, _ = signed_in(app, "alice")
    task = held(alice)
    engine = Session(open_db(db), "x").task(task["id"])
    assert engine.p == 0.25 and engine.P != engine.R
    assert task == {
        "id": engine.id, "query_id": "q1", "chunk_id": "c1", "query": safe(engine.query), "answers": [safe(engine.answers[0])],
        "chunk": safe(engine.chunk), "shared": False, "highlight": False, "shown": engine.hash,
        "judge": {"P": engine.P, "R": engine.R, "F": engine.F, "p": 0.25, "proposed": engine.proposed, "on": "R", "thresholds": [0.5],
                  "line": task["judge"]["line"]},
    }
    text = json.dumps(task, ensure_ascii=False)
    assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text


def spans_of(chunk: str) -> list[tuple[int, int, float]]:
    """The median of the strengths is 0.5, the top 0.9: (0, 2) is shaded 1 and the last two characters 0.3456."""
    end = len(chunk)
    return [(0, 2, 0.9), (2, 4, 0.5), (5, 6, 0.0), (6, 7, 0.0), (7, 8, 0.0), (end - 2, end, 0.5 + 0.4 * 0.3456)]


def test_a_shading_is_the_whole_text_in_pieces_with_controls_shown(tmp_path):
    db = controlled_db(tmp_path)
    app = create_app(WebSettings(db, secret="test", highlighter=lambda task: spans_of(task.chunk)))
    alice, _ = signed_in(app, "alice")
    task = held(alice)
    assert task["highlight"] is True
    chunk = Session(open_db(db), "x").task(task["id"]).chunk
    answer = alice.get(f"/api/highlight/{task['id']}")
    assert answer.status_code == 200
    assert answer.get_json() == {"segments": [[safe(chunk[:2]), 1.0], [safe(chunk[2:-2]), 0.0], [safe(chunk[-2:]), 0.346]]}
    assert "\x1b" not in answer.get_data(as_text=True) and "\u202e" not in answer.get_data(as_text=True)
    answer = alice.get("/api/highlight/0")
    assert answer.status_code == 400 and answer.get_json() == {"error": f"task id must be between 1 and {MAX_ID}"}


def test_highlights_are_off_when_blind_or_without_a_highlighter(tmp_path):
    for settings in [{"highlighter": lambda task: [(0, 1, 1.0)], "blind": True}, {}]:
        app, _ = new_app(tmp_path / str(len(settings)), **settings)
        alice, _ = signed_in(app, "alice")
        task = held(alice)
        assert task["highlight"] is False and (task["judge"] is None) == bool(settings)
        answer = alice.get(f"/api/highlight/{task['id']}")
        assert (answer.status_code, answer.get_json()) == (404, {"error": "highlights are off"})
        assert app.extensions["semrel_highlights"] is None


def test_the_pair_shown_and_the_next_two_are_shaded_ahead_each_once(tmp_path):
    asked: list[str] = []
    computed = threading.Semaphore(0)

    def highlighter(task):
        asked.append(task.chunk_id)
        computed.release()
        return [(0, 1, 1.0)]

    app, db = new_app(tmp_path, highlighter=highlighter)
    alice, _ = signed_in(app, "alice")
    task = held(alice)
    for _ in range(3):
        assert computed.acquire(timeout=10)
    engine = Session(open_db(db), "x")
    expected = [task["chunk_id"]] + [t.chunk_id for t in engine.following(engine.task(task["id"]), 2)]
    for _ in range(3):
        assert alice.get(f"/api/highlight/{task['id']}").status_code == 200
        held(alice)
    app.extensions["semrel_highlights"].pool.shutdown(wait=True)
    assert asked == expected  # kept by text hash: asked again, never computed again


def test_a_shading_done_is_answered_while_others_wait_and_waiting_is_allowed_again_after(tmp_path):
    """Past HIGHLIGHT_WAITING waiting requests a request for a shading not done is 503; one done is answered at once, and
    once the waiting requests are answered, others may wait again."""
    assert HIGHLIGHT_WAITING == THREADS - 2 == 6  # "at most 6 requests wait for a shading at once" (docs/review-web.md)
    release = threading.Event()
    blocked = {"id": None}

    def highlighter(task):
        if task.id == blocked["id"]:
            release.wait(30)
        return [(0, 1, 1.0)]

    app, db = new_app(tmp_path, highlighter=highlighter)
    highlights = app.extensions["semrel_highlights"]
    conn = open_db(db)
    (last,), (other,) = conn.execute("SELECT id FROM tasks ORDER BY position DESC LIMIT 2").fetchall()
    conn.close()
    blocked["id"] = last  # the last pair in the queue: not among the first three, which are shaded ahead
    alice, _ = signed_in(app, "alice")
    first = held(alice)["id"]
    assert alice.get(f"/api/highlight/{first}").status_code == 200  # done
    answers: list[int] = []
    clients = [signed_in(app, f"r{i}")[0] for i in range(HIGHLIGHT_WAITING)]
    waiting = [threading.Thread(target=lambda c=c: answers.append(c.get(f"/api/highlight/{last}").status_code)) for c in clients]
    for thread in waiting:
        thread.start()
    given_up = time.monotonic() + 60  # a guard against a hang, not a timing: the loop ends when all of them wait
    while highlights.waiting._value and time.monotonic() < given_up:
        time.sleep(0.01)
    assert highlights.waiting._value == 0
    assert alice.get(f"/api/highlight/{other}").status_code == 503  # another chunk, not done: no thread to wait with
    assert alice.get(f"/api/highlight/{first}").status_code == 200  # done: answered without waiting
    release.set()
    for thread in waiting:
        thread.join(30)
    assert answers == [200] * HIGHLIGHT_WAITING
    for _ in range(HIGHLIGHT_WAITING):
        assert highlights.waiting.acquire(blocking=False)  # every waiting request gave its place back
    for _ in range(HIGHLIGHT_WAITING):
        highlights.waiting.release()


def cookie_value(client, app) -> str:
    cookie = client.get_cookie(app.config["SESSION_COOKIE_NAME"])
    return cookie and cookie.value


def test_signing_out_deletes_the_cookie_in_the_browser_too(tmp_path):
    app, _ = new_app(tmp_path)
    alice, csrf = signed_in(app, "alice")
    answer = alice.post("/logout", data={"csrf_token": csrf})
    assert answer.status_code == 303 and answer.headers["Location"] == "/"
    (deleted,) = answer.headers.getlist("Set-Cookie")
    assert deleted.startswith(app.config["SESSION_COOKIE_NAME"] + "=;") and "Max-Age=0" in deleted
    assert "HttpOnly" in deleted and "SameSite=Strict" in deleted
    assert cookie_value(alice, app) is None and app.session_interface.store == {}


def test_signing_out_leaves_the_pair_on_screen_to_the_next_reviewer(tmp_path):
    """A signed-out reviewer's pair was held from everyone for 10 minutes, and the page told the others it was held."""
    app, _ = new_app(tmp_path)
    bob, csrf = signed_in(app, "bob")
    left = held(bob)["id"]
    assert bob.post("/logout", data={"csrf_token": csrf}).status_code == 303
    alice, _ = signed_in(app, "alice")
    assert held(alice)["id"] == left


def test_the_session_held_before_sign_in_is_gone_after_it(tmp_path):
    """The session of the link (which holds access) is renewed at sign-in: its id, planted or copied before, grants nothing after."""
    app, _ = new_app(tmp_path, token="s3cret")
    alice = app.test_client()
    assert alice.get("/?token=s3cret").status_code == 302
    before = cookie_value(alice, app)
    csrf = re.search(r'name="csrf-token" content="([^"]+)"', alice.get("/").get_data(as_text=True)).group(1)
    assert alice.post("/login", data={"name": "alice", "csrf_token": csrf}).status_code == 303
    assert cookie_value(alice, app) != before and list(app.session_interface.store) == [cookie_value(alice, app)]
    planted = app.test_client()
    planted.set_cookie(app.config["SESSION_COOKIE_NAME"], before)
    assert planted.get("/").status_code == 403


def test_the_session_used_last_is_kept_and_the_one_used_longest_ago_dropped(tmp_path):
    app, _ = new_app(tmp_path)
    assert app.session_interface.limit == 10_000  # docs/review-web.md: "at most 10,000 sessions are kept"
    alice, bob, carol = (signed_in(app, name)[0] for name in ("alice", "bob", "carol"))
    assert alice.get("/api/task").status_code == 200  # alice's is now the one used last
    app.session_interface.limit = 2
    assert app.test_client().get("/").status_code == 200  # a new session: it and then bob's (used longest ago) go
    assert [c.get("/api/task").status_code for c in (alice, bob, carol)] == [200, 401, 200]


def test_a_session_that_holds_access_from_the_link_is_not_dropped_before_empty_ones(tmp_path):
    """Assets are answered without access, so requests for them make sessions that hold nothing: those go first."""
    app, _ = new_app(tmp_path, token="s3cret")
    app.session_interface.limit = 3
    alice = app.test_client()
    assert alice.get("/?token=s3cret").status_code == 302
    for _ in range(5):
        assert app.test_client().get("/assets/review.css").status_code == 200
    assert alice.get("/").status_code == 200  # still the sign-in page, not "needs the link"


def test_a_cookie_is_named_after_the_database_however_its_path_is_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cookie_name("r.sqlite") == cookie_name(str(tmp_path / "r.sqlite")) == cookie_name("./sub/../r.sqlite")
    assert cookie_name("r.sqlite") != cookie_name("other.sqlite") and re.fullmatch(r"semrel_review_[0-9a-f]{12}", cookie_name("r.sqlite"))
    assert cookie_name("r.sqlite", 8765) != cookie_name("r.sqlite", 8766)


def test_two_servers_of_one_database_on_two_ports_keep_a_browser_signed_in_on_both(tmp_path):
    """A browser sends a host's cookies to every port of it: under one name per database, signing in on the second server
    replaced the first server's cookie, and the reviewer was signed out there (and back and forth)."""
    _, db = new_app(tmp_path)
    servers = [ReviewServer(WebSettings(db, secret=f"key{i}"), "127.0.0.1", 0) for i in range(2)]
    threads = [threading.Thread(target=server.run, daemon=True) for server in servers]
    for thread in threads:
        thread.start()
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))  # one jar, as a browser's

    def sign_in(server: ReviewServer, name: str) -> None:
        page = browser.open(server.url).read().decode()
        csrf = re.search(r'name="csrf-token" content="([^"]+)"', page).group(1)
        browser.open(server.url + "login", urllib.parse.urlencode({"name": name, "csrf_token": csrf}).encode()).read()

    try:
        sign_in(servers[0], "alice")
        sign_in(servers[1], "alice")
        for server in servers:
            assert json.loads(browser.open(server.url + "api/task").read())["task"] is not None  # signed in on both
    finally:
        for server in servers:  # closed in its loop's thread: closed from here, its sockets went under its select (EBADF)
            server.server.trigger.pull_trigger(server.stop)
        for thread in threads:
            thread.join(10)
        assert not any(thread.is_alive() for thread in threads)


def test_a_host_name_of_two_addresses_is_served_with_its_link(tmp_path, monkeypatch):
    """localhost is 127.0.0.1 and ::1 on most machines: waitress listens on each and has no effective_port, and the
    link (and the cookie's name) read it: an AttributeError traceback."""
    _, db = new_app(tmp_path)
    resolve = socket.getaddrinfo

    def two(host, *args, **kwargs):
        hosts = ["127.0.0.1", "::1"] if host == "localhost" else [host]
        return [found for name in hosts for found in resolve(name, *args, **kwargs)]

    monkeypatch.setattr(socket, "getaddrinfo", two)
    server = ReviewServer(WebSettings(db, secret="key"), "localhost", 0)
    try:
        port = server.server.effective_listen[0][1]
        assert server.url == f"http://localhost:{port}/" and server.app.config["SESSION_COOKIE_NAME"] == cookie_name(db, port)
    finally:
        server.stop()


@pytest.mark.slow
def test_only_the_last_50_decisions_can_be_revised(tmp_path):
    pool, db = write_large_pool(tmp_path / "pool", queries=9, chunks=6), str(tmp_path / "r.sqlite")
    labelling = Labelling("R", (0.5,))
    conn = open_db(db)
    create_queue(conn, load_tasks(pool["judgments"], pool["labels"], pool["corpus"], pool["golden"], labelling), labelling,
                 QueueSettings())
    conn.close()
    app = create_app(WebSettings(db, secret="test"))
    alice, csrf = signed_in(app, "alice")
    ids = []
    for _ in range(51):
        ids.append(held(alice)["id"])
        assert decide(alice, csrf, {"action": "grade", "task_id": ids[-1], "grade": 1}).status_code == 200
    assert alice.get("/recent").get_data(as_text=True).count('action="/revise"') == 50
    answer = alice.post("/revise", data={"task_id": str(ids[0]), "grade": "0", "csrf_token": csrf})
    assert answer.status_code == 409 and "not among your last 50 decisions" in answer.get_data(as_text=True)
    answer = alice.post("/revise", data={"task_id": str(ids[1]), "grade": "0", "csrf_token": csrf})
    assert answer.status_code == 303 and answer.headers["Location"] == f"/recent?changed={ids[1]}#changed"
    assert query(db, f"SELECT grade FROM live WHERE task_id IN ({ids[0]}, {ids[1]}) ORDER BY task_id = {ids[1]}") == [(1,), (0,)]


def post_body(client: Client, body: bytes) -> int:
    headers = {"Content-Type": "application/json", "X-CSRF-Token": client.csrf}
    return client.request("POST", "/api/decide", body, headers)[0]


def padded(task_id: int, size: int) -> bytes:
    body = json.dumps({"action": "skip", "task_id": task_id}).encode()
    return body[:-1] + b" " * (size - len(body)) + b"}"


@pytest.mark.slow
def test_a_body_of_64_kib_is_taken_and_one_byte_more_is_413(tmp_path):
    """The documented limit holds at the byte in the real server: waitress refuses a body of its own limit or longer, so
    it is set one over Flask's (a body of exactly 64 KiB had been a 413)."""
    with alice_at_her_first_pair(tmp_path) as (alice, task_id, db):
        assert post_body(alice, padded(task_id, 64 * 1024 + 1)) == 413
        assert post_body(alice, padded(task_id, 64 * 1024)) == 200
    assert query(db, "SELECT task_id, kind FROM decisions") == [(task_id, "skip")]


@pytest.mark.slow
def test_a_token_with_characters_a_url_reserves_still_opens_the_page(tmp_path, monkeypatch):
    monkeypatch.setenv("SEMREL_REVIEW_SERVE_TOKEN", "a&b #c+d/é")
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "r.sqlite")
    with Server(db, pool, "--no-highlight") as server:
        assert server.link == server.base + "/?token=a%26b%20%23c%2Bd/%C3%A9"
        assert not any("shows in `ps`" in line for line in server.lines)  # from the environment: no warning
        alice = Client(server.base)
        assert alice.get(server.link[len(server.base):])[0] == 302
        assert alice.get("/")[0] == 200


@pytest.mark.slow
def test_sigterm_stops_the_page_as_ctrl_c_does(tmp_path):
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "r.sqlite")
    server = Server(db, pool, "--no-highlight")
    alice = Client(server.base)
    alice.sign_in("alice")
    assert alice.api({"action": "grade", "task_id": alice.task()["task"]["id"], "grade": 1})[0] == 200
    server.proc.send_signal(signal.SIGTERM)
    server.proc.wait(timeout=30)  # stopped by SIGTERM alone (stop() sends Ctrl-C only to a server still running)
    log = server.stop()
    assert server.proc.returncode == 0 and "Traceback" not in log
    assert log.rstrip().endswith("semrel: review page stopped; every decision is saved")
    assert query(db, "SELECT reviewer, kind, grade FROM decisions") == [("alice", "grade", 1)]


def ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as sock:
            sock.bind(("::1", 0))
        return True
    except OSError:
        return False


@pytest.mark.slow
@pytest.mark.skipif(not ipv6_loopback(), reason="no IPv6 loopback on this machine")
def test_the_link_to_an_ipv6_address_brackets_it(tmp_path):
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "r.sqlite")
    with Server(db, pool, "--no-highlight", "--host", "::1") as server:
        assert re.fullmatch(r"http://\[::1\]:\d+/", server.link)
        assert Client(server.base).get("/")[0] == 200


def test_a_host_of_spaces_is_empty(cli, tmp_path):
    result = cli("review", "serve", "--db", tmp_path / "r.sqlite", "--host", "  ", "--port", "0")
    assert result.exit_code == 1 and "--host is empty" in result.stderr and "Traceback" not in result.output
    assert not os.path.exists(tmp_path / "r.sqlite")


def test_the_end_of_the_queue_counts_pairs_another_reviewer_still_holds(tmp_path):
    app, db = new_app(tmp_path)
    bob, bob_csrf = signed_in(app, "bob")
    held(bob)  # shown to bob, who leaves it on screen
    alice, csrf = signed_in(app, "alice")
    state = alice.get("/api/task").get_json()
    assert state["end"] is None
    while state["task"] is not None:
        state = decide(alice, csrf, {"action": "grade", "task_id": state["task"]["id"], "grade": 1}).get_json()
    assert state["progress"] == {"total": 12, "done": 11, "mine": 11, "flagged": 0, "graded": 11, "skipped": 0}
    assert state["end"].startswith("no pair is free for you now: 1 pair of the 12 is not decided yet but held by other reviewers")
    bob_state = decide(bob, bob_csrf, {"action": "skip", "task_id": held(bob)["id"]}).get_json()
    assert bob_state["task"] is None
    assert bob_state["end"] == "all 12 tasks are reviewed, 1 of them skipped (a skipped pair keeps its derived label)"


def test_progress_counts_the_pairs_with_a_human_grade_as_review_stats_does_and_skips_apart(tmp_path):
    """The page's progress counted a skipped pair as reviewed ("2/12 reviewed" after a grade and a skip) where
    `review stats` says 1 of 12 pairs has a human grade; the skip stays in the queue's done (the pair is not offered again)."""
    app, db = new_app(tmp_path)
    alice, csrf = signed_in(app, "alice")
    first = held(alice)
    decide(alice, csrf, {"action": "grade", "task_id": first["id"], "grade": 1})
    second = held(alice)
    state = decide(alice, csrf, {"action": "skip", "task_id": second["id"]}).get_json()
    assert state["progress"] == {"total": 12, "done": 2, "mine": 1, "flagged": 0, "graded": 1, "skipped": 1}
    assert state["task"]["id"] not in (first["id"], second["id"])
    assert review_stats(db).reviewed == state["progress"]["graded"]


def test_the_stats_page_of_a_blind_review_leaves_out_agreement_with_the_judge(tmp_path):
    for blind in (False, True):
        app, db = new_app(tmp_path / str(blind), blind=blind)
        alice, csrf = signed_in(app, "alice")
        for grade in (1, 0, 1):
            assert decide(alice, csrf, {"action": "grade", "task_id": held(alice)["id"], "grade": grade}).status_code == 200
        page = alice.get("/stats").get_data(as_text=True)
        judge = next(a.agreement for a in review_stats(db).agreements if a.with_judge)  # the lead's `review stats` has it
        row = re.search(r"<td><bdi>alice</bdi></td><td><bdi>judge</bdi></td><td>(\d+)</td><td>([\d.]+)</td>", page)
        if blind:
            assert row is None and "judge" not in page.replace("with the judge is left out", "")
        else:
            assert row and int(row.group(1)) == judge.n == 3 and float(row.group(2)) == round(judge.percent, 1)



def test_a_page_left_open_under_one_name_decides_nothing_once_the_browser_signs_in_another(tmp_path):
    """Sign-in tabs of one browser share its session: once bob signed in in the second, a grade pressed
    in the first, which still showed alice and her (shared) pair, was recorded as bob's."""
    conn, _ = queued_db(tmp_path, QueueSettings(overlap=3))
    conn.close()
    db = str(tmp_path / "r.sqlite")
    browser = create_app(WebSettings(db, secret="test")).test_client()

    def page_csrf() -> str:
        return re.search(r'name="csrf-token" content="([^"]+)"', browser.get("/").get_data(as_text=True)).group(1)

    csrf = page_csrf()  # the sign-in page, open in two tabs
    assert browser.post("/login", data={"name": "alice", "csrf_token": csrf}).status_code == 303
    alices, pair = page_csrf(), held(browser)["id"]
    assert browser.post("/login", data={"name": "bob", "csrf_token": csrf}).status_code == 403  # the second tab's form
    assert browser.post("/logout", data={"csrf_token": alices}).status_code == 303
    assert browser.post("/login", data={"name": "bob", "csrf_token": page_csrf()}).status_code == 303
    assert held(browser)["id"] == pair  # shared: bob holds it too
    answer = decide(browser, alices, {"action": "grade", "task_id": pair, "grade": 1})  # alice's page, never reloaded
    assert answer.status_code == 403 and query(db, "SELECT count(*) FROM decisions") == [(0,)]
    assert answer.get_json()["error"] == ("this page is out of date (the review server restarted, or someone signed in again "
                                          "in this browser): reload it")  # was "missing or wrong CSRF token", which said neither


def test_signing_in_under_a_name_review_simulate_graded_under_is_refused_with_why(tmp_path):
    """`review start` warns a person whose name `review simulate` graded under (the simulation's grades count as theirs and
    its pairs are never shown again); the page signed them in without a word."""
    app, db = new_app(tmp_path)
    with contextlib.closing(open_db(db)) as conn:
        assert simulate_decisions(Session(conn, "gold"), {}) == (0, 12)  # pairs it has no grade for are skipped
    client = app.test_client()
    csrf = re.search(r'name="csrf-token" content="([^"]+)"', client.get("/").get_data(as_text=True)).group(1)
    refused = client.post("/login", data={"name": "gold", "csrf_token": csrf})
    assert refused.status_code == 409
    assert ("12 of gold's decisions here were made by `review simulate`: they count as gold's in stats and export, and their pairs "
            "are not shown again; review under another name") in html.unescape(refused.get_data(as_text=True))
    assert client.get("/api/task").status_code == 401  # not signed in
    assert client.post("/login", data={"name": "alice", "csrf_token": csrf}).status_code == 303


def test_a_decision_saved_before_the_database_turned_busy_is_told_saved_not_to_be_tried_again(tmp_path, monkeypatch):
    """Another writer takes the database between a committed decision and the read of the next pair, past the busy
    timeout: the answer said 'nothing of this step was saved; try again', and an undo tried again took back a second
    decision. Now it says the decision is saved and to reload."""
    from semrel.review import engine, store

    app, db = new_app(tmp_path)
    monkeypatch.setattr(store, "BUSY_TIMEOUT_MS", 200)  # read by each new connection
    alice, csrf = signed_in(app, "alice")
    first = held(alice)
    assert decide(alice, csrf, {"action": "grade", "task_id": first["id"], "grade": 1}).status_code == 200
    second = held(alice)
    other = open_db(db)
    for method in ("grade", "undo"):
        original = getattr(engine.Session, method)
        monkeypatch.setattr(engine.Session, method,
                            lambda self, *a, _f=original, **k: (_f(self, *a, **k), other.execute("BEGIN IMMEDIATE"))[0])
    for body, done in [({"action": "grade", "task_id": second["id"], "grade": 0}, "your grade"), ({"action": "undo"}, "your undo")]:
        answer = decide(alice, csrf, body)
        other.execute("COMMIT")
        assert answer.status_code == 503
        told = answer.get_json()["error"]
        assert told == f"{done} is saved, but the next pair could not be read (the review database is busy): reload the page"
    assert query(db, "SELECT task_id, kind, grade, undoes IS NOT NULL FROM decisions ORDER BY id") == [
        (first["id"], "grade", 1, 0), (second["id"], "grade", 0, 0), (second["id"], "undo", None, 1)]
    other.close()


def test_recent_decisions_shorten_a_long_query_as_they_do_a_long_chunk(tmp_path):
    """The query was shown whole in each row: a query of 12,000 characters made each row of the table a page long."""
    pool = write_judged(tmp_path / "pool", {"c1": "word " * 3000, "c2": "short"}, {"q1": ("why " * 3000, "because")},
                        {("q1", "c1"): 0.6, ("q1", "c2"): 0.6})
    db, labelling = str(tmp_path / "r.sqlite"), Labelling("R", (0.5,))
    with contextlib.closing(open_db(db)) as conn:
        create_queue(conn, load_tasks(pool["judgments"], pool["labels"], pool["corpus"], pool["golden"], labelling), labelling,
                     QueueSettings())
    alice, csrf = signed_in(create_app(WebSettings(db, secret="test")), "alice")
    assert decide(alice, csrf, {"action": "grade", "task_id": held(alice)["id"], "grade": 1}).status_code == 200
    row = re.search(r"<tbody>(.*)</tbody>", alice.get("/recent").get_data(as_text=True), re.S).group(1)
    texts = re.findall(r'<bdi dir="auto">([^<]*)</bdi>', row)
    assert texts == ["why " * 58 + "why...", "word " * 46 + "word..."]  # cut at a space within 240 characters


def test_a_decision_sent_with_the_ids_of_another_pair_is_refused_and_stores_nothing(tmp_path):
    """After a restart the page signs in again and sends its decision again (review.js reopen): its task id alone, with
    another database served since at that address, may name another pair, so the ids shown go with it and are checked."""
    app, db = new_app(tmp_path)
    alice, csrf = signed_in(app, "alice")
    task = held(alice)
    answer = decide(alice, csrf, {"action": "grade", "task_id": task["id"], "pair": [task["query_id"], "c99"], "grade": 1})
    assert answer.status_code == 409 and answer.get_json()["error"] == (
        f"task {task['id']} is not the pair this page shows ({task['query_id']} / c99; the review database changed): "
        "nothing was saved; reload the page")
    for bad in (f"{task['query_id']}/{task['chunk_id']}", [task["query_id"]], [task["query_id"], 3], {"q": "c"}):
        answer = decide(alice, csrf, {"action": "skip", "task_id": task["id"], "pair": bad})
        assert answer.status_code == 400 and answer.get_json()["error"] == "pair must be the query id and chunk id shown, two strings"
    assert query(db, "SELECT count(*) FROM decisions") == [(0,)]
    pair = [task["query_id"], task["chunk_id"]]
    assert decide(alice, csrf, {"action": "grade", "task_id": task["id"], "pair": pair, "grade": 1}).status_code == 200
    assert query(db, "SELECT task_id, kind, grade FROM decisions") == [(task["id"], "grade", 1)]


def test_the_session_answer_gives_the_page_what_it_signs_in_again_with_after_a_restart(tmp_path):
    """The start of the server tells a restart (a new session for a page shown before it) from a session ended on it."""
    app, db = new_app(tmp_path)
    alice, csrf = signed_in(app, "alice")
    config = json.loads(html.unescape(re.search(r"data-config='([^']+)'", alice.get("/").get_data(as_text=True)).group(1)))
    assert config["reviewer"] == "alice"
    assert alice.get("/api/session").get_json() == {"boot": config["boot"], "csrf": csrf, "reviewer": "alice",
                                                    "review": config["review"]}
    restarted = create_app(WebSettings(db, secret="test"))  # the same database, started again
    fresh = restarted.test_client().get("/api/session").get_json()
    assert fresh["reviewer"] is None and fresh["boot"] != config["boot"] and fresh["csrf"] not in ("", csrf)
    assert fresh["review"] == config["review"]
    (tmp_path / "other").mkdir()
    other, _ = new_app(tmp_path / "other")  # another database, the same queue: a page of the first does not sign in there
    assert other.test_client().get("/api/session").get_json()["review"] != config["review"]
