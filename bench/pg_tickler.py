"""The tickler side of bench/postgres.py: tickler's PostgreSQL store and
``tickler worker`` doing what bench/pg_peer.py makes procrastinate do.

An item is one session holding one reminder (a realistic cold-session
workload: each agent's session holds its own reminder), created through
the real :class:`~tickler.shell._runtime.ScheduleRuntime` over one
:class:`~tickler.adapters.stores._postgres.PostgresStore` with
``schedule_create`` and ``at`` = the item's due instant (rounded up to the
millisecond, the finest ``at`` takes). The session id is the item's key;
the reminder's prompt is the item's exact ``due_at``, so the delivery
records the same (key, due_at) procrastinate's job carries, and lateness
counts from the item's true due instant.

Workers: ``python -m tickler.adapters.cli worker --deliver
bench.pg_tickler:deliver`` (async: ``deliver`` awaits ``pg_record.record``
once per occurrence, as procrastinate's task does once per job), one OS
process each, with the bench's ``--concurrency`` and ``--poll`` and
``--log-level WARNING`` (INFO logs a line per delivery). Connections per
worker process: the store's pool of up to :data:`WORKER_STORE_POOL` (the
worker's default), plus the LISTEN connection, plus pg_record's pool.

Readiness: a worker is ready once its listener has run ``LISTEN`` (it does
so after its first successful query and right before its first claim), seen
in ``pg_stat_activity``.

``BENCH_PG_PROFILE=DIR`` runs worker 0 of each scenario under cProfile,
writing ``DIR/tickler-<pid>-<n>.prof`` when it exits (its figures are then
slower than real).
"""

from __future__ import annotations

import asyncio
import itertools
import math
import os
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import psycopg

from tickler.adapters.stores._postgres import PostgresStore
from tickler.adapters.stores._postgres_schema import migrate, notify_channel
from tickler.shell._host import FollowUp, IdleClaim
from tickler.shell._runtime import ScheduleRuntime

from . import pg_common, pg_record
from .pg_common import BurstResult, Item, LatenessResult

SCHEMA = "tickler"
TARGET = "bench.pg_tickler:deliver"
SETUP_IN_FLIGHT = 64  # sessions seeded at once while setting a scenario up (untimed)
SETUP_POOL = 8  # the seeding store's connections
# Seconds a burst item is given to be seeded before the instant all are due:
# ``at`` must be in the future when created (about 350 sessions/s are
# seeded on the 2-CPU bench machine, fewer under load).
SEED_S = 1 / 150
WORKER_STORE_POOL = 4  # PostgresStore's default pool_size, which `tickler worker` uses
PROFILE_ENV = "BENCH_PG_PROFILE"
_profiles = itertools.count()


async def deliver(message: FollowUp, session: str) -> None:
    """The worker's target: record each occurrence as delivered, keyed by
    the session (one item a session) with the due instant its prompt holds."""
    for occurrence in message.occurrences:
        await pg_record.record(session, float(occurrence.prompt))


class NeverIdle:
    """The seeding process's host: it only edits schedules, never takes a
    turn (nothing is due while it holds a session)."""

    def claim_idle(self) -> IdleClaim | None:
        return None

    async def when_idle(self) -> None:
        await asyncio.Event().wait()

    async def followup(self, message: FollowUp) -> None:
        raise AssertionError(f"the seeding process was handed {message.key}")


def at_text(due_at: float) -> str:
    """``at`` for ``due_at`` (epoch seconds): UTC, rounded up to the ms."""
    ms = math.ceil(due_at * 1000)
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def create_args(due_at: float) -> dict[str, object]:
    return {"prompt": repr(due_at), "at": at_text(due_at)}


async def _create(runtime: ScheduleRuntime, due_at: float) -> None:
    answer = await runtime.call_tool("schedule_create", create_args(due_at))
    if '"state":"scheduled"' not in answer:
        raise RuntimeError(f"schedule_create failed: {answer}")


async def _seed(dsn: str, items: Sequence[Item]) -> None:
    """One session per item, ``SETUP_IN_FLIGHT`` at a time: open (lease),
    create its reminder (durable when the call returns), let it go (the
    close commits the wake index and ends the lease, so a worker can take
    it)."""
    store = PostgresStore(dsn, schema=SCHEMA, pool_size=SETUP_POOL)
    queue = iter(items)

    async def lane() -> None:
        for key, due_at in queue:
            log = await store.open(key, created_at=now_ms())
            runtime = ScheduleRuntime(log, NeverIdle())
            try:
                await runtime.start()
                await _create(runtime, due_at)
            finally:
                await runtime.dispose()
                await log.close()

    try:
        await asyncio.gather(*(lane() for _ in range(SETUP_IN_FLIGHT)))
    finally:
        await store.close()


async def creates(dsn: str, count: int, in_flight: int) -> float:
    """Durable creates per second: ``count`` sessions (an agent each, its
    session open as in a live agent process: opened untimed), then, timed,
    one ``schedule_create`` due in an hour in each, ``in_flight`` at once;
    each durable (group-committed) when its call returns."""
    migrate(dsn, SCHEMA)
    store = PostgresStore(dsn, schema=SCHEMA, pool_size=max(1, min(in_flight, 8)))
    due_at = time.time() + 3600
    try:
        opened = await _open_all(store, [f"c{index}" for index in range(count)])
        queue = iter(opened)

        async def lane() -> None:
            for runtime in queue:
                await _create(runtime, due_at)

        start = time.perf_counter()
        await asyncio.gather(*(lane() for _ in range(in_flight)))
        elapsed = time.perf_counter() - start
        await asyncio.gather(*(runtime.dispose() for runtime in opened))
    finally:
        await store.close()
    return count / elapsed


async def _open_all(store: PostgresStore, keys: Sequence[str]) -> list[ScheduleRuntime]:
    opened: list[ScheduleRuntime] = []
    queue = iter(keys)

    async def lane() -> None:
        for key in queue:
            runtime = ScheduleRuntime(await store.open(key, created_at=now_ms()), NeverIdle())
            await runtime.start()
            opened.append(runtime)

    await asyncio.gather(*(lane() for _ in range(SETUP_IN_FLIGHT)))
    return opened


def _schedule(dsn: str) -> pg_common.Schedule:
    def schedule(items: Sequence[Item]) -> None:
        asyncio.run(_seed(dsn, items))

    return schedule


def _worker_command(dsn: str, concurrency: int, poll: float) -> pg_common.WorkerCommand:
    profile_dir = os.environ.get(PROFILE_ENV)

    def command(index: int) -> list[str]:
        argv = [sys.executable]
        if profile_dir and index == 0:
            out = Path(profile_dir) / f"tickler-{os.getpid()}-{next(_profiles)}.prof"
            argv += ["-m", "cProfile", "-o", str(out)]
        return [
            *argv,
            "-m",
            "tickler.adapters.cli",
            "worker",
            f"--dsn={dsn}",
            f"--schema={SCHEMA}",
            f"--deliver={TARGET}",
            f"--concurrency={concurrency}",
            f"--poll={poll}",
            "--log-level=WARNING",
        ]

    return command


def _ready(dsn: str) -> pg_common.ReadyCount:
    listen = f'LISTEN "{notify_channel(SCHEMA)}"'

    def ready() -> int:
        with psycopg.connect(dsn, autocommit=True) as conn:
            row = conn.execute(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE datname = current_database() AND query = %s",
                (listen,),
            ).fetchone()
        return int(row[0]) if row else 0

    return ready


def burst(dsn: str, count: int, workers: int, concurrency: int, poll: float) -> BurstResult:
    migrate(dsn, SCHEMA)
    return pg_common.burst_scenario(
        dsn,
        count,
        workers,
        schedule=_schedule(dsn),
        worker_command=_worker_command(dsn, concurrency, poll),
        create_s=SEED_S,
    )


def lateness(
    dsn: str, count: int, window: float, workers: int, concurrency: int, poll: float
) -> LatenessResult:
    migrate(dsn, SCHEMA)
    return pg_common.lateness_scenario(
        dsn,
        count,
        window,
        workers,
        schedule=_schedule(dsn),
        worker_command=_worker_command(dsn, concurrency, poll),
        ready=_ready(dsn),
    )
