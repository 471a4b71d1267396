"""tickler's stores: one append-only log per session.

:class:`MemoryStore` (this process only), :class:`JsonlStore` (a directory
of JSONL files, the embedded default), :class:`SqliteStore` (one SQLite
file) and :class:`PostgresStore` (many processes, with ``tickler worker``;
needs the ``postgres`` extra, imported on first use).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from tickler._lazy import lazy_exports
from tickler.adapters.stores._files import CorruptStore, NotRegularFile, SymlinkRefused
from tickler.adapters.stores._jsonl import JsonlStore
from tickler.adapters.stores._memory import MemoryStore
from tickler.adapters.stores._sqlite import SqliteStore

if TYPE_CHECKING:
    from tickler.adapters.stores._postgres import CorruptSession, PostgresStore, SessionLost
    from tickler.adapters.stores._postgres_schema import SchemaMissing, migrate

# The PostgreSQL store needs psycopg (the postgres extra): imported on first use.
_LAZY: Final = {
    "PostgresStore": "tickler.adapters.stores._postgres",
    "SessionLost": "tickler.adapters.stores._postgres",
    "CorruptSession": "tickler.adapters.stores._postgres",
    "SchemaMissing": "tickler.adapters.stores._postgres_schema",
    "migrate": "tickler.adapters.stores._postgres_schema",
}

__all__ = [
    "CorruptSession",
    "CorruptStore",
    "JsonlStore",
    "MemoryStore",
    "NotRegularFile",
    "PostgresStore",
    "SchemaMissing",
    "SessionLost",
    "SqliteStore",
    "SymlinkRefused",
    "migrate",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _LAZY)
