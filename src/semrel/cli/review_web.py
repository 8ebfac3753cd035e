"""`semrel review serve`: the review as a local web page, over the same queue and engine."""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket

import click

from ..errors import SemrelError, UsageError, ValidationError
from ..review.engine import Session, check_reviewer_name, join_queue, look_alike_note, look_alike_reviewer, name_key
from ..review.highlight import token_similarities
from ..review.simulate import simulated_note
from ..review.web.app import WebSettings
from ..review.web.guard import is_loopback, machine_names, reviewer_keys
from ..review.web.server import ReviewServer
from .base import SemrelCommand, option_variable, warn, warn_in_flags
from .options import check_highlights, db_option, highlight_options, queue_options, typed
from .review import queue_request


def check_host(host: str, port: int) -> None:
    """A host that is neither an address nor a name this machine resolves is one line, early."""
    if not host.strip():  # getaddrinfo takes "" for every address: not what an empty value means
        raise SemrelError("--host is empty; give an address such as 127.0.0.1 (this machine alone) or 0.0.0.0 (every network)")
    try:
        socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise SemrelError(f"cannot listen on {host}:{port}: not an address or host name this machine knows "
                          f"({getattr(exc, 'strerror', None) or exc}); give --host an address such as 127.0.0.1") from None


def listed_names(text: str | None) -> list[str]:
    """--reviewers: comma-separated names, each as a reviewer name is recorded; an empty one or one given twice is refused."""
    if text is None:
        return []
    names: list[str] = []
    for part in text.split(","):
        try:
            name = check_reviewer_name(part)
        except ValidationError as exc:
            raise UsageError(f"--reviewers {text!r}: {exc}; give comma-separated names, e.g. alice,bob") from None
        if name_key(name) in {name_key(n) for n in names}:
            raise UsageError(f"--reviewers names {name} twice; give each reviewer once")
        names.append(name)
    return names


def refuse_empty(option: str, value: str | None, what: str, example: str) -> None:
    """--token or --reviewers given as nothing (typed, or its environment variable set to "" or spaces, which click takes
    for unset): refused in one line, as a `$(...)` that printed nothing must not serve the page without what was meant."""
    variable = option_variable(click.get_current_context(), option)
    given = os.environ.get(variable) if value is None else value
    if given is None or given.strip():
        return
    source = f"--{option} is empty" if typed(option) else f"the environment variable {variable} is set but empty"
    raise UsageError(f"{source}: the page would be served without {what}; give {example}, or leave it out to serve without")


def stop(signum, frame) -> None:
    raise KeyboardInterrupt


@click.command("serve", cls=SemrelCommand, short_help='Review pairs in a browser.')
@db_option
@queue_options
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (others can reach it unless loopback).")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True, help="Port (0: any free one).")
@click.option("--token", show_envvar=True,
              help="Only browsers given the printed link (which carries this token) can use the page. Prefer the "
                   "environment variable: a token on the command line shows in `ps` to every user of the machine.")
@click.option("--reviewers", metavar="NAME,...", show_envvar=True,
              help="Print a link of its own for each of these reviewers: it signs in under that name and no other, and "
                   "nobody else can take the name. Without --token, only these links open the page. The links stay the "
                   "same across restarts on this --db.")
@click.option("--new-links", is_flag=True, allow_from_autoenv=False,
              help="Make the --reviewers links anew (a new key kept in --db): every link printed before stops working, "
                   "as for one that leaked. Decisions stay; reviewers sign in again through their new link.")
@click.option("--secure-cookies", is_flag=True,
              help="The page is reached over HTTPS (a TLS proxy in front): mark cookies Secure, so browsers never send "
                   "them over plain HTTP.")
@highlight_options
def serve_command(db, host, port, token, reviewers, new_links, secure_cookies, blind, no_highlight, model, layer, **queue):
    """Review pairs in a browser, one key per decision; several reviewers at once, each with
    their name. Builds or joins the queue as `review start` does. Stop with Ctrl-C."""
    refuse_empty("token", token, "an access token", "a token")
    refuse_empty("reviewers", reviewers, "reviewers' own links", "names, e.g. alice,bob")
    check_host(host, port)  # before the database is opened
    check_highlights(blind, no_highlight)
    names = listed_names(reviewers)
    if new_links and not names:
        raise UsageError("--new-links makes new links for the reviewers --reviewers lists; give them too")
    with contextlib.closing(join_queue(db, queue_request(**queue), warn_in_flags)) as conn:  # the library's warnings name on=
        keys = reviewer_keys(conn, names, new_links) if names else {}  # without --reviewers the database is left as it was
        known = {row[0] for row in conn.execute("SELECT name FROM reviewers")}  # a Session records its name: only those here
        for name in names:
            if name in known and (note := simulated_note(Session(conn, name), db, "list that reviewer under another name")):
                warn(f"--reviewers: {note}")  # the page refuses that link's sign-in
            elif like := look_alike_reviewer(conn, name):
                warn(f"--reviewers: {look_alike_note(name, like, db)}; list {like} instead if they are one person")

    def highlighter(task):
        return token_similarities(task.chunk, task.answers, model, layer)

    open_to_network = not is_loopback(host) and not token and not names
    settings = WebSettings(db=db, secret=secrets.token_hex(32), token=token or None, local_only=is_loopback(host), blind=blind,
                           highlighter=None if no_highlight else highlighter, secure_cookies=secure_cookies, reviewers=keys,
                           host_names=machine_names(host) if open_to_network else None)
    server = ReviewServer(settings, host, port)
    if token and typed("token"):
        warn("--token on the command line shows in `ps` to every user of this machine; set the environment variable "
             "SEMREL_REVIEW_SERVE_TOKEN instead")
    if open_to_network:
        warn(f"listening on {host} without --token: anyone who can reach this machine can read and write the review (under "
             "its addresses and names only: a web page elsewhere cannot reach it under a name of its own)")
    if not is_loopback(host) and not secure_cookies:
        warn(f"listening on {host} over plain HTTP: the session cookie (and the link's token) cross the network "
             "unencrypted; serve it behind a TLS proxy and pass --secure-cookies")
    try:  # from the moment the link is printed, Ctrl-C stops the page cleanly
        signal.signal(signal.SIGTERM, stop)
        for name, link in server.reviewer_links.items():
            click.echo(f"semrel: {name}'s link: {link}", err=True)
        click.echo(f"semrel: review page at {server.url} (Ctrl-C stops)", err=True)
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    click.echo("semrel: review page stopped; every decision is saved", err=True)
