"""claim_due and leases on PostgreSQL: concurrent claimers get disjoint
sessions, a live holder (renewing) is never claimed, an expired lease is,
and a claimed log comes back loaded."""

from __future__ import annotations

import asyncio
import time

import pytest

from tickler.adapters.stores._postgres import PostgresStore, SessionLost
from tickler.shell._ports import Snapshot

from .conftest import new_events
from .pgsupport import PgSchema, pg_schema

__all__ = ["pg_schema"]

NOW = 1_000_000


async def seed_wakes(store: PostgresStore, wakes: dict[str, int | None]) -> None:
    """Sessions with these wakes, released (as a process leaves them)."""
    for session_id, wake in wakes.items():
        log = await store.open(session_id, created_at=5)
        log.set_next_wake(wake)
        await log.close()


def lease_until(pg: PgSchema, session_id: str) -> object:
    return pg.query("SELECT lease_until FROM {s}.sessions WHERE id = %s", (session_id,))[0][0]


async def test_concurrent_claimers_get_disjoint_sessions(pg_schema: PgSchema) -> None:
    seeder = pg_schema.store()
    due = {f"due{index:02d}": NOW - index for index in range(40)}
    await seed_wakes(seeder, {**due, "later": NOW + 1, "never": None})
    await seeder.close()

    claimers = [pg_schema.store() for _ in range(4)]
    claimed: list[list[str]] = [[] for _ in claimers]

    async def claim(index: int) -> int:
        logs = await claimers[index].claim_due(3, NOW)
        assert len(logs) <= 3
        claimed[index].extend(log.header.id for log in logs)
        return len(logs)

    while sum(await asyncio.gather(*(claim(index) for index in range(len(claimers))))):
        pass
    everything = [session_id for ids in claimed for session_id in ids]
    assert sorted(everything) == sorted(due)  # each due session once; later/never not at all
    assert all(claimed)  # every claimer got some (they really raced)
    owners = pg_schema.query("SELECT id, lease_owner FROM {s}.sessions WHERE id LIKE 'due%%'")
    by_owner = {str(i): str(o) for i, o in owners}
    for store, ids in zip(claimers, claimed, strict=True):
        assert {by_owner[i] for i in ids} <= {store.owner}
    for store in claimers:
        await store.close()
    assert pg_schema.query("SELECT count(*) FROM {s}.sessions WHERE lease_owner IS NOT NULL") == [
        (0,)
    ]


async def test_earliest_first_within_the_limit(pg_schema: PgSchema) -> None:
    seeder = pg_schema.store()
    await seed_wakes(seeder, {"c": NOW - 1, "a": NOW - 30, "b": NOW - 20, "d": NOW})
    await seeder.close()
    store = pg_schema.store()
    first = await store.claim_due(2, NOW)
    assert sorted(log.header.id for log in first) == ["a", "b"]
    assert await store.claim_due(0, NOW) == []
    rest = await store.claim_due(10, NOW)  # its own open sessions are not claimed again
    assert sorted(log.header.id for log in rest) == ["c", "d"]
    assert await store.claim_due(10, NOW) == []
    await store.close()


async def test_a_live_holder_is_never_claimed_and_an_expired_lease_is(
    pg_schema: PgSchema,
) -> None:
    holder, claimer = pg_schema.store(), pg_schema.store()
    held = await holder.open("held", created_at=5)
    held.set_next_wake(NOW - 5)  # due, but held
    await held.flush()
    await seed_wakes(holder, {"free": NOW - 1})
    assert [log.header.id for log in await claimer.claim_due(10, NOW)] == ["free"]
    assert await claimer.claim_due(10, NOW) == []
    assert await claimer.next_due() is None  # a held session is not announced either

    pg_schema.query(  # the holder stalled past its lease
        "UPDATE {s}.sessions SET lease_until = now() - interval '1 second' WHERE id = 'held'"
    )
    assert await claimer.next_due() == NOW - 5
    taken = await claimer.claim_due(10, NOW)
    assert [log.header.id for log in taken] == ["held"]
    assert taken[0].token > held.token
    held.append(new_events(1))
    with pytest.raises(SessionLost):
        await held.flush()
    await holder.close()
    await claimer.close()


async def test_a_claimed_log_comes_back_loaded(pg_schema: PgSchema) -> None:
    writer = pg_schema.store()
    log = await writer.open("s1", created_at=77)
    log.append(new_events(6))
    await log.save_snapshot(Snapshot(4, b"through four"))
    log.append(new_events(3, start=6))
    log.set_next_wake(NOW - 1)
    log.defer(NOW - 1)  # one failed hand-over counted
    await log.close()
    await writer.close()

    store = pg_schema.store()
    (claimed,) = await store.claim_due(5, NOW)
    assert claimed.header.id == "s1"
    assert claimed.header.created_at == 77
    assert claimed.length == 9
    assert claimed.load_snapshot() == Snapshot(4, b"through four")
    assert [(e.seq, bytes(e.data)) for e in claimed.events()] == [
        (seq, item.data) for seq, item in enumerate(new_events(9))
    ]
    assert claimed.failures == 1
    assert claimed.stored_wake == NOW - 1
    assert claimed.lease_left() > 0
    claimed.append(new_events(1, start=9))
    claimed.delivered_all()
    claimed.set_next_wake(None)
    await claimed.close()
    assert pg_schema.query(
        "SELECT length, failures, next_due_at, lease_owner FROM {s}.sessions"
    ) == [(10, 0, None, None)]
    await store.close()


async def test_renewed_leases_keep_a_held_session_from_claims(pg_schema: PgSchema) -> None:
    # A lease of 6 s renewed every third of it: held for longer than a lease
    # (observed as lease_until moving), never claimable meanwhile. The lease
    # is long next to its renewal period, so a busy machine that delays one
    # renewal by seconds does not let the lease lapse (no luck involved).
    holder, claimer = pg_schema.store(lease_s=6.0), pg_schema.store()
    held = await holder.open("held", created_at=5)
    held.set_next_wake(NOW - 5)
    await held.flush()
    seen = {lease_until(pg_schema, "held")}
    started = time.monotonic()
    while len(seen) < 5:  # four renewals: longer than one lease period
        assert time.monotonic() - started < 60, f"only {len(seen) - 1} renewals in 60 s"
        assert await claimer.claim_due(10, NOW) == []
        assert held.lost is None
        await asyncio.sleep(0.1)
        seen.add(lease_until(pg_schema, "held"))
    assert time.monotonic() - started > 6.0  # longer than one lease, by construction
    held.append(new_events(1))
    await held.flush()  # still the holder
    await holder.close()
    assert [log.header.id for log in await claimer.claim_due(10, NOW)] == ["held"]
    await claimer.close()
