"""``dispose()`` in every phase: nothing is delivered after it, nothing
durable changes because of it, and it is idempotent.

The reference: "A drive in flight observes 'not runnable' after its awaits
and does nothing further (no re-arm)"; dispose resolves the stop signal so
it returns even while the agent never becomes idle.
"""

from __future__ import annotations

import asyncio

import pytest

from tickler.core import ListSchedules
from tickler.shell._clock import settle
from tickler.shell._host import SessionClosed
from tickler.shell._runtime import DISPOSE_GRACE_S

from .support import MINUTE, SECOND, T0, Gate, Rig, async_test, rig

KEY = "schedule-1@2026-08-05T12:00:10.000Z"


def next_wake(r: Rig) -> int | None:
    return r.runtime.next_wake


@async_test
async def test_dispose_while_the_drive_waits_in_the_fifo() -> None:
    async with rig() as r:
        await r.create(after_seconds=10)
        gate = r.log.gate("flush")  # a list call holds the FIFO
        listing = asyncio.ensure_future(r.views())
        await gate.entered.wait()
        await r.advance(10 * SECOND)  # the timer wakes: the drive queues
        disposal = asyncio.ensure_future(r.runtime.dispose())
        await settle()
        assert not disposal.done()  # it waits for the call in flight
        gate.open()
        assert [v["id"] for v in await listing] == ["schedule-1"]
        await disposal
        await r.advance(MINUTE, step_ms=SECOND)
        assert "claim" not in r.calls
        assert r.host.offered == []
        assert r.log.labels() == ["create"]


@async_test
async def test_dispose_during_the_delivery_preflight_delivers_nothing() -> None:
    async with rig() as r:
        await r.create(after_seconds=10)
        gate = r.log.gate("flush")
        await r.advance(10 * SECOND)
        await gate.entered.wait()  # the drive's preflight is in flight
        mark = len(r.calls)
        disposal = asyncio.ensure_future(r.runtime.dispose())
        await settle()
        gate.open()
        await disposal
        await r.advance(MINUTE, step_ms=SECOND)
        # The drive observes the disposal after its await and stops there.
        assert r.since(mark) == ["flush"]
        assert r.host.offered == []
        assert r.log.labels() == ["create"]
        assert r.runtime.next_wake is None


@async_test
async def test_dispose_during_host_followup_cancels_it_and_delivers_nothing_more() -> None:
    async with rig() as r:
        await r.create(prompt="one", after_seconds=10)
        await r.create(prompt="two", after_seconds=10)
        gate = r.host.followup_gate = Gate()
        await r.advance(10 * SECOND)
        await gate.entered.wait()
        mark = len(r.calls)
        # A hung host must not hold the disposal: after the grace, the
        # hand-over in flight is cancelled (not taken), its claim released,
        # nothing marked.
        disposal = asyncio.ensure_future(r.runtime.dispose())
        await settle()
        assert not disposal.done()
        assert r.since(mark) == []
        await r.advance(round(DISPOSE_GRACE_S * SECOND))
        await asyncio.wait_for(disposal, 30)
        assert not gate.opened.is_set()
        gate.open()
        await r.advance(MINUTE, step_ms=SECOND)
        assert r.host.keys == []
        assert r.since(mark) == ["release"]
        assert [c["operation"] for c in r.log.changes()] == ["create", "create", "dispatch"]
        # It stays in the outbox, durable, for the next runtime.
        assert [m.key for m in r.runtime.pending_followups] == [
            "schedule-1@2026-08-05T12:00:10.000Z"
        ]
        assert r.log.durable == r.log.length


@async_test
async def test_dispose_during_the_idle_wait_returns_and_never_claims() -> None:
    async with rig() as r:
        await r.create(after_seconds=10)
        r.host.set_busy(True)
        await r.advance(10 * SECOND)
        assert r.host.idle_waits == 1
        mark = len(r.calls)
        disposal = asyncio.ensure_future(r.runtime.dispose())
        await settle()
        assert disposal.done()  # the agent never became idle; dispose returned
        r.host.end_turn()
        await r.advance(MINUTE, step_ms=SECOND)
        assert r.since(mark) == []
        assert r.host.offered == []


@async_test
async def test_dispose_with_an_armed_timer_cancels_it() -> None:
    async with rig() as r:
        await r.create(after_seconds=10)
        assert r.runtime.next_wake == T0 + 10 * SECOND
        mark = len(r.calls)
        await r.runtime.dispose()
        assert next_wake(r) is None
        assert len(r.timers) == 0
        await r.advance(MINUTE, step_ms=SECOND)
        assert r.since(mark) == []
        assert r.host.offered == []


@async_test
async def test_dispose_during_a_retry_backoff_cancels_the_retry() -> None:
    async with rig() as r:
        await r.create(after_seconds=10)
        r.log.fail("flush")  # the delivery's preflight
        await r.advance(10 * SECOND)
        assert r.calls[-1] == "flush!"
        mark = len(r.calls)
        await r.runtime.dispose()
        await r.advance(MINUTE, step_ms=100)
        assert r.since(mark) == []
        assert r.host.offered == []


@async_test
async def test_dispose_is_idempotent_and_changes_nothing() -> None:
    async with rig() as r:
        await r.create(after_seconds=10)
        before = (len(r.calls), r.log.length, r.log.durable)
        first = r.runtime.dispose()
        second = r.runtime.dispose()
        assert first is second
        await first
        await second
        await r.runtime.dispose()
        r.runtime.request_drive()
        await r.advance(MINUTE, step_ms=SECOND)
        assert (len(r.calls), r.log.length, r.log.durable) == before
        assert r.host.offered == []
        # The record is still there for the next runtime.
        assert [rec.id for rec in r.runtime.state.active] == ["schedule-1"]


@async_test
async def test_dispose_lets_a_hand_over_finish_and_makes_its_mark_durable() -> None:
    # The host answers shortly after dispose() was called, within the grace:
    # the follow-up is marked delivered and flushed before the log closes,
    # so a restart finds nothing pending and hands nothing over again.
    async with rig() as r:
        await r.create(after_seconds=10)
        gate = r.host.followup_gate = Gate()
        await r.advance(10 * SECOND)
        await gate.entered.wait()
        disposal = asyncio.ensure_future(r.runtime.dispose())
        await settle()
        assert not disposal.done()  # it waits for the hand-over in flight
        gate.open()  # no time passes: well within the grace
        await disposal
        assert r.host.keys == [KEY]
        assert r.log.count("delivered") == 1
        assert r.log.durable == r.log.length  # the mark was flushed
        assert r.runtime.pending_followups == ()
        survivor = await r.log.crashed()  # what a kill -9 right now would leave
    async with rig(log=survivor) as again:
        await again.advance(MINUTE, step_ms=SECOND)
        assert again.runtime.pending_followups == ()
        assert again.host.offered == []


@async_test
async def test_dispose_records_a_hand_over_that_fails_within_the_grace() -> None:
    async with rig() as r:
        await r.create(after_seconds=10)
        gate = r.host.followup_gate = Gate()
        r.host.followup_errors = 1
        await r.advance(10 * SECOND)
        await gate.entered.wait()
        disposal = asyncio.ensure_future(r.runtime.dispose())
        await settle()
        gate.open()
        await disposal
        assert r.host.keys == []
        assert r.log.count("delivered") == 0
        assert r.log.count("followup-failed") == 1  # recorded, and flushed
        assert r.log.durable == r.log.length
        [pending] = r.runtime.pending_deliveries
        assert (pending.key, pending.failures) == (KEY, 1)
        await r.advance(MINUTE, step_ms=SECOND)
        assert len(r.host.offered) == 1  # no retry after dispose


RUNTIME_CLASSES = ("ScheduleRuntime.", "UnitOfWork.", "Deliverer.", "HandOver.")
"""The runtime and the classes of its jobs."""


def runtime_tasks() -> list[str]:
    """The tasks still running a coroutine of the runtime's."""
    names = []
    for task in asyncio.all_tasks():
        qualname = getattr(task.get_coro(), "__qualname__", "")
        if qualname.startswith(RUNTIME_CLASSES) and not task.done():
            names.append(qualname)
    return names


@async_test
async def test_dispose_leaves_no_wait_of_its_own_running() -> None:
    async with rig() as r:
        r.host.set_busy(True)  # a turn runs: the due reminder waits for idle
        await r.create(after_seconds=10)
        await r.advance(10 * SECOND)
        r.log.fail("flush", skip=1, times=None)  # and a retry waits for the log
        await r.create(after_seconds=20)
        await settle()
        assert {"Deliverer._idle_then_drive", "Deliverer._retry_after"} <= set(runtime_tasks())
        await r.runtime.dispose()
        assert runtime_tasks() == []


@async_test
async def test_a_tool_call_after_dispose_raises_instead_of_answering() -> None:
    # Nothing runs: an internal_error text would read to a model as the
    # tool's answer, and its turn would be recorded as answered.
    async with rig() as r:
        await r.runtime.dispose()
        mark = len(r.calls)
        with pytest.raises(SessionClosed, match="'s1' is closed: the tool call was not run"):
            await r.runtime.call_tool("schedule_create", {"prompt": "p", "after_seconds": 60})
        with pytest.raises(SessionClosed):
            await r.runtime.execute(ListSchedules())
        assert r.since(mark) == []  # not even a flush
        assert r.log.labels() == []
