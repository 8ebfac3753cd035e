"""A real `semrel review serve` process on a free localhost port, and a small HTTP client
with cookies, for the web review tests."""

from __future__ import annotations

import contextlib
import http.cookiejar
import json
import os
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import Iterator

import semrel
from helpers import takes_ctrl_c
from review_helpers import write_judged, write_pool

SRC = str(Path(semrel.__file__).resolve().parents[1])


class Server:
    """`semrel review serve ... --port 0`; its URL is read from the line it prints."""

    def __init__(self, db: str, pool: dict | None, *options: str, env: dict[str, str] | None = None):
        files = [] if pool is None else ["--judgments", pool["judgments"], "--labels", pool["labels"],
                                         "--corpus", pool["corpus"], "--golden", pool["golden"], "--thresholds", "0.5"]
        command = [sys.executable, "-c", "from semrel.cli import main; main()", "review", "serve", "--db", db,
                   "--port", "0", *files, *options]
        self.proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                     env={**os.environ, "PYTHONPATH": SRC, **(env or {})}, **takes_ctrl_c())
        self.lines: list[str] = []
        for line in self.proc.stderr:
            self.lines.append(line)
            if match := re.search(r"review page at (http://\S+)", line):
                self.link = match.group(1)
                self.base = self.link.split("?")[0].rstrip("/")
                return
        raise AssertionError("the server did not start: " + "".join(self.lines))

    def stop(self) -> str:
        """Ctrl-C, as a person stops it; returns all it wrote to stderr."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            rest = self.proc.communicate(timeout=30)[1]
        except subprocess.TimeoutExpired:  # a failure, not a hang
            self.proc.kill()
            rest = self.proc.communicate()[1] + "\n(the server did not stop within 30 s of Ctrl-C)"
        self.lines.append(rest)
        return "".join(self.lines)

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc) -> None:
        log = self.stop()
        assert "Traceback" not in log and "every decision is saved" in log, log


class Client:
    """An HTTP client with a cookie jar (a browser's, shared across its tabs) that never follows redirects."""

    def __init__(self, base: str, jar: http.cookiejar.CookieJar | None = None):
        self.base = base
        self.jar = jar if jar is not None else http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar), NoRedirect())
        self.csrf = ""

    def request(self, method: str, path: str, data: bytes | None = None, headers: dict | None = None) -> tuple[int, str]:
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=headers or {})
        try:
            with self.opener.open(req, timeout=60) as response:
                status, body = response.status, response.read().decode()
        except urllib.error.HTTPError as error:
            status, body = error.code, error.read().decode()
        if match := re.search(r'name="csrf-token" content="([^"]+)"', body):
            self.csrf = match.group(1)
        return status, body

    def get(self, path: str) -> tuple[int, str]:
        return self.request("GET", path)

    def form(self, path: str, fields: dict, csrf: bool = True) -> tuple[int, str]:
        fields = {**fields, **({"csrf_token": self.csrf} if csrf else {})}
        data = "&".join(f"{k}={urllib.request.quote(str(v))}" for k, v in fields.items()).encode()
        return self.request("POST", path, data, {"Content-Type": "application/x-www-form-urlencoded"})

    def api(self, body: dict, csrf: bool = True) -> tuple[int, dict]:
        headers = {"Content-Type": "application/json", **({"X-CSRF-Token": self.csrf} if csrf else {})}
        status, text = self.request("POST", "/api/decide", json.dumps(body).encode(), headers)
        return status, json.loads(text)

    def sign_in(self, name: str, link: str | None = None) -> None:
        status, _ = self.get(link[len(self.base):] if link else "/")
        assert status in (200, 302)
        self.get("/")
        assert self.form("/login", {"name": name})[0] == 303
        self.get("/")  # the page after sign-in: its CSRF token (a new one at each sign-in)

    def task(self) -> dict:
        status, text = self.get("/api/task")
        assert status == 200, text
        return json.loads(text)


@contextlib.contextmanager
def alice_at_her_first_pair(tmp_path: Path, *options: str) -> Iterator[tuple[Client, int, str]]:
    """A server on a new pool with alice signed in: her client, the id of the pair she is shown, the database."""
    pool, db = write_pool(tmp_path / "pool"), str(tmp_path / "r.sqlite")
    with Server(db, pool, "--no-highlight", *options) as server:
        alice = Client(server.base)
        alice.sign_in("alice")
        yield alice, alice.task()["task"]["id"], db


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def write_large_pool(folder: Path, queries: int, chunks: int) -> dict[str, str]:
    """queries x chunks judged pairs with spread scores, for longer reviews."""
    texts = {f"c{c}": f"Chunk {c} talks about topic {c % 7} in sentence after sentence. " * 3 for c in range(chunks)}
    asked = {f"q{q}": (f"What does topic {q % 7} say?", f"Topic {q % 7} says something.") for q in range(queries)}
    scores = {(q, c): ((i * 37) % 100) / 100 for i, (q, c) in enumerate((q, c) for q in asked for c in texts)}
    return write_judged(folder, texts, asked, scores)
