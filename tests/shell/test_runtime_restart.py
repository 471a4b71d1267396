"""Restarts: the outbox is handed over again, exactly once with the
reference host; snapshots restore the same state and outbox; a snapshot
that cannot be used is ignored.

A restart here is a new ``ScheduleRuntime`` (and a new host) on the same
``MemoryLog`` after ``dispose()``; a crash is a new runtime on a copy of
only what the last successful flush covered.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import pytest

from tickler.adapters.stores._memory import MemoryLog
from tickler.shell._clock import VirtualClock, settle
from tickler.shell._host import FollowUp
from tickler.shell._ports import NewEvent, Snapshot
from tickler.shell._reference_host import TURN, TURN_INPUT, ReferenceHost, TurnInput
from tickler.shell._runtime import ScheduleRuntime
from tickler.shell._timers import TimerHeap

from .support import (
    MINUTE,
    SECOND,
    T0,
    Gate,
    RecordingLog,
    async_test,
    has,
    new_memory_log,
    rig,
)

KEY = "schedule-1@2026-08-05T12:00:10.000Z"


@dataclass
class Session:
    """A runtime with the bundled reference host."""

    log: RecordingLog
    host: ReferenceHost
    runtime: ScheduleRuntime
    turns: list[TurnInput] = field(default_factory=list)


@asynccontextmanager
async def reference_session(
    log: MemoryLog | RecordingLog, clock: VirtualClock
) -> AsyncIterator[Session]:
    recording = log if isinstance(log, RecordingLog) else RecordingLog(log)
    turns: list[TurnInput] = []

    async def model(item: TurnInput) -> str:
        turns.append(item)
        return "ok"

    host = ReferenceHost(recording, model, clock)
    timers = TimerHeap(clock)
    runtime = ScheduleRuntime(recording, host, clock, timers=timers)
    host.start()
    await runtime.start()
    await settle()
    try:
        yield Session(recording, host, runtime, turns)
    finally:
        recording.heal()
        await runtime.dispose()
        await host.close()
        await timers.close()


def turn_inputs(log: MemoryLog, key: str) -> int:
    return sum(
        1
        for e in log.events()
        if e.type == TURN_INPUT and json.loads(bytes(e.data)).get("key") == key
    )


def finished_turns(log: MemoryLog) -> int:
    return sum(1 for e in log.events() if e.type == TURN)


@async_test
async def test_unacknowledged_followup_is_handed_over_again_and_taken_once() -> None:
    clock = VirtualClock(T0)
    async with rig(clock=clock) as r:
        await r.create(prompt="stretch", after_seconds=10)
        r.host.followup_errors = 1_000  # the first host never takes it
        await r.advance(10 * SECOND)
        await r.advance(5 * SECOND, step_ms=100)
        assert {m.key for m in r.host.offered} == {KEY}
        assert r.log.durable == r.log.length  # appended and flushed
        memory = r.log.inner
    assert [m.key for m in r.runtime.pending_followups] == [KEY]
    async with reference_session(memory, clock) as s:
        assert turn_inputs(memory, KEY) == 1
        assert [t.key for t in s.turns] == [KEY]
        assert s.runtime.pending_followups == ()
        assert finished_turns(memory) == 1
    # A third process finds it acknowledged: nothing is handed over again.
    async with reference_session(memory, clock) as s:
        await clock.advance(MINUTE, step_ms=SECOND)
        assert s.runtime.pending_followups == ()
        assert s.turns == []
        assert turn_inputs(memory, KEY) == 1
    assert [e.type for e in memory.events()].count("tickler/followup") == 1
    assert [e.type for e in memory.events()].count("schedule/change") == 2


@async_test
async def test_taken_but_unmarked_followup_is_dropped_by_the_reference_host() -> None:
    clock = VirtualClock(T0)
    log = RecordingLog(new_memory_log())
    async with reference_session(log, clock) as s:
        await s.runtime.call_tool("schedule_create", {"prompt": "stretch", "after_seconds": 10})
        log.fail("append", when=has("delivered"))
        await clock.advance(11 * SECOND, step_ms=SECOND)
        assert [t.key for t in s.turns] == [KEY]
        assert log.count("delivered") == 0
    async with reference_session(log.inner, clock) as s:
        # Handed over again with the same key; the host already took it.
        await clock.advance(MINUTE, step_ms=SECOND)
        assert s.turns == []
        assert s.runtime.pending_followups == ()
    assert log.count("delivered") == 1  # handed over again, then marked
    assert turn_inputs(log.inner, KEY) == 1
    assert finished_turns(log.inner) == 1


@async_test
async def test_restart_hands_an_unmarked_followup_over_with_the_same_key() -> None:
    clock = VirtualClock(T0)
    async with rig(clock=clock) as first:
        await first.create(prompt="stretch", after_seconds=10)
        first.log.fail("append", when=has("delivered"))
        await first.advance(11 * SECOND, step_ms=SECOND)
        assert first.host.keys == [KEY]
        memory = first.log.inner
    async with rig(clock=clock, log=memory) as second:
        assert [m.key for m in second.host.offered] == [KEY]
        assert second.host.offered[0] == first.host.taken[0]
        assert second.log.count("delivered") == 1


@async_test
async def test_crash_after_the_barrier_before_the_host_delivers_once() -> None:
    clock = VirtualClock(T0)
    async with rig(clock=clock) as r:
        await r.create(prompt="stretch", after_seconds=10)
        gate = r.host.followup_gate = Gate()
        await r.advance(10 * SECOND)
        await gate.entered.wait()
        survivor = await r.log.crashed()  # the process dies here
        gate.open()
    assert [e.type for e in survivor.events()][-1] == "tickler/followup"
    async with reference_session(survivor, clock) as s:
        await clock.advance(MINUTE, step_ms=SECOND)
        assert [t.key for t in s.turns] == [KEY]
        assert turn_inputs(survivor, KEY) == 1
        assert [e.type for e in survivor.events()].count("schedule/change") == 2


@async_test
async def test_crash_before_the_barrier_delivers_once() -> None:
    clock = VirtualClock(T0)
    async with rig(clock=clock) as r:
        await r.create(prompt="stretch", after_seconds=10)
        gate = r.log.gate("flush", skip=1)  # the delivery's barrier
        await r.advance(10 * SECOND)
        await gate.entered.wait()
        survivor = await r.log.crashed()  # dispatch + follow-up were not durable
        gate.open()
    assert [e.type for e in survivor.events()] == ["schedule/change"]
    async with reference_session(survivor, clock) as s:
        await clock.advance(MINUTE, step_ms=SECOND)
        assert [t.key for t in s.turns] == [KEY]
        assert turn_inputs(survivor, KEY) == 1


async def _busy_history(clock: VirtualClock) -> tuple[MemoryLog, tuple[FollowUp, ...]]:
    """A log with creates, a delete, a dispatched series and one follow-up
    the host has not taken."""
    async with rig(clock=clock) as r:
        await r.create(prompt="one", after_seconds=10)
        await r.create(prompt="rate", every_seconds=300)
        await r.create(prompt="gone", after_seconds=3600)
        await r.create(prompt="later", at="2026-08-06T00:00:00Z")
        assert (await r.delete("schedule-3"))["deleted"] is True
        await r.advance(10 * SECOND)
        r.host.followup_errors = 1_000
        await r.advance(5 * MINUTE, step_ms=SECOND)
        pending = r.runtime.pending_followups
        assert [m.key for m in pending] == ["schedule-2@2026-08-05T12:05:00.000Z"]
        assert await r.runtime.save_snapshot() is True
        return r.log.inner, pending


@async_test
async def test_snapshot_restart_restores_state_and_outbox() -> None:
    clock = VirtualClock(T0)
    memory, pending = await _busy_history(clock)
    snapshot = memory.load_snapshot()
    assert snapshot is not None
    assert snapshot.through == memory.length
    async with rig(clock=clock, log=memory, start=False) as r:
        r.host.set_busy(True)  # keep the outbox where it is for a moment
        await r.runtime.start()
        await settle()
        assert r.log.reads == [snapshot.through]  # the log before it is not replayed
        assert [rec.id for rec in r.runtime.state.active] == [
            "schedule-2",
            "schedule-4",
        ]
        assert r.runtime.pending_followups == pending
        assert [v["id"] for v in await r.views()] == ["schedule-2", "schedule-4"]
        assert (await r.create(prompt="new", after_seconds=60))["id"] == "schedule-5"
        r.host.end_turn()
        await settle()
        assert [m.key for m in r.host.offered] == [pending[0].key]


@async_test
async def test_snapshot_plus_later_events_equals_a_full_replay() -> None:
    clock = VirtualClock(T0)
    memory, _ = await _busy_history(clock)
    async with rig(clock=clock, log=memory) as r:
        await r.create(prompt="after snapshot", after_seconds=60)
        assert (await r.delete("schedule-4"))["deleted"] is True
        from_snapshot = (r.runtime.state.active, r.runtime.pending_followups, await r.views())
    fresh = MemoryLog(memory.header)  # the same events, no snapshot
    fresh.append([NewEvent(e.type, bytes(e.data), e.time) for e in memory.events()])
    async with rig(clock=clock, log=fresh) as r:
        assert r.log.reads[0] == 0
        assert (r.runtime.state.active, r.runtime.pending_followups, await r.views()) == (
            from_snapshot
        )


@async_test
async def test_a_lone_surrogate_in_a_prompt_is_snapshotted_and_restored() -> None:
    """A JavaScript string may hold a lone surrogate, and so may a prompt
    (the log keeps it escaped). The snapshot must carry it too: saving one
    used to fail with UnicodeEncodeError, so such a session never got one."""
    clock = VirtualClock(T0)
    async with rig(clock=clock) as r:
        await r.create(prompt="due \udc00 soon", after_seconds=10)
        await r.create(prompt="a\ud800b \U0001f375", after_seconds=3600)
        r.host.followup_errors = 1_000  # its follow-up stays in the outbox
        await r.advance(10 * SECOND, step_ms=SECOND)
        assert await r.runtime.save_snapshot() is True
        memory = r.log.inner
        pending = r.runtime.pending_followups
    assert [m.occurrences[0].prompt for m in pending] == ["due \udc00 soon"]
    snapshot = memory.load_snapshot()
    assert snapshot is not None
    assert snapshot.through == memory.length
    snapshot.data.decode("ascii")  # the lone surrogates are escaped
    async with rig(clock=clock, log=memory, start=False) as r:
        r.host.set_busy(True)  # keep the outbox where it is
        await r.runtime.start()
        assert r.log.reads == [snapshot.through]  # restored from the snapshot
        restored = (r.runtime.state, r.runtime.pending_followups, await r.views())
    fresh = MemoryLog(memory.header)  # the same events, no snapshot: a replay
    fresh.append([NewEvent(e.type, bytes(e.data), e.time) for e in memory.events()])
    async with rig(clock=clock, log=fresh, start=False) as r:
        r.host.set_busy(True)
        await r.runtime.start()
        assert r.log.reads == [0]
        replayed = (r.runtime.state, r.runtime.pending_followups, await r.views())
    assert restored == replayed
    assert [v["prompt"] for v in restored[2]] == ["a\ud800b \U0001f375"]
    assert restored[1] == pending


CORRUPT_SNAPSHOTS: list[Any] = [
    pytest.param(lambda n: Snapshot(n, b"{not json"), id="garbage"),
    pytest.param(lambda n: Snapshot(n, b'{"version":2,"state":{},"outbox":[]}'), id="version"),
    pytest.param(lambda n: Snapshot(n, b'{"version":1,"state":[1],"outbox":[]}'), id="shape"),
    pytest.param(lambda n: Snapshot(n + 5, b"{}"), id="beyond-the-log"),
]


@pytest.mark.parametrize("make", CORRUPT_SNAPSHOTS)
@async_test
async def test_a_corrupt_snapshot_is_ignored(make: Callable[[int], Snapshot]) -> None:
    clock = VirtualClock(T0)
    memory, pending = await _busy_history(clock)
    memory._snapshot = make(memory.length)  # as found on disk, even one no store would write
    async with rig(clock=clock, log=memory, start=False) as r:
        r.host.set_busy(True)
        await r.runtime.start()
        await settle()
        assert r.log.reads == [0]  # replayed from the log itself
        assert r.runtime.fault is None
        assert [rec.id for rec in r.runtime.state.active] == ["schedule-2", "schedule-4"]
        assert r.runtime.pending_followups == pending
        assert (await r.create(prompt="new", after_seconds=60))["id"] == "schedule-5"
