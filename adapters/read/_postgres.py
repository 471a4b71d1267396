"""The read model over the PostgreSQL store, without a full scan.

The sessions to read are found through indexes, never by scanning events:
the wake index (``next_due_at``, the earliest instant the session needs a
process: its soonest reminder, or the time a follow-up was put in its
outbox) in order, and the failing sessions (``failures > 0``, the failed
hand-overs of the outbox's first follow-up). Only those
sessions' snapshots, the events after them and their latest delivery
records are read, in one repeatable-read transaction, and folded as the
runtime folds them.

Why the wake index bounds the walk: a session's ``next_due_at`` is at or
before each of its reminders' next due instants, except for a session
whose hand-over failed (a worker then puts its wake off to the retry): so
the failing sessions are always read too, and a walk in wake order may
stop once it has ``limit`` reminders due before the wake of the next
session it would read. Nor does a wake bound a follow-up waiting in the
outbox (it was due before it was put there): a session whose wake has
passed and that ever put a follow-up there is always read as well.

A session whose reminders are all paused needs no process: it has no wake.
Its reminders are due never, so they sort after every reminder due; such
sessions are found, in id order, through the pause index (``events_paused``:
the schedule changes that pause a reminder, schema version 3) when the
walk in wake order did not already fill the answer.

It holds one connection of its own and takes no lease: workers never wait
for it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from tickler.adapters._redact import redact
from tickler.adapters.read._common import (
    FetchedRows,
    Row,
    deliveries_of,
    events_by_session,
    problem,
    reminders_of,
    snapshots_by_session,
)
from tickler.adapters.read._query import Query, ReadModel
from tickler.adapters.read._views import HISTORY_TYPES, DeliveryView, ReminderView, Summary
from tickler.adapters.stores._postgres_schema import (
    check_version,
    schema_name,
    unreachable,
    with_connect_timeout,
)
from tickler.shell import FOLLOWUP, StoreError

try:
    import psycopg
    from psycopg import IsolationLevel
except ImportError as exc:  # pragma: no cover - the postgres extra
    from tickler.adapters._extras import missing_extra

    raise missing_extra("PostgreSQL", "postgres") from exc

HISTORY_LIMIT: Final = 200
"""Delivery records read per session (its latest): a reminder's last
delivery is looked for among them."""
PAGE: Final = 500
"""Sessions read per step of a walk."""
CACHE_MOST: Final = 200_000
"""Session summaries kept between calls (a dashboard refreshes)."""
FAILING_MOST: Final = 10_000
"""Failing sessions read at most (the most failures first)."""


_PAUSED_SESSIONS: Final = (
    "SELECT e.session_id FROM {s}.events e WHERE e.type = 'schedule/change'"
    " AND position('\"paused\":true'::bytea IN e.data) > 0"
)
"""The sessions that ever paused a reminder, through the pause index
(``events_paused``, the same predicate): the log writes a pause as
``"paused":true``, which no JSON string can hold unescaped."""


@dataclass
class _Walk:
    """One query's walk: the sessions read so far and what it asks."""

    read: set[str]
    query: Query

    def settled(
        self, views: list[ReminderView], bound: int | None, through: str | None = None
    ) -> bool:
        """Whether ``limit`` of ``views`` surely lead the sort (due or
        failures) whatever the sessions not read yet hold: each of theirs is
        due at or after ``bound`` (None: due never) and, when ``through`` is
        given, is paused in a session whose id is after it, failing nothing
        (so it sorts after every row due, failing, or of an earlier session)."""
        limit = self.query.limit
        assert limit is not None
        return sum(self.query.leads(v, bound, through) for v in views) >= limit


class PostgresReadModel(ReadModel):
    def __init__(self, conn: psycopg.AsyncConnection[Row], schema: str) -> None:
        super().__init__()
        self._conn = conn
        self.schema = schema
        # session id -> (length, failures, summary) when last read
        self._cache: dict[str, tuple[int, int, Summary]] = {}

    @classmethod
    async def connect(cls, dsn: str, schema: str) -> PostgresReadModel:
        schema = schema_name(schema)
        try:
            conn = await psycopg.AsyncConnection.connect(with_connect_timeout(dsn), autocommit=True)
        except psycopg.OperationalError as exc:
            raise unreachable(dsn, exc) from exc
        except psycopg.Error as exc:
            raise StoreError(f"cannot use PostgreSQL: {redact(str(exc), [dsn])}") from exc
        try:
            await check_version(conn, schema)
            await conn.set_read_only(True)
            await conn.set_isolation_level(IsolationLevel.REPEATABLE_READ)
        except BaseException:
            await conn.close()
            raise
        return cls(conn, schema)

    async def close(self) -> None:
        await self._conn.close()

    async def _rows(self, sql: str, params: Sequence[object] = ()) -> list[Row]:
        try:
            cursor = await self._conn.execute(sql.replace("{s}", self.schema), params)
            return await cursor.fetchall()
        except psycopg.Error as exc:
            raise StoreError(f"PostgreSQL: {exc}") from exc

    # -- ReadModel ------------------------------------------------------------

    async def sessions(self) -> list[str]:
        return [str(r[0]) for r in await self._rows("SELECT id FROM {s}.sessions ORDER BY id")]

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
        query = Query(now_ms, due_within_ms, failing, sort, limit)
        self.problems = []
        horizon = query.horizon
        chosen = query.select

        if session_id is not None:
            return chosen(reminders_of(await self._load([session_id]), now_ms))
        failing_ids = await self._failing_ids()
        views = reminders_of(await self._load(failing_ids), now_ms)
        if failing:
            return chosen(views)
        # A follow-up waiting in an outbox was due before its session's wake
        # (the instant it was put there): once that wake has passed, the
        # session's wake bounds nothing, so it is read, as failing ones are.
        waiting_ids = [i for i in await self._waiting_ids(now_ms) if i not in set(failing_ids)]
        views += reminders_of(await self._load(waiting_ids), now_ms)
        read = {*failing_ids, *waiting_ids}
        walk = _Walk(read, query)
        if sort == "session":
            views += await self._walk_by_id(walk)
        else:
            views += await self._walk_by_due(walk, known=views)
            if horizon is None and (limit is None or not walk.settled(views, None)):
                # Sessions whose reminders are all paused: due never, so last.
                views += await self._walk_paused(walk, known=views)
        return chosen(views)

    async def deliveries(
        self, *, limit: int = 100, session_id: str | None = None
    ) -> list[DeliveryView]:
        self.problems = []
        if session_id is not None:
            ids = [session_id]
        else:
            now_ms = time.time_ns() // 1_000_000
            due = await self._rows(
                "SELECT id FROM {s}.sessions WHERE next_due_at <= %s"
                " ORDER BY next_due_at, id LIMIT %s",
                (now_ms, limit),
            )
            delivered = await self._rows(
                "SELECT DISTINCT session_id FROM (SELECT session_id FROM {s}.events"
                " WHERE type = 'tickler/delivered' ORDER BY time DESC LIMIT %s) AS latest",
                (limit,),
            )
            ids = list(
                dict.fromkeys(
                    [*await self._failing_ids()] + [str(r[0]) for r in (*due, *delivered)]
                )
            )
        return deliveries_of(await self._load(ids), limit)

    # -- finding the sessions -------------------------------------------------

    async def _failing_ids(self) -> list[str]:
        rows = await self._rows(
            "SELECT id FROM {s}.sessions WHERE failures > 0 ORDER BY failures DESC, id LIMIT %s",
            (FAILING_MOST,),
        )
        return [str(r[0]) for r in rows]

    async def _waiting_ids(self, now_ms: int) -> list[str]:
        """The sessions whose wake has passed (at or before the later of
        ``now_ms`` and the wall clock) and that ever put a follow-up in
        their outbox: one may wait there still."""
        cutoff = max(now_ms, time.time_ns() // 1_000_000)
        rows = await self._rows(
            "SELECT s.id FROM {s}.sessions s WHERE s.next_due_at <= %s AND s.failures = 0"
            " AND EXISTS (SELECT 1 FROM {s}.events e WHERE e.session_id = s.id"
            " AND e.type = %s) ORDER BY s.id",
            (cutoff, FOLLOWUP),
        )
        return [str(r[0]) for r in rows]

    async def _walk_by_due(self, walk: _Walk, *, known: list[ReminderView]) -> list[ReminderView]:
        """Sessions in wake order (up to the horizon), a page at a time,
        until ``limit`` reminders are sure to lead the sort."""
        found: list[ReminderView] = []
        after: tuple[int, str] | None = None
        limit = walk.query.limit
        # Each session holds a reminder due at or after its wake: about
        # ``limit`` sessions are often enough; the pages grow if not.
        size = PAGE if limit is None else max(16, limit + limit // 4)
        while True:
            page = await self._rows(
                "SELECT id, next_due_at FROM {s}.sessions WHERE next_due_at IS NOT NULL"
                " AND (%s::bigint IS NULL OR next_due_at <= %s::bigint)"
                " AND (%s::bigint IS NULL OR (next_due_at, id) > (%s::bigint, %s::text))"
                " ORDER BY next_due_at, id LIMIT %s",
                (
                    walk.query.horizon,
                    walk.query.horizon,
                    None if after is None else after[0],
                    None if after is None else after[0],
                    None if after is None else after[1],
                    size,
                ),
            )
            found += await self._fresh([str(r[0]) for r in page], walk)
            if len(page) < size:
                return found
            size = min(PAGE, size * 2)
            bound = int(page[-1][1])
            after = (bound, str(page[-1][0]))
            if limit is not None and walk.settled([*known, *found], bound):
                return found

    async def _walk_paused(self, walk: _Walk, *, known: list[ReminderView]) -> list[ReminderView]:
        """The sessions no other walk finds: no wake, nothing failing, and
        a reminder paused at some time (the pause index, ``events_paused``)
        - a session whose reminders are all paused needs no process. In id
        order, until ``limit`` reminders are sure to lead the sort (theirs
        are due never: after every reminder due, by session)."""
        found: list[ReminderView] = []
        after = ""
        while True:
            # Driven by the pause index (an array of its sessions, then their
            # rows by key), not by a walk of every session without a wake.
            page = await self._rows(
                f"SELECT id FROM {{s}}.sessions WHERE id = ANY(ARRAY({_PAUSED_SESSIONS}"
                " AND e.session_id > %s)) AND next_due_at IS NULL AND failures = 0"
                " ORDER BY id LIMIT %s",
                (after, PAGE),
            )
            found += await self._fresh([str(r[0]) for r in page], walk)
            if len(page) < PAGE:
                return found
            after = str(page[-1][0])
            if walk.query.limit is not None and walk.settled([*known, *found], None, after):
                return found

    async def _walk_by_id(self, walk: _Walk) -> list[ReminderView]:
        """Sessions that hold anything, in id order, until ``limit`` rows:
        those with a wake (up to the horizon) or a failing hand-over, and,
        without a horizon, those that paused a reminder (no wake: all paused)."""
        found: list[ReminderView] = []
        after = ""
        while True:
            page = await self._rows(
                "SELECT id FROM {s}.sessions WHERE id > %s AND (failures > 0 OR"
                " (next_due_at IS NOT NULL AND (%s::bigint IS NULL OR next_due_at <= %s::bigint))"
                f" OR (%s::bigint IS NULL AND next_due_at IS NULL AND id IN ({_PAUSED_SESSIONS})))"
                " ORDER BY id LIMIT %s",
                (after, walk.query.horizon, walk.query.horizon, walk.query.horizon, PAGE),
            )
            found += await self._fresh([str(r[0]) for r in page], walk)
            if len(page) < PAGE:
                return found
            after = str(page[-1][0])
            if walk.query.limit is not None and len(walk.query.select(found)) >= walk.query.limit:
                return found

    async def _fresh(self, ids: list[str], walk: _Walk) -> list[ReminderView]:
        """The reminders of the sessions of ``ids`` not read yet."""
        fresh = [i for i in ids if i not in walk.read]
        walk.read.update(fresh)
        return reminders_of(await self._load(fresh), walk.query.now_ms)

    # -- reading them ---------------------------------------------------------

    async def _load(self, ids: list[str]) -> list[Summary]:
        """The summaries of ``ids`` (one consistent snapshot of the
        database); a session that cannot be read goes to ``problems``. A
        session whose length and failure count have not moved since an
        earlier call is not read again (its rows are the same)."""
        if not ids:
            return []
        try:
            async with self._conn.transaction():
                heads = await self._conn.execute(
                    f"SELECT id, header, length, failures FROM {self.schema}.sessions"
                    " WHERE id = ANY(%s)",
                    (ids,),
                )
                head_rows = await heads.fetchall()
                stale = [
                    str(r[0])
                    for r in head_rows
                    if self._cache.get(str(r[0]), (None, None, None))[:2] != (r[2], r[3])
                ]
                rows = await self._read_rows(stale) if stale else ([], [], [])
        except psycopg.Error as exc:
            raise StoreError(f"PostgreSQL: {exc}") from exc
        snap_rows, tail_rows, hist_rows = rows
        fetched = FetchedRows(
            snapshots_by_session(snap_rows),
            events_by_session(tail_rows),
            events_by_session(hist_rows),
        )
        if len(self._cache) > CACHE_MOST:
            self._cache.clear()
        out: list[Summary] = []
        for sid, header, length, failures in head_rows:
            key = str(sid)
            cached = self._cache.get(key)
            if cached is not None and cached[:2] == (length, failures):
                out.append(cached[2])
                continue
            try:
                summary = fetched.summary(key, bytes(header), int(failures))
            except Exception as exc:  # noqa: BLE001 - that session's problem only
                self.problems.append((key, problem(exc)))
                continue
            self._cache[key] = (length, failures, summary)
            out.append(summary)
        return out

    async def _read_rows(self, ids: list[str]) -> tuple[list[Row], list[Row], list[Row]]:
        """Snapshots, the events after them, the latest delivery records."""
        snaps = await self._conn.execute(
            f"SELECT session_id, through, data FROM {self.schema}.snapshots"
            " WHERE session_id = ANY(%s)",
            (ids,),
        )
        snap_rows = await snaps.fetchall()
        tails = await self._conn.execute(
            f"SELECT e.session_id, e.seq, e.type, e.time, e.data"
            f" FROM {self.schema}.events e"
            f" LEFT JOIN {self.schema}.snapshots n ON n.session_id = e.session_id"
            " WHERE e.session_id = ANY(%s) AND e.seq >= coalesce(n.through, 0)"
            " ORDER BY e.session_id, e.seq",
            (ids,),
        )
        tail_rows = await tails.fetchall()
        hist = await self._conn.execute(
            "SELECT h.session_id, h.seq, h.type, h.time, h.data"
            " FROM unnest(%s::text[]) AS u(id) CROSS JOIN LATERAL"
            f" (SELECT session_id, seq, type, time, data FROM {self.schema}.events e"
            "   WHERE e.session_id = u.id AND e.type = ANY(%s)"
            "   ORDER BY e.seq DESC LIMIT %s) AS h"
            " ORDER BY h.session_id, h.seq",
            (ids, list(HISTORY_TYPES), HISTORY_LIMIT),
        )
        return snap_rows, tail_rows, await hist.fetchall()
