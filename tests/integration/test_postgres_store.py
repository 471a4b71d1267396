"""The store contract (tickler.testing) on the real PostgreSQL: each test
in a fresh schema of its own (``pg_schema``), dropped after."""

from __future__ import annotations

import psycopg
import pytest

from tickler.shell._ports import SessionStore
from tickler.testing import DurableStoreBackend, DurableStoreContract

from .conftest import CHILD
from .pgsupport import PgSchema, pg_schema

__all__ = ["pg_schema"]  # the fixture, imported for pytest

_TABLES = ("sessions", "events", "snapshots", "migrations")


class PgBackend:
    """A schema as contract storage; every ``open_store`` is a new store
    (a new pool and lease owner) over it."""

    def __init__(self, schema: PgSchema) -> None:
        self.schema = schema

    async def open_store(self) -> SessionStore:
        return self.schema.store()

    async def footprint(self) -> object:
        """Every table of the schema and every row in it (the lease columns
        included: a refused open must not even take a lease)."""
        found: dict[str, list[tuple[object, ...]]] = {}
        async with await psycopg.AsyncConnection.connect(self.schema.dsn, autocommit=True) as conn:
            cursor = await conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s"
                " ORDER BY table_name",
                (self.schema.schema,),
            )
            tables = [str(row[0]) for row in await cursor.fetchall()]
            for table in tables:
                order = "version" if table == "migrations" else "1"
                columns = "version" if table == "migrations" else "*"  # not applied_at
                cursor = await conn.execute(
                    f"SELECT {columns} FROM {self.schema.schema}.{table} ORDER BY {order}"
                )
                found[table] = await cursor.fetchall()
        return found

    def child_spec(self) -> tuple[str, str]:
        """``store_child.py``'s opener takes ``SCHEMA:DSN``."""
        return (f"{CHILD}:postgres_store", f"{self.schema.schema}:{self.schema.dsn}")


class TestPostgresStoreContract(DurableStoreContract):
    @pytest.fixture
    def backend(self, pg_schema: PgSchema) -> DurableStoreBackend:
        return PgBackend(pg_schema)

    async def test_the_footprint_sees_every_table(self, backend: DurableStoreBackend) -> None:
        # The refusal checks compare footprints: they prove something only
        # if a session's rows show up in it.
        empty = await backend.footprint()
        assert isinstance(empty, dict)
        assert set(empty) == set(_TABLES)
        store = await backend.open_store()
        log = await store.open("s1", created_at=5)
        log.append([])
        await log.close()
        await store.close()
        assert await backend.footprint() != empty
