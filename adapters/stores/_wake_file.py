"""The JSONL store's wake index: ``<dir>/.wake.db``, an SQLite database
holding the ``wakes`` table of :mod:`~tickler.adapters.stores._wakes`,
shared by every process that opens sessions of the directory.

It is derived data, kept safe by its order of writes rather than by
durability: a session's row is marked held (a write that survives the
process, as every SQLite commit does) *before* its log can change, and made
exact again only *after* its log is durable, at close. So a crash at any
point leaves the row held by a dead process, which a worker's sweep finds
(the session's lock is free) and looks at again, never a wake later than
the log says. SQLite's ``synchronous=NORMAL`` may lose the last commits to a
power loss; a worker that starts compares every session file with its row
(:func:`changed_behind`, beside its first claims), so those are found then.

A damaged database (not a database, malformed) is moved aside as
``.wake.db.damaged-<time>`` and made anew, empty: every session is then
unknown to it, and a worker that starts, or that sees the file replaced
while it runs, looks at each again. A symbolic link in its place is
refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final, Protocol, TypeVar

from tickler.adapters.stores import _wakes as wakes
from tickler.adapters.stores._files import SymlinkRefused, require_sqlite_files, store_error
from tickler.core import SessionHeader
from tickler.shell import StoreError, is_valid_session_id

logger = logging.getLogger("tickler.store")

FILE_NAME: Final = ".wake.db"
_BUSY_MS: Final = 10_000
T = TypeVar("T")


class WakeFile:
    """One process's connection to a directory's wake index, usable from any
    thread (one statement or transaction at a time)."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / FILE_NAME
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._identity: tuple[int, int] | None = None
        self.created = False
        """Whether this handle made the index (none was there, or a damaged one was moved aside)."""

    def run(self, job: Callable[..., T], *args: object) -> T:
        """``job(connection, *args)`` in one transaction; raises StoreError."""
        with self._lock:
            for attempt in (1, 2):
                conn = self._connection()
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    try:
                        result = job(conn, *args)
                        conn.execute("COMMIT")
                    except BaseException:
                        if conn.in_transaction:
                            conn.execute("ROLLBACK")
                        raise
                    return result
                except sqlite3.DatabaseError as exc:
                    if attempt == 1 and _damaged(exc):
                        self._move_aside(exc)
                        continue
                    raise store_error(f"the wake index {self.path}", exc) from exc
            raise AssertionError("unreachable")

    def read(self, job: Callable[..., T], *args: object) -> T:
        """``job(connection, *args)`` outside a write transaction."""
        with self._lock:
            try:
                return job(self._connection(), *args)
            except sqlite3.DatabaseError as exc:
                raise store_error(f"the wake index {self.path}", exc) from exc

    def data_version(self) -> int:
        """Changes when another connection commits (SQLite's data_version)."""
        return int(self.read(lambda conn: conn.execute("PRAGMA data_version").fetchone()[0]))

    def replaced(self) -> bool:
        """Whether the file is no longer the one this handle has open (moved
        aside as damaged by another process, or deleted)."""
        try:
            st = self.path.lstat()
        except FileNotFoundError:
            return self._identity is not None
        return self._identity is not None and (st.st_dev, st.st_ino) != self._identity

    def reopen(self) -> None:
        """Connect again (after :meth:`replaced`)."""
        with self._lock:
            self._close()

    def close(self) -> None:
        with self._lock:
            self._close()

    def _close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
        self._conn = None
        self._identity = None

    def _connection(self) -> sqlite3.Connection:
        if self._conn is not None:
            return self._conn
        for path in (self.path, *_companions(self.path)):
            if path.is_symlink():
                raise SymlinkRefused(f"{path} is a symbolic link: refused")
        require_sqlite_files(self.path, created=True)  # SQLite would wait on a FIFO
        existed = self.path.exists()
        try:
            conn = self._connect()
        except sqlite3.DatabaseError as exc:
            if not _damaged(exc):
                raise
            self._move_aside(exc)
            existed = False
            conn = self._connect()
        if not existed:
            self.created = True
        st = self.path.lstat()
        self._conn, self._identity = conn, (st.st_dev, st.st_ino)
        return conn

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path, isolation_level=None, timeout=_BUSY_MS / 1000, check_same_thread=False
        )
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("BEGIN IMMEDIATE")
            try:
                wakes.create(conn, closed_files=True)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        except BaseException:
            conn.close()
            raise
        return conn

    def _move_aside(self, exc: sqlite3.DatabaseError) -> None:
        """Keep the damaged file for a person to look at; start anew."""
        self._close()
        aside = self.path.with_name(f"{FILE_NAME}.damaged-{int(time.time() * 1000)}")
        with contextlib.suppress(FileNotFoundError):
            self.path.replace(aside)
        for path in _companions(self.path):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        logger.warning(
            "the wake index %s is damaged (%s): moved aside as %s and made anew; "
            "workers look at every session again",
            self.path,
            exc,
            aside.name,
        )
        self.created = True


def _companions(path: Path) -> Iterator[Path]:
    yield path.with_name(path.name + "-wal")
    yield path.with_name(path.name + "-shm")


def _damaged(exc: sqlite3.DatabaseError) -> bool:
    """Whether the file is damaged (not busy, not full, not unreadable)."""
    if isinstance(exc, sqlite3.OperationalError):
        return False
    text = str(exc).lower()
    return "not a database" in text or "malformed" in text or "corrupt" in text


class _Noted(Protocol):
    @property
    def header(self) -> SessionHeader: ...

    wake: int | None
    failures_to_write: int


class WakeNotes:
    """The wakes of held sessions, written to the index at most once a
    second (hints for the views; each session's exact wake is written at its
    close)."""

    def __init__(self, wake_file: WakeFile, every_s: float = 1.0) -> None:
        self._file = wake_file
        self._every_s = every_s
        self._dirty: dict[str, _Noted] = {}
        self._timer: asyncio.TimerHandle | None = None

    def add(self, log: _Noted) -> None:
        self._dirty[log.header.id] = log
        if self._timer is None:
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(self._every_s, self._write)

    def discard(self, log: _Noted) -> None:
        if self._dirty.get(log.header.id) is log:
            del self._dirty[log.header.id]

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._dirty.clear()

    def _write(self) -> None:
        self._timer = None
        items = [(sid, log.wake, log.failures_to_write) for sid, log in self._dirty.items()]
        self._dirty.clear()
        if items:
            task = asyncio.get_running_loop().run_in_executor(None, self._note, items)
            task.add_done_callback(_quiet)

    def _note(self, items: list[tuple[str, int | None, int]]) -> None:
        try:
            self._file.run(wakes.note, items)
        except StoreError as exc:  # a hint: the exact wake comes at close
            logger.debug("wake index hint not written: %s", exc)


def _quiet(future: asyncio.Future[None]) -> None:
    if not future.cancelled():
        future.exception()


_BATCH: Final = 500


def changed_behind(
    directory: Path,
    wake_file: WakeFile,
    progress: Callable[[int], None] | None = None,
    *,
    stopped: Callable[[], bool] | None = None,
) -> tuple[int, int]:
    """Compare every session file of ``directory`` with its row: a file the
    index does not know, or whose size differs from the size its row was
    made exact at, is due now (a worker opens it and writes its exact
    wake). Rows of held sessions are left to the sweep. Reads the directory
    a batch at a time (memory does not grow with the store); ``progress``
    hears the count of files checked; once ``stopped()`` is true, no further
    batch is compared (the store is closing). The files checked, and how
    many are to be looked at again."""
    checked = changed = 0
    batch: list[tuple[str, int]] = []

    def flush() -> bool:
        """Compare the batch; False (nothing compared) once stopped."""
        nonlocal checked, changed
        if stopped is not None and stopped():
            return False
        ids = [sid for sid, _ in batch]
        found = wake_file.read(_sizes, ids)
        again = [
            sid
            for sid, size in batch
            if sid not in found or (found[sid][0] is None and found[sid][1] != size)
        ]
        if again:
            wake_file.run(wakes.look_again, again)
        checked += len(batch)
        changed += len(again)
        batch.clear()
        return True

    for item in _session_files(directory):
        batch.append(item)
        if len(batch) >= _BATCH:
            if not flush():
                return checked, changed
            if progress is not None:
                progress(checked)
    if batch and not flush():
        return checked, changed
    if progress is not None:
        progress(checked)
    return checked, changed


def _session_files(directory: Path) -> Iterator[tuple[str, int]]:
    """Each regular session file's session id and size, as the directory
    lists them (one entry at a time)."""
    with os.scandir(directory) as entries:
        for entry in entries:
            name = entry.name
            if not name.endswith(".jsonl") or not is_valid_session_id(name[:-6]):
                continue
            try:
                if entry.is_file(follow_symlinks=False):
                    yield name[:-6], entry.stat(follow_symlinks=False).st_size
            except OSError:
                continue


def _sizes(conn: sqlite3.Connection, ids: list[str]) -> dict[str, tuple[str | None, int | None]]:
    marks = ",".join("?" * len(ids))
    return {
        row[0]: (row[1], row[2])
        for row in conn.execute(
            # Only "?" placeholders are formatted in; the ids are parameters.
            f"SELECT session_id, holder, size FROM wakes WHERE session_id IN ({marks})",  # noqa: S608
            ids,
        )
    }
