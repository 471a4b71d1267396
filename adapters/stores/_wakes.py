"""The wake index of the embedded stores (JSONL directory, SQLite file): per
session, when it next needs a process and who holds it now, so that
``tickler worker --store`` finds what is due without reading every log.

One table, ``wakes``, in an SQLite database: the SQLite store's own (its
rows are written in the same transaction as the events), or the JSONL
store's ``.wake.db`` beside its session files. A row says:

* ``next_due_at``: the earliest instant the session needs a process (the
  core's next target; the time a follow-up was left in the outbox; NULL:
  nothing pending). Exact whenever ``holder`` is NULL.
* ``holder``: the store handle that holds the session now (its token,
  ``<role>:<host>:<pid>:<nonce>``, role ``live`` or ``worker``), set right
  after the session's lock is taken and cleared when the session closes,
  after its last events are durable. While it is set, the row's wake is
  only a hint for the views: workers leave the session to its holder. A
  holder that died (``kill -9``) leaves it set; its lock is free, so a
  worker's sweep takes such a session and computes its wake again. So the
  index is never *later* than the log says while nobody holds a session,
  whatever a crash cut.
* ``failures``: failed hand-overs of the session's first pending follow-up
  (:class:`~tickler.shell._ports.FailureIndex`), kept across processes.
* ``size``: the JSONL session file's size when its row was last made exact
  (a worker starting compares it with the file: one that changed behind the
  index, by a writer that does not keep it, is looked at again).
* ``set_aside``: why a worker set an unreadable session aside (never due
  again until it is opened and closed once more).

The JSONL store's index has a second table, ``closed_files``: each session
file's size, digest (XXH3) and event count as its last durable close left it, with
every line read and valid. An open that finds the same bytes need not read
the lines then (:class:`ClosedFile`).

These functions run on a connection the caller serializes (one thread, or
under a lock).
"""

from __future__ import annotations

import os
import socket
import sqlite3
import uuid
from collections.abc import Collection, Iterable
from typing import Final, Literal, NamedTuple

INDEX_VERSION: Final = 1
SCHEMA: Final = (
    """CREATE TABLE IF NOT EXISTS wakes (
        session_id TEXT PRIMARY KEY,
        next_due_at INTEGER,
        holder TEXT,
        failures INTEGER NOT NULL DEFAULT 0,
        size INTEGER,
        set_aside TEXT
    ) STRICT, WITHOUT ROWID""",
    "CREATE INDEX IF NOT EXISTS wakes_due ON wakes (next_due_at)"
    " WHERE holder IS NULL AND next_due_at IS NOT NULL",
    "CREATE INDEX IF NOT EXISTS wakes_held ON wakes (holder) WHERE holder IS NOT NULL",
)
# The JSONL store's only: each session file as its last clean close left it
# (see ClosedFile). A row outlives its file harmlessly: it vouches only for
# the very bytes it names.
CLOSED_FILES: Final = """CREATE TABLE IF NOT EXISTS closed_files (
    session_id TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    digest INTEGER NOT NULL,
    events INTEGER NOT NULL
) STRICT, WITHOUT ROWID"""
DUE_NOW: Final = 0
"""The wake of a row that must be looked at again (an instant long past)."""

Role = Literal["live", "worker"]


def holder_token(role: Role) -> str:
    """A store handle's holder token: its role, host, process and a nonce
    (two stores in one process are two holders)."""
    return f"{role}:{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def is_worker(holder: str | None) -> bool:
    return holder is not None and holder.startswith("worker:")


class Held(NamedTuple):
    """A session's row as its new holder finds it: its wake and failure
    count, and, when its last holder released it (its exact wake, with its
    log durable), the size of its log then (None: held, crashed, never
    released, or a store that records no size)."""

    next_due_at: int | None
    failures: int
    released_size: int | None = None


NOT_HELD: Final = Held(None, 0)


class WakeRow(NamedTuple):
    session_id: str
    next_due_at: int | None
    holder: str | None
    failures: int
    size: int | None
    set_aside: str | None


class ClosedFile(NamedTuple):
    """A JSONL session file as a clean close left it, every line read and
    valid and durable: its size, its digest (XXH3, 64-bit) and its events.
    A file found byte for byte the same (the size and the digest) at the next open holds
    those events: its lines are then read (and checked) when first needed,
    not all at the open."""

    size: int
    digest: int
    events: int


def create(conn: sqlite3.Connection, *, closed_files: bool = False) -> None:
    """The table and its indexes (inside the caller's transaction); with
    ``closed_files``, the JSONL store's table of closed files too."""
    for statement in SCHEMA:
        conn.execute(statement)
    if closed_files:
        conn.execute(CLOSED_FILES)


def hold(conn: sqlite3.Connection, session_id: str, holder: str) -> Held:
    """Mark the session held by ``holder`` (a row is made when absent: a new
    session, or one the index did not know)."""
    before = conn.execute(
        "SELECT holder, size, set_aside FROM wakes WHERE session_id = ?", (session_id,)
    ).fetchone()
    row = conn.execute(
        "INSERT INTO wakes (session_id, holder) VALUES (?, ?)"
        " ON CONFLICT (session_id) DO UPDATE SET holder = excluded.holder"
        " RETURNING next_due_at, failures",
        (session_id, holder),
    ).fetchone()
    released = before is not None and before[0] is None and before[2] is None
    return Held(row[0], int(row[1]), before[1] if released else None)


def note(conn: sqlite3.Connection, items: Iterable[tuple[str, int | None, int]]) -> None:
    """The wakes and failure counts of held sessions (hints for the views;
    exact again when each is released)."""
    conn.executemany(
        "UPDATE wakes SET next_due_at = ?, failures = ? WHERE session_id = ?",
        [(wake, failures, session_id) for session_id, wake, failures in items],
    )


def release(
    conn: sqlite3.Connection,
    session_id: str,
    holder: str,
    *,
    wake: int | None,
    failures: int,
    size: int | None,
    closed: ClosedFile | None = None,
) -> None:
    """The session is closed by ``holder`` with its log durable: its exact
    wake, and nobody holds it. A row another handle holds now is left as
    it is (it was taken over: that holder writes it). ``closed``: the file
    as this close left it (a statement about those bytes: kept either way)."""
    conn.execute(
        "UPDATE wakes SET next_due_at = ?, failures = ?, size = ?, holder = NULL,"
        " set_aside = NULL WHERE session_id = ? AND (holder IS NULL OR holder = ?)",
        (wake, failures, size, session_id, holder),
    )
    if closed is not None:
        keep_closed(conn, session_id, closed)


def keep_closed(conn: sqlite3.Connection, session_id: str, closed: ClosedFile) -> None:
    """The session file as a close left it (see :class:`ClosedFile`)."""
    conn.execute(
        "INSERT INTO closed_files (session_id, size, digest, events) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (session_id) DO UPDATE SET size = excluded.size,"
        " digest = excluded.digest, events = excluded.events",
        (session_id, *closed),
    )


def closed_file(conn: sqlite3.Connection, session_id: str) -> ClosedFile | None:
    found = conn.execute(
        "SELECT size, digest, events FROM closed_files WHERE session_id = ?", (session_id,)
    ).fetchone()
    return None if found is None else ClosedFile(*found)


def let_go(
    conn: sqlite3.Connection, session_id: str, holder: str, closed: ClosedFile | None = None
) -> None:
    """``holder`` closes the session without knowing its wake (its log may
    not be durable, or nobody computed the wake): the next worker looks.
    ``closed``: the file as this close left it, when it is durable."""
    conn.execute(
        "UPDATE wakes SET next_due_at = ?, holder = NULL WHERE session_id = ? AND holder = ?",
        (DUE_NOW, session_id, holder),
    )
    if closed is not None:
        keep_closed(conn, session_id, closed)


def set_aside(conn: sqlite3.Connection, session_id: str, holder: str, reason: str) -> None:
    """An unreadable session leaves the index until it is written again."""
    conn.execute(
        "UPDATE wakes SET next_due_at = NULL, holder = NULL, set_aside = ?"
        " WHERE session_id = ? AND (holder IS NULL OR holder = ?)",
        (reason, session_id, holder),
    )


def orphaned(conn: sqlite3.Connection, found: list[tuple[str, str]]) -> None:
    """Sessions whose holder died (found held by it, their lock free): due
    now, held by nobody; a row another handle took meanwhile is left."""
    conn.executemany(
        "UPDATE wakes SET holder = NULL, next_due_at = ? WHERE session_id = ? AND holder = ?",
        [(DUE_NOW, session_id, holder) for session_id, holder in found],
    )


def holder_of(conn: sqlite3.Connection, session_id: str) -> str | None:
    row = conn.execute("SELECT holder FROM wakes WHERE session_id = ?", (session_id,)).fetchone()
    return None if row is None else row[0]


def due(conn: sqlite3.Connection, now_ms: int, limit: int, skip: Collection[str] = ()) -> list[str]:
    """Up to ``limit`` sessions nobody holds whose wake is at or before
    ``now_ms``, earliest first, leaving out ``skip``."""
    rows = conn.execute(
        "SELECT session_id FROM wakes WHERE holder IS NULL AND next_due_at <= ?"
        " ORDER BY next_due_at LIMIT ?",
        (now_ms, limit + len(skip)),
    ).fetchall()
    return [row[0] for row in rows if row[0] not in skip][:limit]


def next_due(conn: sqlite3.Connection, skip: Collection[str] = ()) -> int | None:
    """The earliest wake of a session nobody holds, leaving out ``skip``."""
    rows = conn.execute(
        "SELECT session_id, next_due_at FROM wakes"
        " WHERE holder IS NULL AND next_due_at IS NOT NULL ORDER BY next_due_at LIMIT ?",
        (len(skip) + 1,),
    ).fetchall()
    return next((int(row[1]) for row in rows if row[0] not in skip), None)


def held(conn: sqlite3.Connection) -> list[tuple[str, str]]:
    """Every held session and its holder."""
    return [
        (row[0], row[1])
        for row in conn.execute("SELECT session_id, holder FROM wakes WHERE holder IS NOT NULL")
    ]


def row(conn: sqlite3.Connection, session_id: str) -> WakeRow | None:
    found = conn.execute(
        "SELECT session_id, next_due_at, holder, failures, size, set_aside FROM wakes"
        " WHERE session_id = ?",
        (session_id,),
    ).fetchone()
    return None if found is None else WakeRow(*found)


def rows(conn: sqlite3.Connection) -> list[WakeRow]:
    return [
        WakeRow(*found)
        for found in conn.execute(
            "SELECT session_id, next_due_at, holder, failures, size, set_aside FROM wakes"
            " ORDER BY session_id"
        )
    ]


def look_again(conn: sqlite3.Connection, session_ids: Iterable[str]) -> None:
    """These sessions changed behind the index (or it never knew them): due
    now, so a worker opens each and writes its exact wake."""
    conn.executemany(
        "INSERT INTO wakes (session_id, next_due_at) VALUES (?, ?)"
        " ON CONFLICT (session_id) DO UPDATE SET next_due_at = excluded.next_due_at,"
        " set_aside = NULL WHERE holder IS NULL",
        [(session_id, DUE_NOW) for session_id in session_ids],
    )


def forget(conn: sqlite3.Connection, session_ids: Iterable[str]) -> None:
    """Rows of sessions that no longer exist."""
    conn.executemany(
        "DELETE FROM wakes WHERE session_id = ? AND holder IS NULL",
        [(session_id,) for session_id in session_ids],
    )
