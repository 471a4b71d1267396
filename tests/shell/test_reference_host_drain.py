"""The reference host when its session closes: ``drain`` lets the inputs
taken so far have their turns (a reminder handed over meanwhile too) and
grants no new claim; a turn still running at the end, or when the drain is
cancelled, is recorded as cut (``tickler/turn-cut``), never as answered; a
turn whose tool call raises ``SessionClosed`` (the runtime stopped under
it) is cut as well, neither answered nor failed. Cuts are not failed
attempts, but they are bounded. All on the virtual clock."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from tickler.adapters.stores._memory import MemoryLog
from tickler.shell._clock import VirtualClock, settle
from tickler.shell._host import SessionClosed
from tickler.shell._reference_host import ReferenceHost, TurnInput
from tickler.shell._runtime import ScheduleRuntime
from tickler.shell._timers import TimerHeap

from .support import SECOND, T0, Gate, RecordingLog, append_raw, async_test, has, new_memory_log

STRETCH = {"prompt": "stretch", "after_seconds": 600}


def records(log: MemoryLog | RecordingLog, kind: str) -> list[dict[str, Any]]:
    inner = log.inner if isinstance(log, RecordingLog) else log
    return [json.loads(bytes(e.data)) for e in inner.events() if e.type == kind]


class Replies:
    """Answers each turn at once with its text (raising for ``fail``)."""

    def __init__(self, *fail: str) -> None:
        self.fail = set(fail)
        self.calls: list[str] = []

    async def __call__(self, turn: TurnInput) -> str:
        self.calls.append(turn.text)
        if turn.text in self.fail:
            raise ValueError(f"cannot answer {turn.text}")
        return f"re: {turn.text}"


@async_test
async def test_a_drain_runs_the_inputs_taken_and_grants_no_claim() -> None:
    clock = VirtualClock(T0)
    log = new_memory_log()
    model = Replies()
    host = ReferenceHost(log, model, clock)
    host.start()
    await host.send("first")
    await host.send("second")
    draining = asyncio.ensure_future(host.drain(10))
    await settle()
    assert host.claim_idle() is None  # no new hand-over starts
    await asyncio.wait_for(draining, 30)  # no virtual time passed: the turns ended
    assert model.calls == ["first", "second"]
    assert [t["input"] for t in records(log, "tickler/turn")] == [0, 1]
    assert records(log, "tickler/turn-cut") == []
    assert host.claim_idle() is None  # drained is closed


@async_test
async def test_a_drain_does_not_wait_for_the_retry_of_a_failed_turn() -> None:
    clock = VirtualClock(T0)
    log = new_memory_log()
    model = Replies("bad")
    host = ReferenceHost(log, model, clock)
    host.start()
    await host.send("bad")
    await host.send("next")
    await asyncio.wait_for(host.drain(10), 30)  # ends without the 1 s retry pause
    assert model.calls == ["bad"]
    assert [f["attempt"] for f in records(log, "tickler/turn-failed")] == [1]
    assert records(log, "tickler/turn-cut") == []
    assert host.pending_turns == 2  # both run, in order, when the session next runs


@async_test
async def test_a_turn_still_running_at_the_end_of_the_drain_is_cut() -> None:
    clock = VirtualClock(T0)
    log = new_memory_log()
    cut = asyncio.Event()

    async def slow(turn: TurnInput) -> str:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cut.set()
            raise
        raise AssertionError("never answers")

    host = ReferenceHost(log, slow, clock)
    host.start()
    await host.send("slow")
    draining = asyncio.ensure_future(host.drain(5))
    await clock.advance(4 * SECOND)
    assert not draining.done()
    await clock.advance(SECOND)
    await asyncio.wait_for(draining, 30)
    assert cut.is_set()
    assert records(log, "tickler/turn") == []
    assert records(log, "tickler/turn-failed") == []
    assert records(log, "tickler/turn-cut") == [{"input": 0, "attempt": 1, "reason": "timeout"}]
    assert host.pending_turns == 1
    again = ReferenceHost(log, Replies(), clock)
    assert again.pending_turns == 1  # it runs again when the session next runs
    again.start()
    await asyncio.wait_for(again.when_idle(), 30)
    assert [t["input"] for t in records(log, "tickler/turn")] == [0]
    await again.close()


@async_test
async def test_a_cancelled_drain_cuts_at_once() -> None:
    clock = VirtualClock(T0)
    log = new_memory_log()
    started = asyncio.Event()

    async def slow(turn: TurnInput) -> str:
        started.set()
        await asyncio.Event().wait()
        raise AssertionError("never answers")

    host = ReferenceHost(log, slow, clock)
    host.start()
    await host.send("slow")
    await started.wait()
    draining = asyncio.ensure_future(host.drain(60))
    await settle()
    draining.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(draining, 30)
    assert records(log, "tickler/turn-cut") == [{"input": 0, "attempt": 1, "reason": "cancelled"}]
    assert not host.busy


@async_test
async def test_a_reminder_handed_over_while_draining_gets_its_turn() -> None:
    clock = VirtualClock(T0)
    timers = TimerHeap(clock)
    log = RecordingLog(new_memory_log())
    model = Replies()
    host = ReferenceHost(log, model, clock)
    runtime = ScheduleRuntime(log, host, clock, timers=timers)
    held: list[Gate] = []
    try:
        await runtime.start()
        host.start()
        created = await runtime.call_tool("schedule_create", {"prompt": "p", "after_seconds": 10})
        assert json.loads(created)["id"] == "schedule-1"
        # The host's acknowledgement (its turn input's flush) is held.
        log.hook("append", lambda: held.append(log.gate("flush")), when=has("turn-input"))
        await clock.advance(10 * SECOND)
        [gate] = held
        await asyncio.wait_for(gate.entered.wait(), 30)
        draining = asyncio.ensure_future(host.drain(60))
        await settle()
        assert not draining.done()  # the hand-over in flight holds the claim
        gate.open()
        await asyncio.wait_for(draining, 30)
        [reminder] = model.calls
        assert "[SCHEDULE REMINDER]" in reminder
        assert [t["input"] for t in records(log, "tickler/turn")] == [0]
        assert records(log, "tickler/turn-cut") == []
    finally:
        for held_gate in held:  # open, when the test failed before it did
            held_gate.open()
        await runtime.dispose()
        await host.close()
        await timers.close()


@pytest.mark.parametrize("wrapped", ["bare", "cause", "group"])
@async_test
async def test_a_tool_call_on_a_stopped_runtime_cuts_the_turn(wrapped: str) -> None:
    # The runtime stops under a turn (disposed before the host was drained):
    # the model's tool call raises, so the turn is neither answered with an
    # error text it read as a tool's answer, nor counted as a failure.
    clock = VirtualClock(T0)
    timers = TimerHeap(clock)
    log = new_memory_log()
    started, go = asyncio.Event(), asyncio.Event()
    raised: list[BaseException] = []

    async def model(turn: TurnInput) -> str:
        started.set()
        await go.wait()
        try:
            return await runtime.call_tool("schedule_create", STRETCH)
        except SessionClosed as exc:
            raised.append(exc)
            if wrapped == "cause":  # as a framework wraps what a tool raised
                raise RuntimeError("Error running tool schedule_create") from exc
            if wrapped == "group":
                raise ExceptionGroup("tool calls failed", [exc]) from None
            raise

    host = ReferenceHost(log, model, clock)
    runtime = ScheduleRuntime(log, host, clock, timers=timers)
    try:
        await runtime.start()
        host.start()
        await host.send("Remind me to stretch in 10 minutes.")
        await started.wait()
        await runtime.dispose()
        go.set()
        await settle()
        assert len(raised) == 1
        assert records(log, "tickler/turn") == []
        assert records(log, "tickler/turn-failed") == []
        assert records(log, "tickler/turn-cut") == [
            {"input": 0, "attempt": 1, "reason": "session-closed"}
        ]
        assert host.pending_turns == 1
        assert not host.busy
    finally:
        await host.close()
        await timers.close()


@async_test
async def test_cuts_are_not_counted_as_failed_attempts() -> None:
    # Four failed starts and three cut ones: one attempt is left.
    log = new_memory_log()
    await append_raw(log, "tickler/turn-input", {"n": 0, "source": "user", "text": "bad"})
    for attempt in range(1, 8):
        await append_raw(log, "tickler/turn-start", {"input": 0})
        if attempt <= 4:
            error = {"input": 0, "attempt": attempt, "error": "ValueError: no"}
            await append_raw(log, "tickler/turn-failed", error)
        else:
            cut = {"input": 0, "attempt": attempt, "reason": "timeout"}
            await append_raw(log, "tickler/turn-cut", cut)
    model = Replies("bad")
    host = ReferenceHost(log, model, VirtualClock(T0))
    host.start()
    await settle()
    assert model.calls == ["bad"]  # the fifth failed attempt
    assert records(log, "tickler/turn-failed")[-1]["attempt"] == 8
    assert records(log, "tickler/turn-abandoned") == [{"input": 0, "attempts": 8}]
    await asyncio.wait_for(host.close(), 30)


@async_test
async def test_an_input_cut_max_attempts_times_is_given_up() -> None:
    log = new_memory_log()
    await append_raw(log, "tickler/turn-input", {"n": 0, "source": "user", "text": "slow"})
    await append_raw(log, "tickler/turn-input", {"n": 1, "source": "user", "text": "next"})
    for attempt in range(1, 4):
        await append_raw(log, "tickler/turn-start", {"input": 0})
        cut = {"input": 0, "attempt": attempt, "reason": "timeout"}
        await append_raw(log, "tickler/turn-cut", cut)
    model = Replies()
    host = ReferenceHost(log, model, VirtualClock(T0), max_attempts=3)
    host.start()
    await settle()
    assert model.calls == ["next"]  # never looped forever on the slow one
    assert records(log, "tickler/turn-abandoned") == [{"input": 0, "attempts": 3}]
    await asyncio.wait_for(host.close(), 30)
