"""Sessions kept in the server's memory: the cookie holds only a random id, so signing out
(which deletes the session here) makes that cookie worthless, even replayed by someone who
copied it. A session is dropped when it empties (sign-out), its id is renewed at sign-in (a
cookie planted before cannot follow the reviewer in), and at most MAX_SESSIONS are kept (the
least recently used go first, those that hold nothing but a CSRF token before any other). A
restart forgets every session, as the signing key did before."""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict
from typing import Any

from flask import Flask, Request, Response
from flask.sessions import SessionInterface, SessionMixin
from werkzeug.datastructures import CallbackDict

MAX_SESSIONS = 10_000


class ServerSession(CallbackDict, SessionMixin):
    """A session's values, copied from the store at the start of a request."""

    def __init__(self, values: dict[str, Any] | None = None, sid: str | None = None):
        def changed(_: Any) -> None:
            self.modified = True

        super().__init__(values or {}, changed)
        self.sid = sid
        self.new = sid is None
        self.modified = False
        self.renew = False

    def renew_id(self) -> None:
        """Give the session a new id at the end of this request (the old one stops working)."""
        self.renew = True
        self.modified = True


class MemorySessions(SessionInterface):
    def __init__(self, limit: int = MAX_SESSIONS):
        self.store: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.lock = threading.Lock()
        self.limit = limit

    def idle(self) -> str | None:
        """The least recently used session that holds nothing but its CSRF token (no name, no access
        from the link): any request without a cookie makes one, so they go before a reviewer's, or a
        flood of such requests (another web page can send them) would sign every reviewer out."""
        return next((sid for sid, values in self.store.items() if values.keys() <= {"csrf"}), None)

    def open_session(self, app: Flask, request: Request) -> ServerSession:
        sid = request.cookies.get(self.get_cookie_name(app))
        if sid:
            with self.lock:
                values = self.store.get(sid)
                if values is not None:
                    self.store.move_to_end(sid)
                    return ServerSession(dict(values), sid)
        return ServerSession()  # no cookie, or one whose session is gone (signed out, evicted, another run)

    def save_session(self, app: Flask, session: SessionMixin, response: Response) -> None:
        assert isinstance(session, ServerSession)
        if session.new and response.status_code >= 400:
            # refused, and the browser sent no cookie of ours: a page of another site (which a SameSite=Strict cookie
            # does not follow) sending the reviewer's browser here must not replace their cookie, signing them out
            return
        name, path, domain = self.get_cookie_name(app), self.get_cookie_path(app), self.get_cookie_domain(app)
        with self.lock:
            if not session.new and session.sid not in self.store:
                return  # signed out by another request meanwhile: not brought back
            if not session:
                if session.sid is not None:
                    self.store.pop(session.sid, None)
                    response.delete_cookie(name, path=path, domain=domain, secure=self.get_cookie_secure(app),
                                           httponly=True, samesite=self.get_cookie_samesite(app))
                return
            if not (session.modified or session.new):
                return
            if session.renew and session.sid is not None:
                self.store.pop(session.sid, None)
                session.sid = None
            set_cookie = session.sid is None
            if session.sid is None:
                session.sid = secrets.token_urlsafe(32)
            self.store[session.sid] = dict(session)
            self.store.move_to_end(session.sid)
            while len(self.store) > self.limit:
                self.store.pop(self.idle() or next(iter(self.store)))
        if set_cookie:
            response.set_cookie(name, session.sid, path=path, domain=domain, secure=self.get_cookie_secure(app),
                                httponly=self.get_cookie_httponly(app), samesite=self.get_cookie_samesite(app))
