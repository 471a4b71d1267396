# ruff: noqa: F811 - pytest fixtures imported by name are parameters too
"""``tickler worker`` delivers a calendar reminder like any other: the wake
index comes from the core's next target, so no code of the worker's knows
calendars. Against the real PostgreSQL."""

from __future__ import annotations

import asyncio

from tickler.adapters.worker._worker import Worker
from tickler.core import parse_instant
from tickler.shell._clock import VirtualClock
from tickler.shell._runtime import ScheduleRuntime

from .pgsupport import PgSchema, pg_schema  # noqa: F401 - the fixture
from .worker_support import (
    NeverIdle,
    Recorder,
    change_kinds,
    delivered_keys,
    now_ms,
    running,
    session_row,
    wait_until,
)

MINUTE = 60_000


class StoppedWall:
    """Real sleeps, a wall clock that reads ``wall_ms`` throughout: what is
    due does not change while the test runs."""

    def __init__(self, wall_ms: int) -> None:
        self.wall_ms = wall_ms

    def now_ms(self) -> int:
        return self.wall_ms

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))


async def test_worker_delivers_a_calendar_reminder_and_wakes_for_the_next(
    pg_schema: PgSchema,
) -> None:
    pg = pg_schema
    store = pg.store()
    # Created ten minutes ago (a clock of our own), every minute: due now.
    created_at = now_ms() - 10 * MINUTE
    log = await store.open("cal", created_at=created_at)
    runtime = ScheduleRuntime(log, NeverIdle(), VirtualClock(created_at))
    try:
        await runtime.start()
        answer = await runtime.call_tool(
            "schedule_create",
            {"prompt": "tick", "calendar": {"cron": "* * * * *", "time_zone": "UTC"}},
        )
        assert '"kind":"calendar"' in answer, answer
    finally:
        await runtime.dispose()
        await log.close()
    first = -(-(created_at + 1) // MINUTE) * MINUTE
    assert session_row(pg, "cal")[0] == first  # the wake index: the first occurrence
    await store.close()

    wall = now_ms() + 30_000  # any instant at least one minute after the create
    recorder = Recorder()
    worker = Worker(
        pg.store(), recorder.target("w"), concurrency=1, poll_s=0.2, clock=StoppedWall(wall)
    )
    async with running(worker):
        await recorder.wait_for(1)
        await wait_until(lambda: len(delivered_keys(pg, "cal")) == 1, 30, "the delivered mark")
        await wait_until(lambda: session_row(pg, "cal")[2] is None, 30, "the release")
    (call,) = recorder.calls
    schedule_id, occurrence = call.key.split("@")
    assert schedule_id == "schedule-1"
    delivered_at = parse_instant(occurrence)
    # latest-only: the occurrence is the minute the worker woke in, not the first missed one
    assert delivered_at == wall // MINUTE * MINUTE
    assert change_kinds(pg, "cal") == ["create", "dispatch"]
    # the next wake is the occurrence after the one delivered
    assert session_row(pg, "cal") == (delivered_at + MINUTE, 0, None)
