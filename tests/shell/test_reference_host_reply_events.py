"""A model's own events (a framework's messages) ride in the batch of the
turn's ``tickler/turn`` record: one atomic append, then one flush, so they
are durable with the record or not at all; ``on_recorded`` is called once
that batch is appended, and never for a turn that was not recorded."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

from tickler.shell._clock import VirtualClock
from tickler.shell._reference_host import ReferenceHost, TurnInput, TurnReply

from .support import SECOND, T0, RecordingLog, async_test, has, new_memory_log

STEPS = 600  # virtual seconds at most; a bound on progress, never a timing


class Model:
    """Answers every turn with a reply carrying two events of its own, and
    notes what the log looked like when ``on_recorded`` ran."""

    def __init__(self, log: RecordingLog) -> None:
        self.log = log
        self.calls = 0
        self.recorded: list[tuple[int, list[str]]] = []  # (turn, log calls so far)

    async def __call__(self, item: TurnInput) -> TurnReply:
        self.calls += 1
        call = self.calls

        def on_recorded() -> None:
            self.recorded.append((call, list(self.log.calls)))

        events = [
            ("fw/messages", b'{"input":%d,"messages":["m%d"]}' % (item.n, call)),
            ("fw/more", b"[]"),
        ]
        return TurnReply(_Text(f"reply {call}"), events, on_recorded)


class _Text(str):
    """A ``str`` subclass, as some frameworks answer."""


async def run_until(clock: VirtualClock, done: Callable[[], bool]) -> None:
    for _ in range(STEPS):
        if done():
            return
        await clock.advance(SECOND)
    assert done(), "no progress"


@async_test
async def test_the_reply_events_and_the_turn_record_are_one_batch_then_one_flush() -> None:
    clock = VirtualClock(T0)
    log = RecordingLog(new_memory_log())
    model = Model(log)
    host = ReferenceHost(log, model, clock)
    try:
        host.start()
        await host.send("hello")
        await run_until(clock, lambda: host.pending_turns == 0)
    finally:
        await asyncio.wait_for(host.close(), 30)
    turn = log.calls.index("append(messages,more,turn)")
    assert log.calls[turn + 1] == "flush"
    # on_recorded ran once, after the append and before its flush.
    assert [(call, seen[-1]) for call, seen in model.recorded] == [
        (1, "append(messages,more,turn)")
    ]
    events = log.all_events()
    assert [e.type for e in events[-3:]] == ["fw/messages", "fw/more", "tickler/turn"]
    assert json.loads(bytes(events[-1].data)) == {"input": 0, "reply": "reply 1"}
    assert bytes(events[-3].data) == b'{"input":0,"messages":["m1"]}'
    assert len({e.time for e in events[-3:]}) == 1  # stamped by the host's clock, together


@async_test
async def test_a_refused_batch_calls_no_on_recorded_and_the_turn_runs_again() -> None:
    clock = VirtualClock(T0)
    log = RecordingLog(new_memory_log())
    log.fail("append", when=has("turn"))  # the first turn batch: nothing appended
    model = Model(log)
    host = ReferenceHost(log, model, clock)
    try:
        host.start()
        await host.send("hello")
        await run_until(clock, lambda: host.pending_turns == 0)
    finally:
        await asyncio.wait_for(host.close(), 30)
    assert "append(messages,more,turn)!" in log.calls
    assert model.calls == 2
    assert [call for call, _ in model.recorded] == [2]  # only the recorded one
    messages = [bytes(e.data) for e in log.all_events() if e.type == "fw/messages"]
    assert messages == [b'{"input":0,"messages":["m2"]}']


@async_test
async def test_a_failed_model_call_records_no_reply_events() -> None:
    clock = VirtualClock(T0)
    log = RecordingLog(new_memory_log())
    calls: list[str] = []

    async def model(item: TurnInput) -> TurnReply:
        calls.append(item.text)
        if len(calls) == 1:
            raise ValueError("no")
        return TurnReply("ok", [("fw/messages", b"[1]")])

    host = ReferenceHost(log, model, clock)
    try:
        host.start()
        await host.send("hello")
        await run_until(clock, lambda: host.pending_turns == 0)
    finally:
        await asyncio.wait_for(host.close(), 30)
    assert [e.type for e in log.all_events()][-2:] == ["fw/messages", "tickler/turn"]
    assert [e.type for e in log.all_events()].count("fw/messages") == 1
    assert "append(turn-failed)" in log.calls
