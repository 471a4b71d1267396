"""One writer per session on PostgreSQL, tried hard: a lease taken over
under a live holder, a group round with one lost session among many, the
event key itself, and a close that races a round in flight."""

from __future__ import annotations

import asyncio

import psycopg
import pytest

from tickler.adapters.stores._postgres import PostgresLog, PostgresStore, SessionLost
from tickler.shell._ports import NewEvent, SessionLocked, Snapshot, StoreError

from .conftest import new_events
from .pgsupport import PgSchema, pg_schema

__all__ = ["pg_schema"]


def tagged(writer: str, first: int, count: int) -> list[NewEvent]:
    """Events that say who wrote them."""
    return [
        NewEvent("note", f'{{"by":"{writer}","n":{first + i}}}'.encode(), 1_000 + first + i)
        for i in range(count)
    ]


def stored(pg: PgSchema, session_id: str) -> list[tuple[int, bytes]]:
    rows = pg.query(
        "SELECT seq, data FROM {s}.events WHERE session_id = %s ORDER BY seq", (session_id,)
    )
    return [(int(str(seq)), data) for seq, data in rows if isinstance(data, bytes)]


def row(pg: PgSchema, session_id: str) -> tuple[object, ...]:
    found = pg.query(
        "SELECT length, lease_owner, lease_token, next_due_at FROM {s}.sessions WHERE id = %s",
        (session_id,),
    )
    assert len(found) == 1
    return found[0]


def expire(pg: PgSchema, session_id: str) -> None:
    """The holder stalled past its lease (as if it stopped renewing)."""
    pg.query(
        "UPDATE {s}.sessions SET lease_until = now() - interval '1 second' WHERE id = %s",
        (session_id,),
    )


@pytest.mark.parametrize("newcomer_writes_first", [True, False], ids=["ahead", "token-only"])
async def test_two_writers_never_both_extend_a_session(
    pg_schema: PgSchema, newcomer_writes_first: bool
) -> None:
    # "token-only": the newcomer has written nothing yet when the stale
    # holder flushes, so the stored length still matches the holder's: only
    # the fencing token can refuse it.
    first, second = pg_schema.store(), pg_schema.store()
    stale = await first.open("s1", created_at=5)
    stale.append(tagged("A", 0, 3))
    await stale.flush()
    stale.append(tagged("A", 3, 2))  # pending when the lease is lost
    expire(pg_schema, "s1")

    fresh = await second.open("s1", created_at=5)
    assert fresh.length == 3
    if newcomer_writes_first:
        fresh.append(tagged("B", 3, 2))
        await fresh.flush()

    with pytest.raises(SessionLost, match=r"'s1' was taken over .* open it again"):
        await stale.flush()
    assert stale.lost is not None
    with pytest.raises(SessionLost):
        stale.append(tagged("A", 5, 1))
    with pytest.raises(SessionLost):
        await stale.flush()
    with pytest.raises(SessionLost):  # nor a snapshot ahead of the new writer's state
        await stale.save_snapshot(Snapshot(3, b"A's view"))

    if not newcomer_writes_first:
        fresh.append(tagged("B", 3, 2))
        await fresh.flush()
    rows = stored(pg_schema, "s1")
    assert [seq for seq, _ in rows] == [0, 1, 2, 3, 4]  # contiguous, each seq once
    assert [b'"by":"B"' in data for _, data in rows] == [False, False, False, True, True]
    assert row(pg_schema, "s1")[0] == 5
    assert pg_schema.query("SELECT count(*) FROM {s}.snapshots") == [(0,)]

    # The loser re-reads by opening again: refused while the winner holds it,
    # then it sees the winner's events (no close of the lost handle needed).
    with pytest.raises(SessionLocked):
        await first.open("s1", created_at=5)
    await fresh.close()
    reread = await first.open("s1", created_at=5)
    assert reread.length == 5
    assert [bytes(e.data) for e in reread.events()] == [data for _, data in rows]
    reread.append(tagged("A", 5, 1))
    await reread.flush()
    assert [seq for seq, _ in stored(pg_schema, "s1")] == list(range(6))
    await stale.close()  # a lost handle closes quietly and releases nothing
    assert row(pg_schema, "s1")[1] == first.owner
    await first.close()
    await second.close()


async def test_a_stale_holder_cannot_move_the_wake_index(pg_schema: PgSchema) -> None:
    first, second = pg_schema.store(), pg_schema.store()
    stale = await first.open("s1", created_at=5)
    stale.set_next_wake(5_000)
    await stale.flush()
    expire(pg_schema, "s1")
    fresh = await second.open("s1", created_at=5)
    stale.set_next_wake(1_000)  # no events: a wake-only round is fenced too
    with pytest.raises(SessionLost):
        await stale.flush()
    assert row(pg_schema, "s1")[3] == 5_000
    await fresh.close()
    await first.close()
    await second.close()


async def test_a_stale_renewal_marks_the_log_lost(pg_schema: PgSchema) -> None:
    # A short lease: the holder's renewer finds the token moved and says so
    # before any flush does.
    first, second = pg_schema.store(lease_s=0.6), pg_schema.store()
    stale = await first.open("s1", created_at=5)
    expire(pg_schema, "s1")
    fresh = await second.open("s1", created_at=5)
    for _ in range(200):  # renewals every 0.2 s; generous bound
        if stale.lost is not None:
            break
        await asyncio.sleep(0.05)
    assert stale.lost is not None
    assert "taken over" in stale.lost
    with pytest.raises(SessionLost):
        stale.append(new_events(1))
    await fresh.close()
    await first.close()
    await second.close()


def test_the_event_key_refuses_a_second_write_of_a_seq(pg_schema: PgSchema) -> None:
    insert = (
        "INSERT INTO {s}.events (session_id, seq, type, time, data) VALUES (%s, %s, %s, %s, %s)"
    )
    pg_schema.query(insert, ("s1", 0, "note", 1, b"{}"))
    with pytest.raises(psycopg.errors.UniqueViolation, match="events_pkey"):
        pg_schema.query(insert, ("s1", 0, "note", 2, b'{"again":1}'))
    assert pg_schema.query("SELECT count(*), max(time) FROM {s}.events") == [(1, 1)]


class RoundCountingStore(PostgresStore):
    """Counts the group-commit rounds (each is one SQL statement)."""

    rounds = 0

    async def _commit_round(self) -> None:
        self.rounds += 1
        await super()._commit_round()


async def test_one_round_commits_the_others_and_nothing_of_a_lost_session(
    pg_schema: PgSchema,
) -> None:
    store = RoundCountingStore(pg_schema.dsn, schema=pg_schema.schema)
    other = pg_schema.store()
    names = [f"s{index}" for index in range(6)]
    logs = [await store.open(name, created_at=5) for name in names]
    for log in logs:
        log.append(tagged("A", 0, 2))
        log.set_next_wake(7_000)
    await logs[0].flush()  # one round for all six
    assert store.rounds == 1
    for log in logs:
        log.append(tagged("A", 2, 3))
        log.set_next_wake(9_000)
    expire(pg_schema, "s3")
    taker = await other.open("s3", created_at=5)

    outcomes = await asyncio.gather(*(log.flush() for log in logs), return_exceptions=True)
    assert store.rounds == 2  # the six flushes shared one round
    assert [type(o).__name__ for o in outcomes] == [
        "NoneType",
        "NoneType",
        "NoneType",
        "SessionLost",
        "NoneType",
        "NoneType",
    ]
    for name in names:
        length, _, _, wake = row(pg_schema, name)
        if name == "s3":
            assert [seq for seq, _ in stored(pg_schema, name)] == [0, 1]
            assert (length, wake) == (2, 7_000)  # the first round's, nothing of the second
        else:
            assert [seq for seq, _ in stored(pg_schema, name)] == [0, 1, 2, 3, 4]
            assert (length, wake) == (5, 9_000)
    await taker.close()
    await store.close()
    await other.close()


async def test_a_close_while_a_round_is_in_flight_still_releases(pg_schema: PgSchema) -> None:
    store = pg_schema.store()
    log: PostgresLog = await store.open("s1", created_at=5)
    log.append(new_events(2))
    flushing = asyncio.create_task(log.flush())
    await asyncio.sleep(0)  # the round starts with the release not asked for yet
    await asyncio.sleep(0)
    log.set_next_wake(4_000)  # also set while that round is in flight
    await log.close()
    await flushing
    length, owner, _, wake = row(pg_schema, "s1")
    assert (length, owner, wake) == (2, None, 4_000)
    again = pg_schema.store()
    reopened = await again.open("s1", created_at=5)  # not locked for a lease period
    assert reopened.length == 2
    await again.close()
    await store.close()


async def test_a_closed_log_says_closed_not_taken_over(pg_schema: PgSchema) -> None:
    store = pg_schema.store()
    log = await store.open("s1", created_at=5)
    log.append(new_events(2))
    await log.close()
    with pytest.raises(StoreError, match="closed") as refused:
        await log.save_snapshot(Snapshot(2, b"late"))
    assert not isinstance(refused.value, SessionLost)
    assert log.lost is None
    assert pg_schema.query("SELECT count(*) FROM {s}.snapshots") == [(0,)]
    await store.close()


async def test_a_round_committed_but_unconfirmed_is_not_written_twice(pg_schema: PgSchema) -> None:
    # A round's COMMIT happened but its reply was lost (the connection died
    # just then): the database holds a prefix of the handle's pending batch,
    # under the handle's own lease. Made here in SQL, exactly as that round
    # writes it. The next flush completes the batch, each seq once.
    store = pg_schema.store()
    log = await store.open("s1", created_at=5)
    log.append(tagged("A", 0, 3))
    await log.flush()
    unconfirmed = log.append(tagged("A", 3, 2))
    pg_schema.query(
        "INSERT INTO {s}.events (session_id, seq, type, time, data)"
        " SELECT 's1', seq, type, time, data"
        " FROM unnest(%s::bigint[], %s::text[], %s::bigint[], %s::bytea[])"
        "  AS e(seq, type, time, data)",
        (
            [e.seq for e in unconfirmed],
            [e.type for e in unconfirmed],
            [e.time for e in unconfirmed],
            [bytes(e.data) for e in unconfirmed],
        ),
    )
    pg_schema.query("UPDATE {s}.sessions SET length = 5 WHERE id = 's1'")
    log.append(tagged("A", 5, 1))  # appended since
    await log.flush()
    assert log.lost is None
    rows = stored(pg_schema, "s1")
    assert rows == [(e.seq, bytes(e.data)) for e in log.events()]
    assert [seq for seq, _ in rows] == list(range(6))
    assert row(pg_schema, "s1")[0] == 6
    await store.close()


@pytest.mark.parametrize("moved", [2, -1], ids=["grew", "shrank"])
async def test_a_log_moved_outside_the_store_makes_its_holder_lost(
    pg_schema: PgSchema, moved: int
) -> None:
    # Someone edited the session by hand under a live lease: its stored
    # length is neither where the handle's batch starts nor inside it.
    store = pg_schema.store()
    log = await store.open("s1", created_at=5)
    log.append(tagged("A", 0, 3))
    await log.flush()
    pg_schema.query("UPDATE {s}.sessions SET length = length + %s WHERE id = 's1'", (moved,))
    log.append(tagged("A", 3, 1))
    with pytest.raises(SessionLost):
        await log.flush()
    assert [seq for seq, _ in stored(pg_schema, "s1")] == [0, 1, 2]  # nothing of the batch
    assert row(pg_schema, "s1")[0] == 3 + moved
    await store.close()


async def test_an_expired_lease_writes_nothing_even_when_nobody_took_it(
    pg_schema: PgSchema,
) -> None:
    # The holder stalled past its lease and nobody has claimed the session
    # yet: the token is still its own, but the lease is over, so its late
    # commit, snapshot and renewal are all refused (no write after expiry).
    store = pg_schema.store(lease_s=0.6)
    stale = await store.open("s1", created_at=5)
    stale.append(tagged("A", 0, 2))
    stale.set_next_wake(7_000)
    await stale.flush()
    stale.append(tagged("A", 2, 1))
    stale.set_next_wake(1_000)
    expire(pg_schema, "s1")
    before = row(pg_schema, "s1")
    with pytest.raises(SessionLost):
        await stale.flush()
    with pytest.raises(SessionLost):
        await stale.save_snapshot(Snapshot(2, b"late"))
    assert [seq for seq, _ in stored(pg_schema, "s1")] == [0, 1]
    assert row(pg_schema, "s1") == before  # length 2, the old wake, the expired lease
    assert pg_schema.query("SELECT count(*) FROM {s}.snapshots") == [(0,)]
    await stale.close()  # lost: releases nothing either

    # A renewal does not bring an expired lease back.
    other = await store.open("s2", created_at=5)
    expire(pg_schema, "s2")
    for _ in range(200):  # renewals every 0.2 s; generous bound
        if other.lost is not None:
            break
        await asyncio.sleep(0.05)
    assert other.lost is not None
    lease_until = pg_schema.query("SELECT lease_until < now() FROM {s}.sessions WHERE id = 's2'")
    assert lease_until == [(True,)]
    await store.close()
