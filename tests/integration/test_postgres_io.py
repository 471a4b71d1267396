"""Reads past the in-memory cache, and a database that goes away under the
store: the flush fails with StoreError, keeps its batch, and a later flush
writes it exactly once."""

from __future__ import annotations

import asyncio
import time

import psycopg
import pytest

from tickler.shell._ports import StoreError

from .conftest import new_events
from .pgsupport import PgSchema, pg_schema

__all__ = ["pg_schema"]


def summary(events: object) -> list[tuple[int, bytes]]:
    return [(e.seq, bytes(e.data)) for e in events]  # type: ignore[attr-defined]


def expected(count: int, start: int = 0) -> list[tuple[int, bytes]]:
    return [(seq, item.data) for seq, item in enumerate(new_events(count))][start:]


def terminate_store_connections(pg: PgSchema, *, waiting_only: bool = False) -> int:
    """End every server connection that has run a statement on this schema
    (the store's; the test's own connections never do), as a restart would;
    the number ended."""
    rows = pg.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
        " WHERE pid <> pg_backend_pid() AND datname = current_database()"
        " AND query LIKE %s AND (NOT %s OR wait_event_type = 'Lock')",
        (f"%{pg.schema}.%", waiting_only),
    )
    return sum(1 for (done,) in rows if done)


async def test_events_read_back_past_the_cache(pg_schema: PgSchema) -> None:
    store = pg_schema.store()
    log = await store.open("s1", created_at=5)
    total = 4_500
    for first in range(0, total, 500):
        log.append(new_events(500, start=first))
        await log.flush()
    log.append(new_events(3, start=total))  # pending, from memory
    assert summary(log.events()) == expected(total + 3)
    for start in (0, 999, 1_000, 1_001, 3_499, 3_500, 4_499, total, total + 2):
        assert summary(log.events(start)) == expected(total + 3, start)
    await log.close()
    assert pg_schema.query("SELECT length FROM {s}.sessions") == [(total + 3,)]
    await store.close()


async def test_connections_ended_while_idle_are_replaced_before_use(pg_schema: PgSchema) -> None:
    store = pg_schema.store()
    log = await store.open("s1", created_at=5)
    log.append(new_events(4_200))
    await log.flush()
    assert summary(log.events(0))[:3] == expected(3)  # the read connection is up
    await asyncio.sleep(1.5)  # quiet for longer than the store's idle check (1 s)
    assert terminate_store_connections(pg_schema) >= 2  # the pool's and the reader's
    assert summary(log.events(0)) == expected(4_200)  # a read is repeated on a new one
    log.append(new_events(1, start=4_200))
    await log.flush()  # an idle pooled connection is checked: no failure at all
    await log.close()
    assert pg_schema.query("SELECT length, lease_owner FROM {s}.sessions") == [(4_201, None)]
    await store.close()


async def wait_for_lock_waiter(pg: PgSchema) -> None:
    deadline = time.monotonic() + 60
    while not pg.query(
        "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE %s",
        (f"%{pg.schema}.sessions%",),
    ):
        assert time.monotonic() < deadline, "the commit never waited on the row lock"
        await asyncio.sleep(0.02)


async def test_a_flush_fails_when_the_database_goes_and_retries_after(
    pg_schema: PgSchema,
) -> None:
    store = pg_schema.store(pool_size=3)
    log = await store.open("s1", created_at=5)
    log.append(new_events(3))
    await log.flush()

    # The commit is cut mid-statement: it waits on a row lock the test
    # holds, and its connection is ended meanwhile.
    async with await psycopg.AsyncConnection.connect(pg_schema.dsn) as blocker:
        await blocker.execute(f"SELECT 1 FROM {pg_schema.schema}.sessions FOR UPDATE")
        log.append(new_events(2, start=3))
        flushing = asyncio.create_task(log.flush())
        await wait_for_lock_waiter(pg_schema)
        assert terminate_store_connections(pg_schema, waiting_only=True) == 1
        with pytest.raises(StoreError, match="flush failed"):
            await flushing
        await blocker.rollback()
    assert log.length == 5  # the batch is kept
    assert log.lost is None
    assert pg_schema.query("SELECT length FROM {s}.sessions") == [(3,)]

    # Every other connection ends too, as in a server restart: each broken
    # idle one may fail one flush before the pool has fresh ones.
    terminate_store_connections(pg_schema)
    failures = 0
    while True:
        try:
            await log.flush()
            break
        except StoreError:
            failures += 1
            assert failures <= 3, "the pool did not reconnect"
    rows = pg_schema.query("SELECT seq FROM {s}.events ORDER BY seq")
    assert [int(str(seq)) for (seq,) in rows] == [0, 1, 2, 3, 4]  # written once
    assert summary(log.events()) == expected(5)
    log.append(new_events(1, start=5))
    await log.close()
    assert pg_schema.query("SELECT length, lease_owner FROM {s}.sessions") == [(6, None)]
    await store.close()
