"""On the real clock the timer heap does not sleep through the last
millisecond before a target: the event loop waits in whole milliseconds,
rounded up, so such a sleep ends up to a millisecond late. It sleeps to a
millisecond before, then yields to the loop until the target comes. Where
sleeps end later still (a machine slow to run a thread that slept), it
learns by how much and sleeps that much shorter, up to MAX_MARGIN_S.

The clock here is scripted, not real: a sleep moves it on by its duration
rounded up to the millisecond (as the loop's wait does), and every reading
moves it on by 20 us (the time work takes), so no test waits for anything.
Its wall clock (``ns``) and its monotonic clock (``mono``) move together
unless a test steps the wall clock alone."""

from __future__ import annotations

import asyncio
import math
import sys
import threading
import time
from collections.abc import Callable

import pytest

from tickler.shell import HandBacks
from tickler.shell._clock import SystemClock
from tickler.shell._timers import FINAL_YIELD_S, MAX_MARGIN_S, PAUSE_S, TimerHeap

TARGET_MS = 1_786_000_000_000
STEP_NS = 20_000  # what each reading of the clock costs


class _ScriptedRealClock:
    """Read in nanoseconds and milliseconds by one class, as SystemClock."""

    def __init__(self, now_ns: int, overrun_ns: int = 0) -> None:
        self.ns = now_ns
        self.mono = 0
        self.overrun_ns = overrun_ns  # how much later than the loop's rounding a sleep ends
        self.overruns: list[int] = []  # the next sleeps' overruns, in order, before overrun_ns
        self.wall_steps: list[int] = []  # the next sleeps' steps of the wall clock alone
        self.hang_next = False  # the next sleep never ends by itself
        self.slept: list[float] = []

    def _advance(self, ns: int) -> None:
        self.ns += ns
        self.mono += ns

    def now_ns(self) -> int:
        self._advance(STEP_NS)
        return self.ns

    def now_ms(self) -> int:
        return self.now_ns() // 1_000_000

    def monotonic_ns(self) -> int:
        self._advance(STEP_NS)
        return self.mono

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        if self.hang_next:
            self.hang_next = False
            await asyncio.get_running_loop().create_future()  # until cancelled
        self._advance(math.ceil(seconds * 1000) * 1_000_000)  # the loop's whole milliseconds
        self._advance(self.overruns.pop(0) if self.overruns else self.overrun_ns)
        if self.wall_steps:
            self.ns += self.wall_steps.pop(0)
        await asyncio.sleep(0)


async def _lateness_of_one_wake(clock: _ScriptedRealClock, heap: TimerHeap) -> int:
    """How late (ns) ``heap`` wakes for TARGET_MS on ``clock``; the heap is closed after."""
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
    return woke[0] - TARGET_MS * 1_000_000


def wake_lateness_ns(start_before_ms: float) -> tuple[int, list[float]]:
    async def run() -> tuple[int, list[float]]:
        clock = _ScriptedRealClock(int((TARGET_MS - start_before_ms) * 1_000_000))
        return await _lateness_of_one_wake(clock, TimerHeap(clock)), clock.slept

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


def wakes_lateness_ns(
    overrun_ns: int, wakes: int, script: Callable[[_ScriptedRealClock], None] = lambda _: None
) -> tuple[list[int], float]:
    """Each wake's lateness, for targets 100 ms apart, each armed when the
    one before woke, on a clock whose sleeps end ``overrun_ns`` late (and
    as ``script`` sets it up)."""

    async def run() -> tuple[list[int], float]:
        clock = _ScriptedRealClock((TARGET_MS - 100) * 1_000_000, overrun_ns)
        script(clock)
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
    late, margin = wakes_lateness_ns(1_500_000, 12)
    # The first wakes are late by what the sleeps overran past the margin...
    assert late[0] > 500_000, late
    # ...then the heap sleeps that much shorter and yields to the target.
    assert all(0 <= ns < 200_000 for ns in late[3:]), late
    assert 0.0015 < margin <= MAX_MARGIN_S, margin


def test_the_margin_is_bounded_however_late_sleeps_end() -> None:
    late, margin = wakes_lateness_ns(40_000_000, 6)
    assert margin == MAX_MARGIN_S  # at most 3 ms spent yielding per wake
    assert all(ns > 30_000_000 for ns in late), late


def test_sleeps_that_end_on_time_keep_the_least_margin() -> None:
    late, margin = wakes_lateness_ns(0, 12)
    assert margin == FINAL_YIELD_S
    assert all(0 <= ns < 200_000 for ns in late), late


def test_one_late_sleep_among_many_is_not_learned() -> None:
    def one_outlier(clock: _ScriptedRealClock) -> None:
        clock.overruns = [300_000] * 5 + [40_000_000] + [300_000] * 5

    late, margin = wakes_lateness_ns(0, 11, one_outlier)
    assert margin == FINAL_YIELD_S  # the second largest overrun, 0.3 ms (+0.2), not 40 ms
    assert sum(ns > 30_000_000 for ns in late) == 1, late  # only the outlier's wake was late


def test_a_wall_clock_stepped_during_sleeps_is_no_overrun() -> None:
    async def run() -> float:
        clock = _ScriptedRealClock(TARGET_MS * 1_000_000)
        clock.wall_steps = [0, 0, 2_000_000_000, 0, 0, 3_000_000_000, 0, 0]
        heap = TimerHeap(clock)
        wakes: list[int] = []
        done = asyncio.Event()

        def wake() -> None:  # the next target 100 ms after this wake, as a new reminder's
            wakes.append(clock.ns)
            if len(wakes) == 8:
                done.set()
            else:
                heap.arm("owner", clock.ns // 1_000_000 + 100, wake)

        heap.arm("owner", TARGET_MS + 100, wake)
        try:
            await asyncio.wait_for(done.wait(), timeout=5)
        finally:
            await heap.close()
        return heap.margin_s

    # Two sleeps during which the wall clock stepped on by seconds: measured
    # on the wall clock they would read as overruns and hold the margin at
    # its cap; on the monotonic clock the sleeps slept, none overran.
    assert asyncio.run(run()) == FINAL_YIELD_S


def test_a_sleep_cut_short_by_an_earlier_arm_is_not_learned() -> None:
    async def run() -> list[float]:
        clock = _ScriptedRealClock(TARGET_MS * 1_000_000, overrun_ns=1_500_000)
        heap = TimerHeap(clock, max_wait_s=100.0)
        fired = asyncio.Event()
        clock.hang_next = True
        heap.arm("far", TARGET_MS + 60_000, fired.set)  # a 60 s sleep, cut short below
        for _ in range(5):
            await asyncio.sleep(0)
        assert len(clock.slept) == 1
        # Cut short after no time at all: learned, it would read as -60 s.
        heap.arm("near", TARGET_MS + 100, fired.set)
        try:
            await asyncio.wait_for(fired.wait(), timeout=5)
        finally:
            await heap.close()
        return list(heap._overruns)

    overruns = asyncio.run(run())
    # Only the whole sleep to "near": about 1.5 ms past its end.
    assert len(overruns) == 1, overruns
    assert 0.0015 <= overruns[0] < 0.003, overruns


class _PausingClock(_ScriptedRealClock):
    """Also pauses its thread, as SystemClock does: a pause moves the clock
    on by its length and notes when it began (in ns before the target). A
    length of zero or less raises, as ``time.sleep`` does for a negative one."""

    def __init__(self, now_ns: int) -> None:
        super().__init__(now_ns)
        self.paused: list[tuple[int, float]] = []

    def pause(self, seconds: float) -> None:
        if seconds <= 0:
            raise ValueError(f"a pause of {seconds} s")
        self.paused.append((TARGET_MS * 1_000_000 - self.ns, seconds))
        self._advance(int(seconds * 1e9))


def paused_before_a_target(
    jobs_out: int, start_before_ns: int
) -> tuple[int, list[tuple[int, float]]]:
    """A wake's lateness and the heap's pauses, its margin at the cap, with
    ``jobs_out`` jobs held by other threads for the loop."""

    async def run() -> tuple[int, list[tuple[int, float]]]:
        clock = _PausingClock(TARGET_MS * 1_000_000 - start_before_ns)
        hand_backs = HandBacks()
        for _ in range(jobs_out):
            hand_backs.started()
        heap = TimerHeap(clock, hand_backs=hand_backs)
        heap.margin_s = MAX_MARGIN_S
        return await _lateness_of_one_wake(clock, heap), clock.paused

    return asyncio.run(run())


# From 10 ms before (a sleep, then the yield), and from within the margin
# at a few offsets, down to where the last pause would end past the target.
STARTS_NS = [10_000_000, 2_900_000, 250_000, 230_000, 210_000, 190_000, 80_000]


@pytest.mark.parametrize("start_before_ns", STARTS_NS)
def test_while_a_thread_holds_a_job_for_the_loop_the_heap_lets_it_run(
    start_before_ns: int,
) -> None:
    # A loop that only yields keeps the GIL: a store's sync thread, done
    # with its fsync meanwhile, would wait for the whole yield (CPython
    # hands the GIL over on request only after 5 ms). Between yields the
    # heap pauses its thread, a tenth of a millisecond at a time, and not
    # in the last two tenths before the target (a pause ends late).
    late, paused = paused_before_a_target(1, start_before_ns)
    assert 0 <= late < 200_000, late
    assert all(seconds == PAUSE_S for _, seconds in paused), paused
    assert all(before >= 2 * PAUSE_S * 1e9 for before, _ in paused), paused
    # It paused for most of the time it yielded before the last two tenths
    # (the rest: its readings of the clock, 20 us each here).
    yielded_s = min(start_before_ns / 1e9, MAX_MARGIN_S) - 2 * PAUSE_S
    if yielded_s > 3 * PAUSE_S:
        assert sum(seconds for _, seconds in paused) >= 0.6 * yielded_s, paused


def test_with_no_job_out_the_heap_only_yields() -> None:
    # A pause stops the whole loop while it lasts: with no thread waiting
    # for the GIL, every other task would pay it at each of its awaits.
    late, paused = paused_before_a_target(0, 10_000_000)
    assert 0 <= late < 200_000, late
    assert paused == []


def test_the_system_clock_pauses_its_thread_for_as_long_as_asked() -> None:
    clock = SystemClock()
    began = time.monotonic_ns()
    clock.pause(PAUSE_S)
    assert time.monotonic_ns() - began >= PAUSE_S * 1e9


def test_the_system_clock_lets_other_threads_run_while_it_pauses() -> None:
    # With the switch interval at 100 s, a thread waiting for the GIL gets it
    # only when the holder releases it: a pause that kept it (a busy wait)
    # would never let the thread set its flag.
    ran = threading.Event()
    interval = sys.getswitchinterval()
    sys.setswitchinterval(100.0)
    try:
        thread = threading.Thread(target=ran.set)
        thread.start()
        clock = SystemClock()
        for _ in range(10_000):  # a second of pauses at most
            if ran.is_set():
                break
            clock.pause(PAUSE_S)
        assert ran.is_set()
    finally:
        sys.setswitchinterval(interval)
    thread.join()


def test_hand_backs_count_the_jobs_out() -> None:
    hand_backs = HandBacks()
    assert not hand_backs
    hand_backs.started()
    hand_backs.started()
    hand_backs.finished()
    assert hand_backs
    hand_backs.finished()
    assert not hand_backs
