"""The review session: which task a reviewer sees next, and recording what they decide.

Every call that writes is one BEGIN IMMEDIATE transaction, committed before it returns, so a
decision is on disk before the next task is shown and a killed process loses nothing. A task
not marked shared goes to one reviewer: showing it claims it, and others pass over it while
the claim is fresh (CLAIM_SECONDS) or once someone has decided it. A grade, skip, flag or note
is recorded only on the task held for the reviewer, checked in the transaction that writes it.
"""

from __future__ import annotations

import json
import sqlite3
import time
import unicodedata
from dataclasses import asdict, dataclass
from enum import Enum
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ..errors import UsageError, ValidationError
from ..terminal import agreeing, is_printable_name, quantity
from .order import RANDOM_SHARE, review_queue
from .store import create_db, is_new_db, open_db, queued, read_meta, transaction, write_meta
from .tasks import Labelling, Task, labels_labelling, load_tasks, parse_labelling

CLAIM_SECONDS = 600.0
MAX_REVIEWER_NAME = 80
ADJUDICATION_RULES = ("majority", "strict")
"""--adjudicate's rules besides a reviewer's name: no reviewer may be called one (the rule would always win)."""


def as_recorded(name: str) -> str:
    """A name in the form reviewer names are recorded in (ends trimmed, runs of spaces one, NFC): check_reviewer_name's,
    and --adjudicate's, whose " bob" was refused beside the reviewer bob that `review start --reviewer " bob"` recorded."""
    return unicodedata.normalize("NFC", " ".join(name.split()))


def check_reviewer_name(name: str) -> str:
    """A reviewer's name as it is recorded and shown: 1 to MAX_REVIEWER_NAME printable characters,
    so no name can drive the terminal of whoever runs `review stats` (escape sequences, NUL) or
    turn text around on the page (bidi overrides); its ends trimmed and its runs of spaces made one,
    as the page's sign-in does, so "alice " at a terminal is alice, not a second reviewer who looks the same; and
    in Unicode's composed form (NFC), so Bób typed as o and a combining accent (as some keyboards and systems give
    it) is the Bób typed with one letter ó, not a second reviewer."""
    shown = as_recorded(name)
    if not name.strip() or not is_printable_name(name) or len(shown) > MAX_REVIEWER_NAME:
        raise ValidationError(f"a reviewer name is 1 to {MAX_REVIEWER_NAME} printable characters (no control characters "
                              f"or text-direction overrides), not {name[:MAX_REVIEWER_NAME + 1]!r}")
    if shown in ADJUDICATION_RULES:
        raise ValidationError(f"a reviewer cannot be called {shown!r}: --adjudicate {shown} names a rule, so this reviewer's grades "
                              "could never be chosen by name; give another name")
    return shown


# letters of other alphabets that read as Latin ones (from Unicode's confusables.txt, UTS #39): Cyrillic, Greek, dotless i
LOOK_ALIKES = str.maketrans({pair[0]: pair[1] for pair in (
    "АA ВB ЕE КK МM НH ОO РP СC ТT ХX УY ҮY ІI ЈJ ЅS ԀD Ӏl аa еe оo рp сc хx уy іi јj ѕs һh ԁd ԛq ԝw ӏl "
    "ΑA ΒB ΕE ΖZ ΗH ΙI ΚK ΜM ΝN ΟO ΡP ΤT ΥY ΧX αa γy ιi νv οo ρp υu ıi").split()})


def name_key(name: str) -> str:
    """What two names that read alike share: their skeleton in any case and width (ＡＬＩＣＥ is alice) and with look-alike
    letters of other alphabets read as Latin (Cyrillic аlice is alice), so nobody signs in as another by a name that only
    looks the same. A table of the common ones, not a package: of PyPI's, confusable_homoglyphs gives no key two names
    share, and confusables has had no release since 2021."""
    return unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", name).translate(LOOK_ALIKES).casefold())


def look_alike(name: str, names: Iterable[str]) -> str | None:
    """The one of `names` that `name` reads as without being it (None where `name` is one of them, or reads as none)."""
    names = list(names)
    return None if name in names else next((n for n in names if name_key(n) == name_key(name)), None)


def look_alike_note(name: str, like: str, db: str) -> str:
    """Why a name that reads as a reviewer's already in `db` is a mistake (the terminal and `--reviewers` warn of it)."""
    return (f"{name} reads as {like}, a reviewer of {db} already, but is not written the same (case, width, or a letter of "
            f"another alphabet): {name}'s decisions would count as another reviewer's")


def look_alike_reviewer(conn: sqlite3.Connection, name: str) -> str | None:
    """The reviewer of the database `name` reads as without being them (look_alike): a second reviewer in the making,
    whose decisions would count apart from the first's (the page refuses the name; the terminal warns)."""
    return look_alike(name, (row[0] for row in conn.execute("SELECT name FROM reviewers ORDER BY created, name")))  # the first


@dataclass(frozen=True)
class QueueSettings:
    """How a new queue is built (see semrel.review.order.review_queue)."""

    order: str = "uncertain"
    random_share: float = RANDOM_SHARE
    seed: int = 0
    limit: int | None = None
    overlap: int = 0  # the first `overlap` tasks are shown to every reviewer

    def __post_init__(self) -> None:
        if self.order != "uncertain" and self.random_share != RANDOM_SHARE:  # it was recorded in the manifest and used nowhere
            raise UsageError(f"random_share= mixes random pairs into order='uncertain'; it does not apply to order={self.order!r}")


def has_queue(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT EXISTS (SELECT 1 FROM tasks)").fetchone()[0] == 1


def create_queue(conn: sqlite3.Connection, tasks: Sequence[Task], labelling: Labelling, settings: QueueSettings) -> int:
    """Store the tasks in review order (the first `limit`); returns how many were stored (0
    when the database already holds a queue). The tasks are taken in (query, chunk) order, so that the seeded sample
    and the order of ties are a function of the pairs, not of the judgments' line order."""
    tasks = sorted(tasks, key=lambda t: (t.query_id, t.chunk_id))
    queue = review_queue(
        np.array([t.distance for t in tasks]), [t.query_id for t in tasks], settings.order,
        settings.random_share, settings.seed, settings.limit,
    )
    rows = []
    for position, index in enumerate(queue.order.tolist()):
        t, rank = tasks[index], int(queue.sample_rank[index])
        rows.append((
            position, t.query_id, t.chunk_id, t.query, json.dumps(list(t.answers), ensure_ascii=False), t.chunk,
            t.P, t.R, t.F, t.p, t.proposed, t.distance, rank if rank >= 0 else None, int(position < settings.overlap), t.hash,
        ))
    with transaction(conn):
        if has_queue(conn):  # another reviewer's process built it a moment ago: join that one
            return 0
        conn.executemany(
            "INSERT INTO tasks (position, query_id, chunk_id, query, answers, chunk, P, R, F, probability, proposed, distance,"
            " sample_rank, shared, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows,
        )
        write_meta(conn, {
            **labelling.to_json(), "order": settings.order, "random_share": settings.random_share, "seed": settings.seed,
            "limit": settings.limit, "overlap": settings.overlap, "pool_size": len(tasks),
            "pool_queries": len({t.query_id for t in tasks}), "created": time.time(),
        })
    return len(rows)


@dataclass(frozen=True)
class Refreshed:
    """What re-reading the inputs of a queue changed (counts of pairs)."""

    texts: int  # new texts: their earlier decisions are stale
    proposed: int  # another proposed grade (labels of another rule?)
    left_out: int  # judged pairs the queue lacks
    withdrawn: int  # undecided queued pairs the inputs no longer list: withdrawn by this refresh
    decided_unjudged: int  # decided pairs the inputs no longer list: their decisions stand


def refresh_tasks(conn: sqlite3.Connection, tasks: Sequence[Task], judgments: str) -> Refreshed:
    """Bring stored tasks up to date with re-read inputs, in one transaction: changed texts get a new hash (their
    old decisions become stale), scores and proposed grades are updated. A pair the inputs no longer list is withdrawn,
    shown to nobody, not with the texts and scores of judgments since replaced; its decisions stand (listed again, it is
    back). Tasks none of which the queue holds (read from `judgments`) are the files of another review: refused before
    anything is written."""
    given = {(t.query_id, t.chunk_id): t for t in tasks}
    with transaction(conn):  # read under the write lock: a decision made meanwhile is counted as it is kept
        rows = conn.execute("SELECT t.id, t.query_id, t.chunk_id, t.hash, t.proposed, t.withdrawn,"
                            " EXISTS (SELECT 1 FROM live l WHERE l.task_id = t.id) AS decided FROM tasks t").fetchall()
        stored = {(r["query_id"], r["chunk_id"]): r for r in rows}
        if given.keys().isdisjoint(stored):
            raise ValidationError(f"{getattr(conn, 'name', '') or 'the review database'}: its queue holds none of the "
                                  f"{quantity(len(tasks), 'pair')} judged in {judgments}: it was built from other judgments: "
                                  "give the database these were queued in (or a new one), or the files its queue was built from")
        kept = [t for pair, t in given.items() if pair in stored]
        gone = [r for pair, r in stored.items() if pair not in given]
        conn.executemany(
            "UPDATE tasks SET query = ?, answers = ?, chunk = ?, P = ?, R = ?, F = ?, probability = ?, proposed = ?, hash = ?,"
            " withdrawn = 0 WHERE query_id = ? AND chunk_id = ?",
            [(t.query, json.dumps(list(t.answers), ensure_ascii=False), t.chunk, t.P, t.R, t.F, t.p, t.proposed, t.hash,
              t.query_id, t.chunk_id) for t in kept],
        )
        conn.executemany("UPDATE tasks SET withdrawn = 1 WHERE id = ?", [(r["id"],) for r in gone])  # on a screen now: no longer held
    return Refreshed(
        texts=sum(stored[t.query_id, t.chunk_id]["hash"] != t.hash for t in kept),
        proposed=sum(stored[t.query_id, t.chunk_id]["proposed"] != t.proposed for t in kept),
        left_out=len(given) - len(kept), withdrawn=sum(not r["withdrawn"] and not r["decided"] for r in gone),
        decided_unjudged=sum(r["decided"] for r in gone),
    )


def labelling_of(conn: sqlite3.Connection) -> Labelling:
    meta = read_meta(conn)
    if "thresholds" not in meta:
        raise ValidationError(f"{getattr(conn, 'name', '') or 'the review database'}: holds no queue yet (build one with `semrel review "
                              "start` from the judgments, labels, corpus and golden files)")
    refit = meta.get("refit")
    return Labelling(meta["on"], tuple(meta["thresholds"]), tuple(refit) if refit is not None else None)


def task_from_row(row: sqlite3.Row) -> Task:
    return Task(
        query_id=row["query_id"], chunk_id=row["chunk_id"], query=row["query"], answers=tuple(json.loads(row["answers"])),
        chunk=row["chunk"], P=row["P"], R=row["R"], F=row["F"], proposed=row["proposed"], distance=row["distance"],
        p=row["probability"] if "probability" in row.keys() else None,  # a schema-1 database read without upgrading it (export, stats)
        id=row["id"], position=row["position"], sample_rank=row["sample_rank"], shared=bool(row["shared"]), shown_hash=row["hash"],
    )


@dataclass(frozen=True)
class Decided:
    """A reviewer's standing grade or skip (grade None), for revisiting earlier decisions."""

    task: Task
    grade: int | None


def flagged_pairs(conn: sqlite3.Connection, reviewer: str) -> int:
    """The pairs `reviewer` flagged: one flagged twice counts once, on the page and in `review stats` alike."""
    sql = "SELECT count(DISTINCT task_id) FROM decisions WHERE kind = 'flag' AND reviewer = ?"
    return int(conn.execute(sql, (reviewer,)).fetchone()[0])


@dataclass(frozen=True)
class Progress:
    total: int  # tasks in the queue
    done: int  # tasks with a standing decision by anyone, grade or skip: the queue has no more to offer them
    mine: int  # standing grades by this reviewer (shown beside the graded count, which skips are not in)
    flagged: int  # tasks this reviewer flagged
    graded: int  # tasks with a standing grade by anyone: what `review stats` counts as reviewed (a skip keeps the derived label)
    skipped: int  # tasks done by skips alone: done, but with no human grade


def queue_end(progress: Progress) -> str:
    """What a reviewer with no pair left is told. Pairs nobody has decided yet may be held by other reviewers
    (shown to them in the last CLAIM_SECONDS, and not left by quitting): the queue is not done, and an export now
    lacks them, so they are counted, not called reviewed."""
    held = progress.total - progress.done
    if held <= 0:
        skipped = f", {progress.skipped} of them skipped (a skipped pair keeps its derived label)" if progress.skipped else ""
        return f"all {progress.total} tasks are reviewed{skipped}"
    return (f"no pair is free for you now: {quantity(held, 'pair')} of the {progress.total} {agreeing(held, 'are')} not decided yet "
            f"but held by other reviewers (a pair shown to one is held for {CLAIM_SECONDS / 60:.0f} minutes); "
            "come back later for those they leave")


_UNDECIDED_BY_ME = "NOT EXISTS (SELECT 1 FROM live l WHERE l.task_id = t.id AND l.reviewer = :r)"
_UNDECIDED_BY_OTHERS = "NOT EXISTS (SELECT 1 FROM live l WHERE l.task_id = t.id AND l.reviewer != :r)"
_HELD = (  # claimed by this reviewer, decided neither by them nor (unless shared) by anyone else; of several (an undo
    # while a pair is shown) the one claimed last, the pair undone, even where the pair shown is earlier in the queue
    "SELECT t.* FROM tasks t JOIN claims c ON c.task_id = t.id AND c.reviewer = :r"
    f" WHERE NOT t.withdrawn AND {_UNDECIDED_BY_ME} AND (t.shared OR {_UNDECIDED_BY_OTHERS}) ORDER BY c.claimed DESC, t.position LIMIT 1"
)


class Outcome(Enum):
    """What became of a grade, skip, flag or note a front end asked for."""

    RECORDED = "recorded"  # written (an empty note: nothing to write)
    ALREADY_DECIDED = "already decided"  # a grade or skip on a pair this reviewer's decision stands on: nothing written
    NOT_HELD = "not held"  # not the pair held for this reviewer now (decided by another, or moved on): nothing written


class Session:
    """One reviewer working through the queue of a review database."""

    def __init__(self, conn: sqlite3.Connection, reviewer: str):
        self.conn, self.reviewer = conn, check_reviewer_name(reviewer)
        with transaction(conn):
            conn.execute("INSERT OR IGNORE INTO reviewers (name, created) VALUES (?, ?)", (self.reviewer, time.time()))

    def next_task(self) -> Task | None:
        """The task this reviewer holds and has not decided (after a quit, a kill or an undo),
        else the first task in queue order nobody else holds or decided (shared tasks: any
        this reviewer has not decided); it is claimed before it is returned."""
        now = time.time()
        args: dict[str, Any] = {"r": self.reviewer, "fresh": now - CLAIM_SECONDS}
        with transaction(self.conn):
            row = self._held() or self.conn.execute(
                f"SELECT t.* FROM tasks t WHERE NOT t.withdrawn AND {_UNDECIDED_BY_ME} AND (t.shared OR ({_UNDECIDED_BY_OTHERS}"
                " AND NOT EXISTS (SELECT 1 FROM claims c WHERE c.task_id = t.id AND c.reviewer != :r AND c.claimed > :fresh)))"
                " ORDER BY t.position LIMIT 1", args,
            ).fetchone()
            if row is None:
                return None
            self._claim(row["id"], now)
        return task_from_row(row)

    def release(self) -> None:
        """Let other reviewers have the pairs this reviewer holds, as if their claims had run out: on quitting, so a pair
        left on screen is not kept from everyone for CLAIM_SECONDS. The claims stay, so this reviewer resumes at the pair
        if nobody has decided it meanwhile."""
        with transaction(self.conn):
            self.conn.execute("UPDATE claims SET claimed = claimed - ? WHERE reviewer = ?", (CLAIM_SECONDS, self.reviewer))

    def on_screen(self) -> bool:
        """Whether this reviewer has a pair shown now: held, undecided, claimed in the last CLAIM_SECONDS and not
        left by quitting (a person signed in at the page or a terminal, who may not have decided anything yet)."""
        sql = (f"SELECT EXISTS (SELECT 1 FROM tasks t JOIN claims c ON c.task_id = t.id AND c.reviewer = :r WHERE c.claimed > :fresh"
               f" AND NOT t.withdrawn AND {_UNDECIDED_BY_ME} AND (t.shared OR {_UNDECIDED_BY_OTHERS}))")
        return bool(self.conn.execute(sql, {"r": self.reviewer, "fresh": time.time() - CLAIM_SECONDS}).fetchone()[0])

    def _held(self) -> sqlite3.Row | None:
        """The task held for this reviewer, the one next_task() shows them; it only reads, so it
        runs inside the caller's transaction (a nested BEGIN IMMEDIATE is not possible)."""
        return self.conn.execute(_HELD, {"r": self.reviewer}).fetchone()

    def _standing(self, task: Task) -> list[sqlite3.Row]:
        """This reviewer's standing grade or skip on `task` (at most one)."""
        return self.conn.execute("SELECT id FROM live WHERE task_id = ? AND reviewer = ?", (task.id, self.reviewer)).fetchall()

    def _claim(self, task_id: int, now: float) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO claims (task_id, reviewer, claimed) VALUES (?, ?, ?)", (task_id, self.reviewer, now)
        )

    def _append(self, task: Task, kind: str, grade: int | None = None, note: str | None = None,
                undoes: int | None = None, seconds: float | None = None, simulated: bool = False) -> None:
        self.conn.execute(
            "INSERT INTO decisions (task_id, task_hash, reviewer, kind, grade, note, undoes, seconds, created, simulated)"
            " SELECT id, COALESCE(?, hash), ?, ?, ?, ?, ?, ?, ?, ? FROM tasks WHERE id = ?",
            # the hash of the texts the reviewer was shown: refreshed since, the decision is stale on the new ones (it was
            # recorded with theirs, a label of texts nobody saw)
            (task.shown_hash, self.reviewer, kind, grade, note, undoes, seconds, time.time(), int(simulated), task.id),
        )

    def _decide(self, task: Task, kind: str, grade: int | None = None, note: str | None = None,
                seconds: float | None = None, simulated: bool = False) -> Outcome:
        """Record a decision on `task` only while it is the pair held for this reviewer: the check
        and the write are one transaction, so no other process (a terminal, a second web server,
        this name elsewhere) can decide or take the pair in between."""
        with transaction(self.conn):
            held = self._held()
            if held is None or held["id"] != task.id:
                settled = kind in ("grade", "skip") and self._standing(task)
                return Outcome.ALREADY_DECIDED if settled else Outcome.NOT_HELD
            if kind != "note" or note:
                self._append(task, kind, grade=grade, note=note, seconds=seconds, simulated=simulated)
        return Outcome.RECORDED

    def _check_grade(self, grade: int) -> None:
        top = labelling_of(self.conn).max_grade
        if not 0 <= grade <= top:
            raise ValidationError(f"grade {grade} is outside 0..{top}")

    def grade(self, task: Task, grade: int, seconds: float | None = None, simulated: bool = False) -> Outcome:
        """`seconds`: the time the reviewer took (None: not measured); `simulated`: made by `review simulate`, not a person."""
        self._check_grade(grade)
        return self._decide(task, "grade", grade=grade, seconds=seconds, simulated=simulated)

    def skip(self, task: Task, seconds: float | None = None, simulated: bool = False) -> Outcome:
        return self._decide(task, "skip", seconds=seconds, simulated=simulated)

    def flag(self, task: Task) -> Outcome:
        return self._decide(task, "flag")

    def note(self, task: Task, text: str) -> Outcome:
        """An empty note is checked like any decision but nothing is written."""
        return self._decide(task, "note", note=text)

    def task(self, task_id: int) -> Task:
        """A task of the queue by its id (a front end names the task a decision is for)."""
        row = self.conn.execute("SELECT * FROM tasks WHERE id = ?", (task_id,)).fetchone() if 0 < task_id < 2**63 else None
        if row is None:
            raise ValidationError(f"no task {task_id} in this review database")
        return task_from_row(row)

    def following(self, task: Task, count: int) -> list[Task]:
        """The tasks after `task` in queue order, likely shown next (a front end prepares them)."""
        rows = self.conn.execute("SELECT * FROM tasks WHERE position > ? AND NOT withdrawn ORDER BY position LIMIT ?",
                                 (task.position, count))
        return [task_from_row(r) for r in rows]

    def recent(self, limit: int = 50) -> list[Decided]:
        """This reviewer's standing grades and skips, newest first."""
        rows = self.conn.execute(
            "SELECT t.*, l.kind AS kind, l.grade AS grade FROM live l JOIN tasks t ON t.id = l.task_id"
            " WHERE l.reviewer = ? ORDER BY l.id DESC LIMIT ?", (self.reviewer, limit),
        ).fetchall()
        return [Decided(task_from_row(r), r["grade"] if r["kind"] == "grade" else None) for r in rows]

    def revise(self, task: Task, grade: int | None) -> bool:
        """Change this reviewer's decision on an earlier task: its standing grade or skip is
        undone and the new grade (None: a skip) recorded, in one transaction. False, and nothing
        written, when no decision of theirs stands on it (undone meanwhile, elsewhere)."""
        if grade is not None:
            self._check_grade(grade)
        with transaction(self.conn):
            standing = self._standing(task)
            if not standing:
                return False
            for row in standing:
                self._append(task, "undo", undoes=row["id"])
            self._append(task, "grade" if grade is not None else "skip", grade=grade)
        return True

    def undo(self) -> Task | None:
        """Take back this reviewer's latest standing grade or skip; its task comes next."""
        with transaction(self.conn):
            row = self.conn.execute(
                "SELECT id, task_id FROM live WHERE reviewer = ? ORDER BY id DESC LIMIT 1", (self.reviewer,)
            ).fetchone()
            if row is None:
                return None
            task = task_from_row(self.conn.execute("SELECT * FROM tasks WHERE id = ?", (row["task_id"],)).fetchone())
            self._append(task, "undo", undoes=row["id"])
            self._claim(row["task_id"], time.time())
        return task

    def progress(self) -> Progress:
        done, graded = self.conn.execute(  # in one read: a grade committed between two would count in one only
            "SELECT count(DISTINCT task_id), count(DISTINCT CASE WHEN kind = 'grade' THEN task_id END) FROM live").fetchone()
        return Progress(
            total=self._count(f"SELECT count(*) FROM tasks t WHERE {queued(self.conn)}"), done=done,
            mine=self._count("SELECT count(*) FROM live WHERE reviewer = ? AND kind = 'grade'", self.reviewer),
            flagged=flagged_pairs(self.conn, self.reviewer), graded=graded, skipped=done - graded,
        )

    def _count(self, sql: str, *args: Any) -> int:
        return int(self.conn.execute(sql, args).fetchone()[0])


@dataclass(frozen=True)
class TaskFiles:
    """The inputs a queue is built from."""

    judgments: str
    labels: str
    corpus: str
    golden: str

    def load(self, labelling: Labelling) -> list[Task]:
        return load_tasks(self.judgments, self.labels, self.corpus, self.golden, labelling)

    def preloaded(self, labelling: Labelling) -> TaskFiles:
        """These files with their tasks read now (every input checked before anything is written),
        given again by load() for the same labelling."""
        return PreloadedFiles(self.judgments, self.labels, self.corpus, self.golden, labelling, self.load(labelling))


@dataclass(frozen=True)
class PreloadedFiles(TaskFiles):
    labelling: Labelling
    tasks: list[Task]

    def load(self, labelling: Labelling) -> list[Task]:
        return self.tasks if labelling == self.labelling else super().load(labelling)


def prepare_queue(conn: sqlite3.Connection, files: TaskFiles | None, labelling: Labelling | None,
                  settings: QueueSettings, warn: Callable[[str], None]) -> None:
    """Refresh the database's queue from `files` when given, or build it (a web server does
    this once at start; its reviewers join later)."""
    if has_queue(conn):
        built, defaults = read_meta(conn), QueueSettings()
        asked = [k for k, v in asdict(settings).items() if v != getattr(defaults, k) and k in built and built[k] != v]
        if asked:
            kept = ", ".join(f"--{k.replace('_', '-')} {'none' if built[k] is None else built[k]}" for k in asked)
            warn(f"this queue was built with {kept}; it keeps its order and shared pairs (a new --db builds a queue with yours)")
        if files is not None:
            stored = labelling_of(conn)
            if labelling is not None and labelling != stored:
                warn(_keeps(stored))
            tasks = files.load(stored)
            refreshed = refresh_tasks(conn, tasks, files.judgments)
            if refreshed.texts:
                warn(f"{quantity(refreshed.texts, 'pair', 'have')} new texts; their earlier decisions are stale and they are shown again")
            if refreshed.proposed:
                warn(f"{quantity(refreshed.proposed, 'pair', 'have')} another proposed grade in these labels than the queue held "
                     "(labels of "
                     "another rule?): reviewers' agreement with the judge is now measured against these labels")
            pool, queued = built.get("pool_size"), conn.execute("SELECT count(*) FROM tasks").fetchone()[0]
            left_out = refreshed.left_out
            if left_out and (len(tasks), left_out) != (pool, (pool or 0) - queued):  # not just the pairs --limit kept out
                warn(f"{quantity(left_out, 'judged pair', 'are')} not in this database's queue; review them with a new --db")
            if refreshed.withdrawn:
                warn(f"{quantity(refreshed.withdrawn, 'undecided pair')} of this queue {agreeing(refreshed.withdrawn, 'are')} no longer "
                     "judged in these files: withdrawn, shown to nobody (judged again, a pair comes back)")
            if refreshed.decided_unjudged:
                warn(f"{quantity(refreshed.decided_unjudged, 'decided pair')} of this queue {agreeing(refreshed.decided_unjudged, 'are')} "
                     "no longer judged in these files: kept with the decisions made, in stats and exports, and shown to no other reviewer")
    elif files is None:
        raise ValidationError("the review database is new: give judgments=, labels=, corpus= and golden=")
    elif labelling is None:
        raise ValidationError("give the labelling thresholds, e.g. on='R' thresholds='0.5'")  # the CLI says --on R --thresholds 0.5
    else:
        recorded = labels_labelling(files.labels)
        if recorded is not None and recorded != labelling:  # --thresholds beside labels of another rule: the queue's order and
            # the judge line's thresholds would not be the labels' (`--thresholds 0.5` is on R, labels are p >= 0.38 by default)
            warn(f"{files.labels} holds labels of {_rule(recorded)} (its manifest), and the queue is built on {_rule(labelling)}: "
                 "its pairs are ordered by their distance to thresholds the proposed grades did not come from; give the labels "
                 "that rule made, or leave out on= and thresholds= to queue by the labels' rule")
        create_queue(conn, files.load(labelling), labelling, settings)
        whole = "SELECT count(DISTINCT query_id) FROM tasks WHERE sample_rank IS NOT NULL"  # the queries queued whole
        if settings.order == "query-sample" and (sampled := conn.execute(whole).fetchone()[0]) < 2:  # estimate needs 2: said now
            warn(f"--limit {settings.limit} queues {quantity(sampled, 'query')} whole, and order query-sample samples only "
                 "those: `semrel estimate` needs 2 or more; build the queue with a larger --limit (a new --db)")


def _rule(labelling: Labelling) -> str:
    refitted = " (p refitted on every coefficient)" if labelling.refit is not None else ""
    return f"--on {labelling.on} --thresholds {','.join(map(str, labelling.thresholds))}{refitted}"


def _keeps(stored: Labelling) -> str:
    return f"this queue was built with {_rule(stored)}; it keeps them"


@dataclass(frozen=True)
class QueueRequest:
    """The queue to build or join: its files (all four, or none to resume a database), the labelling to threshold
    by (`thresholds`: comma-separated numbers or a `semrel calibrate -o` file; None: the labels' manifest) and
    how a new queue is ordered."""

    judgments: str | None = None
    labels: str | None = None
    corpus: str | None = None
    golden: str | None = None
    on: str | None = None
    thresholds: str | None = None
    settings: QueueSettings = QueueSettings()


def join_queue(db: str, request: QueueRequest, warn: Callable[[str], None]) -> sqlite3.Connection:
    """The database with its queue, built from the files on first use (refreshed when given later): what `review
    start`, `simulate` and `serve` open."""
    r = request
    given = [r.judgments, r.labels, r.corpus, r.golden]
    if any(given) and not all(given):
        raise UsageError("give all of judgments=, labels=, corpus= and golden=, or none to resume a database")
    files = TaskFiles(r.judgments, r.labels, r.corpus, r.golden) if r.judgments and r.labels and r.corpus and r.golden else None
    labelling = parse_labelling(r.on, r.thresholds, r.labels, r.judgments) if files and r.thresholds else None
    if is_new_db(db):  # a new database: its inputs read first, then built aside and put in place whole
        if files:
            labelling = labelling or parse_labelling(r.on, r.thresholds, r.labels, r.judgments)
            files = files.preloaded(labelling)
        built: dict[str, Any] = {}

        def build(conn: sqlite3.Connection) -> None:
            prepare_queue(conn, files, labelling, r.settings, warn)
            built.update(read_meta(conn))

        conn = create_db(db, build)
        if read_meta(conn) != built:  # another start put its database there meanwhile: joined, and told what it keeps
            prepare_queue(conn, files, labelling, r.settings, warn)
        return conn
    conn = open_db(db)
    try:
        if files and labelling is None and not has_queue(conn):
            labelling = parse_labelling(r.on, r.thresholds, r.labels, r.judgments)
        if files is None and (r.on or r.thresholds) and has_queue(conn):  # said nothing before; with the files it was said
            stored = labelling_of(conn)
            asked = parse_labelling(r.on, r.thresholds) if r.thresholds else stored
            if asked != stored or (r.on or stored.on) != stored.on:
                warn(_keeps(stored))
        prepare_queue(conn, files, labelling, r.settings, warn)
    except BaseException:  # refused: the database is closed, not left open to the caller that gets no connection
        conn.close()
        raise
    return conn
