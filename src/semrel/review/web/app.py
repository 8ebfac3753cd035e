"""The review page's routes (Flask): each is a few session calls, so the web page decides
exactly as the terminal does. Texts reach the page as JSON put into text nodes, or through
autoescaped templates; no request path reaches the file system."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import re
import secrets
import sqlite3
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping

from flask import Flask, abort, g, jsonify, redirect, render_template, request, session
from werkzeug.exceptions import HTTPException
from werkzeug.http import HTTP_STATUS_CODES

from ...errors import SemrelError, ValidationError
from ...formats.jsonl import too_deep
from ...resources import template_dir
from ...terminal import safe
from ..engine import MAX_REVIEWER_NAME, Outcome, Session, check_reviewer_name, labelling_of, look_alike_reviewer, name_key, queue_end
from ..keys import grade_keys, note_keys
from ..simulate import simulated_note
from ..stats import review_stats
from ..store import open_db, read_meta
from ..tasks import Labelling, Task, judge_line
from .guard import check_csrf, csrf_token, grant_access, is_local_host, is_machine_host, listed_reviewer, renew_csrf_token, secure
from .highlights import Busy, Highlights, Spans
from .sessions import MemorySessions, ServerSession

MAX_BODY = 64 * 1024
THREADS = 8  # review serve's request threads (server.py)
HIGHLIGHT_WAITING = THREADS - 2  # requests that may wait for a shading at once: the other 2 threads stay for decisions
MAX_NAME = MAX_REVIEWER_NAME
MAX_NOTE = 4000
MAX_ID = 2**63 - 1  # SQLite's largest integer
SHOWN_HASH = re.compile(r"[0-9a-f]{64}")  # text_hash: a sha256 in hex
PREPARE_AHEAD = 2
RECENT = 50
ASSETS = {"review.js": "text/javascript; charset=utf-8", "review.css": "text/css; charset=utf-8"}


@dataclass(frozen=True)
class WebSettings:
    db: str
    secret: str  # signs session cookies
    token: str | None = None  # when set, only browsers given the link with it may use the page
    local_only: bool = True  # bound to loopback: refuse other Host names (DNS rebinding)
    host_names: frozenset[str] | None = None  # on a network without a token: the Host names answered (guard.machine_names)
    blind: bool = False
    highlighter: Callable[[Task], Spans] | None = None
    secure_cookies: bool = False  # served over HTTPS (a TLS proxy in front): cookies only ever travel encrypted
    reviewers: Mapping[str, str] = field(default_factory=dict)  # listed reviewer -> the secret of their own link (guard.reviewer_keys)


def create_app(settings: WebSettings) -> Flask:
    folder = template_dir() / "review"
    app = Flask(__name__, static_folder=None, template_folder=str(folder))
    app.config.update(SECRET_KEY=settings.secret, MAX_CONTENT_LENGTH=MAX_BODY, SESSION_COOKIE_NAME=cookie_name(settings.db),
                      SESSION_COOKIE_HTTPONLY=True, SESSION_COOKIE_SAMESITE="Strict", SESSION_COOKIE_SECURE=settings.secure_cookies)
    app.session_interface = MemorySessions()  # the cookie holds a random id; signing out deletes the session
    app.jinja_env.filters["shown"] = safe  # data shown with control characters and bidi overrides visible
    assets = {name: (folder / name).read_bytes() for name in ASSETS}
    connections = threading.local()  # one per server thread, reused across its requests
    with contextlib.closing(open_db(settings.db, create=False)) as conn:
        labelling, created = labelling_of(conn), read_meta(conn).get("created")
    # the review served, told apart from another database served since at this address: a page of this one does not sign in
    # there after a restart (review.js reopen), where an undo, which names no pair, would take back a decision of that one
    review = hashlib.sha256(f"{Path(settings.db).resolve()}\0{created}".encode()).hexdigest()[:16]
    highlights = Highlights(settings.highlighter, HIGHLIGHT_WAITING) if settings.highlighter and not settings.blind else None
    app.extensions["semrel_highlights"] = highlights
    boot = secrets.token_urlsafe(16)  # this start of the server: a page shown before it finds its session gone by a restart

    def connection() -> sqlite3.Connection:
        if getattr(connections, "conn", None) is None:
            connections.conn = open_db(settings.db, create=False)
        return connections.conn

    def reviewer_session() -> Session:
        if "reviewer" not in session:
            abort(401, "sign in with your name first")
        if "session" not in g:
            g.session = Session(connection(), session["reviewer"])
        return g.session

    def allowed() -> bool:
        """Whether this request may read and write: no token and no listed reviewers, or access from the shared link
        (kept in the session), or a reviewer's own link opened in this session."""
        if not (settings.token or settings.reviewers):
            return True
        shared = grant_access(settings.token, settings.secret) if settings.token else False
        return shared or "link" in session

    @app.before_request
    def guard() -> Any:
        if settings.local_only and not is_local_host(request.host):
            abort(403, "this review page answers only to localhost, 127.0.0.1 or [::1]")
        if settings.host_names is not None and not is_machine_host(request.host, settings.host_names):
            abort(403, f"this review page has no access token, so it answers only to this machine's addresses and names "
                  f"({', '.join(sorted(settings.host_names))}): a page elsewhere could reach it under a name of its own; start "
                  "it with --token (or --reviewers) to serve it under any name")
        g.csrf = csrf_token()
        if request.endpoint == "asset":
            return None
        key = request.args.get("key") if settings.reviewers and request.method == "GET" else None
        if key is not None:  # a reviewer's own link: the sign-in page then offers that name alone
            name = listed_reviewer(settings.reviewers, key)
            if name is None:
                abort(403, "this reviewer link is not one of this review's (cut short, mistyped, or its reviewer no longer "
                      "listed): ask whoever started the review for yours")
            if session.get("reviewer") != name:  # another name signed in in this browser before: it signs in anew
                session.pop("reviewer", None)
            session["link"] = name
        if not allowed():
            # the link is dropped from the address bar once opened, and a restart forgets who opened it: said to open it again
            abort(403, "this review is open only through each reviewer's own link: open yours again (the review server signs "
                  "everyone out when it restarts), or ask whoever started it for yours" if not settings.token else
                  "this review needs the link with its access token: open the link you were given again (the review server "
                  "signs everyone out when it restarts), or ask whoever started it for the link")
        if request.method == "GET" and ("token" in request.args or key is not None):  # kept out of history and screens
            return redirect(request.path)
        if request.method == "POST":
            check_csrf()
        return None

    app.after_request(secure)

    def failure(message: str, code: int) -> Any:
        """An error in one line: JSON for the page's script, a page for a person."""
        if request.path.startswith("/api/"):
            return jsonify(error=message), code
        return render_template("error.html", message=message, title=f"{code} {HTTP_STATUS_CODES.get(code, 'error')}"), code

    app.register_error_handler(HTTPException, lambda exc: failure(exc.description, exc.code))
    app.register_error_handler(SemrelError, lambda exc: failure(str(exc), 409))
    # whatever a request holds that no route foresaw (a number past SQLite's range, nesting past the
    # parser's) is the request's fault: 400, never a 500
    app.register_error_handler(OverflowError, lambda exc: failure("a number in the request is out of range", 400))
    app.register_error_handler(RecursionError, lambda exc: failure("the request is nested too deeply", 400))

    @app.get("/assets/<name>")
    def asset(name: str) -> Any:
        if name not in assets:
            abort(404)
        return app.response_class(assets[name], content_type=ASSETS[name])  # as mimetype, its charset was added twice

    @app.get("/")
    def index() -> Any:
        if "reviewer" not in session:
            return render_template("login.html", fixed=session.get("link"))
        config = {"grades": grade_keys(labelling), "notes": list(note_keys(labelling)), "top": labelling.max_grade,
                  "reviewer": session["reviewer"], "boot": boot, "review": review}
        return render_template("review.html", reviewer=session["reviewer"], config=config)

    @app.post("/login")
    def login() -> Any:
        fixed = session.get("link")  # opened through a reviewer's own link: that name, and no other
        try:
            name = check_reviewer_name(" ".join(request.form.get("name", fixed or "").split()))  # a tab typed or pasted is a space
        except ValidationError:
            abort(400, f"give your name: 1 to {MAX_NAME} printable characters (no control characters or text-direction overrides)")
        if fixed is not None and name != fixed:
            abort(403, f"this browser came through {fixed}'s link: it signs in as {fixed} only")
        if fixed is None and (listed := next((r for r in settings.reviewers if name_key(r) == name_key(name)), None)):
            abort(403, f"{listed} signs in only through their own link; ask whoever started the review for yours")
        if fixed is None and (known := look_alike_reviewer(connection(), name)):
            abort(403, f"this name reads as {known}, a reviewer here already, but is not written the same (case, width, or a letter "
                  f"of another alphabet): sign in as {known} exactly if you are them, or under a name that reads differently")
        remedy = "ask whoever started the review for a link under another name" if fixed else "review under another name"
        if (note := simulated_note(Session(connection(), name), settings.db, remedy)) is not None:
            abort(409, note)  # the terminal warns and goes on; a page has no stderr, and the pairs would never come
        if isinstance(session, ServerSession):
            session.renew_id()  # a session id known before signing in does not carry over
        renew_csrf_token()
        session["reviewer"] = name
        reviewer_session()  # records the reviewer
        return redirect("/", 303)

    @app.post("/logout")
    def logout() -> Any:
        if "reviewer" in session:  # the pair left on screen goes to others now, not after CLAIM_SECONDS (busy: then, as before)
            with contextlib.suppress(SemrelError):
                reviewer_session().release()
        session.clear()  # deleted on the server: the cookie, even copied, no longer signs anyone in
        return redirect("/", 303)

    def recent_ids(s: Session) -> set[int | None]:
        """The ids of the standing decisions the recent decisions page offers to change."""
        return {d.task.id for d in s.recent(RECENT)}

    def state(message: str = "") -> Any:
        s = reviewer_session()
        task = s.next_task()
        if task is not None and highlights:
            for t in [task, *s.following(task, PREPARE_AHEAD)]:
                highlights.request(t)
        progress = s.progress()
        return jsonify(task=task and task_json(task, labelling, settings.blind, highlights is not None),
                       progress=progress.__dict__, message=safe(message), end=None if task else queue_end(progress))

    def state_after(done: str, message: str) -> Any:
        """state() once `done` is committed: the database busy past its timeout now must not be told as 'nothing of
        this step was saved; try again' (its line), as a second undo takes back one more decision."""
        try:
            return state(message)
        except SemrelError:
            abort(503, f"{done} is saved, but the next pair could not be read (the review database is busy): reload the page")

    @app.get("/api/task")
    def current() -> Any:
        return state()

    @app.get("/api/session")
    def session_state() -> Any:
        """What a page shown before a restart needs to sign in again under its name (review.js reopen): this start, the
        session's CSRF token (as the page's meta gives it; another site cannot read the answer), who is signed in, and the
        review served."""
        return jsonify(boot=boot, csrf=g.csrf, reviewer=session.get("reviewer"), review=review)

    @app.post("/api/decide")
    def decide() -> Any:
        body = json_body()
        s, action = reviewer_session(), body.get("action")
        if action == "undo":
            undone = s.undo()
            if undone is None:
                return state("nothing to undo")
            return state_after("your undo", f"undid your decision on {undone.query_id}/{undone.chunk_id}")
        if action not in ("grade", "skip", "flag", "note"):
            abort(400, "action must be one of grade, skip, undo, flag, note")
        # every value is checked (400) before the task is looked at (409)
        task_id = integer(body.get("task_id"), "task_id", 1, MAX_ID, strict=True)
        grade = integer(body.get("grade"), "grade", 0, labelling.max_grade, strict=True) if action == "grade" else 0
        text = note_text(body.get("text", "")) if action == "note" else ""
        pair = body.get("pair")  # the ids the page shows: a task id of another database (served since at this address) is another pair
        if pair is not None and not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(i, str) for i in pair)):
            abort(400, "pair must be the query id and chunk id shown, two strings")
        seconds = body.get("seconds")
        seconds = (float(seconds) if isinstance(seconds, (int, float)) and not isinstance(seconds, bool)
                   and math.isfinite(seconds) and seconds >= 0 else None)
        task = s.task(task_id)
        if pair is not None and pair != [safe(task.query_id), safe(task.chunk_id)]:
            abort(409, f"task {task.id} is not the pair this page shows ({safe(pair[0])} / {safe(pair[1])}; the review database "
                  "changed): nothing was saved; reload the page")
        shown = body.get("shown")  # the hash of the texts the page showed: refreshed since, the decision is stale on the new ones
        if shown is not None:
            if not (isinstance(shown, str) and SHOWN_HASH.fullmatch(shown)):
                abort(400, "shown must be the hash of the texts shown, 64 hexadecimal digits")
            task = dataclasses.replace(task, shown_hash=shown)
        if action == "grade":
            outcome = s.grade(task, grade, seconds)
        elif action == "skip":
            outcome = s.skip(task, seconds)
        elif action == "flag":
            outcome = s.flag(task)
        else:
            outcome = s.note(task, text)
        if outcome is Outcome.NOT_HELD:
            abort(409, f"task {task.id} is not the pair shown to you now (another reviewer may have decided it, or "
                  "another tab moved on): reload the page")
        if outcome is Outcome.ALREADY_DECIDED:  # in another tab, or a terminal under the same name: nothing was written
            return state(f"you had decided {task.query_id}/{task.chunk_id} already (in another tab?); change it under recent decisions")
        if action == "note" and not text:
            return state("empty note: nothing saved")
        return state_after(f"your {action}", {"flag": "flagged", "note": "note saved"}.get(action, ""))

    @app.get("/api/highlight/<int:task_id>")
    def highlight(task_id: int) -> Any:
        if highlights is None:
            abort(404, "highlights are off")
        task = reviewer_session().task(integer(task_id, "task id", 1, MAX_ID))
        try:
            shading = highlights.wait(task)
        except Busy:
            abort(503, "the server is busy shading other chunks; the text is shown without highlights")
        return jsonify(segments=[(safe(text), strength) for text, strength in shading])

    @app.get("/recent")
    def recent() -> Any:
        s = reviewer_session()
        decided = s.recent(RECENT)
        # after a change, said and focused: the page reloaded with focus on its body, and nothing said what had changed
        changed = request.args.get("changed", "")
        said = next((d for d in decided if changed.isdigit() and d.task.id == int(changed)), None)
        return render_template("recent.html", reviewer=s.reviewer, decided=decided, top=labelling.max_grade, changed=said)

    @app.post("/revise")
    def revise() -> Any:
        s = reviewer_session()
        choice = request.form.get("grade", "")
        task_id = integer(request.form.get("task_id"), "task_id", 1, MAX_ID)
        grade = None if choice == "skip" else integer(choice, "grade", 0, labelling.max_grade)
        # only what the recent decisions page offers, and still standing when it is changed (not undone meanwhile)
        if task_id not in recent_ids(s) or not s.revise(s.task(task_id), grade):
            abort(409, f"task {task_id} is not among your last {RECENT} decisions: only those can be changed here")
        return redirect(f"/recent?changed={task_id}#changed", 303)

    @app.get("/stats")
    def stats() -> Any:
        figures = review_stats(settings.db)
        if settings.blind:  # the judge's labels stay hidden in aggregate too: its agreement and confusion matrices anchor as its grade does
            figures = dataclasses.replace(figures, agreements=[a for a in figures.agreements if not a.with_judge])
        return render_template("stats.html", stats=figures, reviewer=session.get("reviewer"), blind=settings.blind)

    return app


def cookie_name(db: str, port: int = 0) -> str:
    """Cookies are shared by every port of a host: a name per database and port keeps two review servers on one
    machine, of two databases or of one, from signing each other's reviewers out."""
    return "semrel_review_" + hashlib.sha256(f"{Path(db).resolve()}\0{port}".encode()).hexdigest()[:12]


def integer(value: Any, name: str, low: int = -MAX_ID, high: int = MAX_ID, strict: bool = False) -> int:
    """An integer of the request within [low, high]; 400 otherwise (never an error past SQLite's range).
    A form gives it as ASCII digits; a JSON body (strict) as a number, never true/false or a string."""
    if isinstance(value, bool) or (strict and not isinstance(value, (int, float))):
        abort(400, f"{name} must be an integer")
    if isinstance(value, float) and not (math.isfinite(value) and value.is_integer()):
        abort(400, f"{name} must be an integer")
    if isinstance(value, str) and not re.fullmatch(r"-?[0-9]+", value):
        abort(400, f"{name} must be an integer")
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError):
        abort(400, f"{name} must be an integer")
    if not low <= number <= high:
        abort(400, f"{name} must be between {low} and {high}")
    return number


def note_text(value: Any) -> str:
    """A note of the request, stripped: a JSON string of valid Unicode within MAX_NOTE characters; 400 otherwise."""
    if not isinstance(value, str):
        abort(400, "text (the note) must be a JSON string")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        abort(400, "the note is not valid Unicode text (it holds a lone surrogate)")
    text = value.strip()
    if len(text) > MAX_NOTE:
        abort(400, f"a note is at most {MAX_NOTE:,} characters; this one has {len(text):,}")
    return text


def json_body() -> dict:
    """The request's JSON object: 400 for another content type, bad UTF-8 or JSON, anything but an
    object, or nesting deeper than any real request needs (checked before parsing)."""
    if not request.is_json:
        abort(400, "expected a JSON object (Content-Type: application/json)")
    try:
        text = request.get_data(cache=False).decode("utf-8")
    except UnicodeDecodeError:
        abort(400, "the request body is not UTF-8")
    if too_deep(text, limit=8):
        abort(400, "the request body is nested too deeply")
    try:
        body = json.loads(text)
    except (ValueError, RecursionError):
        abort(400, "expected a JSON object")
    if not isinstance(body, dict):
        abort(400, "expected a JSON object")
    return body


def task_json(task: Task, labelling: Labelling, blind: bool, highlight: bool) -> dict:
    """What the page shows of a task; the judge's view is left out when the review is blind."""
    judge = None if blind else {"P": task.P, "R": task.R, "F": task.F, "p": task.p, "proposed": task.proposed, "on": labelling.on,
                                "thresholds": list(labelling.thresholds), "line": judge_line(task, labelling)}
    return {"id": task.id, "query_id": safe(task.query_id), "chunk_id": safe(task.chunk_id), "query": safe(task.query),
            "answers": [safe(a) for a in task.answers], "chunk": safe(task.chunk), "shared": task.shared, "judge": judge,
            "highlight": highlight, "shown": task.shown_hash}
