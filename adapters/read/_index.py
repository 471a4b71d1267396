"""Reading an embedded store's wake index for the read model, read-only: the
SQLite store's ``wakes`` table on the read model's own connection, or a
JSONL directory's ``.wake.db`` opened with ``mode=ro`` (never created,
never written; absent, a symbolic link or unreadable: no index, and the
read model reads every session as it did before the index)."""

from __future__ import annotations

import sqlite3
import time
from contextlib import closing
from pathlib import Path

from tickler.adapters.stores._files import require_sqlite_files
from tickler.adapters.stores._wake_file import FILE_NAME
from tickler.adapters.stores._wakes import WakeRow
from tickler.shell import StoreError

Rows = dict[str, WakeRow]


def rows_of(conn: sqlite3.Connection) -> Rows:
    """Every row of the ``wakes`` table (raises sqlite3.Error without one)."""
    return {
        str(found[0]): WakeRow(*found)
        for found in conn.execute(
            "SELECT session_id, next_due_at, holder, failures, size, set_aside FROM wakes"
        )
    }


def connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that cannot write ``path`` (SQLite's ``mode=ro``)."""
    require_sqlite_files(path)  # SQLite's own open of a FIFO would wait for a writer
    uri = path.absolute().as_uri() + "?mode=ro"
    return sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)


def jsonl_rows(directory: Path) -> Rows | None:
    """The rows of ``<directory>/.wake.db``, or None when there is no index
    the read model can use."""
    path = directory / FILE_NAME
    try:
        if path.is_symlink() or not path.is_file():
            return None
        with closing(connect_read_only(path)) as conn:
            return rows_of(conn)
    except (OSError, sqlite3.Error, StoreError):  # a FIFO beside it too: no usable index
        return None


def passed_ms(now_ms: int) -> int:
    """The instant up to which a wake has passed for a query at ``now_ms``:
    the later of it and the wall clock (a waiting follow-up's wake is the
    instant it was put in the outbox, which a query's ``now`` in the past
    may precede)."""
    return max(now_ms, time.time_ns() // 1_000_000)
