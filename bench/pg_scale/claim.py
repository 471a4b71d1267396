"""The claim's latency: the store's own ``claim_due``, called as the worker
calls it (up to ``--concurrency``, 16, due sessions, with the wall clock's
now), timed around the call alone: the leasing UPDATE ... FOR UPDATE SKIP
LOCKED and the read of each claimed session's rows. Between calls the
claimed sessions are let go (``close``, untimed), so every call finds as
many due. Also the claim when nothing is due (an idle worker's, each poll)
and ``next_due`` (the worker's look at the earliest wake)."""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final

from tickler.adapters.stores import PostgresStore

from .load import SCHEMA

CALLS: Final = 300
LIMIT: Final = 16  # the worker's default --concurrency


@dataclass(frozen=True)
class Latency:
    median_ms: float
    p99_ms: float

    def __str__(self) -> str:
        return f"{self.median_ms:.2f} / {self.p99_ms:.2f} ms"


def latency(samples: list[float]) -> Latency:
    ordered = sorted(samples)
    p99 = statistics.quantiles(ordered, n=100, method="inclusive")[98]
    return Latency(statistics.median(ordered) * 1000, p99 * 1000)


async def _timed(call: Callable[[], Awaitable[object]], calls: int) -> list[float]:
    await call()  # warm: the pool's connection, the plan
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        await call()
        samples.append(time.perf_counter() - started)
    return samples


async def _measure(dsn: str, due_ms: int, calls: int) -> dict[str, Latency]:
    store = PostgresStore(dsn, schema=SCHEMA)  # the worker's pool size
    samples: list[float] = []
    try:

        async def claim() -> None:
            started = time.perf_counter()
            logs = await store.claim_due(LIMIT, time.time_ns() // 1_000_000)
            samples.append(time.perf_counter() - started)
            if len(logs) != LIMIT:
                raise RuntimeError(f"a claim got {len(logs)} due sessions, not {LIMIT}")
            await asyncio.gather(*(log.close() for log in logs))

        await claim()
        samples.clear()
        for _ in range(calls):
            await claim()
        idle = await _timed(lambda: store.claim_due(LIMIT, due_ms - 1), calls)
        peek = await _timed(store.next_due, calls)
    finally:
        await store.close()
    return {
        f"claim of {LIMIT} due sessions": latency(samples),
        "claim, nothing due": latency(idle),
        "next_due (earliest wake)": latency(peek),
    }


def claim_latency(dsn: str, due_ms: int, calls: int = CALLS) -> dict[str, Latency]:
    """Median and p99 of each call; the burst sessions, due at ``due_ms``,
    must be loaded (they are what the claims find due)."""
    return asyncio.run(_measure(dsn, due_ms, calls))
