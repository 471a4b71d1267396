"""What only the SQLite store promises: WAL, STRICT tables, verbatim data,
and honest flushes when a commit fails."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tickler.adapters.stores.sqlite import SqliteStore
from tickler.shell.ports import NewEvent, Snapshot, StoreError

from .conftest import FileSizeLimit, new_events


async def test_the_database_is_wal_with_strict_tables(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "db")
    log = await store.open("s1", created_at=5)
    log.append([NewEvent("note", b'{"a": 1,  "b":"\xc3\xa9"}', 7)])
    await store.close()
    conn = sqlite3.connect(tmp_path / "db")
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    tables = dict(conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'"))
    assert set(tables) == {"sessions", "events", "snapshots"}
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
