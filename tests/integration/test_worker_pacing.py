# ruff: noqa: F811 - pytest fixtures imported by name are parameters too
"""A fleet waking to a backlog: ``max_rate`` paces the hand-overs, the
oldest due reminders go first, and a missed fixed-rate reminder comes once.

The workers' clocks are virtual and stand still unless the test moves
them, so the number of tokens, and so of hand-overs, is exact: a paced
worker is left to look for work many times over (counted, never timed)
and must not deliver more than its tokens allow."""

from __future__ import annotations

import itertools
import random
from collections.abc import Mapping, Sequence
from pathlib import Path

from tickler.adapters.stores._postgres import PostgresLog, PostgresStore
from tickler.adapters.stores._sqlite import SqliteStore
from tickler.adapters.worker._worker import Worker
from tickler.core import format_instant
from tickler.shell._clock import VirtualClock
from tickler.shell._runtime import ScheduleRuntime

from .embedded_support import seed as seed_embedded
from .pgsupport import PgSchema, pg_schema  # noqa: F401 - the fixture
from .worker_support import NeverIdle, Recorder, ToolArgs, running, wait_until

T0 = 1_785_931_200_000  # 2026-08-05T12:00:00.000Z
LATER = T0 + 3_600_000  # every reminder below is due by then
STRETCH = {"prompt": "stretch", "after_seconds": 10}


class LookCountingStore(SqliteStore):
    """A real SQLite store that counts the worker's looks at its wake index."""

    looks = 0

    async def next_due(self) -> int | None:
        self.looks += 1
        return await super().next_due()


async def looked_again(store: LookCountingStore, times: int = 5) -> None:
    """Until the worker has looked for work ``times`` more times."""
    target = store.looks + times
    await wait_until(lambda: store.looks >= target, 30, f"{times} more looks")


async def test_a_paced_worker_hands_over_only_what_its_tokens_allow(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    await seed_embedded(
        SqliteStore(path), {f"s{i}": [STRETCH] for i in range(8)}, clock=VirtualClock(T0)
    )
    clock = VirtualClock(LATER)  # stands still: no token comes unless the test moves it
    store = LookCountingStore(path)
    recorder = Recorder()
    # 4 a second: claims of one, a burst of two
    worker = Worker(store, recorder.target("w"), clock=clock, poll_s=0.02, max_rate=4)
    async with running(worker):
        await recorder.wait_for(2)  # the burst
        await looked_again(store)
        assert len(recorder.calls) == 2  # eight are due; no token, no claim
        await clock.advance(250)  # one token
        await recorder.wait_for(3)
        await looked_again(store)
        assert len(recorder.calls) == 3
        await clock.advance(60_000)  # a quiet minute adds one burst, no more
        await recorder.wait_for(5)
        await looked_again(store)
        assert len(recorder.calls) == 5
    assert worker.pace is not None
    assert worker.pace.granted == 5


async def test_extra_hand_overs_of_one_session_are_paid_before_the_next_claim(
    tmp_path: Path,
) -> None:
    path = tmp_path / "store.db"
    three = [{"prompt": f"one-shot {n}", "after_seconds": 5 + n} for n in range(3)]
    await seed_embedded(
        SqliteStore(path),
        {"multi": three, "next": [{"prompt": "later", "after_seconds": 60}]},
        clock=VirtualClock(T0),
    )
    clock = VirtualClock(LATER)
    store = LookCountingStore(path)
    recorder = Recorder()
    worker = Worker(
        store, recorder.target("w"), clock=clock, poll_s=0.02, concurrency=1, max_rate=4
    )
    async with running(worker):
        # "multi" is due first: one claim, three hand-overs (one a turn)
        await recorder.wait_for(3)
        await looked_again(store)
        assert [c.session for c in recorder.calls] == ["multi"] * 3
        # Burst 2, one claim, two extra: a debt of one. 250 ms repays it.
        await clock.advance(250)
        await looked_again(store)
        assert len(recorder.calls) == 3
        await clock.advance(250)
        await recorder.wait_for(4)
    assert [c.session for c in recorder.calls] == ["multi"] * 3 + ["next"]


# -- PostgreSQL: the order after an outage --------------------------------


async def seed_at(
    store: PostgresStore, plan: Mapping[str, Sequence[ToolArgs]], clock: VirtualClock
) -> None:
    """Each session's reminders created at the clock's instant, in the
    plan's order, through a live runtime; then let go."""
    for session_id, creates in plan.items():
        log = await store.open(session_id, created_at=clock.now_ms())
        runtime = ScheduleRuntime(log, NeverIdle(), clock)
        try:
            await runtime.start()
            for args in creates:
                answer = await runtime.call_tool("schedule_create", dict(args))
                assert '"state":"scheduled"' in answer, answer
        finally:
            await runtime.dispose()
            await log.close()


class BatchSpy(PostgresStore):
    """A real store that keeps each claim's sessions, in claim order."""

    batches: list[list[str]]

    async def claim_due(self, limit: int, now_ms: int) -> list[PostgresLog]:
        logs = await super().claim_due(limit, now_ms)
        if logs:
            self.batches = [*getattr(self, "batches", []), [log.header.id for log in logs]]
        return logs


def shuffled_backlog(count: int) -> dict[str, list[ToolArgs]]:
    """Sessions due a minute apart (named so that their names sort by due
    instant), created in a shuffled order."""
    names = [f"s{minute:02d}" for minute in range(1, count + 1)]
    random.Random(30).shuffle(names)
    return {name: [{"prompt": name, "after_seconds": int(name[1:]) * 60}] for name in names}


async def test_one_at_a_time_a_backlog_is_delivered_oldest_due_first(pg_schema: PgSchema) -> None:
    plan = shuffled_backlog(12)
    seeder = pg_schema.store()
    await seed_at(seeder, plan, VirtualClock(T0))
    await seeder.close()
    recorder = Recorder()
    worker = Worker(
        pg_schema.store(),
        recorder.target("w"),
        concurrency=1,
        poll_s=0.05,
        clock=VirtualClock(LATER),
    )
    async with running(worker):
        await recorder.wait_for(12)
    assert [c.session for c in recorder.calls] == sorted(plan)


async def test_paced_claims_take_the_backlog_in_due_order_batch_by_batch(
    pg_schema: PgSchema,
) -> None:
    plan = shuffled_backlog(30)
    seeder = pg_schema.store()
    await seed_at(seeder, plan, VirtualClock(T0))
    await seeder.close()
    recorder = Recorder()
    store = BatchSpy(pg_schema.dsn, schema=pg_schema.schema)
    clock = VirtualClock(LATER)
    worker = Worker(
        store, recorder.target("w"), concurrency=4, poll_s=0.02, clock=clock, max_rate=200
    )
    async with running(worker):
        while len(recorder.calls) < 30:  # tokens come only as the test moves the clock
            await clock.advance(50)
            await wait_until(lambda: len(worker._active) == 0, 30, "the batch to finish")
    batches = store.batches
    assert sorted(name for batch in batches for name in batch) == sorted(plan)  # each once
    for earlier, later in itertools.pairwise(batches):
        assert max(earlier) < min(later), batches  # never a newer one before an older one
    assert max(len(batch) for batch in batches) <= 4


async def test_a_missed_fixed_rate_reminder_comes_once_its_latest_occurrence(
    pg_schema: PgSchema,
) -> None:
    # Created at T0, every 5 minutes; the fleet was down for an hour: twelve
    # occurrences were missed, and one turn carries the latest.
    seeder = pg_schema.store()
    await seed_at(
        seeder, {"every": [{"prompt": "check in", "every_seconds": 300}]}, VirtualClock(T0)
    )
    await seeder.close()
    recorder = Recorder()
    store = pg_schema.store()
    worker = Worker(store, recorder.target("w"), poll_s=0.05, clock=VirtualClock(LATER))
    async with running(worker):
        await recorder.wait_for(1)
        await wait_until(
            lambda: bool(pg_schema.query("SELECT 1 FROM {s}.sessions WHERE lease_owner IS NULL")),
            30,
            "the session let go",
        )
    assert [c.key for c in recorder.calls] == [f"schedule-1@{format_instant(LATER)}"]
    (next_due,) = pg_schema.query("SELECT next_due_at FROM {s}.sessions")[0]
    assert next_due == LATER + 300_000  # the next occurrence, not a missed one
