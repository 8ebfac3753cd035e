"""A simulated review: a labels file (gold chunks, an earlier review) grades the queue through
the same session calls a person's keys make, so its figures are those a review would give."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from typing import Callable, Mapping

from ..errors import SemrelError, ValidationError
from ..terminal import quantity
from .engine import Outcome, QueueRequest, Session, check_reviewer_name, join_queue, labelling_of, queue_end


def decisions_by_kind(session: Session) -> tuple[int, int]:
    """(a person's, a simulation's) grades and skips of the session's reviewer, as `simulated` records them (a person's
    piped keys carry no seconds either); a decision from before it did is a simulation's where it carries no seconds."""
    row = session.conn.execute("SELECT count(*), total(coalesce(simulated, seconds IS NULL)) FROM decisions WHERE reviewer = ?"
                               " AND kind IN ('grade', 'skip')", (session.reviewer,)).fetchone()
    return int(row[0] - row[1]), int(row[1])


def simulated_note(session: Session, db: str | os.PathLike, remedy: str = "review under another name") -> str | None:
    """What a person signing in under a name `review simulate` graded under is told (the terminal warns, the page refuses
    the sign-in): the simulation's decisions count as that person's, and their pairs are not shown again. `remedy`: what
    to do, for one whose name is not theirs to change (a reviewer's own link)."""
    _, simulated = decisions_by_kind(session)
    name = session.reviewer
    return (f"{db}: {simulated} of {name}'s decisions here were made by `review simulate`: they count as {name}'s in stats "
            f"and export, and their pairs are not shown again; {remedy}") if simulated else None


def simulate_decisions(session: Session, human: Mapping[str, Mapping[str, int]], unlisted_as_zero: bool = False) -> tuple[int, int]:
    """Grade each pair the session is given from `human` (grades clipped to the queue's scale);
    skip pairs it does not cover. Returns (graded, skipped): the decisions this call recorded (a second
    process under the same name can take a pair between next_task and the grade)."""
    top = labelling_of(session.conn).max_grade
    graded = skipped = 0
    while (task := session.next_task()) is not None:
        listed = human.get(task.query_id)
        if listed is not None and (task.chunk_id in listed or unlisted_as_zero):
            graded += session.grade(task, min(max(int(listed.get(task.chunk_id, 0)), 0), top), simulated=True) is Outcome.RECORDED
        else:
            skipped += session.skip(task, simulated=True) is Outcome.RECORDED
    return graded, skipped


def check_covers(conn: sqlite3.Connection, db: str, human: Mapping[str, Mapping[str, int]], unlisted_as_zero: bool) -> None:
    """Refuse, before anything is written, human labels that grade none of the queue's pairs (an empty file, or the labels
    of another set): the simulation would only skip every free pair, which people then are never shown."""
    queued = conn.execute("SELECT query_id, chunk_id FROM tasks ORDER BY position").fetchall()
    if not any(q in human and (unlisted_as_zero or c in human[q]) for q, c in queued):
        listed = next(((q, c) for q, chunks in human.items() for c in chunks), None)
        example = f" (they label e.g. {listed}, the queue holds e.g. {tuple(queued[0])})" if listed and queued else ""
        raise ValidationError(f"{db}: the human labels grade none of its {quantity(len(queued), 'queued pair')}{example}: "
                              "a simulation would only skip them; give the labels of this review's pairs")


def simulate(db: str, reviewer: str, human: Mapping[str, Mapping[str, int]], request: QueueRequest,
             warn: Callable[[str], None], unlisted_as_zero: bool = False) -> tuple[int, int]:
    """`semrel review simulate`: the queue `request` names, built or joined, graded from `human` under `reviewer`.
    Refused under the name of a reviewer who graded by hand, whose decisions its grades would join in stats, export
    and estimates. Returns (graded, skipped)."""
    reviewer = check_reviewer_name(reviewer)  # before the database is opened
    with contextlib.closing(join_queue(db, request, warn)) as conn:
        check_covers(conn, db, human, unlisted_as_zero)
        session = Session(conn, reviewer)
        person, _ = decisions_by_kind(session)
        if person:
            raise SemrelError(f"{db}: {reviewer} has made {quantity(person, 'decision')} here by hand; a simulation would add its grades "
                              "under that name: give reviewer= another name (e.g. gold)")
        if session.on_screen():  # signed in, nothing decided yet: the simulation would grade the pair on their screen
            raise SemrelError(f"{db}: {reviewer} has a pair on screen here now (a person reviewing under that name, at a terminal "
                              "or the page); a simulation would grade it and add its grades under that name: give reviewer= "
                              "another name (e.g. gold)")
        top = labelling_of(conn).max_grade
        highest = max((grade for grades in human.values() for grade in grades.values()), default=0)
        if 0 < highest < top:  # gold chunks (0/1) against grades 0-3: a relevant pair graded 1 against the judge's 3 disagrees
            warn(f"the labels simulated grade up to {highest} and the queue's labels up to {top}: review stats compares "
                 f"grades as they are, so a relevant pair graded {highest} here and {top} by the judge counts as a disagreement; "
                 "compare on one scale (review the labels of `semrel label` without --graded, or `semrel agree`, which "
                 "compares on the smaller scale)")
        try:
            decided = simulate_decisions(session, human, unlisted_as_zero)
        finally:  # interrupted: the pair it held is not kept from people, nor from a simulation started again
            with contextlib.suppress(SemrelError):
                session.release()
        progress = session.progress()
        if progress.done < progress.total:  # pairs people hold now were passed over, neither graded nor skipped
            warn(f"{reviewer}: {queue_end(progress)}")
        return decided
