"""The terminal front end of a review session: rich for display, one key per decision.

Every key that decides (a grade, skip, undo) is written to the database by the engine before
the next task is drawn, so quitting or killing the process loses nothing.
"""

from __future__ import annotations

import contextlib
import time
from typing import Callable, Sequence

import click
from rich.color import Color
from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.style import Style
from rich.text import Text

from ..errors import SemrelError
from ..interrupts import terminated
from ..review.engine import Outcome, Session, queue_end
from ..review.highlight import shades
from ..review.keys import grade_keys, note_keys
from ..review.tasks import Labelling, Task, judge_line
from ..terminal import quantity, safe, safe_offsets
from .base import is_suspend, keys_typed, read_key, suspend

Spans = Sequence[tuple[int, int, float]]
Highlighter = Callable[[Task], Spans]
CHUNK_LINES = 3
"""The fewest chunk lines a page shows, however small the window."""
FRAME = 3
"""Lines beside a page of the chunk: its panel's two borders and the line the cursor waits on."""


def as_utf8(text: str) -> str:
    """What a terminal that is not UTF-8 typed (bytes Python holds as lone surrogates, which no file or
    database can store) with those bytes as U+FFFD, so the note is kept rather than lost to an error."""
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raw = text.encode("utf-8", "replace")
    return raw.decode("utf-8", "replace")


def read_note() -> str:
    """The note's line. At a terminal with GNU readline (or libedit) loaded, so the line can be edited: without it
    the line is read in the terminal's cooked mode, where the arrow keys a person moves back with went into the note
    as escape sequences and the kernel's line buffer cut a pasted note to 4,095 characters."""
    if keys_typed():
        try:
            import readline  # noqa: F401  (input(), which click.prompt calls, uses it once imported)
        except ImportError:  # Windows, or a Python built without it: the plain line as before
            pass
    return click.prompt("note", default="", show_default=False)


def highlighted(text: str, spans: Spans) -> Text:
    """The chunk, terminal-safe (control characters and bidi overrides shown as escapes), with
    tokens above its median similarity shaded, stronger for closer matches."""
    shown, offsets = safe_offsets(text)
    out = Text(shown)
    for start, end, strength in shades(spans):
        shade = Color.from_rgb(90 + 165 * strength, 80 + 135 * strength, 0)
        out.stylize(Style(bgcolor=shade, color="black" if strength > 0.5 else None, bold=strength > 0.8),
                    offsets[start], offsets[end])
    return out


def not_recorded(task: Task, outcome: Outcome, what: str) -> str:
    """Why a decision on the pair shown was refused: it was decided elsewhere while it was on screen
    (this name in another terminal or the web page, or another reviewer once the claim went stale)."""
    if outcome is Outcome.ALREADY_DECIDED:
        return f"you had decided {task.query_id}/{task.chunk_id} already (under this name elsewhere): {what} was not recorded"
    return f"{task.query_id}/{task.chunk_id} was decided elsewhere meanwhile: {what} was not recorded"


def plain(text: str, style: str = "") -> Text:
    """Data shown as it is (no rich markup), terminal-safe."""
    return Text(safe(text), style=style)


class TerminalReview:
    """Shows tasks one at a time and turns keys into session calls."""

    def __init__(self, session: Session, labelling: Labelling, console: Console, blind: bool = False,
                 highlighter: Highlighter | None = None, page_lines: int | None = None):
        self.session, self.labelling, self.console = session, labelling, console
        self.blind, self.highlighter = blind, highlighter
        self.page_lines = page_lines  # None: from the terminal's height at each draw (page_size)
        self.grades, self.notes = grade_keys(labelling), note_keys(labelling)
        self.started = time.monotonic()
        self.made: list[int | None] = []  # the task ids of this session's decisions that stand

    @property
    def decided(self) -> int:
        """This session's decisions that stand: one undone is no longer counted, nor in the pace."""
        return len(self.made)

    def help_text(self) -> str:
        top = self.labelling.max_grade
        grades = "0/n not relevant, 1/y relevant" if top == 1 else f"0-{top} grade (0 = not relevant, {top} = fully)"
        return (f"{grades} · s skip · u undo the last decision · f flag · {'/'.join(self.notes)} note · "
                "space/b next/previous page · ? help · q quit")

    def header(self) -> Text:
        p = self.session.progress()
        minutes = (time.monotonic() - self.started) / 60.0
        rate = f"{self.decided / minutes * 60:.0f}/h" if self.decided and minutes > 0 and keys_typed() else "-"  # piped: no one's pace
        share = 100.0 * p.graded / p.total if p.total else 100.0  # as the review page and `review stats` count: a skip is no grade
        return plain(f"{self.session.reviewer} · {p.graded}/{p.total} graded ({share:.0f}%) · yours {p.mine} · {p.skipped} skipped · "
                     f"this session {self.decided} ({rate}) · flagged {p.flagged}", style="bold")

    def screen(self, task: Task, message: str) -> tuple[list[RenderableType], list[RenderableType]]:
        """What the screen shows above the chunk's panel and below it."""
        answers = task.answers if len(task.answers) == 1 else [f"{i}. {a}" for i, a in enumerate(task.answers, 1)]
        above: list[RenderableType] = [self.header(), Panel(plain(task.query), title=plain(f"query {task.query_id}"), title_align="left")]
        below: list[RenderableType] = [] if self.blind else [Text(judge_line(task, self.labelling))]
        if task.shared:
            below.append(Text("(overlap item: other reviewers grade it too)", style="dim"))
        below.append(plain(message or self.help_text(), style="italic"))
        above.append(Panel(self.answer_lines("\n".join(answers), above + below), title="reference answer", title_align="left"))
        return above, below

    def answer_lines(self, answer: str, rest: Sequence[RenderableType]) -> Text:
        """The reference answer, cut to what the window leaves beside `rest` and CHUNK_LINES of the chunk, its last line
        saying how much is left out: an answer taller than the window pushed the header and the query out of sight."""
        text = plain(answer)
        if self.page_lines:
            return text
        lines = text.wrap(self.console, max(20, self.console.size.width - 4))
        room = self.console.size.height - self.lines_of(rest) - FRAME - CHUNK_LINES - 2  # 2: the answer's borders
        if len(lines) <= max(room, 1):
            return text
        keep = max(room - 1, 1)
        cut = Text(f"… {quantity(len(lines) - keep, 'more line')} of the answer: a taller window shows it whole", style="dim")
        return Text("\n").join([*lines[:keep], cut])

    def lines_of(self, renderables: Sequence[RenderableType]) -> int:
        return len(self.console.render_lines(Group(*renderables), self.console.options, pad=False))

    def page_size(self, rest: Sequence[RenderableType]) -> int:
        """Chunk lines per page: --page-lines, else what the window's height leaves beside `rest` as it renders now (a
        fixed allowance let a long reference answer push the header and the query out of a 24-line window)."""
        if self.page_lines:
            return self.page_lines
        return max(CHUNK_LINES, self.console.size.height - self.lines_of(rest) - FRAME)

    def chunk_pages(self, task: Task, spans: Spans, size: int) -> list[Text]:
        """The chunk's pages at the terminal's size now (a resized window is paged anew at the next key: paged once per
        pair, a window made smaller showed pages taller than itself, their start and the query scrolled out of
        sight)."""
        width = max(20, self.console.size.width - 4)
        lines = highlighted(task.chunk, spans).wrap(self.console, width)
        return [Text("\n").join(lines[i : i + size]) for i in range(0, max(len(lines), 1), size)]

    def show(self, task: Task, above: list[RenderableType], pages: list[Text], page: int, below: list[RenderableType]) -> None:
        if self.console.is_terminal:
            self.console.clear()
        title = f"chunk {task.chunk_id}" + (f" (page {page + 1}/{len(pages)})" if len(pages) > 1 else "")
        self.console.print(Group(*above, Panel(pages[page], title=plain(title), title_align="left"), *below))

    def run(self) -> int:
        """Review until the queue is empty or the reviewer quits (q, Ctrl-C, Ctrl-D or the end of piped
        input, also at the note prompt, where click turns them into Abort); returns the decisions made."""
        try:
            return self._loop()
        except (KeyboardInterrupt, click.Abort):
            decided = self.saved()
            if terminated():  # SIGTERM or SIGHUP, no one's quit: the command ends as an interrupted one (exit 130)
                raise KeyboardInterrupt from None
            return decided

    def saved(self) -> int:
        """Let others have the pair left on screen, and say, on quitting before the queue is done, that every decision is
        saved; returns this session's decisions."""
        with contextlib.suppress(SemrelError):  # a database busy past its timeout: the pair is held for CLAIM_SECONDS, as before
            self.session.release()
        self.console.print(f"saved; {quantity(self.decided, 'decision')} this session. Start again to go on.")
        return self.decided

    def _loop(self) -> int:
        message = ""
        while (task := self.session.next_task()) is not None:
            spans = self.highlighter(task) if self.highlighter and not self.blind else ()
            first, shown = 0, time.monotonic()  # first: the first chunk line of the page on screen
            while True:
                above, below = self.screen(task, message)
                size = self.page_size(above + below)
                pages = self.chunk_pages(task, spans, size)
                page = min(first // size, len(pages) - 1)
                self.show(task, above, pages, page, below)
                message, key = "", read_key()
                while key in ("\n", "\r"):  # Enter decides nothing: piped `1\n0\n` or a habit, not a key to refuse
                    key = read_key()
                if key in self.grades or key == "s":
                    seconds = time.monotonic() - shown if keys_typed() else None
                    outcome = (self.session.grade(task, self.grades[key], seconds) if key in self.grades
                               else self.session.skip(task, seconds))
                    if outcome is Outcome.RECORDED:
                        self.made.append(task.id)
                    else:
                        message = not_recorded(task, outcome, "that key")
                    break
                if key == "u":
                    undone = self.session.undo()
                    if undone and undone.id in self.made:  # not when it undid a decision of an earlier session
                        self.made.remove(undone.id)
                    message = f"undid your decision on {undone.query_id}/{undone.chunk_id}" if undone else "nothing to undo"
                    break
                if key in ("q", ""):
                    return self.saved()
                if key == "f":
                    if (outcome := self.session.flag(task)) is not Outcome.RECORDED:
                        message = not_recorded(task, outcome, "the flag")
                        break
                    message = "flagged"
                elif key in self.notes:
                    typed = read_note().strip()
                    text = as_utf8(typed)
                    if text:
                        if (outcome := self.session.note(task, text)) is not Outcome.RECORDED:
                            message = not_recorded(task, outcome, "the note")
                            break
                        message = "note saved" if text == typed else "note saved (bytes that were not UTF-8 became \ufffd)"
                elif key in (" ", ">"):
                    first = min(page + 1, len(pages) - 1) * size
                elif key in ("b", "<"):
                    first = max(page - 1, 0) * size
                elif key == "?":
                    message = self.help_text()
                elif is_suspend(key):  # Ctrl-Z: stop until `fg`, then the pair is shown again
                    suspend()
                else:
                    message = f"unknown key {key!r}; ? for help"
        p = self.session.progress()
        self.console.print(f"{queue_end(p)}; {quantity(self.decided, 'decision')} this session.")
        return self.decided
