"""A SQLite store (stdlib ``sqlite3``): one database file, many sessions.

* One connection, used only by the store's own thread (a one-worker
  executor); the event loop never waits on SQLite, except in the synchronous
  reads the port defines (``events``, ``session_ids``), which queue behind at
  most one commit.
* WAL mode, ``isolation_level=None`` and explicit ``BEGIN IMMEDIATE``.
* ``append`` keeps the batch in memory (atomic: one list extend); ``flush``
  waits for a commit round that writes every session's pending batches in
  ONE transaction — group commit, one WAL sync for all of them. A failed
  round rolls back and keeps everything queued; the next flush retries.
* One writer per session across processes: ``flock`` on
  ``<db>.locks/<session>.lock``, released by the kernel when the holder dies,
  so a crash never leaves a stale lock (a lease row would need expiry and
  heart-beats for the same guarantee). The file is removed when its session
  closes (see :func:`~tickler.adapters.stores._locks.unlock_session`); one a
  crash left is reused and removed at the next close.
* ``synchronous="FULL"`` makes a flushed batch survive power loss;
  ``"NORMAL"`` only a process crash (SQLite's WAL trade-off).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Final, TypeVar

import msgspec

from tickler.adapters.stores import _sqlite_db as db
from tickler.adapters.stores import _wakes as wakes
from tickler.adapters.stores._committer import GroupCommit, close_all
from tickler.adapters.stores._files import (
    CorruptStore,
    make_dir,
    require_sqlite_files,
    store_error,
)
from tickler.adapters.stores._lines import header_line
from tickler.adapters.stores._lock_wait import DEFAULT_LOCK_WAIT_S, LockWait
from tickler.adapters.stores._locks import lock_free, lock_session, unlock_session
from tickler.adapters.stores._log_base import PendingLog, read_pages
from tickler.adapters.stores._wake_claims import Claims
from tickler.adapters.stores._wake_log import HeldWake
from tickler.core import SessionEvent, SessionHeader
from tickler.shell import SessionLocked, Snapshot, StoreError, validate_session_id

_HEADER: Final = msgspec.json.Decoder(SessionHeader)
logger = logging.getLogger("tickler.store")
T = TypeVar("T")


class SqliteLog(PendingLog, HeldWake):
    """One session, held by this handle (its lock file, and its wake index
    row marked held) until :meth:`close`."""

    def __init__(
        self,
        store: SqliteStore,
        header: SessionHeader,
        length: int,
        snapshot: Snapshot | None,
        *,
        lock: int,
        lock_path: Path,
        holder: str = "",
        held: wakes.Held = wakes.NOT_HELD,
    ) -> None:
        self._store = store
        self._header = header
        self._lock = lock
        self._lock_path = lock_path
        self._snapshot = snapshot
        self._closed = False
        self.committed = length  # events in the database
        self.pending: list[SessionEvent] = []  # appended, not yet committed
        self._hold(holder, held, length)

    def events(self, start: int = 0) -> Iterator[SessionEvent]:
        return self._events(max(start, 0), self.committed, list(self.pending))

    async def flush(self) -> None:
        if self.pending or self.wake_dirty:
            await self._store._committer.barrier()

    async def save_snapshot(self, snapshot: Snapshot) -> None:
        self._check_through(snapshot)
        await self.flush()  # never durable ahead of the events it covers
        await self._store.run(db.save_snapshot, self._header.id, snapshot)
        self._snapshot = snapshot

    async def _close(self) -> None:
        """Commit what is pending, write the session's exact wake to the
        wake index, then let the lock go."""
        durable = False
        try:
            await self.flush()
            durable = True
        finally:
            try:
                await self._store.release_wake(self, durable=durable)
            finally:
                self._store.forget(self)
                unlock_session(self._lock_path, self._lock)

    def _events(
        self, start: int, committed: int, pending: list[SessionEvent]
    ) -> Iterator[SessionEvent]:
        session = self._header.id
        yield from read_pages(
            start,
            committed,
            lambda first, end: self._store.run_blocking(db.read_events, session, first, end),
            lambda missing: StoreError(f"session {session!r}: event {missing} is missing"),
        )
        yield from (item for item in pending if item.seq >= start)


class SqliteStore:
    """Sessions in one SQLite database file; see the module docstring."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        synchronous: str = "FULL",
        timeout: float = 5.0,
        lock_wait_s: float = DEFAULT_LOCK_WAIT_S,
    ) -> None:
        if synchronous.upper() not in db.SYNCHRONOUS:
            raise ValueError(f"synchronous must be one of {db.SYNCHRONOUS}, not {synchronous!r}")
        if not lock_wait_s >= 0:
            raise ValueError("lock_wait_s must be 0 or more")
        self.path = Path(path)
        self.lock_wait_s = lock_wait_s
        self.holder = wakes.holder_token("live")
        self._claimer: Claims[SqliteLog] | None = None
        require_sqlite_files(self.path, created=True)  # a FIFO would make SQLite wait
        self._locks = self.path.with_name(self.path.name + ".locks")
        self._logs: dict[str, SqliteLog] = {}
        self._closed = False
        try:
            make_dir(self._locks, os.fsync)
        except OSError as exc:
            raise store_error(f"cannot create {self._locks}", exc) from exc
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="tickler-sqlite")
        self._conn: sqlite3.Connection | None = None
        try:
            self._conn = self._thread.submit(
                db.connect, self.path, synchronous.upper(), timeout
            ).result()
        except BaseException as exc:
            self._thread.shutdown()
            if isinstance(exc, sqlite3.Error):
                raise store_error(f"cannot open SQLite {self.path}", exc) from exc
            raise
        self._committer = GroupCommit(self._commit_round)

    async def open(self, session_id: str, *, created_at: int) -> SqliteLog:
        """Open (creating when absent) ``session_id`` for writing. A session
        a worker holds while it delivers is waited for, up to
        ``lock_wait_s``; one a live process holds raises SessionLocked at
        once."""
        validate_session_id(session_id)
        fresh = header_line(SessionHeader(id=session_id, created_at=created_at))[:-1]
        waiting = LockWait(self.lock_wait_s)
        while True:
            try:
                log = await self._open(session_id, fresh, self.holder)
            except SessionLocked:
                holder = await self.index_read(wakes.holder_of, session_id)
                if not await waiting.again(holder):
                    raise
                continue
            assert log is not None
            return log

    async def open_claimed(self, session_id: str, holder: str) -> SqliteLog:
        """Open an existing session for a worker, without waiting: raises
        SessionLocked when someone holds it, FileNotFoundError when it is
        gone."""
        log = await self._open(session_id, None, holder)
        if log is None:
            raise FileNotFoundError(f"session {session_id!r} is not in {self.path}")
        return log

    async def _open(self, session_id: str, fresh: bytes | None, holder: str) -> SqliteLog | None:
        if self._closed:
            raise StoreError("the store is closed")
        lock_path = self._locks / f"{session_id}.lock"
        try:
            lock = lock_session(lock_path, session_id)
        except OSError as exc:
            raise store_error(f"cannot lock session {session_id!r}", exc) from exc
        try:
            opened = await self.run(db.open_session, session_id, fresh, holder)
            if opened is None:
                unlock_session(lock_path, lock)
                return None
            snapshot = await self.run(db.load_snapshot, session_id)
            header = _HEADER.decode(opened.header)
        except BaseException:
            unlock_session(lock_path, lock)
            raise
        log = SqliteLog(
            self,
            header,
            opened.length,
            snapshot,
            lock=lock,
            lock_path=lock_path,
            holder=holder,
            held=opened.held,
        )
        self._logs[session_id] = log
        return log

    async def release_wake(self, log: SqliteLog, *, durable: bool) -> None:
        """At a log's close, before its lock goes: its exact wake in the
        index, or (its wake unknown, its events not committed) "look again"."""
        known, wake = log.exact_wake(log.length)
        session_id = log.header.id
        try:
            if durable and known:
                release = functools.partial(
                    wakes.release, wake=wake, failures=log.failures_to_write, size=None
                )
                await self.index_write(release, session_id, log.holder)
            else:
                await self.index_write(wakes.let_go, session_id, log.holder)
        except StoreError as exc:  # held by this handle: a worker's sweep looks again
            logger.warning("session %r: %s", session_id, exc)

    # -- the worker's part (tickler worker --store; see _wake_claims) --------

    @property
    def where(self) -> str:
        """What a worker's log lines call this store."""
        return f"store {self.path}"

    async def index_write(self, job: Callable[..., T], *args: object) -> T:
        return await self.run(db.in_transaction, job, *args)

    async def index_read(self, job: Callable[..., T], *args: object) -> T:
        return await self.run(job, *args)

    async def check_index(self, progress: Callable[[int], None] | None = None) -> tuple[int, int]:
        """A worker's start: sessions the wake index does not know (written
        before it existed) are looked at again. The sessions checked and how
        many of them."""
        return await self.run(db.in_transaction, db.unindexed)

    @property
    def unreadable(self) -> tuple[type[StoreError], ...]:
        return (CorruptStore,)

    async def prepare_worker(self, progress: Callable[[int], None] | None = None) -> None:
        """Bring the wake index up to date with the logs (see
        :meth:`check_index`), saying what it found."""
        checked, changed = await self.check_index(progress)
        if changed:
            logger.info(
                "wake index of %s: %d of %d session(s) changed behind it or unknown to it: "
                "each is looked at again",
                self.where,
                changed,
                checked,
            )

    async def locks_free(self, session_ids: list[str]) -> list[bool]:
        """Whether nobody holds each session's lock now."""

        def free() -> list[bool]:
            return [lock_free(self._locks / f"{sid}.lock") for sid in session_ids]

        return await asyncio.to_thread(free)

    async def claim_due(self, limit: int, now_ms: int) -> list[SqliteLog]:
        """Open up to ``limit`` due sessions nobody holds, for a worker."""
        return await self._claims().claim_due(limit, now_ms, set(self._logs))

    async def next_due(self) -> int | None:
        """The earliest wake of a session nobody holds, or None."""
        return await self._claims().next_due(set(self._logs))

    async def changes(self, every_s: float = 0.1) -> AsyncIterator[None]:
        """Yields when another process committed to the database (the wake
        index may have moved earlier)."""
        version: int | None = None
        while True:
            try:
                now = await self.run(db.data_version)
                if version is not None and now != version:
                    yield
                version = now
            except StoreError as exc:
                logger.debug("watching the wake index: %s", exc)
            await asyncio.sleep(every_s)

    def _claims(self) -> Claims[SqliteLog]:
        if self._claimer is None:
            self._claimer = Claims(self)
        return self._claimer

    def session_ids(self) -> list[str]:
        return self.run_blocking(db.session_ids)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            await close_all(self._logs.values())
        finally:
            await self._committer.idle()
            await self.run(lambda conn: conn.close())
            self._conn = None
            await asyncio.to_thread(self._thread.shutdown)

    def forget(self, log: SqliteLog) -> None:
        self._logs.pop(log.header.id, None)

    async def run(self, job: Callable[..., T], *args: object) -> T:
        """``job(connection, *args)`` on the store's thread."""
        self._check_running()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._thread, self._call, job, args)

    def run_blocking(self, job: Callable[..., T], *args: object) -> T:
        self._check_running()
        return self._thread.submit(self._call, job, args).result()

    def _check_running(self) -> None:
        if self._conn is None:
            raise StoreError("the store is closed")

    def _call(self, job: Callable[..., T], args: tuple[object, ...]) -> T:
        if self._conn is None:
            raise StoreError("the store is closed")
        try:
            return job(self._conn, *args)
        except sqlite3.Error as exc:
            raise store_error(f"SQLite {self.path}", exc) from exc

    async def _commit_round(self) -> None:
        """Write every pending batch of every session, and the wakes that
        changed, in one transaction."""
        work = [
            (log, len(log.pending), log.wake, log.failures_to_write, log.wake_dirty)
            for log in self._logs.values()
            if log.pending or log.wake_dirty
        ]
        if not work:
            return
        rows = [
            (log.header.id, item.seq, item.type, item.time, bytes(item.data))
            for log, count, *_ in work
            for item in log.pending[:count]
        ]
        wake_rows = [(log.header.id, wake, fails) for log, _, wake, fails, dirty in work if dirty]
        for log, *_ in work:
            log.wake_dirty = False
        try:
            await self.run(db.insert_events, rows, wake_rows)
        except BaseException:
            for log, *_, dirty in work:
                log.wake_dirty = log.wake_dirty or dirty
            raise
        for log, count, *_ in work:
            del log.pending[:count]
            log.committed += count
