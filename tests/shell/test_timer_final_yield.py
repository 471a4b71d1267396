"""On the real clock the timer heap does not sleep through the last
millisecond before a target: the event loop waits in whole milliseconds,
rounded up, so such a sleep ends up to a millisecond late. It sleeps to a
millisecond before, then yields to the loop until the target comes.

The clock here is scripted, not real: a sleep moves it on by its duration
rounded up to the millisecond (as the loop's wait does), and every reading
moves it on by 20 us (the time work takes), so no test waits for anything."""

from __future__ import annotations

import asyncio
import math

from tickler.shell._timers import FINAL_YIELD_S, TimerHeap

TARGET_MS = 1_786_000_000_000
STEP_NS = 20_000  # what each reading of the clock costs


class _ScriptedRealClock:
    """Read in nanoseconds and milliseconds by one class, as SystemClock."""

    def __init__(self, now_ns: int) -> None:
        self.ns = now_ns
        self.slept: list[float] = []

    def now_ns(self) -> int:
        self.ns += STEP_NS
        return self.ns

    def now_ms(self) -> int:
        return self.now_ns() // 1_000_000

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.ns += math.ceil(seconds * 1000) * 1_000_000  # the loop's whole milliseconds
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
