"""Idempotent creates: a retry with the same ``request_id`` gets the first
answer byte for byte and appends nothing, across a crash between the append
and the answer, a restart from the log and one from a snapshot."""

from __future__ import annotations

import asyncio

from tickler.shell._clock import VirtualClock, settle

from .support import MINUTE, T0, async_test, rig

ARGS = {
    "prompt": "stand-up",
    "calendar": {"cron": "0 9 * * 1-5", "time_zone": "Europe/Berlin"},
    "request_id": "call-7f3a",
}


def _creates(labels: list[str]) -> int:
    return labels.count("create")


@async_test
async def test_a_retry_after_a_crash_past_the_append_gets_the_first_answer() -> None:
    clock = VirtualClock(T0)
    async with rig(clock=clock) as r:
        first = await r.runtime.call_tool("schedule_create", ARGS)
        survivor = await r.log.crashed()  # the answer was lost with the process
    await clock.advance(MINUTE)
    async with rig(clock=clock, log=survivor) as again:
        before = again.log.length
        retried = await again.runtime.call_tool("schedule_create", ARGS)
        assert retried == first
        assert again.log.length == before  # nothing appended
        other = await again.runtime.call_tool("schedule_create", {**ARGS, "prompt": "other"})
        assert '"code":"invalid_rule"' in other
        assert "request_id was already used with other arguments" in other
        assert [rec.id for rec in again.runtime.state.active] == ["schedule-1"]


@async_test
async def test_a_crash_before_the_barrier_leaves_nothing_and_the_retry_creates_once() -> None:
    clock = VirtualClock(T0)
    async with rig(clock=clock) as r:
        gate = r.log.gate("flush", skip=1)  # the create's barrier
        call = asyncio.ensure_future(r.runtime.call_tool("schedule_create", ARGS))
        await gate.entered.wait()
        survivor = await r.log.crashed()  # the create was not durable
        gate.open()
        await call
    assert [e.type for e in survivor.events()] == []
    async with rig(clock=clock, log=survivor) as again:
        first = await again.runtime.call_tool("schedule_create", ARGS)
        assert await again.runtime.call_tool("schedule_create", ARGS) == first
        assert _creates(again.log.labels()) == 1


@async_test
async def test_request_ids_survive_a_snapshot_restart() -> None:
    clock = VirtualClock(T0)
    async with rig(clock=clock) as r:
        first = await r.runtime.call_tool("schedule_create", ARGS)
        assert await r.runtime.save_snapshot() is True
        memory = r.log.inner
    async with rig(clock=clock, log=memory, start=False) as again:
        await again.runtime.start()
        await settle()
        snapshot = memory.load_snapshot()
        assert snapshot is not None
        assert again.log.reads == [snapshot.through]  # loaded from the snapshot
        before = again.log.length
        assert await again.runtime.call_tool("schedule_create", ARGS) == first
        assert again.log.length == before


@async_test
async def test_the_reference_profile_has_no_request_id() -> None:
    async with rig(profile="reference") as r:
        refused = await r.tool(
            "schedule_create", {"prompt": "p", "after_seconds": 5, "request_id": "x"}
        )
        assert refused["code"] == "invalid_selector"
        assert r.log.labels() == []
