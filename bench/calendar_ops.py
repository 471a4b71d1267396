"""Per-operation cost with 10,000 calendar reminders in a session vs with 10.

Run ``python -m bench.calendar_ops`` (``make bench-calendar-ops``, a few
minutes: listing 10,000 reminders is most of it) or ``python -m
bench.calendar_ops --quick`` (about a minute).

Two sessions, one holding 10 calendar reminders and one holding 10,000
(cron rules in a dozen zones, none due during the run), take the same
operations in turns, and each operation's time per call is compared:

* core: ``handle`` (parse, decide, render) plus ``fold_changes`` for a
  create and for a delete; ``decide(DeliverDue())`` plus ``evolve`` for a
  delivery of a calendar reminder that fires every minute (its catch-up and
  next occurrence included); ``handle`` for a list;
* session: the same through ``open_session`` on the memory store with a
  virtual clock (the tool pipeline, the session's queue, the log's append
  and durability barrier, the wake index and the timer heap); a delivery is
  one virtual minute passing until the host has the follow-up.

Each round creates ``calls`` reminders in a row, then deletes them in a
row (work a call leaves to the runtime's tasks lands in the next call of
the same kind), so each session returns to its size. A
list answers with every reminder, so its cost grows with the answer: it is
shown, per call and per listed reminder, but it is not one of the
constant-cost operations the 1.3x bound is about.

The figure per operation is the median over rounds of the mean time per call
(the sessions take turns within each round), and the ratio large/small.
Only ratios measured in the same run mean much: the machine is shared.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import platform
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import AsyncExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Final

from tickler.adapters.stores._memory import MemoryStore
from tickler.core import (
    EMPTY_STATE,
    DeliverDue,
    Delivery,
    State,
    decide,
    evolve,
    fold_changes,
    handle,
    parse_instant,
)
from tickler.shell._clock import VirtualClock, settle
from tickler.shell._host import FollowUp, IdleClaim, ReleaseOnce
from tickler.shell._session import Session, open_session
from tickler.shell._timers import TimerHeap

SMALL: Final = 10
LARGE: Final = 10_000
BOUND: Final = 1.3
START: Final = parse_instant("2026-03-10T12:00:30.000Z")  # a Tuesday
MINUTE_MS: Final = 60_000
# Background rules: none falls in the few hours a run covers.
RULES: Final = ("0 9 1 1 *", "30 8 15 6 *", "0 7 * 12 1-5", "15 6 1 */3 *", "@yearly")
ZONES: Final = (
    "Europe/Berlin",
    "America/New_York",
    "Asia/Tokyo",
    "Australia/Lord_Howe",
    "America/Sao_Paulo",
    "Asia/Kolkata",
    "Pacific/Chatham",
    "Europe/London",
    "Africa/Cairo",
    "America/Los_Angeles",
    "Pacific/Apia",
    "UTC",
)
TICKING: Final = {"cron": "* * * * *", "time_zone": "Europe/Berlin"}
OPS: Final = ("create", "delete", "deliver", "list")
CONSTANT_OPS: Final = ("create", "delete", "deliver")


def background(n: int) -> dict[str, object]:
    rule = {"cron": RULES[n % len(RULES)], "time_zone": ZONES[n % len(ZONES)]}
    return {"prompt": f"background {n}", "calendar": rule}


@dataclass(frozen=True)
class Config:
    calls: int  # calls of each operation per round
    rounds: int


@dataclass
class Timings:
    """Seconds per call, one entry per round, per operation."""

    per_call: dict[str, list[float]] = field(default_factory=lambda: {op: [] for op in OPS})

    def median_us(self, op: str) -> float:
        return statistics.median(self.per_call[op]) * 1e6


def _create_args(n: int) -> dict[str, object]:
    return {"prompt": f"measured {n}", "calendar": TICKING}


def _created_id(text: str) -> str:
    if not text.startswith('{"id":"'):
        raise SystemExit(f"a create was refused: {text}")
    return text.split('"', 4)[3]


# -- the core ---------------------------------------------------------------


class CoreSession:
    """A session as the core sees it: a state and a clock value."""

    def __init__(self, size: int) -> None:
        self.now = START
        self.state: State = EMPTY_STATE
        for n in range(size):
            self._tool("schedule_create", background(n))
        self.ticking = _created_id(self._tool("schedule_create", _create_args(0)))
        self.size = size
        self.made = 0

    def _tool(self, name: str, args: dict[str, object]) -> str:
        changes, text = handle(self.state, name, args, now=self.now)
        self.state = fold_changes(changes, self.state)
        return text

    def create_delete(self, calls: int, timings: Timings) -> None:
        started = time.perf_counter()
        made = [self._tool("schedule_create", _create_args(self.made + n)) for n in range(calls)]
        created = time.perf_counter()
        for text in made:
            self._tool("schedule_delete", {"id": _created_id(text)})
        timings.per_call["create"].append((created - started) / calls)
        timings.per_call["delete"].append((time.perf_counter() - created) / calls)
        self.made += calls

    def deliver(self, calls: int, timings: Timings) -> None:
        spent = 0.0
        for _ in range(calls):
            self.now += MINUTE_MS
            started = time.perf_counter()
            changes, result = decide(self.state, DeliverDue(), self.now)
            for change in changes:
                self.state = evolve(self.state, change)
            spent += time.perf_counter() - started
            outcome = result.unwrap()
            if not isinstance(outcome, Delivery) or len(outcome.occurrences) != 1:
                raise SystemExit(f"expected one delivery, got {outcome!r}")
        timings.per_call["deliver"].append(spent / calls)

    def list(self, calls: int, timings: Timings) -> None:
        started = time.perf_counter()
        for _ in range(calls):
            self._tool("schedule_list", {})
        timings.per_call["list"].append((time.perf_counter() - started) / calls)


# -- the session ------------------------------------------------------------


class Taker:
    """A host that takes every follow-up at once, and says when one came."""

    def __init__(self) -> None:
        self.arrived = asyncio.Event()
        self.count = 0

    def claim_idle(self) -> IdleClaim | None:
        return ReleaseOnce(lambda: None)

    async def when_idle(self) -> None:
        return None

    async def followup(self, message: FollowUp) -> None:
        self.count += 1
        self.arrived.set()


class LiveSession:
    def __init__(self, session: Session[Taker], clock: VirtualClock) -> None:
        self.session = session
        self.clock = clock
        self.made = 0

    async def tool(self, name: str, args: dict[str, object]) -> str:
        return await self.session.tools.call_tool(name, args)

    async def fill(self, size: int) -> None:
        for n in range(size):
            _created_id(await self.tool("schedule_create", background(n)))
        _created_id(await self.tool("schedule_create", _create_args(0)))

    async def create_delete(self, calls: int, timings: Timings) -> None:
        started = time.perf_counter()
        made = [
            await self.tool("schedule_create", _create_args(self.made + n)) for n in range(calls)
        ]
        await settle()  # what the creates left to the runtime's tasks is theirs
        created = time.perf_counter()
        for text in made:
            await self.tool("schedule_delete", {"id": _created_id(text)})
        await settle()
        timings.per_call["create"].append((created - started) / calls)
        timings.per_call["delete"].append((time.perf_counter() - created) / calls)
        self.made += calls

    async def deliver(self, calls: int, timings: Timings) -> None:
        host = self.session.host
        spent = 0.0
        for _ in range(calls):
            host.arrived.clear()
            before = host.count
            started = time.perf_counter()
            await self.clock.advance(MINUTE_MS)
            await host.arrived.wait()
            spent += time.perf_counter() - started
            if host.count != before + 1:
                raise SystemExit("expected one follow-up per minute")
        timings.per_call["deliver"].append(spent / calls)

    async def list(self, calls: int, timings: Timings) -> None:
        started = time.perf_counter()
        for _ in range(calls):
            await self.tool("schedule_list", {})
        timings.per_call["list"].append((time.perf_counter() - started) / calls)


# -- running ----------------------------------------------------------------


@contextmanager
def _no_gc() -> Iterator[None]:
    """A round without the collector: a pause would land on one size only."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def bench_core(config: Config) -> dict[int, Timings]:
    sessions = {size: CoreSession(size) for size in (SMALL, LARGE)}
    timings = {size: Timings() for size in sessions}
    for _ in range(config.rounds):
        # Operation by operation, the sizes take turns: a slow moment of the
        # shared machine lands on both.
        with _no_gc():
            for size, s in sessions.items():
                s.create_delete(config.calls, timings[size])
            for size, s in sessions.items():
                s.deliver(config.calls, timings[size])
            for size, s in sessions.items():
                s.list(max(1, config.calls // 100), timings[size])
    return timings


async def _with_sessions(run: Callable[[dict[int, LiveSession]], Awaitable[None]]) -> None:
    async with AsyncExitStack() as stack:
        live: dict[int, LiveSession] = {}
        for size in (SMALL, LARGE):
            clock = VirtualClock(START)
            store = MemoryStore()
            stack.push_async_callback(store.close)
            # One sleep to the next target (the default re-reads the wall
            # clock every second: 60 steps of the virtual clock per minute).
            heap = TimerHeap(clock, max_wait_s=3600.0)
            stack.push_async_callback(heap.close)
            session = await stack.enter_async_context(
                open_session(store, f"s{size}", host=lambda _s: Taker(), clock=clock, timers=heap)
            )
            live[size] = LiveSession(session, clock)
            await live[size].fill(size)
        await run(live)


def bench_session(config: Config) -> dict[int, Timings]:
    timings = {size: Timings() for size in (SMALL, LARGE)}

    async def run(live: dict[int, LiveSession]) -> None:
        for _ in range(config.rounds):
            with _no_gc():
                # Both sessions share the loop: each batch starts when the
                # other session's tasks have nothing left to do.
                for size, s in live.items():
                    await settle()
                    await s.create_delete(config.calls, timings[size])
                for size, s in live.items():
                    await settle()
                    await s.deliver(config.calls, timings[size])
                for size, s in live.items():
                    await settle()
                    await s.list(max(1, config.calls // 100), timings[size])

    asyncio.run(_with_sessions(run))
    return timings


def report(layer: str, timings: dict[int, Timings]) -> list[float]:
    """Print one layer's table; the ratios of the constant-cost operations."""
    small, large = timings[SMALL], timings[LARGE]
    print(f"\n{layer}: time per call (median over rounds)")
    print(
        f"  {'operation':<10} {f'{SMALL} reminders':>16} {f'{LARGE:,} reminders':>18} {'ratio':>8}"
    )
    ratios: list[float] = []
    for op in OPS:
        a, b = small.median_us(op), large.median_us(op)
        ratio = b / a
        note = ""
        if op in CONSTANT_OPS:
            ratios.append(ratio)
            note = "  ok" if ratio <= BOUND else f"  OVER {BOUND}x"
        else:
            per_item = b / (LARGE + 1)
            note = f"  (answers every reminder: {per_item:.2f} us per listed reminder)"
        print(f"  {op:<10} {a:>13.1f} us {b:>15.1f} us {ratio:>7.2f}x{note}")
    return ratios


def parse_args(argv: Sequence[str] | None) -> Config:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls and rounds")
    args = parser.parse_args(argv)
    return Config(calls=50, rounds=9) if args.quick else Config(calls=100, rounds=31)


def main(argv: Sequence[str] | None = None) -> int:
    config = parse_args(argv)
    print(
        f"calendar operations: {SMALL} vs {LARGE:,} calendar reminders in a session; "
        f"{config.calls} calls per operation per round, {config.rounds} rounds "
        f"(python {platform.python_version()}, {platform.machine()})"
    )
    worst = max([*report("core", bench_core(config)), *report("session", bench_session(config))])
    verdict = "within" if worst <= BOUND else "OVER"
    print(f"\nworst constant-cost ratio: {worst:.2f}x ({verdict} the {BOUND}x bound)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
