"""Figure 4's timing: the medians per call of several calls (one per store
size), timed in alternating blocks in one process, so that each size sees
the same machine (on a shared machine, the same call timed a minute apart
in two processes differs by more than what is measured)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Final

WARMUP: Final = 50  # untimed calls of each first
BLOCKS: Final = 20  # turns each call gets


def interleaved_us(calls: Sequence[Callable[[], object]], count: int) -> list[float]:
    """The median of ``count`` timed calls of each of ``calls``, microseconds."""
    for call in calls:
        for _ in range(WARMUP):
            call()
    taken: list[list[float]] = [[] for _ in calls]
    for _ in range(BLOCKS):
        for call, out in zip(calls, taken, strict=True):
            for _ in range(max(1, count // BLOCKS)):
                t0 = time.perf_counter()
                call()
                out.append(time.perf_counter() - t0)
    return [statistics.median(out) * 1e6 for out in taken]


async def interleaved_async_us(
    calls: Sequence[Callable[[], Awaitable[object]]], count: int
) -> list[float]:
    """The same for coroutine functions (each call awaited in turn)."""
    for call in calls:
        for _ in range(WARMUP):
            await call()
    taken: list[list[float]] = [[] for _ in calls]
    for _ in range(BLOCKS):
        for call, out in zip(calls, taken, strict=True):
            for _ in range(max(1, count // BLOCKS)):
                t0 = time.perf_counter()
                await call()
                out.append(time.perf_counter() - t0)
    return [statistics.median(out) * 1e6 for out in taken]
