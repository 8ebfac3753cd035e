"""The review database: SQLite in WAL mode, so several reviewer processes share one file.

Decisions are append-only (triggers refuse UPDATE and DELETE); an undo is its own event that
names the decision it takes back. Writers take the lock up front (BEGIN IMMEDIATE) and wait
for each other (busy timeout), so no decision is lost or recorded twice.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import secrets
import sqlite3
import time
from pathlib import Path
from typing import Any, Callable, Iterator, TypeVar

from ..errors import SemrelError
from ..formats.files import check_input_file, note_database, sweep_stale_temps, temp_prefix
from ..formats.kinds import REVIEW_DATABASE, kind_of, misplaced

SCHEMA_VERSION = 4  # 2: tasks.probability; 3: decisions.simulated; 4: tasks.withdrawn
BUSY_TIMEOUT_MS = 30_000
T = TypeVar("T")

SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE tasks (
    id INTEGER PRIMARY KEY,
    position INTEGER NOT NULL UNIQUE,
    query_id TEXT NOT NULL,
    chunk_id TEXT NOT NULL,
    query TEXT NOT NULL,
    answers TEXT NOT NULL,            -- JSON list of reference answers
    chunk TEXT NOT NULL,
    P REAL, R REAL, F REAL,
    probability REAL,                -- the judge's p (SQLite names ignore case, so not 'p' beside 'P'); NULL: judged without it
    proposed INTEGER,                 -- the derived qrels' grade
    distance REAL NOT NULL,           -- to the nearest threshold
    sample_rank INTEGER,              -- place in the uniform random sample, NULL if not sampled
    shared INTEGER NOT NULL DEFAULT 0, -- shown to every reviewer (--overlap)
    hash TEXT NOT NULL,               -- over query, answers and chunk: edited texts make labels stale
    withdrawn INTEGER NOT NULL DEFAULT 0, -- 1: the judgments no longer list the pair; shown to nobody, its decisions stand
    UNIQUE (query_id, chunk_id)
);
CREATE TABLE reviewers (name TEXT PRIMARY KEY, created REAL NOT NULL);
CREATE TABLE claims (
    task_id INTEGER NOT NULL REFERENCES tasks(id),
    reviewer TEXT NOT NULL REFERENCES reviewers(name),
    claimed REAL NOT NULL,
    PRIMARY KEY (task_id, reviewer)
);
CREATE TABLE decisions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id INTEGER NOT NULL REFERENCES tasks(id),
    task_hash TEXT NOT NULL,
    reviewer TEXT NOT NULL REFERENCES reviewers(name),
    kind TEXT NOT NULL CHECK (kind IN ('grade', 'skip', 'flag', 'note', 'undo')),
    grade INTEGER,
    note TEXT,
    undoes INTEGER REFERENCES decisions(id),
    seconds REAL,                     -- time taken; NULL: none measured (piped keys, `review simulate`)
    created REAL NOT NULL,
    simulated INTEGER                 -- 1: `review simulate`'s, 0: a person's; NULL: from before schema 3 (simulated if no seconds)
);
CREATE INDEX decisions_by_task ON decisions (task_id, reviewer);
CREATE INDEX decisions_by_undo ON decisions (undoes);
CREATE TRIGGER decisions_no_update BEFORE UPDATE ON decisions
    BEGIN SELECT RAISE(ABORT, 'decisions are append-only'); END;
CREATE TRIGGER decisions_no_delete BEFORE DELETE ON decisions
    BEGIN SELECT RAISE(ABORT, 'decisions are append-only'); END;
-- A reviewer's standing decision on a task: a grade or skip on the task's current texts
-- that no undo has taken back (at most one per task and reviewer, enforced on insert).
CREATE VIEW live AS
    SELECT d.* FROM decisions d JOIN tasks t ON t.id = d.task_id AND t.hash = d.task_hash
    WHERE d.kind IN ('grade', 'skip')
      AND NOT EXISTS (SELECT 1 FROM decisions u WHERE u.kind = 'undo' AND u.undoes = d.id);
"""


def database_error(name: str, exc: sqlite3.Error) -> SemrelError | None:
    """One line for an SQLite error on the review database `name`: a lock held past the busy timeout, a file
    that cannot be read or written (OperationalError), or a file that is not SQLite or is damaged (a copy cut
    short, overwritten pages). None for the others (a constraint, a misuse), which are not the file's fault."""
    if isinstance(exc, sqlite3.OperationalError):
        if "readonly" in str(exc) or "unable to open" in str(exc):  # trying again gives the same: say what SQLite must write
            return SemrelError(f"{name}: {exc} (nothing of this step was saved): the file or its folder is read-only or "
                               f"unreadable, and SQLite writes {name}-wal and {name}-shm beside it; copy {name} with its -wal "
                               "to a folder you can write and give that path")
        return SemrelError(f"{name}: {exc} (nothing of this step was saved; try again)")
    if type(exc) is sqlite3.DatabaseError:
        found = kind_of(name)
        if found is not None and found[1] is not REVIEW_DATABASE:  # another of semrel's files, given for the database
            return SemrelError(f"{name}: {misplaced(found[1], REVIEW_DATABASE)}")
        return SemrelError(f"{name}: not a review database, or a damaged one ({exc}); restore it from a copy or give another path")
    return None


class ReviewConnection(sqlite3.Connection):
    """A review database's connection: once open (`name` set), an SQLite error of any statement or row fetched
    is one line naming the file (database_error). A database damaged past its first pages opens and fails only
    when a statement reads those pages, mid-session: a traceback before."""

    name = ""

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        return self.cursor(_Cursor).execute(sql, parameters)

    def executemany(self, sql: str, parameters: Any, /) -> sqlite3.Cursor:
        return self.cursor(_Cursor).executemany(sql, parameters)


def _told(method: Callable[..., T]) -> Callable[..., T]:
    """`method` of a cursor, its SQLite errors told as database_error's line where it has one, on a connection
    open_db has finished opening; the cursor is closed first, so the read lock of a statement cut short does
    not outlive the error."""

    @functools.wraps(method)
    def checked(cursor: sqlite3.Cursor, *args: Any) -> T:
        try:
            return method(cursor, *args)
        except sqlite3.Error as exc:
            name = getattr(cursor.connection, "name", "")
            told = database_error(name, exc) if name else None
            if told is None:
                raise
            cursor.close()
            raise told from None

    return checked


class _Cursor(sqlite3.Cursor):
    execute = _told(sqlite3.Cursor.execute)
    executemany = _told(sqlite3.Cursor.executemany)
    fetchone = _told(sqlite3.Cursor.fetchone)
    fetchall = _told(sqlite3.Cursor.fetchall)
    __next__ = _told(sqlite3.Cursor.__next__)


def _db_name(path: str | os.PathLike) -> str:
    """The review database's path as given; SemrelError for an empty one, which SQLite takes for a temporary database
    (and Path for the current folder: a ValueError traceback)."""
    name = str(path)
    if not name:
        raise SemrelError("the review database's path is empty; give db= a file name (e.g. review.sqlite)")
    return name


def _connect(name: str, uri: str | None = None) -> ReviewConnection:
    """A ReviewConnection in autocommit mode (transactions are explicit) with rows by name and the busy timeout. A file
    named ':memory:' is opened as the file: SQLite takes that name for a database in memory, which vanishes at exit."""
    target = uri or (os.path.join(os.curdir, name) if name == ":memory:" else name)
    conn = sqlite3.connect(target, uri=uri is not None, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                           factory=ReviewConnection)
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    return conn


def open_db(path: str | os.PathLike, create: bool = True) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), WAL, with a busy timeout;
    the schema is created in a new (or empty) file. Nothing is written to a file before it is
    known to be a semrel review database (or a new one): another SQLite file, a newer schema or a
    file that is not SQLite is refused as it was. `create=False`: the database must exist."""
    name = _db_name(path)
    if not create and not os.path.exists(name):
        raise SemrelError(f"{name}: no such review database (start one with `semrel review start`)")
    if os.path.lexists(name):
        note_database(name, check_input_file(name))  # a device or FIFO is neither read nor written; no output replaces it
    try:
        conn = _connect(name)
        version = _check_review_db(conn, name, allow_new=True)  # read only: a file that is not ours is left as it was
        _wal(conn)
        conn.execute("PRAGMA foreign_keys = ON")
    except sqlite3.Error as exc:
        raise database_error(name, exc) or exc from None
    conn.name = name
    if version == 0:
        with transaction(conn):
            if conn.execute("PRAGMA user_version").fetchone()[0] == 0:  # another process may have just made it
                if conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                    raise SemrelError(f"{name}: an SQLite file that is not a review database; give another path")
                for statement in _statements(SCHEMA):
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    elif version < SCHEMA_VERSION:
        with transaction(conn):
            _upgrade(conn)
    return conn


def is_new_db(path: str | os.PathLike) -> bool:
    """Nothing there yet, or an empty file (`touch`ed, or made by a mktemp) with no write-ahead log
    beside it: built aside and put in place whole, like a new path, so a failed start leaves it empty."""
    name = _db_name(path)
    if not os.path.lexists(name):
        return True
    try:
        wal = os.path.getsize(f"{name}-wal") if os.path.lexists(f"{name}-wal") else 0
        return os.path.isfile(name) and not os.path.islink(name) and os.path.getsize(name) == 0 and wal == 0
    except OSError:
        return False


def create_db(path: str | os.PathLike, build: Callable[[sqlite3.Connection], object]) -> sqlite3.Connection:
    """The new review database `path`, whole or not at all: `build` fills a hidden file beside it,
    which is linked into place only then, so a bad input, an error or Ctrl-C midway leaves nothing
    behind, and no file at `path` is ever removed (an empty one is replaced). A database another process (another reviewer's
    start) put there meanwhile is kept and joined; this one is dropped."""
    target = Path(_db_name(path))
    if not os.access(target.parent, os.W_OK | os.X_OK):
        raise SemrelError(f"{path}: cannot make the review database (its folder is missing or not writable)")
    sweep_stale_temps(target)
    temp = target.with_name(f"{temp_prefix(target)}{secrets.token_hex(6)}.tmp")
    try:
        with contextlib.closing(open_db(temp)) as conn:
            build(conn)
            conn.execute("PRAGMA journal_mode = DELETE")  # the WAL folded into the file that is linked
        try:
            if is_new_db(target) and os.path.lexists(target):
                os.replace(temp, target)  # over an empty file, which holds nothing to keep
            else:
                os.link(temp, target)
        except FileExistsError:
            pass
        except OSError:  # a file system without hard links (FAT): moved there instead, while the name is free
            if not os.path.lexists(target):
                os.replace(temp, target)
    finally:
        for name in (temp, f"{temp}-wal", f"{temp}-shm", f"{temp}-journal"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(name)
    return open_db(target)


def _upgrade(conn: sqlite3.Connection) -> None:
    """Bring a review database of an older schema to this one by adding columns only, so every
    task and decision stays as it was (a read-only connection reads the old schema as it is)."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]  # another process may have just upgraded it
    if version < 2:
        conn.execute("ALTER TABLE tasks ADD COLUMN probability REAL")
    if version < 3:
        conn.execute("ALTER TABLE decisions ADD COLUMN simulated INTEGER")
    if version < 4:
        conn.execute("ALTER TABLE tasks ADD COLUMN withdrawn INTEGER NOT NULL DEFAULT 0")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


REVIEW_TABLES = {"meta", "tasks", "reviewers", "claims", "decisions"}


def _check_review_db(conn: sqlite3.Connection, name: str, allow_new: bool) -> int:
    """The schema version of a review database, read without writing; SemrelError (and the
    connection closed) for a newer schema, another SQLite file, or (unless `allow_new`) an empty one."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    problem = None
    if version > SCHEMA_VERSION:
        problem = f"written by a newer semrel (schema {version}; this one reads up to {SCHEMA_VERSION}); upgrade semrel"
    elif version == 0 and tables:
        problem = "an SQLite file that is not a review database; give another path"
    elif version == 0 and not allow_new:
        problem = "empty: not a review database (start one with `semrel review start`)"
    elif version and not REVIEW_TABLES <= tables:
        problem = "an SQLite file that is not a review database (its review tables are missing)"
    if problem:
        conn.close()
        raise SemrelError(f"{name}: {problem}")
    return version


def open_db_read_only(path: str | os.PathLike) -> sqlite3.Connection:
    """A read-only connection to an existing review database (for export, stats and estimates):
    the file is neither created, nor given the review tables, nor switched to WAL, and any write
    through the connection fails."""
    name = _db_name(path)
    if not os.path.exists(name):
        raise SemrelError(f"{name}: no such review database (start one with `semrel review start`)")
    note_database(name, check_input_file(name))
    try:
        conn = _connect_read_only(name)
        _check_review_db(conn, name, allow_new=False)
        conn.execute("PRAGMA query_only = ON")
    except sqlite3.Error as exc:
        raise database_error(name, exc) or exc from None
    conn.name = name
    return conn


def _connect_read_only(name: str) -> ReviewConnection:
    """A read-only connection. A WAL database whose folder SQLite cannot make DB-shm in (a read-only mount, an archived
    copy) cannot be opened so; where no DB-wal or DB-shm lies beside it, no process is writing it (a writer makes both)
    and the file alone is the whole database: it is opened as immutable instead."""
    uri = f"{Path(name).resolve().as_uri()}?mode=ro"
    conn = _connect(name, uri)
    try:
        conn.execute("PRAGMA user_version").fetchone()  # the first read opens the WAL, or fails to
        return conn
    except sqlite3.OperationalError as exc:
        conn.close()
        if "unable to open" not in str(exc) or any(os.path.lexists(f"{name}{suffix}") for suffix in ("-wal", "-shm")):
            raise
    return _connect(name, f"{uri}&immutable=1")


def _wal(conn: sqlite3.Connection) -> None:
    """Switch to WAL; two processes opening a new file at once can find it locked for a moment,
    and this pragma does not always wait on the busy timeout, so it waits here."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _statements(script: str) -> Iterator[str]:
    """The statements of a script (triggers hold inner semicolons, so split on complete ones)."""
    buffer = ""
    for line in script.splitlines(keepends=True):
        if line.lstrip().startswith("--"):
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            yield buffer.strip()
            buffer = ""


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE ... COMMIT: the write lock is taken first, so concurrent writers queue
    instead of failing halfway; an exception rolls back. Busy past the timeout, a read-only file or a
    full disk is one line (ReviewConnection)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:  # SQLite may have rolled back itself (a full disk): the error that did it is the one to tell
            conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


@contextlib.contextmanager
def snapshot(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """BEGIN ... COMMIT around reads: each statement reads the database as of one moment, so figures read
    by several statements agree while reviewers keep deciding (in autocommit, each sees the commits before it)."""
    conn.execute("BEGIN")
    try:
        yield conn
    finally:
        if conn.in_transaction:
            conn.execute("COMMIT")


def queued(conn: sqlite3.Connection) -> str:
    """SQL true of a task `t` the queue counts: one the judgments still list (refresh_tasks withdraws the others), or one
    decided by anyone, whose decision stands. A database of a schema before 4, read as it is (stats, export), withdrew none."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(tasks)")}
    withdrawn = "t.withdrawn" if "withdrawn" in columns else "0"
    return f"(NOT {withdrawn} OR EXISTS (SELECT 1 FROM live l WHERE l.task_id = t.id))"


def read_meta(conn: sqlite3.Connection) -> dict[str, Any]:
    return {row["key"]: json.loads(row["value"]) for row in conn.execute("SELECT key, value FROM meta")}


def write_meta(conn: sqlite3.Connection, values: dict[str, Any]) -> None:
    conn.executemany(
        "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", [(k, json.dumps(v)) for k, v in values.items()]
    )
