"""A corrupt schedule log: the runtime records the fault (reason and the
offending event's seq), every tool answers ``corrupt_schedule_log``, and
nothing is delivered or appended."""

from __future__ import annotations

import json
from typing import Any, Final

import pytest

from tickler.adapters.stores._memory import MemoryLog
from tickler.core import SCHEDULE_CHANGE, CorruptScheduleLog, SessionHeader
from tickler.shell._clock import VirtualClock, settle
from tickler.shell._runtime import ScheduleRuntime
from tickler.shell._timers import TimerHeap

from .support import (
    MINUTE,
    SECOND,
    T0,
    RecordingLog,
    ScriptedHost,
    append_raw,
    async_test,
    new_memory_log,
    rig,
    seed,
)

CORRUPT: Final = '{"code":"corrupt_schedule_log","message":"The session schedule log is corrupt."}'

AFTER_1: Final = {
    "version": 1,
    "operation": "create",
    "schedule": {
        "id": "schedule-1",
        "kind": "after",
        "prompt": "p",
        "afterSeconds": 10,
        "scheduledAt": "2026-08-05T12:00:10.000Z",
    },
}

BAD_CHANGES: Final[list[Any]] = [
    pytest.param(
        {"version": 1, "operation": "delete", "id": "nope"},
        'schedule delete targets inactive id "nope"',
        id="delete-inactive",
    ),
    pytest.param({**AFTER_1, "version": 2}, "schedule/change version must be 1", id="version"),
    pytest.param([1, 2], "schedule/change payload must be an object", id="not-an-object"),
    pytest.param(AFTER_1, 'schedule id "schedule-1" was reused', id="reused-id"),
    pytest.param(
        {
            "version": 1,
            "operation": "dispatch",
            "id": "schedule-1",
            "acceptedAt": "2026-08-05T12:00:10.000Z",
        },
        "one-shot dispatch must not contain acceptedAt",
        id="one-shot-accepted-at",
    ),
]


async def corrupt_log(bad: object) -> MemoryLog:
    """A valid overdue create (seq 0), an unrelated event (seq 1), then
    ``bad`` (seq 2)."""
    log = new_memory_log()
    await append_raw(log, SCHEDULE_CHANGE, AFTER_1)
    await append_raw(log, "tickler/turn-input", {"n": 0, "source": "user", "text": "hi"})
    await append_raw(log, SCHEDULE_CHANGE, bad)
    return log


@pytest.mark.parametrize(("bad", "reason"), BAD_CHANGES)
@async_test
async def test_corrupt_log_faults_the_runtime_and_answers_corrupt(bad: object, reason: str) -> None:
    faults: list[CorruptScheduleLog] = []
    clock = VirtualClock(T0 + MINUTE)  # the valid reminder is overdue
    calls: list[str] = []
    log = RecordingLog(await corrupt_log(bad), calls)
    host = ScriptedHost(calls, clock, log)
    timers = TimerHeap(clock)
    runtime = ScheduleRuntime(log, host, clock, timers=timers, on_fault=faults.append)
    try:
        await runtime.start()
        await settle()
        assert runtime.fault is not None
        assert (runtime.fault.reason, runtime.fault.index) == (reason, 2)
        assert faults == [runtime.fault]
        for name, args in [
            ("schedule_list", {}),
            ("schedule_create", {"prompt": "p", "after_seconds": 5}),
            ("schedule_delete", {"id": "schedule-1"}),
        ]:
            assert await runtime.call_tool(name, args) == CORRUPT
        runtime.request_drive()
        await clock.advance(10 * MINUTE, step_ms=SECOND)
        assert host.offered == []
        assert not any(c.startswith(("claim", "append", "when_idle")) for c in calls)
        assert log.length == 3
        assert runtime.next_wake is None
    finally:
        await runtime.dispose()
        await timers.close()


@async_test
async def test_corrupt_change_after_a_snapshot_is_found_at_its_seq() -> None:
    clock = VirtualClock(T0)
    async with rig(clock=clock) as r:
        await r.create(after_seconds=600)
        assert await r.runtime.save_snapshot() is True
        memory = r.log.inner
    await append_raw(memory, "tickler/turn-input", {"n": 0, "source": "user", "text": "hi"})
    await append_raw(memory, SCHEDULE_CHANGE, {"version": 1, "operation": "delete", "id": "x"})
    async with rig(clock=clock, log=memory) as r:
        assert r.log.reads == [1]  # from the snapshot on
        assert r.runtime.fault is not None
        assert (r.runtime.fault.reason, r.runtime.fault.index) == (
            'schedule delete targets inactive id "x"',
            2,
        )
        assert await r.runtime.call_tool("schedule_list", {}) == CORRUPT
        await r.advance(20 * MINUTE, step_ms=SECOND)
        assert r.host.offered == []


RUNTIME_RECORDS: Final[list[Any]] = [
    pytest.param("tickler/followup", b'{"key":1}', id="followup-shape"),
    pytest.param("tickler/followup", b"[", id="followup-json"),
    pytest.param("tickler/delivered", b'{"key":"k","extra":1}', id="delivered-shape"),
]


@pytest.mark.parametrize(("event_type", "data"), RUNTIME_RECORDS)
@async_test
async def test_a_corrupt_runtime_record_faults_instead_of_failing_start(
    event_type: str, data: bytes
) -> None:
    # The outbox records are the runtime's own part of the log: one that
    # does not decode must fault the runtime like a corrupt change (never
    # guess, never deliver), not make start() raise a decoder error.
    log = new_memory_log()
    await seed(log, (T0 - MINUTE, {"prompt": "p", "after_seconds": 10}))
    await append_raw(log, event_type, data)
    async with rig(log=log, start=False) as r:
        await r.runtime.start()
        await settle()
        assert r.runtime.fault is not None
        assert r.runtime.fault.index == 1
        assert await r.runtime.call_tool("schedule_list", {}) == CORRUPT
        await r.advance(MINUTE, step_ms=SECOND)
        assert r.host.offered == []


@async_test
async def test_a_corrupt_inherited_prefix_is_not_ours_to_judge() -> None:
    log = MemoryLog(SessionHeader(id="child", created_at=T0, seed_length=2))
    await append_raw(log, SCHEDULE_CHANGE, {**AFTER_1, "version": 9})
    await append_raw(log, "tickler/turn-input", {"n": 0, "source": "user", "text": "hi"})
    await seed(log, (T0, {"prompt": "own", "after_seconds": 10}))
    async with rig(log=log) as r:
        assert r.runtime.fault is None
        await r.advance(11 * SECOND, step_ms=SECOND)
        assert r.host.keys == ["schedule-1@2026-08-05T12:00:10.000Z"]
        assert json.loads(await r.runtime.call_tool("schedule_list", {})) == []
