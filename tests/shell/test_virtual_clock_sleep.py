"""A virtual sleep is measured from when it is asked for, as a real one
is, not from when its task first runs: a sleep asked for just before the
clock advances (its task not yet started) still ends on time. Without this
a timer heap that computed its delay and then lost the race to an
``advance`` slept one step too long, and a test waiting for the wake hung
(seen once in 150 runs of the inspect --why story on a loaded machine)."""

from __future__ import annotations

import asyncio

from tickler.shell._clock import VirtualClock
from tickler.shell._timers import TimerHeap


def test_a_sleep_asked_for_before_an_advance_ends_on_time() -> None:
    async def main() -> tuple[bool, bool]:
        clock = VirtualClock(0)
        sleeper = asyncio.ensure_future(clock.sleep(5))  # its task has not run yet
        await clock.advance(3000)
        early = sleeper.done()
        await clock.advance(2000)
        return early, sleeper.done()

    early, on_time = asyncio.run(main())
    assert not early
    assert on_time


def test_a_timer_armed_just_before_an_advance_fires_in_it() -> None:
    async def main() -> list[int]:
        clock = VirtualClock(0)
        heap = TimerHeap(clock, max_wait_s=86_400.0)
        fired: list[int] = []
        heap.arm("a", 60_000, lambda: fired.append(clock.now_ms()))
        await clock.advance(30_000)
        heap.arm("b", 40_000, lambda: fired.append(clock.now_ms()))
        await clock.advance(30_000)
        await heap.close()
        return fired

    assert asyncio.run(main()) == [40_000, 60_000]
