"""The review page against hostile requests: malformed bodies and out-of-range numbers get 400
(never 500), a session cookie replayed after sign-out is worthless, names that could drive a
terminal are refused at login, text direction is isolated, cookies are Secure behind TLS."""

from __future__ import annotations

import copy
import http.cookiejar
import json
import re
import urllib.request
from html import unescape

import pytest
from test_review_processes import query
from test_web_api_checks import signed_in

from catalogue import TALLY
from review_helpers import queued_db, write_judged, write_pool
from review_web_helpers import Client, Server, alice_at_her_first_pair
from semrel.formats.jsonl import too_deep
from semrel.review.store import open_db
from semrel.review.web.app import WebSettings, create_app

NESTED = '{"action": "grade", "task_id": ' + "[" * 20_000 + "]" * 20_000 + ', "grade": 1}'


def post(client: Client, body: bytes, content_type: str = "application/json") -> tuple[int, str]:
    return client.request("POST", "/api/decide", body, {"Content-Type": content_type, "X-CSRF-Token": client.csrf})


@pytest.mark.slow
def test_malformed_bodies_and_huge_ids_get_400_never_500(tmp_path):
    with alice_at_her_first_pair(tmp_path) as (alice, task_id, db):
        hostile = {
            "JSON nested 20,000 deep": NESTED.encode(),
            "an array nested 30,000 deep": b"[" * 30_000,
            "task_id 2**70": json.dumps({"action": "grade", "task_id": 2**70, "grade": 1}).encode(),
            "task_id -1": json.dumps({"action": "skip", "task_id": -1}).encode(),
            "task_id 1e308": b'{"action": "skip", "task_id": 1e308}',
            "task_id Infinity": b'{"action": "skip", "task_id": Infinity}',
            "task_id NaN": b'{"action": "skip", "task_id": NaN}',
            "task_id 0.5": b'{"action": "skip", "task_id": 0.5}',
            "task_id of 5,000 digits": b'{"action": "skip", "task_id": "' + b"9" * 5000 + b'"}',
            "grade 2**70": json.dumps({"action": "grade", "task_id": task_id, "grade": 2**70}).encode(),
            "not UTF-8": b'{"action": "skip", "task_id": "\xff"}',
            "not JSON": b"action=skip",
            "a JSON string": b'"skip"',
        }
        for name, body in hostile.items():
            status, text = post(alice, body)
            TALLY.record(f"web: {name}", refused=True, traceback=status >= 500)
            assert status == 400, (name, status, text)
            assert "error" in json.loads(text), name
        assert post(alice, b'{"action": "skip"}', "text/plain")[0] == 400
        status, _ = alice.form("/revise", {"task_id": str(2**70), "grade": "1"})
        assert status == 400
        status, _ = alice.form("/revise", {"task_id": str(task_id), "grade": str(2**70)})
        assert status == 400
        assert alice.get(f"/api/highlight/{2**70}")[0] in (400, 404)  # highlights are off here: 404 before the id is read
        assert alice.task()["task"]["id"] == task_id  # nothing was decided
    # Server.__exit__ checks its log: no traceback


def cookie_of(client: Client) -> http.cookiejar.Cookie:
    (cookie,) = [c for c in client.jar if c.name.startswith("semrel_review_")]
    return copy.copy(cookie)


def replayed(base: str, cookie: http.cookiejar.Cookie) -> Client:
    jar = http.cookiejar.CookieJar()
    jar.set_cookie(copy.copy(cookie))
    return Client(base, jar)


@pytest.mark.slow
@pytest.mark.parametrize("token", [None, "s3cret"], ids=["open", "with a token"])
def test_a_cookie_replayed_after_sign_out_is_refused(tmp_path, monkeypatch, token):
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "r.sqlite")
    if token:
        monkeypatch.setenv("SEMREL_REVIEW_SERVE_TOKEN", token)  # the way the docs recommend: not on the command line
    with Server(db, pool, "--no-highlight") as server:
        alice = Client(server.base)
        before_login = None
        if token:
            assert server.link.endswith(f"?token={token}")
            alice.get(server.link[len(server.base):])
            before_login = cookie_of(alice).value
        alice.sign_in("alice")
        assert before_login is None or cookie_of(alice).value != before_login  # a new session id at sign-in
        stolen, csrf = cookie_of(alice), alice.csrf
        assert alice.task()["task"] is not None
        alice.get("/")
        assert alice.form("/logout", {})[0] == 303
        thief = replayed(server.base, stolen)
        thief.csrf = csrf
        status, _ = thief.get("/api/task")
        TALLY.record("web: a session cookie replayed after sign-out", refused=True, traceback=status >= 500)
        assert status in (401, 403) and status == (403 if token else 401)
        assert thief.api({"action": "skip", "task_id": 1})[0] == 403  # its CSRF token went with the session
        status, page = thief.get("/stats")
        assert status == (403 if token else 200) and ("alice" not in page or not token)
        assert alice.get("/api/task")[0] == (403 if token else 401)  # the browser itself is signed out too


@pytest.mark.slow
def test_names_that_could_drive_a_terminal_are_refused_at_login(tmp_path):
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "r.sqlite")
    with Server(db, pool, "--no-highlight") as server:
        for name in ["eve\x1b]0;owned\x07", "eve\x00", "photo\u202egnp.exe", "eve\x1b[2J", "x" * 81, "   "]:
            client = Client(server.base)
            client.get("/")
            status, page = client.form("/login", {"name": name})
            TALLY.record(f"web login name {name[:12]!r}", refused=True, traceback=status >= 500)
            assert status == 400 and "printable" in page, name
        for name in ["Zoë Ñandú", "王小明", "אורי כהן", "  spaced   out  "]:
            client = Client(server.base)
            client.sign_in(name)
            assert client.task()["task"] is not None
            TALLY.record(f"web login name {name!r}", refused=False)


@pytest.mark.slow
def test_text_direction_is_isolated_and_controls_are_shown(tmp_path):
    chunks = {"c1": "Invoice attached: photo\u202egnp.exe and \x1b]0;title\x07 text", "c2": "שלום עולם, hello"}
    pool = write_judged(tmp_path / "pool", chunks, {"q\u202e1": ("which file\u202e?", "photo.png")},
                        {("q\u202e1", "c1"): 0.9, ("q\u202e1", "c2"): 0.2})
    with Server(str(tmp_path / "r.sqlite"), pool, "--no-highlight") as server:
        alice = Client(server.base)
        alice.sign_in("alice")
        task = alice.task()["task"]
        shown = json.dumps(task, ensure_ascii=False)
        assert "\u202e" not in shown and "\x1b" not in shown and "\\u202e" in task["chunk"] + task["query_id"]
        status, page = alice.get("/")
        for element in ('<p id="query" dir="auto">', '<ol id="answers" dir="auto">', '<div id="chunk" class="chunk" dir="auto">',
                        '<bdi id="query-id" class="id">', '<bdi class="who">alice</bdi>'):
            assert element in page, element
        alice.api({"action": "grade", "task_id": task["id"], "grade": 1})
        status, recent = alice.get("/recent")
        assert status == 200 and "\u202e" not in recent and '<bdi class="id">q\\u202e1</bdi>' in recent


def set_cookies(base: str) -> list[str]:
    with urllib.request.urlopen(base + "/") as response:
        return response.headers.get_all("Set-Cookie") or []


@pytest.mark.slow
def test_secure_cookies_behind_tls_and_warnings_beyond_loopback(tmp_path):
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "r.sqlite")
    with Server(db, pool, "--no-highlight") as server:
        (plain,) = set_cookies(server.base)
        assert "HttpOnly" in plain and "SameSite=Strict" in plain and "Secure" not in plain
    with Server(db, None, "--no-highlight", "--secure-cookies") as server:
        (secure,) = set_cookies(server.base)
        assert "; Secure" in secure and "HttpOnly" in secure
    with Server(db, None, "--no-highlight", "--host", "0.0.0.0", "--token", "on-the-command-line") as server:
        log = "".join(server.lines)
    assert "shows in `ps`" in log and "SEMREL_REVIEW_SERVE_TOKEN" in log
    assert "over plain HTTP" in log and "--secure-cookies" in log
    with Server(db, None, "--no-highlight", "--host", "0.0.0.0", "--secure-cookies") as server:
        log = "".join(server.lines)
    assert "without --token" in log and "plain HTTP" not in log


def test_a_csrf_token_with_non_ascii_characters_is_refused_not_a_500(tmp_path):
    """hmac.compare_digest raises on str with non-ASCII characters: a header or form field of
    "été" was a 500 (and a traceback in the server's log) instead of a 403."""
    conn, _ = queued_db(tmp_path)
    conn.close()
    app = create_app(WebSettings(str(tmp_path / "r.sqlite"), secret="test"))
    alice, csrf = signed_in(app, "alice")
    task_id = alice.get("/api/task").get_json()["task"]["id"]
    for forged in ["\xe9t\xe9", csrf[:-1] + "\xe9"]:
        answer = alice.post("/api/decide", json={"action": "skip", "task_id": task_id}, headers={"X-CSRF-Token": forged})
        assert answer.status_code == 403 and "this page is out of date" in answer.get_json()["error"], forged
        answer = alice.post("/revise", data={"task_id": str(task_id), "grade": "1", "csrf_token": forged})
        assert answer.status_code == 403 and "this page is out of date" in answer.get_data(as_text=True), forged
    assert alice.get("/api/task").get_json()["task"]["id"] == task_id  # nothing was decided
    assert alice.post("/api/decide", json={"action": "skip", "task_id": task_id}, headers={"X-CSRF-Token": csrf}).status_code == 200


def test_a_flood_of_requests_without_a_cookie_does_not_sign_reviewers_out(tmp_path):
    """Every request without a cookie makes a session (its CSRF token); kept least recently used
    first, 10,000 of them (an <img> loop on another site's page, or any local process) pushed every
    signed-in reviewer out. Sessions that hold nothing else go first."""
    conn, _ = queued_db(tmp_path)
    conn.close()
    app = create_app(WebSettings(str(tmp_path / "r.sqlite"), secret="test"))
    app.session_interface.limit = 5
    alice, _ = signed_in(app, "alice")
    for _ in range(20):
        assert app.test_client().get("/").status_code == 200  # the sign-in page: a new session for its CSRF token
    assert alice.get("/api/task").status_code == 200
    assert len(app.session_interface.store) == 5


def test_a_revision_to_a_grade_outside_the_scale_is_a_400_as_in_the_api(tmp_path):
    """/api/decide answered a grade outside 0..top with 400; /revise with 409 Conflict, as if the
    decision had changed meanwhile, for the same mistake in the request."""
    conn, _ = queued_db(tmp_path)
    conn.close()
    db = str(tmp_path / "r.sqlite")
    app = create_app(WebSettings(db, secret="test"))
    alice, csrf = signed_in(app, "alice")
    task_id = alice.get("/api/task").get_json()["task"]["id"]
    assert alice.post("/api/decide", json={"action": "grade", "task_id": task_id, "grade": 1},
                      headers={"X-CSRF-Token": csrf}).status_code == 200
    for grade in ["2", "-1", "99"]:
        answer = alice.post("/revise", data={"task_id": str(task_id), "grade": grade, "csrf_token": csrf})
        assert answer.status_code == 400 and "grade must be between 0 and 1" in answer.get_data(as_text=True), grade
    assert alice.post("/revise", data={"task_id": str(task_id), "grade": "0", "csrf_token": csrf}).status_code == 303
    assert query(db, "SELECT kind, grade FROM live") == [("grade", 0)]


def test_a_body_of_escaped_quotes_is_refused_at_once_not_after_seconds_holding_every_thread(tmp_path):
    """The nesting check skipped JSON strings with a regex that, for a string left open, scanned to
    the end again from every quote after an escaped one: 64 KiB of \\" took 12 s of CPU, under the
    GIL, so one request stalled every reviewer's page. An open string now runs to the end: one scan, so its
    brackets are not counted (the timing is no test's: the brackets that were counted show the restarts)."""
    conn, _ = queued_db(tmp_path)
    conn.close()
    app = create_app(WebSettings(str(tmp_path / "r.sqlite"), secret="test"))
    alice, csrf = signed_in(app, "alice")
    hostile = "[" * 9 + '"' + '\\"' * 32_000
    answer = alice.post("/api/decide", data=hostile, content_type="application/json", headers={"X-CSRF-Token": csrf})
    assert answer.status_code == 400 and "nested too deeply" in answer.get_json()["error"]
    answer = alice.post("/api/decide", data='"' + '\\"' * 32_000 + "[" * 9, content_type="application/json",
                        headers={"X-CSRF-Token": csrf})
    assert answer.status_code == 400 and answer.get_json()["error"] == "expected a JSON object"  # brackets in the open string
    assert too_deep('{"a": "[[[[[[[[[[", "b": "\\\\"}', limit=8) is False  # brackets in closed strings still skipped
    assert too_deep('{"a": "\\\\\\"", "b": [[[[[[[[[]]]]]]]]]}', limit=8) is True
    assert too_deep('a = "' + '\\"' * 10 + "[" * 9 + "\n", toml=True, limit=8) is False  # a TOML string open to its line's end
    assert too_deep('a = "x" # [[[[[[[[[\nb = [[[[[[[[[]]]]]]]]]\n', toml=True, limit=8) is True


def test_a_refused_request_without_a_cookie_sets_none(tmp_path):
    """A page of another site that sends the reviewer's browser here (a form posted to /revise, a
    link) sends no SameSite=Strict cookie, so the request was a new session: refused (403), its
    answer still set a cookie, which replaced the reviewer's in that browser and signed them out
    (with a token, until they found the link again). A refused new session sets no cookie."""
    conn, _ = queued_db(tmp_path)
    conn.close()
    app = create_app(WebSettings(str(tmp_path / "r.sqlite"), secret="test", token="s3cret"))
    alice = app.test_client()
    assert alice.get("/?token=s3cret").status_code == 302
    csrf = re.search(r'name="csrf-token" content="([^"]+)"', alice.get("/").get_data(as_text=True)).group(1)
    assert alice.post("/login", data={"name": "alice", "csrf_token": csrf}).status_code == 303
    cross_site = app.test_client(use_cookies=False)  # alice's browser, as another site's page drives it
    for method, path in [("POST", "/revise"), ("GET", "/"), ("GET", "/api/task"), ("POST", "/logout")]:
        answer = cross_site.open(path, method=method, data={"task_id": "1", "grade": "0"} if method == "POST" else None)
        assert answer.status_code == 403 and "Set-Cookie" not in answer.headers, (method, path)
    answer = cross_site.get("/?token=s3cret")  # the link itself, opened from an e-mail: still gives access
    assert answer.status_code == 302 and "Set-Cookie" in answer.headers
    assert alice.get("/api/task").status_code == 200


def test_requests_for_shadings_hold_no_more_than_their_share_of_threads(tmp_path):
    """Each shading takes about a second of the one worker, and a request waited for it however many waited already: a
    stream of highlight requests held all 8 server threads, so no reviewer's decision got through. Past WAITING
    waiting requests the answer is 503 at once (the page shows the text unshaded)."""
    import threading
    import time

    from semrel.review.web.app import HIGHLIGHT_WAITING as WAITING

    conn, _ = queued_db(tmp_path)
    conn.close()
    release = threading.Event()
    app = create_app(WebSettings(str(tmp_path / "r.sqlite"), secret="test",
                                 highlighter=lambda task: release.wait(30) and [(0, 1, 1.0)]))
    highlights = app.extensions["semrel_highlights"]
    clients = [signed_in(app, f"r{i}")[0] for i in range(WAITING + 1)]
    answers: list[int] = []
    waiting = [threading.Thread(target=lambda c=c: answers.append(c.get("/api/highlight/1").status_code)) for c in clients[:WAITING]]
    for thread in waiting:
        thread.start()
    for _ in range(300):  # until every one of them waits
        if not highlights.waiting.acquire(blocking=False):
            break
        highlights.waiting.release()
        time.sleep(0.01)
    busy = clients[WAITING].get("/api/highlight/1")
    assert busy.status_code == 503 and "busy shading other chunks" in busy.get_json()["error"]
    release.set()
    for thread in waiting:
        thread.join(30)
    assert answers == [200] * WAITING
    assert clients[WAITING].get("/api/highlight/1").status_code == 200  # done: answered without waiting


def reviewer_app(tmp_path, names: tuple[str, ...], token: str | None = None):
    """The page of a queued database with `names` listed (--reviewers), and their link secrets."""
    from semrel.review.web.guard import reviewer_keys

    conn, _ = queued_db(tmp_path)
    keys = reviewer_keys(conn, names)
    conn.close()
    return create_app(WebSettings(str(tmp_path / "r.sqlite"), secret="test", token=token, reviewers=keys)), keys


def through_link(app, secret: str):
    """A browser that opened a reviewer's link: the sign-in page it is sent to, and its CSRF token."""
    client = app.test_client()
    answer = client.get(f"/?key={secret}")
    assert answer.status_code == 302 and answer.headers["Location"] == "/"  # the secret is dropped from the address bar
    page = client.get("/").get_data(as_text=True)
    return client, page, re.search(r'name="csrf-token" content="([^"]+)"', page).group(1)


def test_a_reviewers_link_signs_in_under_that_name_alone(tmp_path):
    """Names typed at sign-in were not authenticated: anyone with the link signed in as "alice", resumed her
    queue and changed her last decisions. A listed reviewer's link offers that name and takes no other."""
    app, keys = reviewer_app(tmp_path, ("alice", "bob"))
    alice, page, csrf = through_link(app, keys["alice"])
    assert "start reviewing as <bdi>alice</bdi>" in page and 'name="name"' not in page  # no free-text name
    for name in ("bob", "mallory"):
        answer = alice.post("/login", data={"name": name, "csrf_token": csrf})
        page = unescape(answer.get_data(as_text=True))
        assert answer.status_code == 403 and "came through alice's link: it signs in as alice only" in page
    assert alice.post("/login", data={"csrf_token": csrf}).status_code == 303
    assert alice.get("/api/task").status_code == 200
    assert query(str(tmp_path / "r.sqlite"), "SELECT name FROM reviewers") == [("alice",)]


def test_without_a_token_only_the_reviewers_links_open_the_page(tmp_path):
    app, keys = reviewer_app(tmp_path, ("alice",))
    stranger = app.test_client()
    answer = stranger.get("/")
    assert answer.status_code == 403 and "open only through each reviewer's own link" in unescape(answer.get_data(as_text=True))
    for given in ("wrong", keys["alice"][:-1], keys["alice"] + "x", "\xe9t\xe9", ""):
        answer = stranger.get("/", query_string={"key": given})
        assert answer.status_code == 403, given
        assert "this reviewer link is not one of this review's" in unescape(answer.get_data(as_text=True)), given
    # the link opened before a restart of the server was not told to be opened again: "ask whoever started it for yours"
    assert stranger.get("/api/task").get_json() == {"error": "this review is open only through each reviewer's own link: open "
                                                             "yours again (the review server signs everyone out when it "
                                                             "restarts), or ask whoever started it for yours"}


def test_the_shared_link_cannot_sign_in_as_a_listed_reviewer(tmp_path):
    app, keys = reviewer_app(tmp_path, ("alice",), token="s3cret")
    shared = app.test_client()
    assert shared.get("/?token=s3cret").status_code == 302
    page = shared.get("/").get_data(as_text=True)
    csrf = re.search(r'name="csrf-token" content="([^"]+)"', page).group(1)
    for name in ("alice", " Alice ", "ALICE", "ａｌｉｃｅ"):  # fullwidth letters read as alice too
        answer = shared.post("/login", data={"name": name, "csrf_token": csrf})
        assert answer.status_code == 403 and "alice signs in only through their own link" in answer.get_data(as_text=True), name
    assert shared.post("/login", data={"name": "carol", "csrf_token": csrf}).status_code == 303  # a name nobody is listed under
    assert query(str(tmp_path / "r.sqlite"), "SELECT name FROM reviewers") == [("carol",)]
    alice, _, csrf = through_link(app, keys["alice"])  # her own link needs no token
    assert alice.post("/login", data={"csrf_token": csrf}).status_code == 303


def test_the_shared_link_cannot_sign_in_under_a_name_that_only_looks_like_a_reviewers(tmp_path):
    """Cyrillic "аlice", "Alice" or "ａlice" signed in beside alice as reviewers of their own: one person's decisions split
    in two, or someone else's passing for hers in `review stats` and `export --by-reviewer`. Her own name still signs in."""
    app, _ = reviewer_app(tmp_path, ("bob",), token="s3cret")

    def sign_in(name: str):
        browser = app.test_client()
        browser.get("/?token=s3cret")
        csrf = re.search(r'name="csrf-token" content="([^"]+)"', browser.get("/").get_data(as_text=True)).group(1)
        answer = browser.post("/login", data={"name": name, "csrf_token": csrf})
        return answer.status_code, unescape(answer.get_data(as_text=True))

    assert sign_in("alice")[0] == 303
    for name in ("\u0430lice", "al\u0456ce", "Alice", "\uff41lice", "\u0391LICE"):  # Cyrillic a, Cyrillic i, case, width, Greek Alpha
        status, page = sign_in(name)
        assert status == 403 and "this name reads as alice, a reviewer here already" in page and "sign in as alice exactly" in page, name
    status, page = sign_in("b\u043eb")  # Cyrillic o: a listed name too
    assert status == 403 and "bob signs in only through their own link" in page
    assert sign_in("alice")[0] == 303 and sign_in("carol")[0] == 303 and sign_in("alicé")[0] == 303  # an accent is another name
    assert query(str(tmp_path / "r.sqlite"), "SELECT name FROM reviewers ORDER BY name") == [("alice",), ("alicé",), ("carol",)]


def test_reviewer_links_are_derived_from_a_key_the_database_keeps(tmp_path):
    from semrel.review.web.guard import reviewer_keys

    conn, _ = queued_db(tmp_path)
    first = reviewer_keys(conn, ["alice", "bob"])
    conn.close()
    conn = open_db(tmp_path / "r.sqlite")
    assert reviewer_keys(conn, ["bob", "alice"]) == first  # a restart on the same database: the same links
    conn.close()
    assert len(set(first.values())) == 2 and all(re.fullmatch(r"[A-Za-z0-9_-]{43}", s) for s in first.values())
    other, _ = queued_db(tmp_path / "other")
    assert reviewer_keys(other, ["alice"])["alice"] != first["alice"]  # another database, another key
    other.close()


def test_a_reviewers_link_under_a_name_review_simulate_graded_under_says_what_they_can_do(tmp_path):
    """The page refused the sign-in telling the reviewer to "review under another name": through their link
    they cannot, so it says to ask for a link under another name."""
    from semrel.review.engine import Session
    from semrel.review.simulate import simulate_decisions

    app, keys = reviewer_app(tmp_path, ("alice",))
    conn = open_db(tmp_path / "r.sqlite")
    assert simulate_decisions(Session(conn, "alice"), {}) == (0, 12)
    conn.close()
    alice, _, csrf = through_link(app, keys["alice"])
    answer = alice.post("/login", data={"csrf_token": csrf})
    page = unescape(answer.get_data(as_text=True))
    assert answer.status_code == 409 and "12 of alice's decisions here were made by `review simulate`" in page
    assert page.count("ask whoever started the review for a link under another name") == 1 and "review under another name" not in page
