"""Clocks: the wall clock the rules read, and the monotonic sleeping the
runtime waits with.

They are separate on purpose: a wall-clock jump (NTP step, suspend, manual
change) moves ``now_ms`` but not an ongoing ``sleep``. The runtime never
trusts a sleep to end at a wall-clock instant; it re-reads ``now_ms`` on
every wake. ``VirtualClock`` makes both controllable in tests: the wall
clock jumps both ways, sleeps end only when virtual monotonic time passes
them, and nothing sleeps for real.
"""

from __future__ import annotations

import asyncio
import heapq
import time
from collections.abc import Coroutine
from typing import Any, Protocol


class Clock(Protocol):
    def now_ms(self) -> int:
        """Wall-clock time, epoch milliseconds (UTC)."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Wait ``seconds`` of monotonic time."""
        ...


class SystemClock:
    """The process's real clocks."""

    def now_ms(self) -> int:
        return time.time_ns() // 1_000_000

    def now_ns(self) -> int:
        """Wall-clock time, epoch nanoseconds: what the timer heap sleeps
        from, so a wake is not up to a millisecond late by ``now_ms``'s
        rounding down (not part of :class:`Clock`; a clock without it is
        read in milliseconds)."""
        return time.time_ns()

    def monotonic_ns(self) -> int:
        """Monotonic time, nanoseconds: what the timer heap measures its
        sleeps with (not part of :class:`Clock`)."""
        return time.monotonic_ns()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))

    def pause(self, seconds: float) -> None:
        """Block the calling thread for ``seconds`` (a tenth of a
        millisecond at most, between the timer heap's yields to the loop
        just before a target), letting other threads take the GIL meanwhile
        (not part of :class:`Clock`)."""
        time.sleep(seconds)


class VirtualClock:
    """A test clock: ``advance`` moves wall and monotonic time together and
    releases due sleepers; ``set_wall`` jumps the wall clock alone."""

    def __init__(self, wall_ms: int, monotonic_ms: int = 0) -> None:
        self._wall_ms = wall_ms
        self._mono_ms = monotonic_ms
        self._sleepers: list[tuple[int, int, asyncio.Future[None]]] = []
        self._counter = 0

    def now_ms(self) -> int:
        return self._wall_ms

    @property
    def monotonic_ms(self) -> int:
        return self._mono_ms

    def sleep(self, seconds: float) -> Coroutine[Any, Any, None]:
        """Measured from the call, as a real sleep is, not from when the
        awaiting task first runs: a sleep asked for just before an
        ``advance`` (its task not started yet) still ends on time."""
        wake_at = self._mono_ms + max(0, round(seconds * 1000))
        if wake_at <= self._mono_ms:
            return asyncio.sleep(0)
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._counter += 1
        heapq.heappush(self._sleepers, (wake_at, self._counter, future))
        return _wait(future)

    def set_wall(self, wall_ms: int) -> None:
        """Jump the wall clock (forward or back); sleeps are unaffected."""
        self._wall_ms = wall_ms

    async def advance(self, ms: int, *, step_ms: int | None = None) -> None:
        """Let ``ms`` of time pass, in steps no larger than ``step_ms`` (the
        whole span when None), letting woken tasks run after each step."""
        remaining = ms
        while remaining > 0:
            # Tasks already ready run first: a sleep they are about to ask
            # for may end sooner than the next one known.
            await settle()
            step = remaining if step_ms is None else min(step_ms, remaining)
            next_sleeper = self._sleepers[0][0] - self._mono_ms if self._sleepers else step
            step = max(1, min(step, next_sleeper)) if next_sleeper > 0 else step
            self._wall_ms += step
            self._mono_ms += step
            remaining -= step
            await self._release_due()
        await self._release_due()

    async def _release_due(self) -> None:
        while self._sleepers and self._sleepers[0][0] <= self._mono_ms:
            _, _, future = heapq.heappop(self._sleepers)
            if not future.done():
                future.set_result(None)
        await settle()


async def _wait(future: asyncio.Future[None]) -> None:
    await future


async def settle(rounds: int = 50) -> None:
    """Let ready tasks run until the loop has nothing immediate to do."""
    for _ in range(rounds):
        await asyncio.sleep(0)
