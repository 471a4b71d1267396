"""Poison turns: a model call that keeps raising.

The reference host retries a failed turn with growing pauses (on the
injected clock), records each failure in the log, gives the input up after
``max_attempts`` starts, and then lets later inputs (user messages and
reminders) have their turns. The count comes from the log, so a restart
never retries a given-up input, and never retries one forever.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable

import pytest

from tickler.adapters.stores._memory import MemoryLog
from tickler.shell._clock import VirtualClock, settle
from tickler.shell._pending import pending_work
from tickler.shell._reference_host import ReferenceHost, TurnInput
from tickler.shell._runtime import ScheduleRuntime
from tickler.shell._timers import TimerHeap

from .support import SECOND, T0, append_raw, async_test, new_memory_log

POISON = "poison"
STEPS = 600  # virtual seconds at most; a bound on progress, never a timing


class SleepRecorder(VirtualClock):
    """A virtual clock that keeps every pause asked of it."""

    def __init__(self, wall_ms: int) -> None:
        super().__init__(wall_ms)
        self.sleeps: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        await super().sleep(seconds)


class Model:
    """Raises on the poison text, answers everything else."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self.replied: list[str] = []

    async def __call__(self, item: TurnInput) -> str:
        self.calls.append(item.text)
        if item.text == POISON:
            raise ValueError(f"model refused\n{'x' * 2_000}")
        self.replied.append(item.text)
        return "ok"


async def run_until(clock: VirtualClock, done: Callable[[], bool]) -> None:
    for _ in range(STEPS):
        if done():
            return
        await clock.advance(SECOND)
    assert done(), "no progress"


async def close(host: ReferenceHost) -> None:
    """Bounded, so a host that cannot stop fails the test instead of hanging it."""
    await asyncio.wait_for(host.close(), 30)


def records(log: MemoryLog, kind: str) -> list[dict[str, object]]:
    return [json.loads(bytes(e.data)) for e in log.events() if e.type == kind]


@async_test
async def test_a_poison_input_is_given_up_and_the_next_message_gets_its_turn() -> None:
    clock = SleepRecorder(T0)
    log = new_memory_log()
    model = Model()
    # No turn deadline: the only sleeps asked of the clock are the pauses.
    host = ReferenceHost(log, model, clock, turn_timeout_s=None)
    try:
        host.start()
        await host.send(POISON)
        await host.send("hello")
        await run_until(clock, lambda: "hello" in model.replied)
        assert model.calls == [POISON] * 5 + ["hello"]
        # Exponential backoff, asked of the injected clock (nothing slept).
        assert clock.sleeps == [1.0, 2.0, 4.0, 8.0]
        failed = records(log, "tickler/turn-failed")
        assert [f["attempt"] for f in failed] == [1, 2, 3, 4, 5]
        assert {f["input"] for f in failed} == {0}
        error = failed[0]["error"]
        assert isinstance(error, str)
        assert error.startswith("ValueError: model refused x")
        assert "\n" not in error
        assert len(error) <= 500
        assert records(log, "tickler/turn-abandoned") == [{"input": 0, "attempts": 5}]
        assert [r["input"] for r in records(log, "tickler/turn")] == [1]
        assert host.pending_turns == 0
    finally:
        await close(host)


@async_test
async def test_a_restart_never_retries_a_given_up_input() -> None:
    clock = VirtualClock(T0)
    log = new_memory_log()
    first = Model()
    host = ReferenceHost(log, first, clock)
    host.start()
    await host.send(POISON)
    await run_until(clock, lambda: bool(records(log, "tickler/turn-abandoned")))
    await close(host)
    again = Model()
    second = ReferenceHost(log, again, clock)
    try:
        second.start()
        await second.send("after")
        await run_until(clock, lambda: "after" in again.replied)
        assert again.calls == ["after"]
        assert len(records(log, "tickler/turn-failed")) == 5
    finally:
        await close(second)


@async_test
async def test_the_attempt_count_survives_a_restart() -> None:
    # Two failures, then the process stops: the next life has three tries left.
    clock = VirtualClock(T0)
    log = new_memory_log()
    first = Model()
    host = ReferenceHost(log, first, clock)
    host.start()
    await host.send(POISON)
    await run_until(clock, lambda: len(first.calls) == 2)
    await close(host)  # ends the retry pause at once
    assert len(records(log, "tickler/turn-failed")) == 2
    again = Model()
    second = ReferenceHost(log, again, clock)
    try:
        second.start()
        await run_until(clock, lambda: bool(records(log, "tickler/turn-abandoned")))
        assert again.calls == [POISON] * 3
        assert [f["attempt"] for f in records(log, "tickler/turn-failed")] == [1, 2, 3, 4, 5]
    finally:
        await close(second)


@async_test
async def test_an_input_that_kills_the_process_is_given_up_after_the_cap() -> None:
    # Five starts without an end (each cut by a crash) count as five attempts.
    clock = VirtualClock(T0)
    log = new_memory_log()
    await append_raw(log, "tickler/turn-input", {"n": 0, "source": "user", "text": "crash"})
    for _ in range(5):
        await append_raw(log, "tickler/turn-start", {"input": 0})
    await append_raw(log, "tickler/turn-input", {"n": 1, "source": "user", "text": "next"})
    model = Model()
    host = ReferenceHost(log, model, clock)
    try:
        host.start()
        await run_until(clock, lambda: "next" in model.replied)
        assert model.calls == ["next"]
        assert records(log, "tickler/turn-abandoned") == [{"input": 0, "attempts": 5}]
    finally:
        await close(host)


@async_test
async def test_a_reminder_after_a_poison_turn_is_delivered_and_turned() -> None:
    clock = VirtualClock(T0)
    log = new_memory_log()
    model = Model()
    host = ReferenceHost(log, model, clock)
    timers = TimerHeap(clock)
    runtime = ScheduleRuntime(log, host, clock, timers=timers)
    try:
        host.start()
        await runtime.start()
        await host.send(POISON)
        answer = await runtime.call_tool(
            "schedule_create", {"prompt": "stretch", "after_seconds": 5}
        )
        assert json.loads(answer)["id"] == "schedule-1"
        await run_until(clock, lambda: len(model.replied) == 1)
        assert model.calls[:5] == [POISON] * 5
        [turn] = [t for t in records(log, "tickler/turn-input") if t.get("key")]
        assert turn["source"] == "reminder"
        assert [r["input"] for r in records(log, "tickler/turn")] == [turn["n"]]
        assert runtime.pending_deliveries == ()
        pending = pending_work(log.events())
        assert pending.deliveries == ()
        assert pending.turns == ()
        [gone] = pending.abandoned
        assert (gone.input, gone.source, gone.starts, gone.failures) == (0, "user", 5, 5)
        assert gone.last_error is not None
        assert gone.last_error.startswith("ValueError: model refused")
    finally:
        await runtime.dispose()
        await close(host)
        await timers.close()


@async_test
async def test_each_failure_logs_one_warning_without_a_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clock = VirtualClock(T0)
    log = new_memory_log()
    model = Model()
    host = ReferenceHost(log, model, clock)
    with caplog.at_level(logging.WARNING, logger="tickler.host"):
        host.start()
        await host.send(POISON)
        await run_until(clock, lambda: bool(records(log, "tickler/turn-abandoned")))
        await close(host)
    failures = [r for r in caplog.records if "failed (attempt" in r.getMessage()]
    assert len(failures) == 5
    assert all(r.exc_info is None for r in caplog.records)
    assert all("\n" not in r.getMessage() for r in caplog.records)


@async_test
async def test_a_configured_cap_and_pause_are_used() -> None:
    clock = SleepRecorder(T0)
    log = new_memory_log()
    model = Model()
    host = ReferenceHost(
        log,
        model,
        clock,
        max_attempts=3,
        retry_first_s=0.5,
        retry_most_s=0.75,
        turn_timeout_s=None,  # the only sleeps asked of the clock are the pauses
    )
    try:
        host.start()
        await host.send(POISON)
        await host.send("hello")
        await run_until(clock, lambda: "hello" in model.replied)
        assert model.calls == [POISON] * 3 + ["hello"]
        assert clock.sleeps == [0.5, 0.75]
    finally:
        await close(host)
    with pytest.raises(ValueError, match="max_attempts"):
        ReferenceHost(log, model, clock, max_attempts=0)


@async_test
async def test_close_ends_a_retry_pause_at_once() -> None:
    clock = VirtualClock(T0)
    log = new_memory_log()
    model = Model()
    host = ReferenceHost(log, model, clock, retry_first_s=3_600.0)
    host.start()
    await host.send(POISON)
    await run_until(clock, lambda: len(model.calls) == 1)
    await settle()
    # The hour-long pause does not hold it (the virtual clock never moves).
    await close(host)
    assert model.calls == [POISON]
