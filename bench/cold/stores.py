"""The cold stores, generated directly on disk: session files as the runtime
bench writes them (:func:`bench.runtime.harness.session_bytes`, each line
checked against the core's encoder for the first sessions), one one-shot
reminder per session, and each session's wake index row made exact
(``next_due_at`` the reminder's instant, ``size`` the file's size, nobody
holding it), as a closed session's row is: so a worker's start check finds
every session consistent and opens none of them. The same sessions go into
an SQLite store (its ``sessions``, ``events`` and ``wakes`` tables) and, as
date jobs, into APScheduler's job store.

Each store holds its far-future sessions (``c<n>``, written once) and the
sessions of the current run (``x<n>``: the overdue one, the ones due in the
lateness window), replaced before each run.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol, TypeVar

from bench.runtime import aps, harness
from bench.runtime.common import DAY_MS, far_offset_ms

from .target import fired

FAR: Final = "c"  # far-future sessions, written once
RUN: Final = "x"  # the sessions of one run, replaced before it
CHECKED_EVENTS: Final = 3  # SQLite event rows checked against the JSONL line's data
T = TypeVar("T")


@dataclass(frozen=True)
class Session:
    session_id: str
    data: bytes  # the JSONL file: a header and one schedule_create
    due_at: int  # its reminder's instant, epoch ms


def far_session(session_id: str, index: int, now: int) -> Session:
    """A session made at ``now`` whose reminder is 1 to 30 days ahead (the
    runtime bench's spread of far-future targets)."""
    data = harness.session_bytes(session_id, index, 1, now, salt=index)
    return Session(session_id, data, now + far_offset_ms(index))


def due_session(session_id: str, index: int, due_at: int) -> Session:
    """A session whose reminder (``after_seconds``: one day) is due at
    ``due_at``: made a day before it."""
    data = harness.session_bytes(session_id, index, 1, due_at - DAY_MS, salt=0)
    if far_offset_ms(0) != DAY_MS:
        raise AssertionError("the first far offset is no longer one day")
    return Session(session_id, data, due_at)


def far_sessions(count: int, now: int) -> Iterable[Session]:
    return (far_session(f"{FAR}{n}", n, now) for n in range(count))


class ColdStore(Protocol):
    """One store of generated sessions, as a worker is given it."""

    kind: str  # "JSONL", "SQLite"
    sized: bool  # whether its rows keep the session file's size

    @property
    def path(self) -> Path:
        """What ``tickler worker --store`` is given."""
        ...

    def write(self, sessions: Iterable[Session]) -> int:
        """Add the sessions and their exact index rows; how many."""
        ...

    def replace_run(self, sessions: Sequence[Session]) -> None:
        """Drop the previous run's sessions (``x<n>``) and write these."""
        ...

    def look_again(self, session_ids: Sequence[str]) -> None:
        """Mark these rows due now (a worker opens each and writes its exact row)."""
        ...

    def index_rows(self) -> dict[str, tuple[int | None, str | None, int | None]]:
        """Each row's (next_due_at, holder, size)."""
        ...


_INSERT_ROW: Final = (
    "INSERT OR REPLACE INTO wakes (session_id, next_due_at, holder, failures, size, set_aside)"
    " VALUES (?, ?, NULL, 0, ?, NULL)"
)


def _rows_of(conn: sqlite3.Connection) -> dict[str, tuple[int | None, str | None, int | None]]:
    return {
        str(row[0]): (row[1], row[2], row[3])
        for row in conn.execute("SELECT session_id, next_due_at, holder, size FROM wakes")
    }


def _look_again(conn: sqlite3.Connection, session_ids: Sequence[str]) -> None:
    from tickler.adapters.stores import _wakes as wakes

    conn.executemany(
        "UPDATE wakes SET next_due_at = ? WHERE session_id = ?",
        [(wakes.DUE_NOW, sid) for sid in session_ids],
    )


class JsonlCold:
    """A JSONL store directory: one file per session, the rows in its
    ``.wake.db`` (written through the store's own :class:`WakeFile`)."""

    kind = "JSONL"
    sized = True

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory

    @property
    def path(self) -> Path:
        return self.directory

    def write(self, sessions: Iterable[Session]) -> int:
        return self._write(sessions, sync=True)

    def _write(self, sessions: Iterable[Session], *, sync: bool) -> int:
        rows: list[tuple[str, int, int]] = []
        for s in sessions:
            (self.directory / f"{s.session_id}.jsonl").write_bytes(s.data)
            rows.append((s.session_id, s.due_at, len(s.data)))
        if sync:
            os.sync()  # on disk like a previous run's, before the index says so
        self._index(lambda conn: conn.executemany(_INSERT_ROW, rows))
        return len(rows)

    def replace_run(self, sessions: Sequence[Session]) -> None:
        self._index(
            lambda conn: conn.execute("DELETE FROM wakes WHERE session_id LIKE ?", (f"{RUN}%",))
        )
        with os.scandir(self.directory) as entries:
            for entry in entries:
                if entry.name.startswith(RUN) and entry.is_file():
                    Path(entry.path).unlink()
        # Not synced: a sync waits for every other writer of the machine's
        # disk too, and the run's instants are already fixed.
        self._write(sessions, sync=False)

    def look_again(self, session_ids: Sequence[str]) -> None:
        self._index(_look_again, session_ids)

    def index_rows(self) -> dict[str, tuple[int | None, str | None, int | None]]:
        return self._index(_rows_of)

    def _index(self, job: Callable[..., T], *args: object) -> T:
        from tickler.adapters.stores._wake_file import WakeFile

        wake_file = WakeFile(self.directory)
        try:
            return wake_file.run(job, *args)
        finally:
            wake_file.close()


class SqliteCold:
    """An SQLite store file: the sessions' headers, events and rows, made
    with the store's own schema (``_sqlite_db.connect``)."""

    kind = "SQLite"
    sized = False

    def __init__(self, file: Path) -> None:
        self.file = file

    @property
    def path(self) -> Path:
        return self.file

    def write(self, sessions: Iterable[Session]) -> int:
        heads: list[tuple[str, bytes]] = []
        events: list[tuple[str, int, str, int, bytes]] = []
        rows: list[tuple[str, int, None]] = []
        for s in sessions:
            header, *lines = s.data.splitlines(keepends=True)
            heads.append((s.session_id, header[:-1]))
            events += (_event_row(s.session_id, line, len(events)) for line in lines)
            rows.append((s.session_id, s.due_at, None))  # no size: not a file

        def insert(conn: sqlite3.Connection) -> None:
            conn.executemany("INSERT INTO sessions (id, header) VALUES (?, ?)", heads)
            conn.executemany(
                "INSERT INTO events (session_id, seq, type, time, data) VALUES (?, ?, ?, ?, ?)",
                events,
            )
            conn.executemany(_INSERT_ROW, rows)

        self._db(insert)
        return len(rows)

    def replace_run(self, sessions: Sequence[Session]) -> None:
        def drop(conn: sqlite3.Connection) -> None:
            for table, key in (
                ("events", "session_id"),
                ("snapshots", "session_id"),
                ("wakes", "session_id"),
                ("sessions", "id"),
            ):
                # Only fixed table and column names are formatted in.
                conn.execute(f"DELETE FROM {table} WHERE {key} LIKE ?", (f"{RUN}%",))

        self._db(drop)
        self.write(sessions)

    def look_again(self, session_ids: Sequence[str]) -> None:
        self._db(_look_again, session_ids)

    def index_rows(self) -> dict[str, tuple[int | None, str | None, int | None]]:
        return self._db(_rows_of)

    def _db(self, job: Callable[..., T], *args: object) -> T:
        from tickler.adapters.stores import _sqlite_db as db

        conn = db.connect(self.file, "NORMAL", 10.0)
        try:
            return db.in_transaction(conn, job, *args)
        finally:
            conn.close()


def _event_row(session_id: str, line: bytes, written: int) -> tuple[str, int, str, int, bytes]:
    """The SQLite store's row of one JSONL event line: its ``data`` member's
    bytes as written (the first rows are checked against a JSON parse)."""
    start = line.index(b',"data":') + len(b',"data":')
    data = line[start:-2]  # the line ends with the event's "}" and a newline
    head = json.loads(line)
    if written < CHECKED_EVENTS and json.loads(data) != head["data"]:
        raise AssertionError(f"an event's data was cut wrongly from {line!r}")
    return session_id, int(head["seq"]), str(head["type"]), int(head["time"]), data


class ApsCold:
    """APScheduler's SQLAlchemy job store on SQLite: one date job per session
    (:func:`~bench.cold.target.fired` at the reminder's instant)."""

    kind = "APScheduler"

    def __init__(self, file: Path) -> None:
        self.file = file

    def write(self, sessions: Iterable[Session]) -> int:
        jobs = ((s.session_id, s.due_at) for s in sessions)
        return aps.aps_populate(str(self.file), jobs, func=fired)

    def replace_run(self, sessions: Sequence[Session]) -> None:
        if self.file.exists():
            with sqlite3.connect(self.file) as conn:
                conn.execute("DELETE FROM apscheduler_jobs WHERE id LIKE ?", (f"{RUN}%",))
            conn.close()
        self.write(sessions)

    def jobs(self) -> int:
        return aps.aps_count(str(self.file))
