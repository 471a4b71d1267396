"""One read model over every store: every session's reminders and
deliveries, for ``tickler reminders``, ``tickler inspect`` and the dashboard.

It only reads: it never opens a session through its store, so it never
takes a session's lease (PostgreSQL), lock file (SQLite) or file lock
(JSONL), and never blocks a worker or an agent. What it shows is what the
store has committed (an agent's appends not yet flushed are not there).

``open_read_model(source)`` takes a JSONL store directory, an SQLite store
file or a PostgreSQL DSN (``postgresql://...`` or ``key=value`` words).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Final

from tickler.adapters.read._query import SORTS, ReadModel
from tickler.adapters.read._views import DeliveryView, ReminderView
from tickler.adapters.stores._files import open_regular
from tickler.shell import StoreError

__all__ = [
    "SORTS",
    "DeliveryView",
    "ReadModel",
    "ReminderView",
    "SourceError",
    "is_dsn",
    "open_read_model",
]

_SQLITE_MAGIC: Final = b"SQLite format 3\x00"
_KEYWORD_DSN: Final = re.compile(r"^\s*[a-z_]+\s*=")


class SourceError(StoreError, ValueError):
    """The source names no store the read model can read."""


def is_dsn(source: str) -> bool:
    """A PostgreSQL URI, or libpq ``key=value`` words naming no file."""
    if source.startswith(("postgresql://", "postgres://")):
        return True
    return bool(_KEYWORD_DSN.match(source)) and not Path(source).exists()


def is_sqlite_file(path: Path) -> bool:
    try:
        with open_regular(path) as file:  # a FIFO is no SQLite file, and never waited on
            return file.read(len(_SQLITE_MAGIC)) == _SQLITE_MAGIC
    except (OSError, StoreError):
        return False


def open_read_model(
    source: str, *, schema: str = "tickler"
) -> AbstractAsyncContextManager[ReadModel]:
    """The read model over ``source``: a JSONL store directory, an SQLite
    store file, or a PostgreSQL DSN (``schema`` names tickler's schema
    there). Raises :class:`SourceError` for anything else."""
    return _opened(source, schema)


@asynccontextmanager
async def _opened(source: str, schema: str) -> AsyncIterator[ReadModel]:
    if is_dsn(source):
        from tickler.adapters.read._postgres import PostgresReadModel

        model = await PostgresReadModel.connect(source, schema)
        try:
            yield model
        finally:
            await model.close()
        return
    from tickler.adapters.read._files import JsonlReadModel
    from tickler.adapters.read._sqlite import SqliteReadModel

    if _file_kind(source) == "directory":
        yield JsonlReadModel(Path(source))
    else:
        yield SqliteReadModel(Path(source))


def _file_kind(source: str) -> str:
    """``directory`` (a JSONL store) or ``sqlite``; SourceError otherwise."""
    path = Path(source)
    if path.is_dir():
        return "directory"
    if path.is_file() and is_sqlite_file(path):
        return "sqlite"
    if path.exists():
        raise SourceError(f"{source}: neither a JSONL store directory nor an SQLite store file")
    raise SourceError(f"{source}: no such file or directory (nor a postgresql:// DSN)")
