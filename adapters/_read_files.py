"""The read model over the embedded stores: a JSONL directory and an SQLite
file. Each call reads every session afresh (off the event loop) and
filters in memory: these stores keep no index across sessions.

* JSONL: each ``<session>.jsonl`` is read whole, without its lock, as
  ``tickler check`` reads it; a torn final line (a writer mid-append) is
  left out. A file whose size and modification time did not move since
  the last call is not read again.
* SQLite: a read-only connection (``mode=ro``); in WAL mode a reader never
  blocks the writer. No session's lock file is touched.
"""

from __future__ import annotations

import functools
import os
import sqlite3
from abc import abstractmethod
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

from tickler.adapters._off_loop import off_loop
from tickler.adapters._read_common import (
    FetchedRows,
    deliveries_of,
    events_by_session,
    problem,
    reminders_of,
    snapshots_by_session,
)
from tickler.adapters._read_query import ReadModel, check_query, select
from tickler.adapters._read_views import (
    HISTORY_TYPES,
    DeliveryView,
    ReminderView,
    SessionRows,
    Summary,
    summarize,
)
from tickler.adapters.stores._files import open_regular, require_sqlite_files
from tickler.core import parse_session_jsonl
from tickler.shell._ports import StoreError, is_valid_session_id

Reader = Callable[[], Summary]


def _summaries(
    rows: list[tuple[str, Reader]],
) -> tuple[list[Summary], list[tuple[str, str]]]:
    """Each session's summary; a session that cannot be read is a problem."""
    found: list[Summary] = []
    problems: list[tuple[str, str]] = []
    for session_id, read in rows:
        try:
            found.append(read())
        except Exception as exc:  # noqa: BLE001 - that session's problem only
            problems.append((session_id, problem(exc)))
    return found, problems


class _InMemory(ReadModel):
    """Reads every session (or one), then filters. An ABC through
    :class:`ReadModel`: each store says how its sessions are read."""

    @abstractmethod
    def _read(self, session_id: str | None) -> list[tuple[str, Reader]]:
        """Each session to read (only ``session_id`` when given, none when
        it is not stored), with the call that reads its summary."""

    async def _all(self, session_id: str | None) -> list[Summary]:
        def work() -> tuple[list[Summary], list[tuple[str, str]]]:
            return _summaries(self._read(session_id))

        found, self.problems = await off_loop(work)
        return found

    async def reminders(
        self,
        *,
        now_ms: int,
        due_within_ms: int | None = None,
        failing: bool = False,
        session_id: str | None = None,
        sort: str = "due",
        limit: int | None = None,
    ) -> list[ReminderView]:
        check_query(sort, limit, due_within_ms)
        return select(
            reminders_of(await self._all(session_id), now_ms),
            now_ms=now_ms,
            due_within_ms=due_within_ms,
            failing=failing,
            sort=sort,
            limit=limit,
        )

    async def deliveries(
        self, *, limit: int = 100, session_id: str | None = None
    ) -> list[DeliveryView]:
        return deliveries_of(await self._all(session_id), limit)


class JsonlReadModel(_InMemory):
    """A session file is parsed again only when its size or modification
    time moved since the last call (a dashboard refreshes)."""

    def __init__(self, directory: Path) -> None:
        super().__init__()
        self.directory = directory
        self._cache: dict[str, tuple[tuple[int, int], Summary]] = {}

    async def sessions(self) -> list[str]:
        return await off_loop(self._ids)

    def _ids(self) -> list[str]:
        return sorted(
            path.stem for path in self.directory.glob("*.jsonl") if is_valid_session_id(path.stem)
        )

    def _read(self, session_id: str | None) -> list[tuple[str, Reader]]:
        ids = self._ids() if session_id is None else [session_id]
        if session_id is not None and not (self.directory / f"{session_id}.jsonl").is_file():
            return []
        if session_id is None:
            self._cache = {k: v for k, v in self._cache.items() if k in set(ids)}
        return [(i, functools.partial(self._summary, i)) for i in ids]

    def _summary(self, session_id: str) -> Summary:
        path = self.directory / f"{session_id}.jsonl"
        with open_regular(path) as file:  # a FIFO is refused, never waited on
            info = os.fstat(file.fileno())
            stamp = (info.st_size, info.st_mtime_ns)
            cached = self._cache.get(session_id)
            if cached is not None and cached[0] == stamp:
                return cached[1]
            data = file.read()
        parsed = parse_session_jsonl(data)
        owned = parsed.events[parsed.header.owned_from :]
        history = [e for e in owned if e.type in HISTORY_TYPES]
        summary = summarize(SessionRows(parsed.header, None, parsed.events, history))
        self._cache[session_id] = (stamp, summary)
        return summary


class SqliteReadModel(_InMemory):
    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path

    def _connect(self) -> sqlite3.Connection:
        uri = self.path.absolute().as_uri() + "?mode=ro"
        require_sqlite_files(self.path)
        try:
            conn = sqlite3.connect(uri, uri=True, isolation_level=None)
            conn.execute("SELECT 1 FROM sessions, events, snapshots LIMIT 0")
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: not a tickler SQLite store ({exc})") from None
        return conn

    async def sessions(self) -> list[str]:
        def work() -> list[str]:
            with closing(self._connect()) as conn:
                return [str(r[0]) for r in conn.execute("SELECT id FROM sessions ORDER BY id")]

        return await off_loop(work)

    def _read(self, session_id: str | None) -> list[tuple[str, Reader]]:
        where, params = ("", ()) if session_id is None else (" WHERE id = ?", (session_id,))
        with closing(self._connect()) as conn:
            conn.execute("BEGIN")  # one consistent view of every table
            headers = conn.execute(f"SELECT id, header FROM sessions{where}", params).fetchall()
            swhere = where.replace("id", "session_id")
            ewhere = "" if session_id is None else " AND e.session_id = ?"
            marks = ",".join("?" * len(HISTORY_TYPES))
            # Keyword arguments run in order: each query is read before the next.
            fetched = FetchedRows(
                snapshots=snapshots_by_session(
                    conn.execute(f"SELECT session_id, through, data FROM snapshots{swhere}", params)
                ),
                events=events_by_session(
                    conn.execute(
                        "SELECT e.session_id, e.seq, e.type, e.time, e.data FROM events e"
                        " LEFT JOIN snapshots n ON n.session_id = e.session_id"
                        f" WHERE e.seq >= coalesce(n.through, 0){ewhere}"
                        " ORDER BY e.session_id, e.seq",
                        params,
                    )
                ),
                history=events_by_session(
                    conn.execute(
                        "SELECT e.session_id, e.seq, e.type, e.time, e.data FROM events e"
                        f" WHERE e.type IN ({marks}){ewhere} ORDER BY e.session_id, e.seq",
                        (*HISTORY_TYPES, *params),
                    )
                ),
            )
            conn.execute("COMMIT")
        return [
            (str(sid), functools.partial(fetched.summary, str(sid), bytes(header)))
            for sid, header in headers
        ]
