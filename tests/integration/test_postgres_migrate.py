"""The explicit migration on PostgreSQL: idempotent, safe concurrently, the
only way a schema comes to exist, and ``tickler db migrate`` answers in one
line with exit 0 (done) or 2 (refused)."""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest

from tickler.adapters.stores._postgres import PostgresStore
from tickler.adapters.stores._postgres_schema import (
    SCHEMA_VERSION,
    SchemaMissing,
    migrate,
    schema_name,
)
from tickler.shell._ports import StoreError

from .conftest import new_events
from .pgsupport import DSN, PgSchema, drop_schema, fresh_schema_name, pg_schema

__all__ = ["pg_schema"]

BAD_SCHEMAS: list[object] = [
    "",
    "Tickler",
    "1abc",
    "a-b",
    "a b",
    "x;drop",
    "a" * 59,  # its channel, + "_wake", would pass PostgreSQL's 63
    "a" * 64,
    "é",
    None,
    3,
]


@pytest.fixture
def bare() -> Iterator[PgSchema]:
    """A schema name nothing has created yet (dropped after, if made)."""
    schema = fresh_schema_name()
    try:
        yield PgSchema(DSN, schema)
    finally:
        drop_schema(DSN, schema)


def tables(pg: PgSchema) -> list[str]:
    rows = pg.query(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = %s"
        " ORDER BY table_name",
        (pg.schema,),
    )
    return [str(row[0]) for row in rows]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tickler.adapters.cli", "db", "migrate", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_migrate_is_idempotent(bare: PgSchema) -> None:
    assert migrate(bare.dsn, bare.schema) == (0, SCHEMA_VERSION)
    assert tables(bare) == ["events", "migrations", "sessions", "snapshots"]
    bare.query("INSERT INTO {s}.sessions (id, header) VALUES ('kept', '\\x7b7d')")
    assert migrate(bare.dsn, bare.schema) == (SCHEMA_VERSION, SCHEMA_VERSION)
    assert bare.query("SELECT id FROM {s}.sessions") == [("kept",)]  # nothing dropped
    assert bare.query("SELECT version FROM {s}.migrations") == [(SCHEMA_VERSION,)]


def test_concurrent_migrations_all_succeed(bare: PgSchema) -> None:
    results: list[tuple[int, int]] = []
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def run() -> None:
        start.wait()
        try:
            results.append(migrate(bare.dsn, bare.schema))
        except BaseException as exc:  # noqa: BLE001 - collected, asserted below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    assert sorted(results) == [(0, SCHEMA_VERSION)] + [(SCHEMA_VERSION, SCHEMA_VERSION)] * 7
    assert tables(bare) == ["events", "migrations", "sessions", "snapshots"]


def test_concurrent_cli_migrations_in_processes(bare: PgSchema) -> None:
    command = [sys.executable, "-m", "tickler.adapters.cli", "db", "migrate"]
    args = ["--dsn", bare.dsn, "--schema", bare.schema]
    children = [
        subprocess.Popen([*command, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(4)
    ]
    outputs = [child.communicate(timeout=120) for child in children]
    assert [child.returncode for child in children] == [0, 0, 0, 0], outputs
    said = sorted(out.decode().strip() for out, _ in outputs)
    assert said == [
        f"schema {bare.schema} is at version {SCHEMA_VERSION}: nothing to do",
        f"schema {bare.schema} is at version {SCHEMA_VERSION}: nothing to do",
        f"schema {bare.schema} is at version {SCHEMA_VERSION}: nothing to do",
        f"schema {bare.schema}: version 0 -> {SCHEMA_VERSION}",
    ]


def test_the_cli_twice_then_a_bad_dsn(bare: PgSchema) -> None:
    first = cli("--dsn", bare.dsn, "--schema", bare.schema)
    assert (first.returncode, first.stdout, first.stderr) == (
        0,
        f"schema {bare.schema}: version 0 -> {SCHEMA_VERSION}\n",
        "",
    )
    again = cli("--dsn", bare.dsn, "--schema", bare.schema)
    assert (again.returncode, again.stdout, again.stderr) == (
        0,
        f"schema {bare.schema} is at version {SCHEMA_VERSION}: nothing to do\n",
        "",
    )
    # No server there: exit 1, as for tickler worker; a DSN that does not parse: usage, 2.
    for bad, status, says in (
        ("host=127.0.0.1 port=1 user=postgres dbname=test connect_timeout=5", 1, "cannot connect"),
        ("nonsense", 2, "invalid PostgreSQL DSN"),
    ):
        refused = cli("--dsn", bad, "--schema", bare.schema)
        assert refused.returncode == status
        assert refused.stdout == ""
        assert refused.stderr.count("\n") == 1
        assert refused.stderr.startswith(f"tickler: error: {says}")
    refused = cli("--dsn", bare.dsn, "--schema", "Bad-Name")
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1
    assert "invalid schema name 'Bad-Name'" in refused.stderr


@pytest.mark.parametrize("bad", BAD_SCHEMAS, ids=repr)
def test_bad_schema_names_are_refused(bad: object) -> None:
    with pytest.raises(ValueError, match="invalid schema name"):
        schema_name(bad)
    with pytest.raises(ValueError, match="invalid schema name"):
        PostgresStore(DSN, schema=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="invalid schema name"):
        migrate(DSN, bad)  # type: ignore[arg-type]


def test_good_schema_names_pass() -> None:
    for good in ("tickler", "_x", "a" * 58, "t_1"):
        assert schema_name(good) == good


def accepted(name: str) -> bool:
    try:
        schema_name(name)
    except ValueError:
        return False
    return True


async def test_the_longest_accepted_schema_name_works_end_to_end() -> None:
    # Its NOTIFY channel is "<schema>_wake": it must fit PostgreSQL's names.
    longest = max(length for length in range(1, 80) if accepted("a" * length))
    schema = fresh_schema_name().ljust(longest, "x")
    migrate(DSN, schema)
    try:
        pg = PgSchema(DSN, schema)
        store = pg.store()
        log = await store.open("s1", created_at=5)
        log.set_next_wake(1_000)  # a nearer wake: this commit notifies
        log.append(new_events(1))
        await log.close()
        assert pg.query("SELECT length, next_due_at FROM {s}.sessions") == [(1, 1_000)]
        await store.close()
    finally:
        drop_schema(DSN, schema)


async def test_a_store_over_no_schema_says_to_migrate_then_works(bare: PgSchema) -> None:
    store = bare.store()
    with pytest.raises(SchemaMissing, match=f"run tickler db migrate .*--schema {bare.schema}"):
        await store.open("s1", created_at=5)
    with pytest.raises(SchemaMissing):  # again: the same clear answer, not a pool error
        await store.claim_due(1, 0)
    assert tables(bare) == []  # opening never creates the schema
    migrate(bare.dsn, bare.schema)
    log = await store.open("s1", created_at=5)  # the same store, once migrated
    log.append(new_events(2))
    await log.close()
    assert bare.query("SELECT length FROM {s}.sessions") == [(2,)]
    await store.close()


async def test_a_newer_schema_is_refused(pg_schema: PgSchema) -> None:
    pg_schema.query("INSERT INTO {s}.migrations (version) VALUES (%s)", (SCHEMA_VERSION + 1,))
    store = pg_schema.store()
    with pytest.raises(StoreError, match="newer than this tickler"):
        await store.open("s1", created_at=5)
    await store.close()
    with pytest.raises(StoreError, match="upgrade tickler"):
        migrate(pg_schema.dsn, pg_schema.schema)
