"""On the real clock the timer heap does not sleep through the last
millisecond before a target: the event loop waits in whole milliseconds,
rounded up, so such a sleep ends up to a millisecond late. It sleeps to a
millisecond before, then yields to the loop until the target comes. Where
sleeps end later still (a machine slow to run a thread that slept), it
learns by how much and sleeps that much shorter, up to MAX_MARGIN_S.

The clock here is scripted, not real: a sleep moves it on by its duration
rounded up to the millisecond (as the loop's wait does), and every reading
moves it on by 20 us (the time work takes), so no test waits for anything."""

from __future__ import annotations

import asyncio
import math

from tickler.shell._timers import FINAL_YIELD_S, MAX_MARGIN_S, TimerHeap

TARGET_MS = 1_786_000_000_000
STEP_NS = 20_000  # what each reading of the clock costs


class _ScriptedRealClock:
    """Read in nanoseconds and milliseconds by one class, as SystemClock."""

    def __init__(self, now_ns: int, overrun_ns: int = 0) -> None:
        self.ns = now_ns
        self.overrun_ns = overrun_ns  # how much later than the loop's rounding a sleep ends
        self.slept: list[float] = []

    def now_ns(self) -> int:
        self.ns += STEP_NS
        return self.ns

    def now_ms(self) -> int:
        return self.now_ns() // 1_000_000

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.ns += math.ceil(seconds * 1000) * 1_000_000  # the loop's whole milliseconds
        self.ns += self.overrun_ns
        await asyncio.sleep(0)


def wake_lateness_ns(start_before_ms: float) -> tuple[int, list[float]]:
    async def run() -> tuple[int, list[float]]:
        clock = _ScriptedRealClock(int((TARGET_MS - start_before_ms) * 1_000_000))
        heap = TimerHeap(clock)
        woke: list[int] = []
        fired = asyncio.Event()

        def wake() -> None:
            woke.append(clock.ns)
            fired.set()

        heap.arm("owner", TARGET_MS, wake)
        try:
            await asyncio.wait_for(fired.wait(), timeout=5)
        finally:
            await heap.close()
        return woke[0] - TARGET_MS * 1_000_000, clock.slept

    return asyncio.run(run())


def test_the_wake_is_not_a_rounded_millisecond_late() -> None:
    late, slept = wake_lateness_ns(10.3)
    assert 0 <= late < 200_000, late  # a few readings, not the loop's rounding
    # One sleep, to a millisecond before the target (less the readings).
    assert len(slept) == 1
    assert 0.0092 < slept[0] <= 0.0103 - FINAL_YIELD_S


def test_a_target_within_the_last_millisecond_is_not_slept_for() -> None:
    late, slept = wake_lateness_ns(0.5)
    assert 0 <= late < 200_000, late
    assert slept == []


def wakes_lateness_ns(overrun_ns: int, wakes: int) -> tuple[list[int], float]:
    """Each wake's lateness, for targets 100 ms apart, each armed when the
    one before woke, on a clock whose sleeps end ``overrun_ns`` late."""

    async def run() -> tuple[list[int], float]:
        clock = _ScriptedRealClock((TARGET_MS - 100) * 1_000_000, overrun_ns)
        heap = TimerHeap(clock)
        late: list[int] = []
        done = asyncio.Event()

        def wake(target: int) -> None:
            late.append(clock.ns - target * 1_000_000)
            if len(late) == wakes:
                done.set()
            else:
                heap.arm("owner", target + 100, lambda: wake(target + 100))

        heap.arm("owner", TARGET_MS, lambda: wake(TARGET_MS))
        try:
            await asyncio.wait_for(done.wait(), timeout=5)
        finally:
            await heap.close()
        return late, heap.margin_s

    return asyncio.run(run())


def test_a_machine_slow_to_wake_is_learned_and_slept_short_of() -> None:
    late, margin = wakes_lateness_ns(2_500_000, 12)
    # The first wakes are late by what the sleeps overran past the margin...
    assert late[0] > 1_000_000, late
    # ...then the heap sleeps that much shorter and yields to the target.
    assert all(0 <= ns < 200_000 for ns in late[3:]), late
    assert 0.0025 < margin < 0.004, margin


def test_the_margin_is_bounded_however_late_sleeps_end() -> None:
    late, margin = wakes_lateness_ns(40_000_000, 6)
    assert margin == MAX_MARGIN_S  # at most 5 ms spent yielding per wake
    assert all(ns > 30_000_000 for ns in late), late


def test_sleeps_that_end_on_time_keep_the_least_margin() -> None:
    late, margin = wakes_lateness_ns(0, 12)
    assert margin == FINAL_YIELD_S
    assert all(0 <= ns < 200_000 for ns in late), late
