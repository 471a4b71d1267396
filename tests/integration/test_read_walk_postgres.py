"""The PostgreSQL read model's walk (wake order, failing sessions, the
pause index) gives every cut that a read of every session gives, on the
same random sessions as the embedded stores' walk test."""

from __future__ import annotations

import random

import pytest

from tickler.adapters import open_read_model
from tickler.adapters.read import _postgres as _read_postgres

from .pgsupport import PgSchema, pg_schema
from .read_support import MIN, T0, Scribe
from .test_read_walk import NOW, assert_every_cut_is_the_full_reads, random_session

__all__ = ["pg_schema"]  # the fixture, imported for pytest


@pytest.mark.parametrize("seed", range(8))
async def test_every_cut_through_the_wake_order_equals_the_full_reads(
    pg_schema: PgSchema, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pages of 1 to 3 sessions or 500 (a stop after each page)."""
    monkeypatch.setattr(_read_postgres, "PAGE", (1, 2, 3, 500)[seed % 4])
    rng = random.Random(seed)
    store = pg_schema.store()
    try:
        for n in range(30):
            scribe = await random_session(store, f"s{n:02d}", rng)
            await scribe.log.close()
    finally:
        await store.close()
    async with open_read_model(pg_schema.dsn, schema=pg_schema.schema) as model:
        whole = await model.reminders(now_ms=NOW)
        assert model.problems == []
    assert {"scheduled", "paused"} <= {v.state for v in whole}
    await assert_every_cut_is_the_full_reads(pg_schema.dsn, pg_schema.schema)


async def test_a_follow_up_waiting_since_after_other_wakes_still_leads(pg_schema: PgSchema) -> None:
    """A reminder due at +10 min, put in the outbox late (+30 min) and
    waiting there: its session's wake is +30 min, after forty sessions
    due from +20 min. Sorted by due, it leads; a walk in wake order that
    stopped at its first page's bound missed it."""
    store = pg_schema.store()
    try:
        late = Scribe(await store.open("late", created_at=T0))
        await late.tool("schedule_create", {"prompt": "waiting", "after_seconds": 600}, T0)
        await late.dispatch(T0 + 30 * MIN)
        await late.log.close()
        for n in range(40):
            other = Scribe(await store.open(f"o{n:02d}", created_at=T0))
            args = {"prompt": f"o{n}", "after_seconds": 1200 + n}
            await other.tool("schedule_create", args, T0)
            await other.log.close()
    finally:
        await store.close()
    async with open_read_model(pg_schema.dsn, schema=pg_schema.schema) as model:
        first = await model.reminders(now_ms=NOW, limit=1)
        within = await model.reminders(now_ms=NOW, due_within_ms=0, limit=3)
    assert [v.prompt for v in first] == ["waiting"]
    assert [v.prompt for v in within] == ["waiting", "o0", "o1"]
