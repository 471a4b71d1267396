# ruff: noqa: F811 - pytest fixtures imported by name are parameters too
"""Every hand-over is fenced by the lease its process holds, in a live
process as in a worker (one mechanism: the runtime asks the log before each
attempt), and a failing target's records count its failures across the
processes that hold the session in turn. On the real PostgreSQL.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import msgspec

from tickler.adapters.stores._postgres import PostgresLog
from tickler.adapters.worker._worker import Worker
from tickler.shell._clock import VirtualClock
from tickler.shell._host import FollowUp
from tickler.shell._session import open_session
from tickler.shell._timers import TimerHeap

from .pgsupport import PgSchema, pg_schema  # noqa: F401 - the fixture
from .worker_support import (
    Recorder,
    as_bytes,
    delivered_keys,
    followup_keys,
    now_ms,
    running,
    seed,
    session_row,
    wait_until,
)

BOUND_S = 30.0  # a bound on progress, never a timing


async def progress(clock: VirtualClock, done: Callable[[], bool], what: str) -> None:
    """Let the live runtime's virtual time pass (its retry pauses) while its
    database round trips run, until ``done``."""
    deadline = time.monotonic() + BOUND_S
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting {BOUND_S:g} s for {what}")
        await clock.advance(50)
        await asyncio.sleep(0.01)


def failure_attempts(pg: PgSchema, session_id: str) -> list[int]:
    rows = pg.query(
        "SELECT data FROM {s}.events WHERE session_id = %s AND type = 'tickler/followup-failed'"
        " ORDER BY seq",
        (session_id,),
    )
    return [int(msgspec.json.decode(as_bytes(row[0]))["attempt"]) for row in rows]


async def test_a_live_runtime_stalled_past_its_lease_does_not_hand_over_again(
    pg_schema: PgSchema,
) -> None:
    pg = pg_schema
    recorder = Recorder()
    tries: list[str] = []

    async def down_three_times(message: FollowUp, session: str) -> None:
        tries.append(message.key)
        if len(tries) <= 3:
            raise ConnectionError("target down")

    # The live process: its retry pauses wait on a virtual clock, whose wall
    # clock is a minute behind, so the session is due for a worker at once.
    clock = VirtualClock(now_ms() - 60_000)
    live_store = pg.store()
    timers = TimerHeap(clock)
    host = recorder.target("live", before=down_three_times)
    try:
        async with open_session(live_store, "s", host=host, clock=clock, timers=timers) as live:
            log = live.log
            assert isinstance(log, PostgresLog)
            answer = await live.tools.call_tool(
                "schedule_create", {"prompt": "p", "after_seconds": 1}
            )
            assert '"state":"scheduled"' in answer
            await progress(clock, lambda: len(tries) == 3, "three failed tries")
            await log.flush()  # everything it wrote is committed: nothing to fence it by
            assert log.lost is None

            # It stalls, in a retry pause, past its lease: the lease ends in the
            # database and in its own reckoning (it did not renew in time).
            pg.query("UPDATE {s}.sessions SET lease_until = now() - interval '1 second'")
            log.renewed_at -= live_store.lease_s + 1.0
            worker = Worker(pg.store(), recorder.target("worker"), poll_s=0.05)
            async with running(worker):
                await wait_until(lambda: len(delivered_keys(pg, "s")) == 1, BOUND_S, "the mark")
                await wait_until(lambda: session_row(pg, "s")[2] is None, BOUND_S, "the release")
            assert [c.worker for c in recorder.calls] == ["worker"]

            # The live process resumes: its retry comes, and must not hand over.
            await progress(clock, lambda: log.lost is not None or len(tries) > 3, "the retry")
            await progress(clock, lambda: log.lost is not None, "it to learn it lost the lease")
            for _ in range(40):  # a while longer: nothing more is tried
                await clock.advance(1_000)
            assert len(tries) == 3
            assert [c.worker for c in recorder.calls] == ["worker"]
            assert followup_keys(pg, "s") == delivered_keys(pg, "s")
            assert len(followup_keys(pg, "s")) == 1
    finally:
        await live_store.close()
        await timers.close()


async def test_failure_records_count_across_worker_claims(pg_schema: PgSchema) -> None:
    # Each claim makes one attempt with a new runtime; the records say the
    # failure count so far and are written at the 1st, 2nd, 4th and 8th.
    pg = pg_schema
    seeder = pg.store()
    await seed(seeder, {"s": [{"prompt": "down", "after_seconds": 1}]})
    await seeder.close()
    tries: list[str] = []

    async def down(message: FollowUp, session: str) -> None:
        tries.append(message.key)
        raise ConnectionError("target down")

    worker = Worker(pg.store(), Recorder().target("w", before=down), poll_s=0.05)
    async with running(worker):
        for claim in range(1, 10):

            def failed_and_released(claim: int = claim) -> bool:
                _, failures, owner = session_row(pg, "s")
                return failures == claim and owner is None

            await wait_until(failed_and_released, BOUND_S, f"failure {claim}")
            if claim < 9:  # skip the backoff
                pg.query(
                    "UPDATE {s}.sessions SET next_due_at = 0 WHERE id = 's' AND lease_owner IS NULL"
                )
    assert len(tries) == 9  # one attempt per claim
    assert len(set(tries)) == 1  # of the same follow-up
    assert failure_attempts(pg, "s") == [1, 2, 4, 8]
    assert delivered_keys(pg, "s") == []
