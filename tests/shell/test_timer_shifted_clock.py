"""A clock that moves its milliseconds (a subclass of SystemClock, as a
test's shifted clock is) is slept by the same clock it is judged by: the
heap neither spins on zero-length sleeps (clock set behind) nor sleeps to
its cap (clock set ahead)."""

from __future__ import annotations

import asyncio

import pytest

from tickler.shell._clock import SystemClock
from tickler.shell._timers import TimerHeap


class _Shifted(SystemClock):
    def __init__(self, offset_ms: int) -> None:
        self.offset_ms = offset_ms
        self.sleeps = 0

    def now_ms(self) -> int:
        return super().now_ms() + self.offset_ms

    async def sleep(self, seconds: float) -> None:
        self.sleeps += 1
        await super().sleep(seconds)


class _BothReadings(SystemClock):
    """Moves both readings alike: its nanoseconds may be used."""

    def now_ms(self) -> int:
        return super().now_ms() - 60_000

    def now_ns(self) -> int:
        return super().now_ns() - 60_000 * 1_000_000


@pytest.mark.parametrize("offset_ms", [-60_000, 60_000])
def test_a_shifted_clock_wakes_after_few_sleeps(offset_ms: int) -> None:
    async def run() -> tuple[int, bool]:
        clock = _Shifted(offset_ms)
        heap = TimerHeap(clock, max_wait_s=5.0)
        fired = asyncio.Event()
        heap.arm("owner", clock.now_ms() + 200, fired.set)
        try:
            # The cap (5 s) is far beyond the target (200 ms): a wake that
            # waited for it would miss this bound; a spinning heap would
            # count thousands of sleeps.
            await asyncio.wait_for(fired.wait(), timeout=4.0)
        finally:
            await heap.close()
        return clock.sleeps, fired.is_set()

    sleeps, fired = asyncio.run(run())
    assert fired
    # One sleep to the target; a few more if the loop wakes early.
    assert sleeps <= 5, sleeps


def test_nanoseconds_are_read_only_from_the_class_that_reads_milliseconds() -> None:
    assert TimerHeap(SystemClock())._now_ns is not None
    assert TimerHeap(_Shifted(-1))._now_ns is None
    assert TimerHeap(_BothReadings())._now_ns is not None
