"""The hand-over runs outside the session's FIFO.

A host whose ``followup`` hangs (a slow or dead delivery target) must never
hold up tool calls: the outbox batch is appended and flushed in the FIFO,
the hand-over runs beside it (one at a time per session), and the delivered
mark is appended afterwards. ``dispose()`` cancels a hung hand-over; the
follow-up stays in the outbox and is handed over again after a restart.
"""

from __future__ import annotations

import asyncio

from tickler.adapters.stores._memory import MemoryLog
from tickler.shell._clock import VirtualClock, settle
from tickler.shell._runtime import DISPOSE_GRACE_S

from .support import MINUTE, SECOND, T0, Gate, Rig, async_test, rig

KEY = "schedule-1@2026-08-05T12:00:10.000Z"
BOUND_S = 30  # a bound, never a timing assertion: a hang fails instead of blocking forever


@async_test
async def test_tool_calls_complete_while_the_hand_over_hangs() -> None:
    gate = Gate()
    async with rig() as r:
        try:
            await _tool_calls_while_hung(r, gate)
        finally:
            gate.open()  # only now does the host take it


async def _tool_calls_while_hung(r: Rig, gate: Gate) -> None:
    await r.create(prompt="stretch", after_seconds=10)
    r.host.followup_gate = gate
    await r.advance(10 * SECOND)
    await asyncio.wait_for(gate.entered.wait(), BOUND_S)
    assert [m.key for m in r.runtime.pending_followups] == [KEY]

    listed = await asyncio.wait_for(r.views(), BOUND_S)
    assert listed == []  # dispatched: the one-shot is no longer active
    created = await asyncio.wait_for(r.create(prompt="next", after_seconds=60), BOUND_S)
    assert created["id"] == "schedule-2"
    listed = await asyncio.wait_for(r.views(), BOUND_S)
    assert [v["id"] for v in listed] == ["schedule-2"]
    deleted = await asyncio.wait_for(r.delete("schedule-2"), BOUND_S)
    assert deleted == {"id": "schedule-2", "deleted": True}

    assert not gate.opened.is_set()  # all of it while the host still hangs
    assert r.host.taken == []
    assert r.log.count("delivered") == 0
    assert [c["operation"] for c in r.log.changes()] == [
        "create",
        "dispatch",
        "create",
        "delete",
    ]


@async_test
async def test_one_hand_over_in_flight_and_the_order_is_kept() -> None:
    gate = Gate()
    async with rig() as r:
        try:
            await r.create(prompt="one", after_seconds=10)
            r.host.followup_gate = gate
            await r.advance(10 * SECOND)
            await asyncio.wait_for(gate.entered.wait(), BOUND_S)
            # A second reminder falls due while the first hand-over hangs.
            await asyncio.wait_for(r.create(prompt="two", after_seconds=1), BOUND_S)
            await r.advance(5 * SECOND, step_ms=SECOND)
            assert [m.key for m in r.host.offered] == [KEY]  # never a second one beside it
            assert r.log.count("followup") == 1  # no claim: nothing more dispatched
        finally:
            gate.open()
        await r.advance(MINUTE, step_ms=SECOND)
        assert r.host.keys == [KEY, "schedule-2@2026-08-05T12:00:11.000Z"]
        assert r.log.count("delivered") == 2
        assert r.runtime.pending_followups == ()
        # The second is dispatched only after the first is marked delivered.
        assert r.log.labels() == [
            *("create", "dispatch", "followup", "create", "delivered"),
            *("dispatch", "followup", "delivered"),
        ]


@async_test
async def test_a_failing_hand_over_does_not_hold_tool_calls_and_is_visible() -> None:
    async with rig() as r:
        await r.create(prompt="stretch", after_seconds=10)
        r.host.followup_errors = 1_000
        await r.advance(10 * SECOND)
        await r.advance(2 * SECOND, step_ms=10)
        pending = r.runtime.pending_deliveries
        assert [p.key for p in pending] == [KEY]
        assert pending[0].failures >= 3
        assert pending[0].last_error == "HostFault: followup"
        assert pending[0].ids == ("schedule-1",)
        created = await asyncio.wait_for(r.create(prompt="next", after_seconds=3600), BOUND_S)
        assert created["id"] == "schedule-2"
        r.host.followup_errors = 0
        await r.advance(MINUTE, step_ms=SECOND)
        assert r.host.keys == [KEY]
        assert r.runtime.pending_deliveries == ()


@async_test
async def test_dispose_cancels_a_hung_hand_over_and_a_restart_hands_it_over_again() -> None:
    clock = VirtualClock(T0)
    gate = Gate()
    async with rig(clock=clock) as first:
        try:
            memory = await _dispose_while_hung(first, gate)
        finally:
            gate.open()
    async with rig(clock=clock, log=memory) as second:
        await second.advance(SECOND)
        assert second.host.keys == [KEY]
        assert second.log.count("delivered") == 1
        assert second.log.count("dispatch") == 1
        assert second.runtime.pending_followups == ()


async def _dispose_while_hung(first: Rig, gate: Gate) -> MemoryLog:
    await first.create(prompt="stretch", after_seconds=10)
    first.host.followup_gate = gate
    await first.advance(10 * SECOND)
    await asyncio.wait_for(gate.entered.wait(), BOUND_S)
    disposal = asyncio.ensure_future(first.runtime.dispose())
    await settle()
    assert not disposal.done()  # the hand-over in flight gets its grace first
    await first.advance(round(DISPOSE_GRACE_S * SECOND))
    await asyncio.wait_for(disposal, BOUND_S)
    assert not gate.opened.is_set()  # dispose returned while the host still hung
    await settle()
    assert first.host.taken == []
    assert first.log.count("delivered") == 0
    assert first.log.durable == first.log.length  # the follow-up was flushed before
    assert [m.key for m in first.runtime.pending_followups] == [KEY]
    assert not first.host.claimed  # the claim of the cancelled hand-over is released
    return first.log.inner
