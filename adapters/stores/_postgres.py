"""A PostgreSQL store (psycopg 3 and a connection pool): many sessions, many
processes, many machines. Install with ``pip install 'tickler-agents[postgres]'``
and create the schema once with ``tickler db migrate --dsn DSN``.

* **One writer per session: a lease.** ``open`` takes the session's lease
  (``lease_owner``, a fencing ``lease_token`` bumped by every grant,
  ``lease_until`` on the database's clock) or raises :class:`SessionLocked`.
  The store renews the leases of its open sessions in one statement every
  third of the lease; a process that dies stops renewing and its leases
  expire, so nothing is locked forever.
* **Appends are fenced.** ``append`` keeps the batch in memory; ``flush``
  waits for a commit round that writes every session's pending batches in
  ONE statement (group commit). Each session's rows are written only if the
  lease (owner and token) is still ours and has not expired (by the
  database's clock: an expired lease is over even if nobody took the
  session), and the stored ``length`` is the expected next ``seq`` (or
  within the batch, when an earlier round committed but its reply was
  lost); else that session is *lost*: nothing of it is written, and
  ``flush``/``append`` raise :class:`SessionLost` from then on. Renewals,
  snapshots and releases are fenced the same way. The event key
  ``(session_id, seq)`` makes a second write of a seq impossible even so.
  Two writers can never both extend the same state; the loser re-reads by
  opening the session again.
* **Round trips have a deadline.** A connection that does not answer
  within ``round_trip_s`` is cut, and every connection has TCP keepalive
  and a TCP user timeout (:mod:`._postgres_net`): a frozen or half-open
  connection fails a statement instead of holding it forever.
* **The wake index.** A runtime tells the log its next wake after every
  change (:class:`~tickler.shell._ports.WakeIndex`); the commit writes it to
  ``sessions.next_due_at`` in the same statement as the events, and
  notifies ``<schema>_wake`` when it moved earlier, so sleeping workers look
  again at once. :meth:`PostgresStore.claim_due` leases due sessions with
  ``FOR UPDATE SKIP LOCKED``: concurrent workers get disjoint sessions.
* ``events()`` serves what was read at open (the events after the
  snapshot) and everything appended since from memory; earlier events are
  read with a short synchronous query.
* **A session that cannot be read is that session's problem.** Its header,
  the extent of its snapshot and every event read (a contiguous ``seq``
  within ``length``, a safe integer ``time``, ``data`` one JSON value) are
  checked. ``open`` raises :class:`CorruptSession` naming the session and
  lets its lease go; ``claim_due`` reports it in one log line, takes it out
  of the wake index, lets its lease go and returns the others of the batch.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import threading
import time
import uuid
import weakref
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, Final, NamedTuple

import msgspec

from tickler.adapters._extras import missing_extra
from tickler.adapters._redact import redact
from tickler.adapters.stores._committer import GroupCommit, close_all
from tickler.adapters.stores._lines import header_line
from tickler.adapters.stores._log_base import PendingLog, read_pages
from tickler.adapters.stores._postgres_net import (
    Cut,
    deadline,
    round_trip_for,
    sync_deadline,
    with_tcp_guards,
)
from tickler.adapters.stores._postgres_schema import (
    DEFAULT_SCHEMA,
    check_version,
    notify_channel,
    schema_name,
    unreachable,
    with_connect_timeout,
)
from tickler.adapters.stores._wake_claims import SET_ASIDE
from tickler.core import MAX_SAFE_INTEGER, SessionEvent, SessionHeader, event, is_json
from tickler.shell import (
    SESSION_ID,
    SessionLocked,
    Snapshot,
    StoreError,
    lease_takeovers,
    validate_session_id,
)

try:
    import psycopg
    from psycopg_pool import AsyncConnectionPool, PoolTimeout
except ImportError as exc:
    raise missing_extra("PostgreSQL", "postgres") from exc

logger = logging.getLogger("tickler.postgres")

_HEADER: Final = msgspec.json.Decoder(SessionHeader)
_RAW: Final = msgspec.json.Decoder(msgspec.Raw)
DEFAULT_LEASE_S: Final = 60.0
_PAGE: Final = 1000
# A pooled connection idle longer than this is checked (one empty query)
# before use: after a server restart or an idle cut by the network, the
# first commit gets a live connection instead of failing. A busy store
# reuses its connections sooner and never pays for the check.
_CHECK_IDLE_S: Final = 1.0
# The worker's LISTEN connection carries nothing while no wake moves: it is
# checked (one query, under the round-trip deadline) after this long without
# a notification, so a connection that died quietly is replaced.
_LISTEN_CHECK_S: Final = 30.0

Row = tuple[Any, ...]


class SessionLost(SessionLocked):
    """This handle no longer owns the session: its lease was taken over (it
    stalled past the lease), or its log moved on without it. Nothing it had
    not committed was written; open the session again to re-read it."""


class CorruptSession(StoreError):
    """A session's stored rows cannot be read: its header, an event or the
    extent of its snapshot. Reported, never repaired: nothing is changed
    but its wake index (a worker takes it out) and its lease (let go).
    ``session_id`` names it, ``reason`` says what is wrong."""

    def __init__(self, session_id: str, reason: str) -> None:
        super().__init__(f"session {session_id!r} cannot be read: {reason}")
        self.session_id = session_id
        self.reason = reason


# What a worker does with a session that cannot be read (logged after the reason).


class _Granted(NamedTuple):
    header: bytes
    length: int
    token: int
    failures: int
    next_due: int | None
    previous: str | None  # the holder whose lease had expired, or None


class PostgresLog(PendingLog):
    """One leased session; see the module docstring."""

    def __init__(
        self,
        store: PostgresStore,
        header: SessionHeader,
        granted: _Granted,
        snapshot: Snapshot | None,
        tail: list[SessionEvent],
    ) -> None:
        self._store = store
        self._header = header
        self.token = granted.token
        self.committed = granted.length  # events in the database
        self.pending: list[SessionEvent] = []  # appended, not yet committed
        self._snapshot = snapshot
        self._cache = tail  # events [cache_from, committed) + pending come from memory
        self._cache_from = tail[0].seq if tail else granted.length
        self.failures = granted.failures  # failed hand-overs of the outbox head, committed
        self.stored_wake = granted.next_due
        self.wake = granted.next_due
        self.failures_to_write = granted.failures
        self.dirty = False  # wake or failures differ from the stored row
        self.release = False  # the next round ends the lease
        self.renewed_at = time.monotonic()  # when the lease was last confirmed (sent)
        self.lost: str | None = None
        self._closed = False

    # -- SessionLog -------------------------------------------------------

    def events(self, start: int = 0) -> Iterator[SessionEvent]:
        start = max(start, 0)
        cache_from = self._cache_from
        cached = [e for e in self._cache if e.seq >= max(start, cache_from)]
        pending = [e for e in self.pending if e.seq >= start]
        return self._events(start, cache_from, cached, pending)

    async def flush(self) -> None:
        if self.lost is not None:
            raise SessionLost(self.lost)
        if self.pending or self.dirty or self.release:
            await self._store.committer.barrier()
            if self.lost is not None:
                raise SessionLost(self.lost)

    async def save_snapshot(self, snapshot: Snapshot) -> None:
        self._check_writable()  # a closed log's lease is gone: not "taken over"
        self._check_through(snapshot)
        await self.flush()  # never durable ahead of the events it covers
        await self._store.save_snapshot(self, snapshot)
        self._snapshot = snapshot

    async def _close(self) -> None:
        """Commit what is pending, write the wake index and end the lease."""
        try:
            if self.lost is None:
                self.release = True
                await self.flush()
        finally:
            self._store.forget(self)

    # -- WakeIndex and the worker's part ----------------------------------

    def set_next_wake(self, at: int | None) -> None:
        """The session's next wake (the runtime computes it with the core);
        written with the next commit."""
        self.wake = at
        self.dirty = True

    def defer(self, until: int) -> None:
        """A worker could not hand a follow-up over: count the failure (once:
        the runtime may have counted it already) and look again at ``until``
        (written with the next commit)."""
        self.failures_to_write = max(self.failures_to_write, self.failures + 1)
        self.wake = until if self.wake is None else max(self.wake, until)
        self.dirty = True

    @property
    def handover_failures(self) -> int:
        """:class:`~tickler.shell._ports.FailureIndex`: the failed hand-overs
        of the outbox's first follow-up, kept in the session row."""
        return self.failures_to_write

    def set_handover_failures(self, count: int) -> None:
        if count != self.failures_to_write:
            self.failures_to_write = count
            self.dirty = True

    def delivered_all(self) -> None:
        """Every follow-up was taken: the failure count starts again."""
        if self.failures_to_write:
            self.failures_to_write = 0
            self.dirty = True

    def lease_left(self) -> float:
        """Seconds the lease is known to last without another renewal."""
        return self._store.lease_s - (time.monotonic() - self.renewed_at)

    # -- store side --------------------------------------------------------

    def committed_round(self, count: int, sent_at: float) -> None:
        """The round wrote the first ``count`` pending events and the row."""
        done = self.pending[:count]
        del self.pending[:count]
        self.committed += count
        self._cache.extend(done)
        if len(self._cache) > 4 * _PAGE:  # keep memory bounded: older ones are read back
            drop = len(self._cache) - _PAGE
            del self._cache[:drop]
            self._cache_from = self._cache[0].seq
        if not self._cache:
            self._cache_from = self.committed
        self.renewed_at = sent_at

    def _check_writable(self) -> None:
        if self.lost is not None:
            raise SessionLost(self.lost)
        super()._check_writable()

    def _events(
        self, start: int, cache_from: int, cached: list[SessionEvent], pending: list[SessionEvent]
    ) -> Iterator[SessionEvent]:
        session = self._header.id
        yield from read_pages(
            start,
            cache_from,
            lambda first, end: self._store.read_events(session, first, end),
            lambda missing: CorruptSession(session, f"event {missing} is missing"),
        )
        yield from cached
        yield from pending


class PostgresStore:
    """Sessions in a PostgreSQL schema; see the module docstring.

    ``dsn`` is a libpq connection string or URI. The pool opens at the first
    use, and the schema must exist (``tickler db migrate``). ``lease_s`` is
    how long a session stays locked after its holder stops renewing (it
    died): shorter means faster take-over, at more renewals. A lease that
    expired is over even when nobody took the session: its holder writes
    nothing more. ``round_trip_s`` bounds each round trip to the database
    (default: a third of the lease, from 5 to 30 s): a connection that does
    not answer in time is cut (see :mod:`._postgres_net`)."""

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = DEFAULT_SCHEMA,
        lease_s: float = DEFAULT_LEASE_S,
        pool_size: int = 4,
        connect_timeout_s: float = 10.0,
        round_trip_s: float | None = None,
    ) -> None:
        if not lease_s > 0:
            raise ValueError("lease_s must be positive")
        if round_trip_s is not None and not round_trip_s > 0:
            raise ValueError("round_trip_s must be positive")
        self.dsn = dsn
        self.schema = schema_name(schema)
        self.channel = notify_channel(self.schema)
        self.lease_s = lease_s
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"
        self._connect_timeout_s = connect_timeout_s
        self.round_trip_s = round_trip_s if round_trip_s is not None else round_trip_for(lease_s)
        # Every connection: a connect timeout, TCP keepalive, a TCP user timeout.
        self._probe_dsn = with_tcp_guards(
            with_connect_timeout(dsn, connect_timeout_s),  # ValueError: bad DSN
            self.round_trip_s,
        )
        self._pool_size = max(1, pool_size)
        self._last_used: weakref.WeakKeyDictionary[psycopg.AsyncConnection[Row], float] = (
            weakref.WeakKeyDictionary()
        )
        self._pool = self._new_pool()
        self._opened = False
        self._opening = asyncio.Lock()
        self._closed = False
        self._logs: dict[str, PostgresLog] = {}
        self.committer = GroupCommit(self._commit_round)
        self._renewer: asyncio.Task[None] | None = None
        self._sync: psycopg.Connection[Row] | None = None
        self._sync_lock = threading.Lock()
        s = self.schema
        self._sql_commit = _commit_sql(s)
        # The previous holder is read from the row as locked (``held``):
        # one whose lease expired without being let go was taken over.
        self._sql_grant = (
            f"UPDATE {s}.sessions AS s SET lease_owner = %s, lease_token = s.lease_token + 1,"
            f" lease_until = now() + %s * interval '1 second'"
            f" FROM (SELECT id, lease_owner FROM {s}.sessions WHERE id = %s FOR UPDATE) AS held"
            f" WHERE s.id = held.id AND (s.lease_owner IS NULL OR s.lease_until < now())"
            f" RETURNING s.header, s.length, s.lease_token, s.failures, s.next_due_at,"
            f" held.lease_owner"
        )

    # -- SessionStore -----------------------------------------------------

    async def open(self, session_id: str, *, created_at: int) -> PostgresLog:
        validate_session_id(session_id)
        await self._start()
        held = self._logs.get(session_id)
        if held is not None and held.lost is None:
            raise SessionLocked(f"session {session_id!r} is already open in this store")
        if held is not None:
            self.forget(held)  # lost: it raises SessionLost; opening again re-reads
        fresh = header_line(SessionHeader(id=session_id, created_at=created_at))[:-1]
        s = self.schema
        sent_at = time.monotonic()
        async with self._connection() as conn:
            async with conn.pipeline():
                await conn.execute(
                    f"INSERT INTO {s}.sessions (id, header) VALUES (%s, %s)"
                    " ON CONFLICT (id) DO NOTHING",
                    (session_id, fresh),
                )
                granted = await conn.execute(
                    self._sql_grant, (self.owner, self.lease_s, session_id)
                )
            row = await granted.fetchone()
        if row is None:
            raise SessionLocked(f"session {session_id!r} is held by another process (its lease)")
        grant = _granted(session_id, row)
        _taken_over([grant])
        loaded, unreadable = await self._load([grant], sent_at)
        if unreadable:
            await self._release_ids([grant])
            raise unreadable[0][1]
        return loaded[0]

    def session_ids(self) -> list[str]:
        rows = self._sync_query(f"SELECT id FROM {self.schema}.sessions ORDER BY id", ())
        return [str(row[0]) for row in rows]

    def lease_holder(self, session_id: str) -> str | None:
        """Who holds the session's lease now (its owner), or None."""
        rows = self._sync_query(
            f"SELECT lease_owner FROM {self.schema}.sessions WHERE id = %s AND lease_until > now()",
            (session_id,),
        )
        return None if not rows or rows[0][0] is None else str(rows[0][0])

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            await close_all(self._logs.values())
        finally:
            await self.committer.idle()
            if self._renewer is not None:
                self._renewer.cancel()
                await asyncio.gather(self._renewer, return_exceptions=True)
            await self._pool.close()
            with self._sync_lock:
                if self._sync is not None:
                    self._sync.close()
                    self._sync = None

    # -- for workers ------------------------------------------------------

    async def claim_due(self, limit: int, now_ms: int) -> list[PostgresLog]:
        """Lease up to ``limit`` sessions whose wake is at or before
        ``now_ms`` and whose lease is free or expired (``SKIP LOCKED``: a
        concurrent claimer gets other sessions), earliest first; each comes
        back open, loaded from its snapshot and the events after it. A
        session that cannot be read (:class:`CorruptSession`) is reported in
        one log line, taken out of the wake index and let go; the others
        come back."""
        if limit <= 0:
            return []
        await self._start()
        s = self.schema
        sent_at = time.monotonic()
        async with self._connection() as conn:
            cursor = await conn.execute(
                f"UPDATE {s}.sessions AS s SET lease_owner = %s,"
                f" lease_token = s.lease_token + 1,"
                f" lease_until = now() + %s * interval '1 second'"
                f" FROM (SELECT id, lease_owner FROM {s}.sessions"
                f"  WHERE next_due_at <= %s AND (lease_owner IS NULL OR lease_until < now())"
                f"  AND NOT (id = ANY(%s))"
                f"  ORDER BY next_due_at LIMIT %s FOR UPDATE SKIP LOCKED) AS held"
                f" WHERE s.id = held.id"
                f" RETURNING s.id, s.header, s.length, s.lease_token, s.failures,"
                f" s.next_due_at, held.lease_owner",
                (self.owner, self.lease_s, now_ms, list(self._logs), limit),
            )
            rows = await cursor.fetchall()
        if not rows:
            return []
        grants = [_granted(row[0], row[1:]) for row in rows]
        _taken_over(grants)
        logs, unreadable = await self._load(grants, sent_at)
        if unreadable:
            await self._set_aside(unreadable)
        return logs

    # -- the worker's part ---------------------------------------------------

    @property
    def where(self) -> str:
        """What a worker's log lines call this store."""
        return f"schema {self.schema} (owner {self.owner})"

    @property
    def unreadable(self) -> tuple[type[StoreError], ...]:
        return (CorruptSession,)

    async def prepare_worker(self, progress: Callable[[int], None] | None = None) -> None:
        """Fail now when the schema is missing or the database cannot be
        reached at all (the wake index is kept with every commit)."""
        await self.next_due()

    async def changes(self) -> AsyncIterator[None]:
        """Yields at every ``NOTIFY`` that a wake moved earlier (and once
        after each (re)connection: something may have been missed); LISTENs
        again with backoff when the connection breaks (meanwhile the
        worker's poll interval bounds how late a wake is seen)."""
        delay = 0.5
        while True:
            cut: Cut | None = None
            try:
                conn = await psycopg.AsyncConnection.connect(self._probe_dsn, autocommit=True)
                async with conn:
                    with deadline(conn, self.round_trip_s) as cut:
                        await conn.execute(f'LISTEN "{self.channel}"')
                    delay = 0.5
                    yield
                    while True:
                        async for _ in conn.notifies(timeout=_LISTEN_CHECK_S):
                            yield
                        # Quiet for a while: is the connection still there?
                        with deadline(conn, self.round_trip_s) as cut:
                            await conn.execute("SELECT 1")
            except psycopg.Error as exc:
                logger.warning(
                    "worker: LISTEN connection lost (%s); polling meanwhile",
                    self._failure(exc, cut),
                )
            await asyncio.sleep(delay)
            delay = min(delay * 2, 30.0)

    async def next_due(self) -> int | None:
        """The earliest wake among sessions no process holds, or None."""
        await self._start()
        s = self.schema
        async with self._connection() as conn:
            cursor = await conn.execute(
                f"SELECT next_due_at FROM {s}.sessions WHERE next_due_at IS NOT NULL"
                " AND (lease_owner IS NULL OR lease_until < now())"
                " ORDER BY next_due_at LIMIT 1"
            )
            row = await cursor.fetchone()
        return None if row is None else int(row[0])

    # -- inside the store ---------------------------------------------------

    def forget(self, log: PostgresLog) -> None:
        if self._logs.get(log.header.id) is log:
            del self._logs[log.header.id]

    async def save_snapshot(self, log: PostgresLog, snapshot: Snapshot) -> None:
        s = self.schema
        async with self._connection() as conn:
            cursor = await conn.execute(
                f"INSERT INTO {s}.snapshots (session_id, through, data)"
                f" SELECT %s, %s, %s WHERE EXISTS (SELECT 1 FROM {s}.sessions"
                "  WHERE id = %s AND lease_token = %s AND lease_owner = %s"
                "  AND lease_until >= now())"
                " ON CONFLICT (session_id) DO UPDATE"
                " SET through = excluded.through, data = excluded.data",
                (
                    log.header.id,
                    snapshot.through,
                    snapshot.data,
                    log.header.id,
                    log.token,
                    self.owner,
                ),
            )
            if cursor.rowcount != 1:
                log.lost = _lost_text(log.header.id)
                raise SessionLost(log.lost)

    def read_events(self, session_id: str, start: int, end: int) -> list[SessionEvent]:
        """At most a page of committed events with ``start <= seq < end``,
        from ``start`` on without a gap. Raises :class:`CorruptSession` for a
        missing or unreadable event."""
        rows = self._sync_query(
            f"SELECT seq, type, time, data FROM {self.schema}.events"
            " WHERE session_id = %s AND seq >= %s AND seq < %s ORDER BY seq LIMIT %s",
            (session_id, start, end, _PAGE),
        )
        page = [event(kind, seq, at, bytes(data)) for seq, kind, at, data in rows]
        for expected, item in enumerate(page, start):
            reason = _event_fault(item, expected)
            if reason is not None:
                raise CorruptSession(session_id, reason)
        return page

    async def _start(self) -> None:
        if self._closed:
            raise StoreError("the store is closed")
        async with self._opening:  # uncontended: no suspension
            if self._opened:
                return
            pool = self._pool = self._new_pool()  # a closed pool cannot be opened again
            try:
                await self._probe()
                await pool.open(wait=True, timeout=self._connect_timeout_s)
                async with pool.connection() as conn:
                    await check_version(conn, self.schema)
            except BaseException as exc:
                await pool.close()
                if isinstance(exc, psycopg.Error | PoolTimeout):
                    why = redact(str(exc), [self.dsn])
                    raise StoreError(f"cannot use PostgreSQL: {why}") from exc
                raise
            self._opened = True

    async def _probe(self) -> None:
        """One connection before the pool's: a server that cannot be reached
        fails the start at once with :class:`DatabaseUnreachable` (host,
        port, cause), where the pool would retry until its timeout."""
        try:
            conn = await psycopg.AsyncConnection.connect(self._probe_dsn)
        except psycopg.OperationalError as exc:
            raise unreachable(self.dsn, exc) from exc
        await conn.close()

    def _new_pool(self) -> AsyncConnectionPool[psycopg.AsyncConnection[Row]]:
        return AsyncConnectionPool(
            self._probe_dsn,
            min_size=1,
            max_size=self._pool_size,
            open=False,
            kwargs={"autocommit": True},
            check=self._check_if_idle,
            # Waiting for a connection: one connect, then one check of it.
            timeout=self._connect_timeout_s + self.round_trip_s,
            name=f"tickler-{self.schema}",
        )

    async def _check_if_idle(self, conn: psycopg.AsyncConnection[Row]) -> None:
        """The pool's check at checkout (a failed one takes another)."""
        last = self._last_used.get(conn)
        if last is None or time.monotonic() - last > _CHECK_IDLE_S:
            with deadline(conn, self.round_trip_s):
                await AsyncConnectionPool.check_connection(conn)

    @contextlib.asynccontextmanager
    async def _connection(self) -> AsyncIterator[psycopg.AsyncConnection[Row]]:
        """A pooled connection for one round trip: cut when the block takes
        longer than ``round_trip_s`` (the pool then discards it)."""
        cut: Cut | None = None
        try:
            async with self._pool.connection() as conn:
                with deadline(conn, self.round_trip_s) as cut:
                    try:
                        yield conn
                    finally:
                        self._last_used[conn] = time.monotonic()
        except psycopg.Error as exc:
            raise self._failure(exc, cut) from exc

    def _failure(self, exc: psycopg.Error, cut: Cut | None) -> StoreError:
        if cut is not None and cut.fired:
            return StoreError(
                f"PostgreSQL did not answer within {self.round_trip_s:g} s: the connection "
                "was cut (a stalled or half-open connection)"
            )
        return StoreError(f"PostgreSQL: {redact(str(exc), [self.dsn])}")

    async def _load(
        self, grants: list[tuple[str, _Granted]], sent_at: float
    ) -> tuple[list[PostgresLog], list[tuple[_Granted, CorruptSession]]]:
        """Open logs for sessions just leased: snapshot and tail in one trip.
        The sessions that cannot be read come back apart, still leased."""
        s = self.schema
        ids = [session_id for session_id, _ in grants]
        try:
            async with self._connection() as conn, conn.pipeline():
                snaps = await conn.execute(
                    f"SELECT session_id, through, data FROM {s}.snapshots"
                    " WHERE session_id = ANY(%s)",
                    (ids,),
                )
                tails = await conn.execute(
                    f"SELECT e.session_id, e.seq, e.type, e.time, e.data FROM {s}.events e"
                    f" LEFT JOIN {s}.snapshots n ON n.session_id = e.session_id"
                    " WHERE e.session_id = ANY(%s) AND e.seq >= coalesce(n.through, 0)"
                    " ORDER BY e.session_id, e.seq",
                    (ids,),
                )
                snap_rows = await snaps.fetchall()
                tail_rows = await tails.fetchall()
        except BaseException:
            await self._release_ids(grants)
            raise
        snapshots = {row[0]: Snapshot(int(row[1]), bytes(row[2])) for row in snap_rows}
        events: dict[str, list[SessionEvent]] = {session_id: [] for session_id in ids}
        for session_id, seq, kind, at, data in tail_rows:
            events[session_id].append(event(kind, seq, at, bytes(data)))
        logs = []
        unreadable = []
        for session_id, granted in grants:
            snapshot = snapshots.get(session_id)
            try:
                header = _checked(session_id, granted, snapshot, events[session_id])
            except CorruptSession as exc:
                unreadable.append((granted, exc))
                continue
            log = PostgresLog(self, header, granted, snapshot, events[session_id])
            log.renewed_at = sent_at
            logs.append(log)
        for log in logs:  # only now: a log never held is never renewed
            self._logs[log.header.id] = log
        if logs and (self._renewer is None or self._renewer.done()):
            self._renewer = asyncio.get_running_loop().create_task(self._renew_loop())
        return logs, unreadable

    async def _set_aside(self, unreadable: list[tuple[_Granted, CorruptSession]]) -> None:
        """Take claimed sessions that cannot be read out of the wake index
        and let their leases go (fenced by the token), each reported once.
        Should this fail, their leases expire and a worker reports them again."""
        try:
            async with self._connection() as conn:
                await conn.execute(
                    f"UPDATE {self.schema}.sessions AS s SET next_due_at = NULL,"
                    " lease_owner = NULL, lease_until = NULL"
                    " FROM unnest(%s::text[], %s::bigint[]) AS u(id, token)"
                    " WHERE s.id = u.id AND s.lease_token = u.token AND s.lease_owner = %s"
                    " AND s.lease_until >= now()",
                    (
                        [exc.session_id for _, exc in unreadable],
                        [granted.token for granted, _ in unreadable],
                        self.owner,
                    ),
                )
        except StoreError as error:
            logger.warning("could not set unreadable sessions aside: %s", error)
        for _, exc in unreadable:
            logger.error("%s; %s", exc, SET_ASIDE)

    async def _release_ids(self, grants: list[tuple[str, _Granted]]) -> None:
        with contextlib.suppress(Exception):
            async with self._connection() as conn:
                await conn.execute(
                    f"UPDATE {self.schema}.sessions AS s SET lease_owner = NULL,"
                    " lease_until = NULL FROM unnest(%s::text[], %s::bigint[]) AS u(id, token)"
                    " WHERE s.id = u.id AND s.lease_token = u.token AND s.lease_until >= now()",
                    ([i for i, _ in grants], [g.token for _, g in grants]),
                )

    async def _commit_round(self) -> None:
        """Write every session's pending events, wake and lease in one
        statement; a session whose length or lease moved is lost."""
        work = [
            _Sent(log, len(log.pending), log.wake, log.failures_to_write, log.release)
            for log in self._logs.values()
            if log.lost is None and (log.pending or log.dirty or log.release)
        ]
        if not work:
            return
        rows = _RoundRows()
        for sent in work:
            rows.add(sent)
        sent_at = time.monotonic()
        async with self._connection() as conn:
            cursor = await conn.execute(self._sql_commit, rows.params(self))
            result = await cursor.fetchone()
        written = set(result[0] if result is not None else ())
        for sent in work:
            log = sent.log
            if log.header.id not in written:
                log.lost = _lost_text(log.header.id)
                logger.warning("%s", log.lost)
                continue
            log.committed_round(sent.written, sent_at)
            log.stored_wake = sent.wake
            log.failures = sent.failures
            # Changed while the round was in flight: the next round writes it.
            log.dirty = log.wake != sent.wake or log.failures_to_write != sent.failures
            if sent.release:  # the lease ended with this round: never in another
                log.release = False
                self.forget(log)

    async def _renew_loop(self) -> None:
        """Renew the leases of the open sessions every third of a lease (a
        tenth after a failed renewal: a renewal cut at its deadline leaves
        time for another before the lease ends)."""
        pause = self.lease_s / 3
        while self._logs and not self._closed:
            await asyncio.sleep(pause)
            pause = self.lease_s / 3
            logs = [log for log in self._logs.values() if log.lost is None]
            if not logs:
                continue
            sent_at = time.monotonic()
            try:
                async with self._connection() as conn:
                    cursor = await conn.execute(
                        f"UPDATE {self.schema}.sessions AS s"
                        " SET lease_until = now() + %s * interval '1 second'"
                        " FROM unnest(%s::text[], %s::bigint[]) AS u(id, token)"
                        " WHERE s.id = u.id AND s.lease_token = u.token AND s.lease_owner = %s"
                        " AND s.lease_until >= now() RETURNING s.id",
                        (
                            self.lease_s,
                            [log.header.id for log in logs],
                            [log.token for log in logs],
                            self.owner,
                        ),
                    )
                    kept = {row[0] for row in await cursor.fetchall()}
            except StoreError as exc:
                logger.warning("could not renew session leases: %s", exc)
                pause = self.lease_s / 10
                continue
            for log in logs:
                if log.header.id in kept:
                    log.renewed_at = sent_at
                elif log.lost is None and self._logs.get(log.header.id) is log:
                    log.lost = _lost_text(log.header.id)
                    logger.warning("%s", log.lost)

    def _sync_query(self, query: str, params: tuple[object, ...]) -> list[Row]:
        """A read on the store's own blocking connection. A read is safe to
        repeat, so a connection found broken (the server restarted or ended
        it while idle) is replaced once before the error is reported."""
        if self._closed:
            raise StoreError("the store is closed")
        with self._sync_lock:
            for attempt in (1, 2):
                cut: Cut | None = None
                try:
                    if self._sync is None or self._sync.closed:
                        self._sync = psycopg.connect(self._probe_dsn, autocommit=True)
                    with sync_deadline(self._sync, self.round_trip_s) as cut:
                        return self._sync.execute(query, params).fetchall()
                except psycopg.Error as exc:
                    broken = self._sync is not None and self._sync.broken
                    if broken:
                        self._sync = None
                    if not broken or attempt == 2:
                        raise self._failure(exc, cut) from exc
        raise AssertionError("unreachable")


class _Sent(NamedTuple):
    """What one round writes for one log (it may change meanwhile)."""

    log: PostgresLog
    written: int  # pending events written
    wake: int | None
    failures: int
    release: bool


class _RoundRows:
    """The arrays one commit round sends."""

    def __init__(self) -> None:
        self.ids: list[str] = []
        self.expected: list[int] = []
        self.lengths: list[int] = []
        self.tokens: list[int] = []
        self.wakes: list[int | None] = []
        self.failures: list[int] = []
        self.releases: list[bool] = []
        self.e_ids: list[str] = []
        self.e_seqs: list[int] = []
        self.e_types: list[str] = []
        self.e_times: list[int] = []
        self.e_data: list[bytes] = []
        self.notify = False

    def add(self, sent: _Sent) -> None:
        log, count = sent.log, sent.written
        session_id = log.header.id
        self.ids.append(session_id)
        self.expected.append(log.committed)
        self.lengths.append(log.committed + count)
        self.tokens.append(log.token)
        self.wakes.append(sent.wake)
        self.failures.append(sent.failures)
        self.releases.append(sent.release)
        for item in log.pending[:count]:
            self.e_ids.append(session_id)
            self.e_seqs.append(item.seq)
            self.e_types.append(item.type)
            self.e_times.append(item.time)
            self.e_data.append(bytes(item.data))
        # Wake sleeping workers when this session needs one sooner than the
        # index said, or when a holder lets go of a session with a wake.
        if sent.wake is not None and (
            sent.release or log.stored_wake is None or sent.wake < log.stored_wake
        ):
            self.notify = True

    def params(self, store: PostgresStore) -> dict[str, object]:
        return {
            "ids": self.ids,
            "expected": self.expected,
            "lengths": self.lengths,
            "tokens": self.tokens,
            "wakes": self.wakes,
            "failures": self.failures,
            "releases": self.releases,
            "lease": store.lease_s,
            "owner": store.owner,
            "e_ids": self.e_ids,
            "e_seqs": self.e_seqs,
            "e_types": self.e_types,
            "e_times": self.e_times,
            "e_data": self.e_data,
            "notify": self.notify,
            "channel": store.channel,
        }


def _commit_sql(s: str) -> str:
    # One statement, so one implicit transaction and one round trip. A
    # session is written only while its lease (owner and token) is still
    # ours and has not expired (an expired lease is over, taken or not), and
    # only if its stored length is where this handle's pending
    # batch starts, or inside that batch: a round that committed but whose
    # reply was lost (the connection died) wrote a prefix of the same
    # pending events under the same lease, since nobody else writes with
    # our token. Only the events past the stored length are inserted. The
    # rows are locked in id order first (and so read as locked), so
    # concurrent rounds over overlapping sessions cannot deadlock.
    return f"""
WITH u AS (
  SELECT * FROM unnest(%(ids)s::text[], %(expected)s::bigint[], %(lengths)s::bigint[],
                       %(tokens)s::bigint[], %(wakes)s::bigint[], %(failures)s::int[],
                       %(releases)s::bool[])
    AS u(id, expected, length, token, wake, failures, release)
), cur AS (
  SELECT id, length FROM {s}.sessions WHERE id = ANY(%(ids)s::text[]) ORDER BY id FOR UPDATE
), ok AS (
  UPDATE {s}.sessions AS s SET
    length = u.length,
    next_due_at = u.wake,
    failures = u.failures,
    lease_owner = CASE WHEN u.release THEN NULL ELSE s.lease_owner END,
    lease_until = CASE WHEN u.release THEN NULL
                       ELSE now() + %(lease)s * interval '1 second' END
  FROM u JOIN cur ON cur.id = u.id
  WHERE s.id = u.id AND cur.length BETWEEN u.expected AND u.length
    AND s.lease_token = u.token AND s.lease_owner = %(owner)s AND s.lease_until >= now()
  RETURNING s.id, cur.length AS stored
), ins AS (
  INSERT INTO {s}.events (session_id, seq, type, time, data)
  SELECT e.session_id, e.seq, e.type, e.time, e.data
    FROM unnest(%(e_ids)s::text[], %(e_seqs)s::bigint[], %(e_types)s::text[],
                %(e_times)s::bigint[], %(e_data)s::bytea[])
      AS e(session_id, seq, type, time, data)
    JOIN ok ON ok.id = e.session_id
   WHERE e.seq >= ok.stored
)
SELECT array(SELECT id FROM ok),
       (SELECT count(*) FROM (SELECT pg_notify(%(channel)s, '') WHERE %(notify)s) AS n)
"""


def _granted(session_id: str, row: Row) -> tuple[str, _Granted]:
    header, length, token, failures, next_due, previous = row
    return session_id, _Granted(
        bytes(header),
        int(length),
        int(token),
        int(failures),
        _opt_int(next_due),
        None if previous is None else str(previous),
    )


def _taken_over(grants: list[tuple[str, _Granted]]) -> None:
    """Report the sessions just leased whose previous holder's lease had
    expired while held (it died, or stalled past its lease): a takeover.
    A lease let go (closed) leaves no holder: leasing it again is not one."""
    taken = [(session_id, g.previous) for session_id, g in grants if g.previous is not None]
    for session_id, previous in taken:
        logger.info(
            "session %r taken over: the lease of %s had expired",
            session_id,
            previous,
            extra={SESSION_ID: session_id},
        )
    lease_takeovers(len(taken))


def _checked(
    session_id: str, granted: _Granted, snapshot: Snapshot | None, tail: list[SessionEvent]
) -> SessionHeader:
    """The header of a session just leased, once its stored rows are found
    readable: the header, the snapshot's extent, and the events after the
    snapshot (every seq up to the length, each event valid). Raises
    :class:`CorruptSession`."""
    try:
        header = _HEADER.decode(granted.header)
    except (msgspec.MsgspecError, RecursionError) as exc:
        raise CorruptSession(session_id, f"its stored header is not valid: {exc}") from None
    if header.id != session_id:
        raise CorruptSession(session_id, f"its stored header names session {header.id!r}")
    length = granted.length
    start = 0
    if snapshot is not None:
        if not 0 <= snapshot.through <= length:
            raise CorruptSession(
                session_id,
                f"its snapshot covers {snapshot.through} events but the session holds "
                f"{length}: events it covered were lost",
            )
        start = snapshot.through
    for expected, item in enumerate(tail, start):
        if item.seq >= length:
            raise CorruptSession(session_id, f"event {item.seq} is beyond its length {length}")
        reason = _event_fault(item, expected)
        if reason is not None:
            raise CorruptSession(session_id, reason)
    if start + len(tail) < length:
        raise CorruptSession(session_id, f"event {start + len(tail)} is missing")
    return header


def _event_fault(item: SessionEvent, expected: int) -> str | None:
    """Why an event row read as ``expected`` cannot be served, or None: the
    same rules an append follows (a safe integer time, data one JSON value)."""
    if item.seq != expected:
        return f"event {expected} is missing"
    if not 0 <= item.time <= MAX_SAFE_INTEGER:
        return f"event {item.seq}: its time {item.time} is not a safe integer"
    try:
        _RAW.decode(item.data)
    except RecursionError:  # deeper than msgspec reads: the core's reader decides
        if not is_json(bytes(item.data)):
            return f"event {item.seq}: its data is not one JSON value"
    except msgspec.DecodeError as exc:
        return f"event {item.seq}: its data is not JSON ({exc})"
    return None


def _opt_int(value: object) -> int | None:
    return None if value is None else int(str(value))


def _lost_text(session_id: str) -> str:
    return (
        f"session {session_id!r} was taken over by another process, or may be (this "
        "one's lease ended); nothing more was written: open it again to re-read it"
    )
