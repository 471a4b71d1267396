"""``tickler reminders --due-within 1h``'s query in process (no Python
start-up in it): the median of ``RUNS`` calls, each on a fresh read model
(a read model keeps what it read between calls: a fresh one reads it all)."""

from __future__ import annotations

import asyncio
import statistics
import time
from typing import Final

from tickler.adapters import open_read_model

from .load import SCHEMA

RUNS: Final = 5
HOUR_MS: Final = 3_600_000
LIMIT: Final = 100  # tickler reminders' default --limit


async def _due_within_hour_s(dsn: str) -> float:
    times = []
    for _ in range(RUNS):
        async with open_read_model(dsn, schema=SCHEMA) as model:
            started = time.perf_counter()
            await model.reminders(
                now_ms=time.time_ns() // 1_000_000, due_within_ms=HOUR_MS, limit=LIMIT
            )
            times.append(time.perf_counter() - started)
    return statistics.median(times)


def due_within_hour_s(dsn: str) -> float:
    return asyncio.run(_due_within_hour_s(dsn))
