"""``settle()`` runs the delivery work due now to its end, for a process
that holds the session only while it delivers: called while that work is
in flight, it waits for it and never adds a pass of its own, so a follow-up
whose hand-over fails is not tried again at once, past its backoff."""

from __future__ import annotations

import asyncio

from tickler.shell._clock import settle

from .support import SECOND, T0, Gate, async_test, new_memory_log, rig, seed


@async_test
async def test_settle_during_a_failing_hand_over_waits_for_it_and_does_not_retry_it() -> None:
    log = new_memory_log()
    await seed(log, (T0 - 10 * SECOND, {"prompt": "p", "after_seconds": 1}))  # overdue
    async with rig(log=log, start=False) as r:
        gate = Gate()
        r.host.followup_gate = gate
        r.host.followup_errors = 1
        await r.runtime.start()
        await asyncio.wait_for(gate.entered.wait(), 10)  # the hand-over is in flight
        settling = asyncio.ensure_future(r.runtime.settle())
        await settle()
        assert not settling.done()  # it waits for the hand-over in flight
        gate.open()
        assert await asyncio.wait_for(settling, 10) is False  # the hand-over failed
        assert len(r.host.offered) == 1  # tried once; the retry waits for its backoff
        assert r.host.taken == []
        await r.advance(SECOND)  # the backoff is over: tried again, and taken
        assert len(r.host.offered) == 2
        assert len(r.host.taken) == 1


@async_test
async def test_settle_with_no_work_in_flight_looks_for_due_work_itself() -> None:
    async with rig() as r:
        await r.create(after_seconds=5)
        r.jump(10 * SECOND)  # due by the wall clock; no timer has fired yet
        assert r.host.offered == []
        assert await r.runtime.settle() is True
        assert [m.key for m in r.host.taken] == ["schedule-1@2026-08-05T12:00:05.000Z"]
