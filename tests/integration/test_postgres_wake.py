"""The wake index (``sessions.next_due_at``) and its NOTIFY, on PostgreSQL,
driven by the real runtime: after every committed change the index is the
core's ``next_target`` of the committed log; ``now`` while a follow-up waits
in the outbox; NULL when nothing is pending."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

import psycopg
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tickler.adapters.stores._postgres import PostgresLog, PostgresStore
from tickler.core import fold, next_target
from tickler.core.wire._session import event
from tickler.shell._clock import VirtualClock
from tickler.shell._host import FollowUp, IdleClaim
from tickler.shell._runtime import ScheduleRuntime
from tickler.shell._timers import TimerHeap

from .conftest import new_events
from .pgsupport import PgSchema, pg_schema

__all__ = ["pg_schema"]

T0 = 1_785_931_200_000  # 2026-08-05T12:00:00.000Z


class _Claim:
    def __init__(self, host: GatedHost) -> None:
        self._host = host

    def release(self) -> None:
        self._host.claimed = False
        self._host.idle.set()


@dataclass
class GatedHost:
    """An idle agent whose ``followup`` waits until the test opens the gate."""

    gate: asyncio.Event = field(default_factory=asyncio.Event)
    offered: list[str] = field(default_factory=list)
    idle: asyncio.Event = field(default_factory=asyncio.Event)
    claimed: bool = False

    def __post_init__(self) -> None:
        self.idle.set()

    def claim_idle(self) -> IdleClaim | None:
        if self.claimed:
            return None
        self.claimed = True
        self.idle.clear()
        return _Claim(self)

    async def when_idle(self) -> None:
        await self.idle.wait()

    async def followup(self, message: FollowUp) -> None:
        self.offered.append(message.key)
        await self.gate.wait()


async def until(check: Callable[[], Awaitable[bool]], what: str, timeout_s: float = 30.0) -> None:
    """Wait for observed progress (real I/O is involved), with a generous bound."""
    deadline = time.monotonic() + timeout_s
    while not await check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.01)


async def index_and_log(pg: PgSchema, session_id: str) -> tuple[int | None, int | None]:
    """The stored wake, and ``next_target`` of the committed log."""
    async with await psycopg.AsyncConnection.connect(pg.dsn, autocommit=True) as conn:
        cursor = await conn.execute(
            f"SELECT next_due_at FROM {pg.schema}.sessions WHERE id = %s", (session_id,)
        )
        found = await cursor.fetchone()
        assert found is not None
        cursor = await conn.execute(
            f"SELECT seq, type, time, data FROM {pg.schema}.events WHERE session_id = %s"
            " ORDER BY seq",
            (session_id,),
        )
        rows = await cursor.fetchall()
    events = [event(kind, seq, at, bytes(data)) for seq, kind, at, data in rows]
    wake = found[0]
    return (None if wake is None else int(wake)), next_target(fold(events))


@contextlib.asynccontextmanager
async def runtime_on(
    store: PostgresStore, session_id: str, clock: VirtualClock, host: GatedHost
) -> AsyncIterator[tuple[ScheduleRuntime, PostgresLog]]:
    log = await store.open(session_id, created_at=T0)
    timers = TimerHeap(clock)
    runtime = ScheduleRuntime(log, host, clock, timers=timers)
    await runtime.start()
    try:
        yield runtime, log
    finally:
        host.gate.set()
        await runtime.dispose()
        await timers.close()
        await log.close()


async def call(runtime: ScheduleRuntime, name: str, args: dict[str, object]) -> dict[str, object]:
    answer: dict[str, object] = json.loads(await runtime.call_tool(name, args))
    assert "error" not in answer, answer
    assert "code" not in answer, answer
    return answer


async def test_the_index_follows_creates_deletes_and_deliveries(pg_schema: PgSchema) -> None:
    store = pg_schema.store()
    clock = VirtualClock(T0)
    host = GatedHost()
    async with runtime_on(store, "s1", clock, host) as (runtime, _):
        await runtime.settle()
        assert await index_and_log(pg_schema, "s1") == (None, None)  # nothing pending

        later = await call(runtime, "schedule_create", {"prompt": "b", "after_seconds": 600})
        assert await index_and_log(pg_schema, "s1") == (T0 + 600_000, T0 + 600_000)
        soon = await call(runtime, "schedule_create", {"prompt": "a", "after_seconds": 60})
        assert await index_and_log(pg_schema, "s1") == (T0 + 60_000, T0 + 60_000)
        every = await call(runtime, "schedule_create", {"prompt": "c", "every_seconds": 300})
        assert await index_and_log(pg_schema, "s1") == (T0 + 60_000, T0 + 60_000)
        await call(runtime, "schedule_delete", {"id": soon["id"]})
        assert await index_and_log(pg_schema, "s1") == (T0 + 300_000, T0 + 300_000)

        # Due: the delivery is appended and flushed, and while the host has
        # not taken it the index says "now" (the log's next target is later).
        await clock.advance(300_000)
        await until(lambda: asyncio.sleep(0, bool(host.offered)), "the hand-over")
        delivered_at = clock.now_ms()
        stored, target = await index_and_log(pg_schema, "s1")
        assert stored == delivered_at
        assert target is not None
        assert target > delivered_at
        assert runtime.pending_followups

        host.gate.set()  # taken: the index moves on to the next target

        async def moved_on() -> bool:
            stored, target = await index_and_log(pg_schema, "s1")
            return stored == target == T0 + 600_000

        await until(moved_on, "the index after the hand-over")
        await call(runtime, "schedule_delete", {"id": later["id"]})
        await call(runtime, "schedule_delete", {"id": every["id"]})
        assert await index_and_log(pg_schema, "s1") == (None, None)
    await store.close()


create_or_delete = st.one_of(
    st.tuples(st.just("create"), st.integers(1, 100_000)),
    st.tuples(st.just("every"), st.integers(300, 100_000)),
    st.tuples(st.just("delete"), st.integers(0, 20)),
)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=st.lists(create_or_delete, min_size=1, max_size=12))
def test_the_index_is_next_target_of_the_committed_log(
    pg_schema: PgSchema, ops: list[tuple[str, int]]
) -> None:
    # One schema for all examples (the fixture is per test): a session each.
    asyncio.run(_property(pg_schema, ops))


async def _property(pg: PgSchema, ops: list[tuple[str, int]]) -> None:
    store = pg.store()
    clock = VirtualClock(T0)  # nothing falls due: creates and deletes only
    session_id = f"p{time.monotonic_ns()}"
    ids: list[str] = []
    try:
        async with runtime_on(store, session_id, clock, GatedHost()) as (runtime, _):
            for kind, value in ops:
                if kind == "delete":
                    if not ids:
                        continue
                    await call(runtime, "schedule_delete", {"id": ids.pop(value % len(ids))})
                else:
                    key = "after_seconds" if kind == "create" else "every_seconds"
                    made = await call(runtime, "schedule_create", {"prompt": "x", key: value})
                    ids.append(str(made["id"]))
                stored, target = await index_and_log(pg, session_id)
                assert stored == target
                assert (stored is None) == (not ids)
        # Closed (released): the index still agrees.
        stored, target = await index_and_log(pg, session_id)
        assert stored == target
    finally:
        await store.close()


async def _next_notice(conn: psycopg.AsyncConnection[tuple[object, ...]]) -> str:
    """The payload of the next notification on the connection (bounded)."""
    async for notice in conn.notifies(timeout=30.0, stop_after=1):
        return notice.payload
    raise AssertionError("no notification within 30 s")


async def test_a_commit_notifies_when_the_wake_moves_earlier_only(pg_schema: PgSchema) -> None:
    store = pg_schema.store()
    async with await psycopg.AsyncConnection.connect(pg_schema.dsn, autocommit=True) as listener:
        await listener.execute(f"LISTEN {store.channel}")
        async with await psycopg.AsyncConnection.connect(pg_schema.dsn, autocommit=True) as other:

            async def marker(text: str) -> None:
                await other.execute("SELECT pg_notify(%s, %s)", (store.channel, text))

            log = await store.open("s1", created_at=5)
            log.set_next_wake(10_000)  # none before: earlier
            await log.flush()
            assert await _next_notice(listener) == ""

            log.set_next_wake(20_000)  # later: no notification
            await log.flush()
            log.set_next_wake(None)  # nothing pending: none either
            await log.flush()
            await marker("m1")
            assert await _next_notice(listener) == "m1"

            log.set_next_wake(30_000)  # from None: earlier than "never"
            await log.flush()
            assert await _next_notice(listener) == ""
            log.set_next_wake(5_000)
            await log.flush()
            assert await _next_notice(listener) == ""

            await log.close()  # released with a wake: workers may claim it now
            assert await _next_notice(listener) == ""
            plain = await store.open("s2", created_at=5)
            await plain.close()  # released without a wake: nothing to say
            await marker("m2")
            assert await _next_notice(listener) == "m2"
    await store.close()


async def test_a_wake_set_while_a_round_is_in_flight_is_written_by_the_next(
    pg_schema: PgSchema,
) -> None:
    store = pg_schema.store()
    log = await store.open("s1", created_at=5)
    log.set_next_wake(9_000)
    log.append(new_events(1))
    flushing = asyncio.create_task(log.flush())
    await asyncio.sleep(0)  # the flush asks for a round
    await asyncio.sleep(0)  # the round has taken its rows and waits on the server
    log.set_next_wake(4_000)  # the runtime moved on meanwhile
    log.defer(4_000)  # and a hand-over failed
    await flushing
    await log.flush()  # the barrier after the change
    assert pg_schema.query("SELECT next_due_at, failures, length FROM {s}.sessions") == [
        (4_000, 1, 1)
    ]
    await store.close()
