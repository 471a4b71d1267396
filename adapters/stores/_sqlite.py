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
import os
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Final, TypeVar

import msgspec

from tickler.adapters.stores import _sqlite_db as db
from tickler.adapters.stores._committer import GroupCommit, close_all
from tickler.adapters.stores._files import make_dir, require_sqlite_files, store_error
from tickler.adapters.stores._lines import encode_batch, header_line
from tickler.adapters.stores._locks import lock_session, unlock_session
from tickler.core import SessionEvent, SessionHeader
from tickler.shell._ports import NewEvent, Snapshot, StoreError, validate_session_id

_HEADER: Final = msgspec.json.Decoder(SessionHeader)
T = TypeVar("T")


class SqliteLog:
    def __init__(
        self,
        store: SqliteStore,
        header: SessionHeader,
        length: int,
        snapshot: Snapshot | None,
        *,
        lock: int,
        lock_path: Path,
    ) -> None:
        self._store = store
        self._header = header
        self._lock = lock
        self._lock_path = lock_path
        self._snapshot = snapshot
        self._closed = False
        self.committed = length  # events in the database
        self.pending: list[SessionEvent] = []  # appended, not yet committed

    @property
    def header(self) -> SessionHeader:
        return self._header

    @property
    def length(self) -> int:
        return self.committed + len(self.pending)

    def events(self, start: int = 0) -> Iterator[SessionEvent]:
        return self._events(max(start, 0), self.committed, list(self.pending))

    def append(self, batch: Sequence[NewEvent]) -> tuple[SessionEvent, ...]:
        if self._closed:
            raise StoreError(f"session {self._header.id!r} is closed")
        added, _ = encode_batch(self.length, batch)  # refuses what would not read back
        self.pending.extend(added)
        return added

    async def flush(self) -> None:
        if self.pending:
            await self._store._committer.barrier()

    def load_snapshot(self) -> Snapshot | None:
        snapshot = self._snapshot
        return snapshot if snapshot is not None and snapshot.through <= self.length else None

    async def save_snapshot(self, snapshot: Snapshot) -> None:
        if not 0 <= snapshot.through <= self.length:
            raise StoreError(f"a snapshot through {snapshot.through} is beyond {self.length}")
        await self.flush()  # never durable ahead of the events it covers
        await self._store.run(db.save_snapshot, self._header.id, snapshot)
        self._snapshot = snapshot

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            await self.flush()
        finally:
            self._store.forget(self)
            unlock_session(self._lock_path, self._lock)

    def _events(
        self, start: int, committed: int, pending: list[SessionEvent]
    ) -> Iterator[SessionEvent]:
        while start < committed:
            page = self._store.run_blocking(db.read_events, self._header.id, start, committed)
            if not page:
                raise StoreError(f"session {self._header.id!r}: event {start} is missing")
            yield from page
            start = page[-1].seq + 1
        yield from (item for item in pending if item.seq >= start)


class SqliteStore:
    """Sessions in one SQLite database file; see the module docstring."""

    def __init__(
        self, path: str | os.PathLike[str], *, synchronous: str = "FULL", timeout: float = 5.0
    ) -> None:
        if synchronous.upper() not in db.SYNCHRONOUS:
            raise ValueError(f"synchronous must be one of {db.SYNCHRONOUS}, not {synchronous!r}")
        self.path = Path(path)
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
        validate_session_id(session_id)
        if self._closed:
            raise StoreError("the store is closed")
        lock_path = self._locks / f"{session_id}.lock"
        try:
            lock = lock_session(lock_path, session_id)
        except OSError as exc:
            raise store_error(f"cannot lock session {session_id!r}", exc) from exc
        try:
            fresh = header_line(SessionHeader(id=session_id, created_at=created_at))[:-1]
            stored, length = await self.run(db.open_session, session_id, fresh)
            snapshot = await self.run(db.load_snapshot, session_id)
            header = _HEADER.decode(stored)
        except BaseException:
            unlock_session(lock_path, lock)
            raise
        log = SqliteLog(self, header, length, snapshot, lock=lock, lock_path=lock_path)
        self._logs[session_id] = log
        return log

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
        """Write every pending batch of every session in one transaction."""
        work = [(log, len(log.pending)) for log in self._logs.values() if log.pending]
        if not work:
            return
        rows = [
            (log.header.id, item.seq, item.type, item.time, bytes(item.data))
            for log, count in work
            for item in log.pending[:count]
        ]
        await self.run(db.insert_events, rows)
        for log, count in work:
            del log.pending[:count]
            log.committed += count
