"""Serving the review page with waitress: a maintained, pure-Python WSGI server with a thread
pool (several reviewers at once) and its own request-size limit."""

from __future__ import annotations

import logging
import socket
from urllib.parse import quote

from waitress import create_server

from ...errors import SemrelError
from .app import MAX_BODY, THREADS, WebSettings, cookie_name, create_app


class ReviewServer:
    """The review page bound to host:port (port 0: a free one); run() serves until interrupted."""

    def __init__(self, settings: WebSettings, host: str, port: int):
        self.app, self.host, self.token, self.reviewers = create_app(settings), host, settings.token, settings.reviewers
        # waitress warns "Task queue depth is N" on stderr for each request that waits for one of the THREADS threads:
        # with more reviewers than threads, a line per key press that buries the server's own
        logging.getLogger("waitress.queue").setLevel(logging.ERROR)
        try:  # waitress refuses a body of its limit or longer, Flask one over MAX_CONTENT_LENGTH: MAX_BODY bytes pass both
            self.server = create_server(self.app, host=host, port=port, threads=THREADS, ident="semrel",
                                        max_request_body_size=MAX_BODY + 1, expose_tracebacks=False)
        except (OSError, socket.gaierror) as exc:
            raise SemrelError(f"cannot listen on {host}:{port} ({exc.strerror or exc}); try another --host or --port") from None
        except ValueError:  # waitress: a host that is neither an address nor a name it can resolve
            raise SemrelError(f"cannot listen on {host}:{port}: not an address or host name of this machine; "
                              "give --host an address such as 127.0.0.1") from None
        self.app.config["SESSION_COOKIE_NAME"] = cookie_name(settings.db, self.port)

    @property
    def port(self) -> int:
        """The port listened on; of the first address where a host name has several (localhost: 127.0.0.1 and ::1), for
        which waitress listens on each and has no single effective_port (an AttributeError traceback before)."""
        return getattr(self.server, "effective_port", None) or int(self.server.effective_listen[0][1])

    @property
    def url(self) -> str:
        """The link to give reviewers (with the access token when there is one)."""
        return self.link(f"?token={quote(self.token)}" if self.token else "")

    @property
    def reviewer_links(self) -> dict[str, str]:
        """Each listed reviewer's own link."""
        return {name: self.link(f"?key={quote(secret)}") for name, secret in self.reviewers.items()}

    def link(self, query: str) -> str:
        shown = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{shown}:{self.port}/{query}"

    def run(self) -> None:
        self.server.run()

    def stop(self) -> None:
        """Close the listening socket and drop shading not yet computed (its worker would
        otherwise hold the exit until every queued chunk is done)."""
        self.server.close()
        highlights = self.app.extensions.get("semrel_highlights")
        if highlights is not None:
            highlights.close()
