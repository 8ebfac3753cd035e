"""Serving the review page with waitress: a maintained, pure-Python WSGI server with a thread
pool (several reviewers at once) and its own request-size limit."""

from __future__ import annotations

import socket
from urllib.parse import quote

from waitress import create_server
from waitress.server import BaseWSGIServer

from ...errors import SemrelError
from .app import MAX_BODY, WebSettings, create_app

THREADS = 8


def review_server(settings: WebSettings, host: str, port: int) -> BaseWSGIServer:
    """A server bound to host:port (port 0: a free one), not yet running."""
    try:
        return create_server(create_app(settings), host=host, port=port, threads=THREADS, ident="semrel",
                             max_request_body_size=MAX_BODY, expose_tracebacks=False)
    except (OSError, socket.gaierror) as exc:
        raise SemrelError(f"cannot listen on {host}:{port} ({exc.strerror or exc}); try another --port") from None


def server_url(server: BaseWSGIServer, host: str, token: str | None) -> str:
    """The link to give reviewers (with the access token when there is one)."""
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{server.effective_port}/" + (f"?token={quote(token)}" if token else "")
