"""Leaving ``open_session`` while the model is answering: the turn in
flight finishes first, its tool calls answered by the live runtime, so the
reminder it sets is kept and the turn is answered. A turn that outlasts
the drain timeout, or whose drain a second cancellation cuts short, is
recorded as cut (``tickler/turn-cut``), never as answered, and runs again
when the session is next opened; a tool call it makes after the runtime
stopped raises ``SessionClosed`` instead of answering ``internal_error``.
On the memory store and the JSONL store, on the virtual clock."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tickler.adapters.stores._jsonl import JsonlStore
from tickler.adapters.stores._memory import MemoryStore
from tickler.core import SessionEvent
from tickler.shell import SessionClosed
from tickler.shell._clock import VirtualClock, settle
from tickler.shell._pending import PendingTurn, pending_work
from tickler.shell._ports import SessionStore
from tickler.shell._reference_host import ReferenceHost, TurnInput
from tickler.shell._session import Session, open_session
from tickler.shell._timers import TimerHeap

SESSION = "s1"
T0 = 1_785_931_200_000  # 2026-08-05T12:00:00.000Z
ASK = "Remind me to stretch in 10 minutes."
STRETCH = {"prompt": "stretch", "after_seconds": 600}
HANG_GUARD_S = 30  # only a guard against a hang, never a timing


@pytest.fixture(params=["memory", "jsonl"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> SessionStore:
    return MemoryStore() if request.param == "memory" else JsonlStore(tmp_path / "sessions")


@dataclass
class Model:
    """A model mid-answer: it starts, waits for ``go``, then sets the
    reminder through the session's tools and replies with the tool's text.
    ``stubborn``: a cut does not stop it (a framework that swallows the
    cancellation); it calls the tool once ``late`` is set and keeps what
    the call raised in ``raised``."""

    stubborn: bool = False
    session: Session | None = None
    started: asyncio.Event = field(default_factory=asyncio.Event)
    go: asyncio.Event = field(default_factory=asyncio.Event)
    late: asyncio.Event = field(default_factory=asyncio.Event)
    cut: asyncio.Event = field(default_factory=asyncio.Event)
    raised: list[BaseException] = field(default_factory=list)

    def host(self, session: Session) -> ReferenceHost:
        self.session = session
        return ReferenceHost(session.log, self, session.clock)

    async def __call__(self, turn: TurnInput) -> str:
        assert self.session is not None
        self.started.set()
        try:
            await self.go.wait()
        except asyncio.CancelledError:
            self.cut.set()
            if not self.stubborn:
                raise
            await self.late.wait()
        try:
            return await self.session.tools.call_tool("schedule_create", STRETCH)
        except Exception as exc:
            self.raised.append(exc)
            raise


async def answer(session: Session) -> str:
    return await session.tools.call_tool("schedule_create", STRETCH)


async def events_of(store: SessionStore, clock: VirtualClock) -> list[SessionEvent]:
    """The session's owned events, read by opening its log again."""
    log = await store.open(SESSION, created_at=clock.now_ms())
    try:
        return list(log.events(log.header.owned_from))
    finally:
        await log.close()


async def ended(task: asyncio.Future[None]) -> None:
    """Wait for ``task`` to end; fail (never hang) when it does not. A
    teardown cannot be cancelled, so ``wait_for`` would wait on."""
    done, _ = await asyncio.wait({task}, timeout=HANG_GUARD_S)
    assert task in done, "the block was not left"


def of_type(events: list[SessionEvent], kind: str) -> list[dict[str, Any]]:
    return [json.loads(bytes(e.data)) for e in events if e.type == kind]


async def reopened(store: SessionStore, clock: VirtualClock, timers: TimerHeap) -> list[str]:
    """Open the session again with a model that answers at once; the
    prompts of its reminders once every turn left over has run."""
    async with open_session(
        store,
        SESSION,
        host=lambda s: ReferenceHost(s.log, lambda turn: answer(s), s.clock),
        clock=clock,
        timers=timers,
    ) as session:
        await asyncio.wait_for(session.host.when_idle(), HANG_GUARD_S)
        return [r.prompt for r in await session.reminders()]


async def test_a_turn_in_flight_when_the_block_is_left_finishes_with_its_reminder(
    store: SessionStore,
) -> None:
    clock = VirtualClock(T0)
    timers = TimerHeap(clock)
    model = Model()
    try:

        async def block() -> None:
            async with open_session(
                store, SESSION, host=model.host, clock=clock, timers=timers
            ) as session:
                await session.host.send(ASK)
                await model.started.wait()  # the model is answering

        leaving = asyncio.ensure_future(block())
        await asyncio.wait_for(model.started.wait(), HANG_GUARD_S)
        await settle()  # the teardown is under way
        assert not leaving.done()
        model.go.set()  # the model calls the tool and answers
        await ended(leaving)
        await leaving
        assert model.raised == []
        events = await events_of(store, clock)
        [turn] = of_type(events, "tickler/turn")
        assert json.loads(turn["reply"])["id"] == "schedule-1"
        assert of_type(events, "tickler/turn-cut") == []
        assert await reopened(store, clock, timers) == ["stretch"]
    finally:
        await timers.close()
        await store.close()


async def test_a_turn_longer_than_the_drain_timeout_is_cut_and_runs_again(
    store: SessionStore,
) -> None:
    clock = VirtualClock(T0)
    timers = TimerHeap(clock)
    model = Model(stubborn=True)
    try:

        async def block() -> None:
            async with open_session(
                store,
                SESSION,
                host=model.host,
                clock=clock,
                timers=timers,
                drain_timeout_s=5,
            ) as session:
                await session.host.send(ASK)
                await model.started.wait()

        leaving = asyncio.ensure_future(block())
        await asyncio.wait_for(model.started.wait(), HANG_GUARD_S)
        await clock.advance(4_999)
        assert not leaving.done()  # the drain still waits for the turn
        await clock.advance(1)
        await ended(leaving)
        await leaving
        assert model.cut.is_set()
        events = await events_of(store, clock)
        assert of_type(events, "tickler/turn") == []
        assert of_type(events, "tickler/turn-cut") == [
            {"input": 0, "attempt": 1, "reason": "timeout"}
        ]
        assert pending_work(events).turns == (PendingTurn(0, "user", None, starts=1, cuts=1),)
        # The cut model goes on regardless: its tool call fails loudly.
        model.late.set()
        await settle()
        [raised] = model.raised
        assert isinstance(raised, SessionClosed)
        assert await reopened(store, clock, timers) == ["stretch"]
        events = await events_of(store, clock)
        assert [t["input"] for t in of_type(events, "tickler/turn")] == [0]
    finally:
        await timers.close()
        await store.close()


@pytest.mark.parametrize("cancels", [1, 2])
async def test_a_cancelled_block_drains_and_a_second_cancellation_cuts(
    store: SessionStore, cancels: int
) -> None:
    clock = VirtualClock(T0)
    timers = TimerHeap(clock)
    model = Model()
    inside = asyncio.Event()
    try:

        async def block() -> None:
            async with open_session(
                store, SESSION, host=model.host, clock=clock, timers=timers
            ) as session:
                await session.host.send(ASK)
                await model.started.wait()
                inside.set()
                await asyncio.Event().wait()  # until cancelled

        task = asyncio.ensure_future(block())
        await asyncio.wait_for(inside.wait(), HANG_GUARD_S)
        task.cancel()
        await settle()
        assert not task.done()  # the turn in flight is let finish
        if cancels == 2:
            task.cancel()  # do not wait: cut it now
        else:
            model.go.set()
        await ended(task)
        with pytest.raises(asyncio.CancelledError):
            await task
        events = await events_of(store, clock)
        if cancels == 1:
            assert len(of_type(events, "tickler/turn")) == 1
            assert of_type(events, "tickler/turn-cut") == []
            assert model.raised == []
        else:
            assert model.cut.is_set()
            assert of_type(events, "tickler/turn") == []
            assert of_type(events, "tickler/turn-cut") == [
                {"input": 0, "attempt": 1, "reason": "cancelled"}
            ]
        assert await reopened(store, clock, timers) == ["stretch"]
    finally:
        await timers.close()
        await store.close()
