"""Concurrency: one FIFO per session, none across sessions; cancellation.

Tool calls on one session run one after another in arrival order and see
each other's committed results; a session whose store hangs never delays
another session. A call cancelled before its append leaves no trace; one
cancelled after it keeps its change, and the runtime stays consistent.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tickler.core import fold
from tickler.shell._clock import VirtualClock, settle
from tickler.shell._timers import TimerHeap

from .support import MINUTE, SECOND, T0, async_test, rig


@async_test
async def test_tool_calls_on_one_session_run_in_arrival_order() -> None:
    async with rig() as r:
        gate = r.log.gate("flush")  # the first call's preflight
        finished: list[str] = []

        async def call(label: str, name: str, args: dict[str, object]) -> Any:
            answer = await r.tool(name, args)
            finished.append(label)
            return answer

        first = asyncio.ensure_future(
            call("create", "schedule_create", {"prompt": "a", "after_seconds": 60})
        )
        await gate.entered.wait()
        listing = asyncio.ensure_future(call("list", "schedule_list", {}))
        second = asyncio.ensure_future(
            call("create2", "schedule_create", {"prompt": "b", "after_seconds": 60})
        )
        delete = asyncio.ensure_future(call("delete", "schedule_delete", {"id": "schedule-2"}))
        await settle()
        assert finished == []
        assert r.calls == ["flush"]  # start only: everyone waits for the first
        gate.open()
        answers = await asyncio.gather(first, listing, second, delete)
        assert finished == ["create", "list", "create2", "delete"]
        assert answers[0]["id"] == "schedule-1"
        assert [v["id"] for v in answers[1]] == ["schedule-1"]
        assert answers[2]["id"] == "schedule-2"
        assert answers[3] == {"id": "schedule-2", "deleted": True}
        assert [c["operation"] for c in r.log.changes()] == ["create", "create", "delete"]


@async_test
async def test_concurrent_creates_get_ids_in_arrival_order() -> None:
    async with rig() as r:
        answers = await asyncio.gather(
            *(r.create(prompt=f"n{n}", after_seconds=60 + n) for n in range(1, 9))
        )
        assert [(a["id"], a["prompt"]) for a in answers] == [
            (f"schedule-{n}", f"n{n}") for n in range(1, 9)
        ]
        assert r.log.durable == r.log.length == 8


@async_test
async def test_a_hanging_session_never_blocks_another() -> None:
    clock = VirtualClock(T0)
    timers = TimerHeap(clock)
    try:
        async with rig(clock=clock, timers=timers) as a, rig(clock=clock, timers=timers) as b:
            await a.create(after_seconds=10)
            hang = a.log.gate("flush")
            stuck = asyncio.ensure_future(a.views())
            await hang.entered.wait()
            # Session b answers, creates, and delivers while a hangs.
            assert (await b.create(after_seconds=5))["id"] == "schedule-1"
            assert [v["id"] for v in await b.views()] == ["schedule-1"]
            await clock.advance(20 * SECOND, step_ms=SECOND)
            assert b.host.keys == ["schedule-1@2026-08-05T12:00:05.000Z"]
            assert not stuck.done()
            assert a.host.offered == []
            hang.open()
            assert [v["id"] for v in await stuck] == ["schedule-1"]
            await clock.advance(2 * SECOND, step_ms=100)
            assert a.host.keys == ["schedule-1@2026-08-05T12:00:10.000Z"]
    finally:
        await timers.close()


@async_test
async def test_a_call_cancelled_while_waiting_in_the_fifo_appends_nothing() -> None:
    async with rig() as r:
        gate = r.log.gate("flush")
        listing = asyncio.ensure_future(r.views())
        await gate.entered.wait()
        create = asyncio.ensure_future(r.create(after_seconds=60))
        await settle()
        create.cancel()
        await settle()
        gate.open()
        assert await listing == []
        with pytest.raises(asyncio.CancelledError):
            await create
        await settle()
        assert r.log.labels() == []
        assert await r.views() == []
        assert r.runtime.next_wake is None
        assert (await r.create(after_seconds=60))["id"] == "schedule-1"


@async_test
async def test_a_call_cancelled_during_its_preflight_appends_nothing() -> None:
    async with rig() as r:
        gate = r.log.gate("flush")
        create = asyncio.ensure_future(r.create(after_seconds=60))
        await gate.entered.wait()
        create.cancel()
        await settle()
        gate.open()
        with pytest.raises(asyncio.CancelledError):
            await create
        await settle()
        assert r.log.labels() == []
        assert await r.views() == []


@async_test
async def test_a_call_cancelled_after_its_append_keeps_its_change() -> None:
    async with rig() as r:
        gate = r.log.gate("flush", skip=1)  # the barrier
        create = asyncio.ensure_future(r.create(after_seconds=10))
        await gate.entered.wait()
        assert r.log.labels() == ["create"]
        create.cancel()
        await settle()
        gate.open()
        with pytest.raises(asyncio.CancelledError):
            await create
        await settle()
        # The change stays, is confirmed by its barrier, and fires.
        assert r.log.durable == r.log.length == 1
        assert [rec.id for rec in r.runtime.state.active] == ["schedule-1"]
        assert fold(r.log.all_events()).active == r.runtime.state.active
        assert r.runtime.next_wake == T0 + 10 * SECOND
        await r.advance(MINUTE, step_ms=SECOND)
        assert r.host.keys == ["schedule-1@2026-08-05T12:00:10.000Z"]
        assert (await r.create(after_seconds=60))["id"] == "schedule-2"
