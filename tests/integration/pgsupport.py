"""The real PostgreSQL for tests: a fresh, migrated schema per test.

The server is the local one (``.ci/run`` starts it when it is down); set
``TICKLER_TEST_DSN`` to use another. When it cannot be reached the tests
fail with that reason: they are never skipped silently.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass

import psycopg
import pytest

from tickler.adapters.stores._postgres import PostgresStore
from tickler.adapters.stores._postgres_schema import migrate

DSN = os.environ.get("TICKLER_TEST_DSN", "host=127.0.0.1 port=5432 user=postgres dbname=test")
_COUNTER = itertools.count()
FIGURES: dict[str, float] = {}
"""Figures a test reports (the chaos test's counts); printed in the summary."""


@dataclass(frozen=True)
class PgSchema:
    """A migrated schema that exists for one test."""

    dsn: str
    schema: str

    def store(self, *, lease_s: float = 60.0, pool_size: int = 4) -> PostgresStore:
        return PostgresStore(self.dsn, schema=self.schema, lease_s=lease_s, pool_size=pool_size)

    def query(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        """Run ``sql`` (``{s}`` is the schema) on a connection of its own."""
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            cursor = conn.execute(sql.format(s=self.schema), params)
            return cursor.fetchall() if cursor.description is not None else []


def fresh_schema_name() -> str:
    return f"t_{os.getpid()}_{next(_COUNTER)}"


def drop_schema(dsn: str, schema: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@pytest.fixture
def pg_schema() -> Iterator[PgSchema]:
    schema = fresh_schema_name()
    try:
        migrate(DSN, schema)
    except Exception as exc:  # noqa: BLE001 - said plainly, never skipped
        pytest.fail(f"PostgreSQL at {DSN!r} is not usable ({exc}); start it (see .ci/run)")
    try:
        yield PgSchema(DSN, schema)
    finally:
        drop_schema(DSN, schema)
