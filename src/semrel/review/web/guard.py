"""What keeps the review page safe on a shared machine: an optional access token (given once
in the link, then held in the signed session cookie), a CSRF token on every state-changing
POST, and headers that forbid inline script, framing and leaking the link."""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets

from flask import Response, abort, request, session

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


def is_loopback(name: str) -> bool:
    if name.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def is_local_host(host: str) -> bool:
    """Whether a Host header (name[:port]) names a loopback address: a page from another site
    that rebinds its own name to 127.0.0.1 sends that name, and is refused."""
    if host.startswith("["):  # [::1]:8765
        name = host[1:].split("]", 1)[0]
    else:
        name = host.split(":", 1)[0] if host.count(":") == 1 else host
    return is_loopback(name)


def secure(response: Response) -> Response:
    response.headers.update(HEADERS)
    return response
