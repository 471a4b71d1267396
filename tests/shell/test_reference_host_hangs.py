"""A model call that raises ``CancelledError`` of its own, or never returns,
must not block the session: it is a failed attempt (recorded, retried with
backoff, given up after ``max_attempts``), later inputs and reminders get
their turns, and ``close()`` always finishes. All on the virtual clock.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

from tickler.adapters.stores._memory import MemoryLog
from tickler.shell._clock import VirtualClock, settle
from tickler.shell._reference_host import ReferenceHost, TurnInput
from tickler.shell._runtime import ScheduleRuntime
from tickler.shell._timers import TimerHeap

from .support import SECOND, T0, async_test, new_memory_log

STEPS = 1_000  # virtual seconds at most; a bound on progress, never a timing


class Model:
    """Answers "ok", except that the texts in ``raise_cancelled`` raise
    ``CancelledError`` (once each) and those in ``hang`` never return (once
    each); it notes each call that was cancelled from outside."""

    def __init__(self, *, raise_cancelled: tuple[str, ...] = (), hang: tuple[str, ...] = ()):
        self.raise_cancelled = list(raise_cancelled)
        self.hang = list(hang)
        self.calls: list[str] = []
        self.replied: list[str] = []
        self.cut: list[str] = []

    async def __call__(self, item: TurnInput) -> str:
        self.calls.append(item.text)
        if item.text in self.raise_cancelled:
            self.raise_cancelled.remove(item.text)
            raise asyncio.CancelledError("the framework gave up")  # not the host's own
        if item.text in self.hang:
            self.hang.remove(item.text)
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.cut.append(item.text)
                raise
        self.replied.append(item.text)
        return "ok"


async def run_until(clock: VirtualClock, done: Callable[[], bool]) -> None:
    for _ in range(STEPS):
        if done():
            return
        await clock.advance(SECOND)
    assert done(), "no progress"


def records(log: MemoryLog, kind: str) -> list[dict[str, object]]:
    return [json.loads(bytes(e.data)) for e in log.events() if e.type == kind]


async def closed_within_progress(clock: VirtualClock, host: ReferenceHost) -> None:
    """Close ``host``, letting virtual time pass; fail (not hang) if it never ends."""
    closing = asyncio.ensure_future(host.close())
    await run_until(clock, closing.done)
    await closing


@async_test
async def test_a_model_call_raising_cancelled_error_is_a_failed_attempt() -> None:
    clock = VirtualClock(T0)
    log = new_memory_log()
    model = Model(raise_cancelled=("first",))
    host = ReferenceHost(log, model, clock)
    host.start()
    await host.send("first")
    await host.send("second")
    await run_until(clock, lambda: "second" in model.replied)
    # Failed once, retried after the pause, then both turns ran in order.
    assert model.calls == ["first", "first", "second"]
    [failed] = records(log, "tickler/turn-failed")
    assert failed["input"] == 0
    assert failed["attempt"] == 1
    assert (
        failed["error"]
        == "TurnCancelled: the model call raised CancelledError: the framework gave up"
    )
    assert [t["input"] for t in records(log, "tickler/turn")] == [0, 1]
    assert not host.busy
    assert host.pending_turns == 0
    await asyncio.wait_for(host.close(), 30)


@async_test
async def test_a_model_call_raising_cancelled_error_every_time_is_given_up() -> None:
    clock = VirtualClock(T0)
    log = new_memory_log()
    model = Model(raise_cancelled=("poison",) * 5)
    host = ReferenceHost(log, model, clock)
    host.start()
    await host.send("poison")
    await host.send("next")
    await run_until(clock, lambda: "next" in model.replied)
    assert [f["attempt"] for f in records(log, "tickler/turn-failed")] == [1, 2, 3, 4, 5]
    assert records(log, "tickler/turn-abandoned") == [{"input": 0, "attempts": 5}]
    assert [t["input"] for t in records(log, "tickler/turn")] == [1]
    await asyncio.wait_for(host.close(), 30)


@async_test
async def test_a_model_call_that_never_returns_is_cut_at_the_turn_deadline() -> None:
    # A reminder falls due while the turn hangs: it gets its turn once the
    # hung call is cut at the (default) deadline, and the cut input runs again.
    clock = VirtualClock(T0)
    log = new_memory_log()
    model = Model(hang=("hang",))
    host = ReferenceHost(log, model, clock)
    timers = TimerHeap(clock)
    runtime = ScheduleRuntime(log, host, clock, timers=timers)
    try:
        await runtime.start()
        host.start()
        await host.send("hang")
        answer = await runtime.call_tool("schedule_create", {"prompt": "p", "after_seconds": 10})
        assert json.loads(answer)["id"] == "schedule-1"
        reminded = lambda: any("schedule-1" in text for text in model.replied)  # noqa: E731
        await run_until(clock, reminded)
        assert model.cut == ["hang"]
        [failed] = records(log, "tickler/turn-failed")
        assert failed["attempt"] == 1
        assert failed["error"] == "TurnTimeout: the model call did not return within 300 s"
        assert model.replied[0] == "hang"  # its retry came first, then the reminder
        assert runtime.pending_deliveries == ()
    finally:
        await runtime.dispose()
        await closed_within_progress(clock, host)
        await timers.close()


@async_test
async def test_a_configured_turn_deadline_is_used() -> None:
    clock = VirtualClock(T0)
    log = new_memory_log()
    model = Model(hang=("hang",))
    host = ReferenceHost(log, model, clock, turn_timeout_s=5.0)
    host.start()
    await host.send("hang")
    await settle()
    assert model.calls == ["hang"]
    started = clock.monotonic_ms
    await run_until(clock, lambda: bool(records(log, "tickler/turn-failed")))
    assert clock.monotonic_ms - started == 5 * SECOND
    assert model.cut == ["hang"]
    await run_until(clock, lambda: "hang" in model.replied)
    await asyncio.wait_for(host.close(), 30)


@async_test
async def test_close_finishes_while_a_model_call_hangs_and_the_input_runs_again() -> None:
    clock = VirtualClock(T0)
    log = new_memory_log()
    model = Model(hang=("hang",))
    host = ReferenceHost(log, model, clock)
    host.start()
    await host.send("hang")
    await settle()
    assert model.calls == ["hang"]
    await closed_within_progress(clock, host)
    assert model.cut == ["hang"]
    # Cut by close, not a failure of the model: nothing recorded as failed.
    assert records(log, "tickler/turn-failed") == []
    assert records(log, "tickler/turn") == []
    again = Model()
    second = ReferenceHost(log, again, clock)
    second.start()
    await run_until(clock, lambda: "hang" in again.replied)
    assert [t["input"] for t in records(log, "tickler/turn")] == [0]
    await asyncio.wait_for(second.close(), 30)
