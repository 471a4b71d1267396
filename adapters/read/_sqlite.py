"""The read model over an SQLite store file: a read-only connection
(``mode=ro``; in WAL mode a reader never blocks the writer), one read
transaction per call, so the wake index and the events it reads are one
consistent view. No session's lock file is touched.

A session's summary is kept between calls and read again only once its
header or its number of events changed (its events are only ever
appended). A query cut by ``limit`` or ``due_within`` walks the ``wakes``
table (:mod:`tickler.adapters.read._walk`); a file from before the index
has none, and every session is read.
"""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Final

from tickler.adapters.read._common import (
    FetchedRows,
    events_by_session,
    snapshots_by_session,
)
from tickler.adapters.read._files import PAUSED, Round, _InMemory, read_each
from tickler.adapters.read._index import connect_read_only, rows_of
from tickler.adapters.read._views import HISTORY_TYPES, Summary
from tickler.adapters.read._walk import Plan, plan_of
from tickler.shell import FOLLOWUP, StoreError

CHUNK: Final = 500
"""Sessions per statement when they are named (``IN (...)``)."""
Stamp = tuple[bytes, int, int]
"""A session's header, number of events and the failed hand-overs its wake
index row counts (as a failure index keeps them: the log records the 1st,
2nd, 4th ...; a row a process holds counts 0 here until its close)."""


class SqliteReadModel(_InMemory):
    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self._cache: dict[str, tuple[Stamp, Summary]] = {}

    def _connect(self) -> sqlite3.Connection:
        try:
            conn = connect_read_only(self.path)
            conn.execute("SELECT 1 FROM sessions, events, snapshots LIMIT 0")
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: not a tickler SQLite store ({exc})") from None
        return conn

    @contextmanager
    def _round(self) -> Iterator[Round]:
        with closing(self._connect()) as conn:
            try:
                conn.execute("BEGIN")  # one consistent view of every table
                yield _SqliteRound(self, conn)
            except sqlite3.Error as exc:
                raise StoreError(f"{self.path}: {exc}") from exc
            finally:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")

    def cached(self, session_id: str, stamp: Stamp) -> Summary | None:
        found = self._cache.get(session_id)
        return found[1] if found is not None and found[0] == stamp else None

    def keep(self, session_id: str, stamp: Stamp, summary: Summary) -> None:
        self._cache[session_id] = (stamp, summary)

    def forget_others(self, kept: set[str]) -> None:
        for session_id in [k for k in self._cache if k not in kept]:
            del self._cache[session_id]


# The statements' ``{ids}`` stands for the sessions they read: "?"
# placeholders (the ids are parameters) or every session.
_HEADERS: Final = "SELECT id, header FROM sessions WHERE id IN {ids}"
_COUNTS: Final = (
    "SELECT session_id, count(*) FROM events WHERE session_id IN {ids} GROUP BY session_id"
)
_FAILURES: Final = (
    "SELECT session_id, failures FROM wakes"
    " WHERE failures > 0 AND holder IS NULL AND session_id IN {ids}"
)
_SNAPSHOTS: Final = "SELECT session_id, through, data FROM snapshots WHERE session_id IN {ids}"
_EVENTS: Final = (
    "SELECT e.session_id, e.seq, e.type, e.time, e.data FROM events e"
    " LEFT JOIN snapshots n ON n.session_id = e.session_id"
    " WHERE e.session_id IN {ids} AND e.seq >= coalesce(n.through, 0)"
    " ORDER BY e.session_id, e.seq"
)
_HISTORY: Final = (
    "SELECT session_id, seq, type, time, data FROM events"
    " WHERE type IN {types} AND session_id IN {ids} ORDER BY session_id, seq"
).replace("{types}", "(" + ",".join("?" * len(HISTORY_TYPES)) + ")")
_PAUSED: Final = (
    "SELECT DISTINCT session_id FROM events WHERE type = 'schedule/change'"
    " AND instr(data, ?) > 0 AND session_id IN {ids}"
)
_SENT: Final = "SELECT DISTINCT session_id FROM events WHERE type = ? AND session_id IN {ids}"
_EVERY: Final = "(SELECT id FROM sessions)"


def _named(
    ids: Sequence[str] | None,
) -> Iterator[tuple[Callable[[str], str], tuple[str, ...]]]:
    """Each statement's ``{ids}`` filled in and its parameters, a chunk of
    ``ids`` at a time (None: every session, at once)."""
    if ids is None:
        yield functools.partial(_filled, marks=_EVERY), ()
        return
    for start in range(0, len(ids), CHUNK):
        chunk = tuple(ids[start : start + CHUNK])
        yield functools.partial(_filled, marks="(" + ",".join("?" * len(chunk)) + ")"), chunk


def _filled(statement: str, *, marks: str) -> str:
    return statement.replace("{ids}", marks)


class _SqliteRound:
    def __init__(self, model: SqliteReadModel, conn: sqlite3.Connection) -> None:
        self.model = model
        self.conn = conn
        self.problems: list[tuple[str, str]] = []
        self._all: list[str] | None = None
        self._has_index: bool | None = None

    def ids(self) -> list[str]:
        if self._all is None:
            self._all = [
                str(r[0]) for r in self.conn.execute("SELECT id FROM sessions ORDER BY id")
            ]
            self.model.forget_others(set(self._all))
        return self._all

    def only(self, session_id: str) -> list[str]:
        found = self.conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return [] if found is None else [session_id]

    def read(self, ids: Sequence[str]) -> dict[str, Summary]:
        every = self._all is not None and len(ids) == len(self._all)
        stamps = self._stamps(None if every else ids)
        stale = [i for i in ids if i in stamps and self.model.cached(i, stamps[i]) is None]
        fetched = self._fetch(None if every and len(stale) == len(ids) else stale)

        def summary(session_id: str) -> Summary:
            stamp = stamps[session_id]
            found = self.model.cached(session_id, stamp)
            if found is None:
                found = fetched.summary(session_id, stamp[0], stamp[2])
                self.model.keep(session_id, stamp, found)
            return found

        return read_each([i for i in ids if i in stamps], summary, self.problems)

    def load(self, ids: Sequence[str]) -> list[Summary]:
        return list(self.read(ids).values())

    def _stamps(self, ids: Sequence[str] | None) -> dict[str, Stamp]:
        """Each session's header and number of events (every session's
        when ``ids`` is None)."""
        heads: list[tuple[str, bytes]] = []
        counts: dict[str, int] = {}
        failures: dict[str, int] = {}
        for named, params in _named(ids):
            heads += self.conn.execute(named(_HEADERS), params).fetchall()
            counts.update(self.conn.execute(named(_COUNTS), params))
            if self._indexed():
                failures.update(self.conn.execute(named(_FAILURES), params))
        return {
            str(sid): (bytes(header), int(counts.get(sid, 0)), int(failures.get(sid, 0)))
            for sid, header in heads
        }

    def _indexed(self) -> bool:
        """Whether the file holds a wake index (a store from before it has none)."""
        if self._has_index is None:
            found = self.conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'wakes'"
            ).fetchone()
            self._has_index = found is not None
        return self._has_index

    def _fetch(self, ids: Sequence[str] | None) -> FetchedRows:
        """The snapshots, the events after them and the delivery history of
        ``ids`` (of every session when None)."""
        snapshots: list[tuple[object, ...]] = []
        events: list[tuple[object, ...]] = []
        history: list[tuple[object, ...]] = []
        for named, params in _named(ids):
            snapshots += self.conn.execute(named(_SNAPSHOTS), params).fetchall()
            events += self.conn.execute(named(_EVENTS), params).fetchall()
            history += self.conn.execute(named(_HISTORY), (*HISTORY_TYPES, *params)).fetchall()
        return FetchedRows(
            snapshots_by_session(snapshots), events_by_session(events), events_by_session(history)
        )

    def plan(self, cutoff_ms: int) -> Plan | None:
        try:
            rows = rows_of(self.conn)
        except sqlite3.OperationalError:  # a file from before the index
            return None
        return plan_of(self.ids(), rows, cutoff_ms, never_sent=self._never_sent)

    def _never_sent(self, ids: list[str]) -> set[str]:
        sent: set[str] = set()
        for named, params in _named(ids):
            sent.update(str(r[0]) for r in self.conn.execute(named(_SENT), (FOLLOWUP, *params)))
        return set(ids) - sent

    def paused(self, ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for named, params in _named(ids):
            found.update(str(r[0]) for r in self.conn.execute(named(_PAUSED), (PAUSED, *params)))
        return found
