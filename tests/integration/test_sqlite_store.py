"""What only the SQLite store promises: WAL, STRICT tables, verbatim data,
and honest flushes when a commit fails."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
from pathlib import Path

import pytest

from tickler.adapters.stores._locks import hold_named, lock_session
from tickler.adapters.stores._sqlite import SqliteStore
from tickler.shell._ports import NewEvent, SessionLocked, Snapshot, StoreError

from .conftest import CHILD, FileSizeLimit, new_events


async def test_the_database_is_wal_with_strict_tables(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "db")
    log = await store.open("s1", created_at=5)
    log.append([NewEvent("note", b'{"a": 1,  "b":"\xc3\xa9"}', 7)])
    await store.close()
    conn = sqlite3.connect(tmp_path / "db")
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    tables = dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'"))
    assert set(tables) == {"sessions", "events", "snapshots", "wakes"}
    assert all("STRICT" in sql for sql in tables.values())
    assert conn.execute("SELECT session_id, seq, type, time, data FROM events").fetchall() == [
        ("s1", 0, "note", 7, b'{"a": 1,  "b":"\xc3\xa9"}')
    ]
    conn.close()


def test_synchronous_must_keep_flush_a_barrier(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="synchronous"):
        SqliteStore(tmp_path / "db", synchronous="OFF")


async def test_a_failed_commit_keeps_everything_queued(
    tmp_path: Path, fsize_limit: FileSizeLimit
) -> None:
    store = SqliteStore(tmp_path / "db")
    first = await store.open("s1", created_at=5)
    second = await store.open("s2", created_at=5)
    first.append(new_events(2))
    await first.flush()
    wal = tmp_path / "db-wal"
    first.append([NewEvent("pad", b'"' + b"x" * 20_000 + b'"', 1)])
    second.append(new_events(1))
    fsize_limit.cap(wal.stat().st_size)
    with pytest.raises(StoreError, match="flush failed"):
        await first.flush()
    with pytest.raises(StoreError, match="flush failed"):
        await second.flush()
    assert first.length == 3
    assert [item.seq for item in first.events()] == [0, 1, 2]
    fsize_limit.lift()
    await second.flush()  # one round commits both sessions' pending batches
    await first.flush()
    await store.close()
    again = SqliteStore(tmp_path / "db")
    assert (await again.open("s1", created_at=5)).length == 3
    assert (await again.open("s2", created_at=5)).length == 1
    await again.close()


async def test_a_snapshot_beyond_a_shortened_log_is_ignored(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "db")
    log = await store.open("s1", created_at=5)
    log.append(new_events(4))
    await log.save_snapshot(Snapshot(4, b"four"))
    await store.close()
    conn = sqlite3.connect(tmp_path / "db", isolation_level=None)
    conn.execute("DELETE FROM events WHERE seq >= 2")
    conn.close()
    again = SqliteStore(tmp_path / "db")
    log = await again.open("s1", created_at=5)
    assert log.length == 2
    assert log.load_snapshot() is None
    await again.close()


async def test_a_gap_in_the_events_raises(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "db")
    log = await store.open("s1", created_at=5)
    log.append(new_events(4))
    await store.close()
    conn = sqlite3.connect(tmp_path / "db", isolation_level=None)
    conn.execute("DELETE FROM events WHERE seq = 1")
    conn.close()
    again = SqliteStore(tmp_path / "db")
    with pytest.raises(StoreError, match="3 events but seq reaches 3"):
        await again.open("s1", created_at=5)
    await again.close()


async def test_closed_sessions_leave_no_lock_files(tmp_path: Path) -> None:
    locks = tmp_path / "db.locks"
    store = SqliteStore(tmp_path / "db")
    for n in range(50):
        log = await store.open(f"s{n}", created_at=5)
        if n % 2:
            await log.close()  # the others are closed by the store
    assert len(list(locks.iterdir())) == 25
    await store.close()
    assert not any(locks.iterdir())
    again = SqliteStore(tmp_path / "db")
    for n in range(50):
        await (await again.open(f"s{n}", created_at=5)).close()
    await again.close()
    assert not any(locks.iterdir())


async def test_a_lock_taken_on_a_removed_lock_file_is_no_lock(tmp_path: Path) -> None:
    """An opener that opened the lock file just before its holder removed it
    and locks it just after holds a lock on a file no longer named: it must
    not take that for the session while a third opener holds the new file."""
    path = tmp_path / "db.locks" / "s1.lock"
    first = SqliteStore(tmp_path / "db")
    log = await first.open("s1", created_at=5)
    early = os.open(path, os.O_RDWR)  # a second opener, between its open and its lock
    await log.close()  # removes the file, then lets go
    assert not path.exists()
    third = SqliteStore(tmp_path / "db")
    held = await third.open("s1", created_at=5)  # a new file, locked
    assert hold_named(path, early, "s1") is False  # locked the removed file: try again
    with pytest.raises(SessionLocked):
        lock_session(path, "s1")  # ... and the new file is held
    await held.close()
    await first.close()
    await third.close()
    assert not path.exists()


async def test_two_processes_never_hold_a_session_at_once(tmp_path: Path) -> None:
    """Two processes open and close one session as fast as they can, each
    creating a marker file (O_EXCL) while it holds the session: a second
    holder would find it there. Lock files are removed at every close."""
    db, marker = tmp_path / "db", tmp_path / "held"
    await SqliteStore(db).close()  # the database and its lock directory exist before the race
    args = [sys.executable, str(CHILD), "contend", "sqlite", str(db), "s1", "300", str(marker)]
    children = [
        await asyncio.create_subprocess_exec(*args, stdout=asyncio.subprocess.PIPE)
        for _ in range(2)
    ]
    outputs = [(await child.communicate())[0].decode() for child in children]
    assert [child.returncode for child in children] == [0, 0], outputs
    held = [int(stdout.split()[1]) for stdout in outputs]
    assert sum(held) > 0, outputs
    assert not any((tmp_path / "db.locks").iterdir())
