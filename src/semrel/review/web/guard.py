"""What keeps the review page safe on a shared machine: an optional access token (given once
in the link, then held in the signed session cookie), optional links of their own for listed
reviewers, a CSRF token on every state-changing POST, and headers that forbid inline script,
framing and leaking the link."""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import json
import secrets
import socket
import sqlite3
from typing import Iterable, Mapping

from flask import Response, abort, request, session

from ..store import read_meta, transaction

CSRF_HEADER = "X-CSRF-Token"
CSRF_FIELD = "csrf_token"
HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                               "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",  # the link may carry the access token
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cache-Control": "no-store",
}


def csrf_token() -> str:
    """This browser session's CSRF token (made on its first request)."""
    if "csrf" not in session:
        session["csrf"] = secrets.token_urlsafe(32)
    return session["csrf"]


def renew_csrf_token() -> None:
    """A new CSRF token at sign-in: a page rendered for whoever was signed in before (another tab of
    this browser) can then post nothing in the new name."""
    session["csrf"] = secrets.token_urlsafe(32)


def check_csrf() -> None:
    """A POST must echo the session's CSRF token (header for fetch(), field for forms). Compared as
    bytes: compare_digest refuses str with non-ASCII characters (a 500 for any request sending them)."""
    given = request.headers.get(CSRF_HEADER) or request.form.get(CSRF_FIELD, "")
    if not given or not hmac.compare_digest(given.encode(), session.get("csrf", "").encode()):
        # a page rendered before the server restarted (sessions live in its memory) or before a sign-in in another tab
        abort(403, "this page is out of date (the review server restarted, or someone signed in again in this browser): reload it")


def token_digest(token: str, secret: str) -> str:
    return hmac.new(secret.encode(), token.encode(), hashlib.sha256).hexdigest()


def grant_access(token: str, secret: str) -> bool:
    """True when this request may read and write: it holds access from an earlier link, or its
    query string carries the token (which is then kept in the session)."""
    digest = token_digest(token, secret)
    given = request.args.get("token")
    if given is not None and hmac.compare_digest(token_digest(given, secret), digest):
        session["access"] = digest
    return hmac.compare_digest(session.get("access", ""), digest)


LINK_KEY = "reviewer_link_key"  # the meta row of the database's key, from which each listed reviewer's link is derived


def reviewer_keys(conn: sqlite3.Connection, names: Iterable[str], renew: bool = False) -> dict[str, str]:
    """Each listed reviewer's link secret: an HMAC of the name under a key kept in the review database (made once,
    with secrets.token_urlsafe), so the links stay the same across restarts on that database and no file of secrets
    is needed beside it; whoever can read the database could write decisions into it anyway. `renew` makes a new key
    (review serve --new-links): every earlier link stops working, for one that leaked; decisions are not touched."""
    with transaction(conn):
        if renew:
            conn.execute("DELETE FROM meta WHERE key = ?", (LINK_KEY,))
        conn.execute("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)", (LINK_KEY, json.dumps(secrets.token_urlsafe(32))))
        key = read_meta(conn)[LINK_KEY]
    return {name: base64.urlsafe_b64encode(hmac.new(key.encode(), name.encode(), hashlib.sha256).digest()).decode().rstrip("=")
            for name in names}


def listed_reviewer(keys: Mapping[str, str], given: str) -> str | None:
    """The reviewer whose link secret `given` is, if any: every secret is compared (in constant time, as bytes:
    compare_digest refuses str with non-ASCII characters), so the answer's timing tells nothing of which came close."""
    found = None
    for name, secret in keys.items():
        if hmac.compare_digest(given.encode(), secret.encode()):
            found = name
    return found


def is_loopback(name: str) -> bool:
    if name.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _host_name(host: str) -> str:
    """The name or address of a Host header (name[:port], [v6]:port)."""
    if host.startswith("["):  # [::1]:8765
        return host[1:].split("]", 1)[0]
    return host.split(":", 1)[0] if host.count(":") == 1 else host


def is_local_host(host: str) -> bool:
    """Whether a Host header (name[:port]) names a loopback address: a page from another site
    that rebinds its own name to 127.0.0.1 sends that name, and is refused."""
    return is_loopback(_host_name(host))


def machine_names(host: str) -> frozenset[str]:
    """The names a page served on `host` (a network address) without a token answers to, besides addresses: this
    machine's (hostname, its .local, its fully qualified name), localhost, and `host` itself where it is a name."""
    hostname = socket.gethostname()
    return frozenset(n.lower().rstrip(".") for n in (hostname, f"{hostname}.local", socket.getfqdn(), "localhost", host) if n)


def is_machine_host(host: str, names: frozenset[str]) -> bool:
    """Whether a Host header names an address, or one of `names`: a page elsewhere that rebinds its own name to this
    machine's address sends its own name, and is refused (on a network, without a token, it could read and write)."""
    name = _host_name(host)
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return name.lower().rstrip(".") in names


def secure(response: Response) -> Response:
    response.headers.update(HEADERS)
    return response
