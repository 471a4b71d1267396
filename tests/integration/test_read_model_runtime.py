"""The read model over sessions the real runtime wrote (open_session with a
delivery target that fails, then works), on JSONL, SQLite and
PostgreSQL: the failing follow-up, its failure count as each store keeps
it, then the delivery and its lateness. (Written at instants the real
clock gives: every check waits on an event, with a generous timeout.)"""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta
from pathlib import Path

import pytest

from tickler import FollowUp, delivery_target, open_session
from tickler.adapters import open_read_model

from .conftest import store_path
from .pgsupport import PgSchema, pg_schema
from .read_support import open_store

__all__ = ["pg_schema"]  # the fixture, imported for pytest


@pytest.fixture(params=["jsonl", "sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str, str]:
    kind = str(request.param)
    if kind == "postgres":
        pg: PgSchema = request.getfixturevalue("pg_schema")
        return kind, pg.dsn, pg.schema
    return kind, str(store_path(kind, tmp_path)), "tickler"


class Target:
    """Refuses the first ``refuse`` hand-overs; ``seen`` is set at the
    ``until``-th call. ``deliver`` is the target function."""

    def __init__(self, refuse: int, until: int) -> None:
        self.calls = 0
        self.seen = asyncio.Event()

        async def deliver(message: FollowUp, session: str) -> None:
            self.calls += 1
            if self.calls >= until:
                self.seen.set()
            if self.calls <= refuse:
                raise RuntimeError("target down")

        self.deliver = deliver


async def test_failing_then_delivered_as_the_runtime_wrote_it(
    backend: tuple[str, str, str],
) -> None:
    kind, source, schema = backend
    store = open_store(kind, source, schema)
    try:
        failing = Target(refuse=3, until=3)
        async with open_session(store, "u1", host=delivery_target(function=failing.deliver)) as s:
            created = await s.schedule("pay rent", after=timedelta(seconds=1))
            await s.schedule("later", after=timedelta(days=1))
            await asyncio.wait_for(failing.seen.wait(), timeout=60)
        # The block let the third attempt finish and recorded it.
        async with open_read_model(source, schema=schema) as model:
            now = time.time_ns() // 1_000_000
            stuck = await model.reminders(now_ms=now, failing=True)
            rows = await model.deliveries()
        assert [(v.id, v.outbox) for v in stuck] == [(created.id, "failing")]
        # Every store's failure index (PostgreSQL's session row, the
        # embedded stores' wake index row) counts every failure; the logs
        # got the 1st and the 2nd.
        assert stuck[0].failures == 3
        assert [(r.status, r.reminder_ids) for r in rows] == [("failing", (created.id,))]

        working = Target(refuse=0, until=1)
        async with open_session(store, "u1", host=delivery_target(function=working.deliver)) as s:
            await asyncio.wait_for(working.seen.wait(), timeout=60)
        async with open_read_model(source, schema=schema) as model:
            now = time.time_ns() // 1_000_000
            left = await model.reminders(now_ms=now)
            rows = await model.deliveries()
        assert [(v.prompt, v.outbox, v.failures) for v in left] == [("later", "idle", 0)]
        assert [(r.status, r.reminder_ids) for r in rows] == [("delivered", (created.id,))]
        delivered = rows[0]
        assert delivered.delivered_ms is not None
        assert delivered.lateness_ms == delivered.delivered_ms - delivered.due_ms
        # What the log recorded before it was taken: the 1st and 2nd.
        assert delivered.failures == 2
    finally:
        await store.close()
