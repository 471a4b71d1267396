"""The SQLite store's schema and statements, run on its one DB thread.

STRICT tables; ``events`` is keyed by ``(session_id, seq)`` so a seq can
never be written twice; ``data`` is a BLOB holding the event's JSON bytes
exactly as appended.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final, NamedTuple, TypeVar

from tickler.adapters.stores import _wakes as wakes
from tickler.core import SessionEvent, event
from tickler.shell import Snapshot, StoreError

SCHEMA: Final = (
    """CREATE TABLE IF NOT EXISTS sessions (
        id TEXT PRIMARY KEY,
        header BLOB NOT NULL
    ) STRICT, WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS events (
        session_id TEXT NOT NULL,
        seq INTEGER NOT NULL,
        type TEXT NOT NULL,
        time INTEGER NOT NULL,
        data BLOB NOT NULL,
        PRIMARY KEY (session_id, seq)
    ) STRICT, WITHOUT ROWID""",
    """CREATE TABLE IF NOT EXISTS snapshots (
        session_id TEXT PRIMARY KEY,
        through INTEGER NOT NULL,
        data BLOB NOT NULL
    ) STRICT, WITHOUT ROWID""",
)
SYNCHRONOUS: Final = ("NORMAL", "FULL", "EXTRA")
PAGE: Final = 1000
EventRow = tuple[str, int, str, int, bytes]
T = TypeVar("T")


def connect(path: Path, synchronous: str, timeout: float) -> sqlite3.Connection:
    """Autocommit mode (we issue BEGIN IMMEDIATE ourselves), WAL, schema."""
    conn = sqlite3.connect(path, isolation_level=None, timeout=timeout)
    try:
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if mode != "wal":
            raise StoreError(f"{path}: SQLite refused WAL mode (got {mode!r})")
        conn.execute(f"PRAGMA synchronous={synchronous}")
        with transaction(conn):
            for statement in SCHEMA:
                conn.execute(statement)
            wakes.create(conn)
    except BaseException:
        conn.close()
        raise
    return conn


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``; ``ROLLBACK`` when the body or the
    commit fails (taking the write lock up front means no deadlock later)."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:  # SQLite may have rolled back already (SQLITE_FULL)
            conn.execute("ROLLBACK")
        raise


class Opened(NamedTuple):
    header: bytes
    length: int
    held: wakes.Held


def open_session(
    conn: sqlite3.Connection, session_id: str, header: bytes | None, holder: str
) -> Opened | None:
    """The session's stored header (inserting ``header`` when it is new; a
    ``header`` of None opens only a session that exists: None when it does
    not) and its number of events; its wake index row marked held by
    ``holder``, in the same transaction."""
    with transaction(conn):
        row = conn.execute("SELECT header FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if row is None:
            if header is None:
                return None
            conn.execute("INSERT INTO sessions (id, header) VALUES (?, ?)", (session_id, header))
            row = (header,)
        count, end = conn.execute(
            "SELECT count(*), coalesce(max(seq) + 1, 0) FROM events WHERE session_id = ?",
            (session_id,),
        ).fetchone()
        if count != end:
            raise StoreError(f"session {session_id!r}: {count} events but seq reaches {end - 1}")
        held = wakes.hold(conn, session_id, holder)
    return Opened(bytes(row[0]), int(count), held)


def insert_events(
    conn: sqlite3.Connection, rows: list[EventRow], wake_rows: list[tuple[str, int | None, int]]
) -> None:
    """One commit round: the events, and the wakes of the sessions whose
    wake changed, in one transaction (the index never disagrees with it)."""
    with transaction(conn):
        conn.executemany(
            "INSERT INTO events (session_id, seq, type, time, data) VALUES (?, ?, ?, ?, ?)", rows
        )
        if wake_rows:
            wakes.note(conn, wake_rows)


def in_transaction(conn: sqlite3.Connection, job: Callable[..., T], *args: object) -> T:
    """``job(conn, *args)`` in one transaction."""
    with transaction(conn):
        return job(conn, *args)


def read_events(
    conn: sqlite3.Connection, session_id: str, start: int, end: int
) -> list[SessionEvent]:
    """At most PAGE events with ``start <= seq < end``."""
    rows = conn.execute(
        "SELECT seq, type, time, data FROM events"
        " WHERE session_id = ? AND seq >= ? AND seq < ? ORDER BY seq LIMIT ?",
        (session_id, start, end, PAGE),
    ).fetchall()
    return [event(kind, seq, time, bytes(data)) for seq, kind, time, data in rows]


def load_snapshot(conn: sqlite3.Connection, session_id: str) -> Snapshot | None:
    row = conn.execute(
        "SELECT through, data FROM snapshots WHERE session_id = ?", (session_id,)
    ).fetchone()
    return None if row is None else Snapshot(int(row[0]), bytes(row[1]))


def save_snapshot(conn: sqlite3.Connection, session_id: str, snapshot: Snapshot) -> None:
    with transaction(conn):
        conn.execute(
            "INSERT OR REPLACE INTO snapshots (session_id, through, data) VALUES (?, ?, ?)",
            (session_id, snapshot.through, snapshot.data),
        )


def session_ids(conn: sqlite3.Connection) -> list[str]:
    return [str(row[0]) for row in conn.execute("SELECT id FROM sessions ORDER BY id")]


def data_version(conn: sqlite3.Connection) -> int:
    """Changes when another connection commits."""
    return int(conn.execute("PRAGMA data_version").fetchone()[0])


def unindexed(conn: sqlite3.Connection) -> tuple[int, int]:
    """Sessions without a wake index row (written before the index
    existed) become due now; the sessions there are, and how many those."""
    total = int(conn.execute("SELECT count(*) FROM sessions").fetchone()[0])
    cursor = conn.execute(
        "INSERT INTO wakes (session_id, next_due_at)"
        " SELECT id, ? FROM sessions WHERE id NOT IN (SELECT session_id FROM wakes)",
        (wakes.DUE_NOW,),
    )
    return total, cursor.rowcount
