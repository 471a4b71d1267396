"""The procrastinate side of bench/postgres.py: the peer tickler's
PostgreSQL store and workers are measured against.

An item is a procrastinate job of the task ``bench_deliver`` (async),
deferred with ``schedule_at`` = its due instant and the arguments
``key``/``due_at``; running it calls ``pg_record.record(key, due_at)``.
Its schema is procrastinate's own, applied with
``app.schema_manager.apply_schema_async()`` in the bench's fresh database.

Workers: ``python -m bench.pg_peer worker --dsn DSN --concurrency C --poll P``,
one OS process each, running ``app.run_worker_async`` with listen/notify on
(the default), ``fetch_job_polling_interval`` = P (the fallback poll, the
same as tickler's), ``delete_jobs`` left at its default ("never": a done job
is updated, not deleted), procrastinate's own SIGTERM handling (finish the
jobs in hand, then exit). Each worker's pool holds up to min(C, 8)
connections for fetching and finishing jobs, plus the listener's own.

    python -m bench.pg_peer worker --dsn DSN [--concurrency 16] [--poll 1.0]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime

import procrastinate
import psycopg

from . import pg_common, pg_record
from .pg_common import BurstResult, Item, LatenessResult

TASK = "bench_deliver"
SETUP_IN_FLIGHT = 32  # defers at once while setting a scenario up (untimed)


def make_app(dsn: str, pool_size: int) -> procrastinate.App:
    # A full pool from the start (open_async waits for it): no connect is timed.
    connector = procrastinate.PsycopgConnector(conninfo=dsn, min_size=pool_size, max_size=pool_size)
    app = procrastinate.App(connector=connector)

    # A fixed name, whatever name this module is imported under.
    @app.task(name=TASK)
    async def deliver(key: str, due_at: float) -> None:
        await pg_record.record(key, due_at)

    return app


def _when(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


async def _defer_all(app: procrastinate.App, items: Sequence[Item], in_flight: int) -> None:
    """Defer every item, one job (one INSERT, one commit) each, ``in_flight``
    at a time from this one process."""
    task = app.tasks[TASK]
    queue = iter(items)

    async def lane() -> None:
        for key, due_at in queue:
            await task.configure(schedule_at=_when(due_at)).defer_async(key=key, due_at=due_at)

    await asyncio.gather(*(lane() for _ in range(in_flight)))


async def _apply_schema(dsn: str) -> None:
    app = make_app(dsn, 1)
    async with app.open_async():
        await app.schema_manager.apply_schema_async()


async def creates(dsn: str, count: int, in_flight: int) -> float:
    """Durable creates per second: ``count`` jobs due in an hour, deferred
    ``in_flight`` at a time from one process (pool of ``in_flight``)."""
    await _apply_schema(dsn)
    due_at = time.time() + 3600
    items = [(f"c{index}", due_at) for index in range(count)]
    app = make_app(dsn, in_flight)
    async with app.open_async():
        start = time.perf_counter()
        await _defer_all(app, items, in_flight)
        elapsed = time.perf_counter() - start
    return count / elapsed


def _schedule(dsn: str) -> pg_common.Schedule:
    def schedule(items: Sequence[Item]) -> None:
        async def run() -> None:
            app = make_app(dsn, SETUP_IN_FLIGHT)
            async with app.open_async():
                await _defer_all(app, items, SETUP_IN_FLIGHT)

        asyncio.run(run())

    return schedule


def _worker_command(dsn: str, concurrency: int, poll: float) -> pg_common.WorkerCommand:
    def command(index: int) -> list[str]:
        return [
            sys.executable,
            "-c",  # not -m: procrastinate warns of an App made in __main__
            "from bench import pg_peer; pg_peer.main()",
            "worker",
            f"--dsn={dsn}",
            f"--concurrency={concurrency}",
            f"--poll={poll}",
            f"--name=w{index}",
        ]

    return command


def _ready(dsn: str) -> pg_common.ReadyCount:
    def ready() -> int:
        with psycopg.connect(dsn, autocommit=True) as conn:
            row = conn.execute("SELECT count(*) FROM procrastinate_workers").fetchone()
        return int(row[0]) if row else 0

    return ready


def burst(dsn: str, count: int, workers: int, concurrency: int, poll: float) -> BurstResult:
    asyncio.run(_apply_schema(dsn))
    return pg_common.burst_scenario(
        dsn,
        count,
        workers,
        schedule=_schedule(dsn),
        worker_command=_worker_command(dsn, concurrency, poll),
    )


def lateness(
    dsn: str, count: int, window: float, workers: int, concurrency: int, poll: float
) -> LatenessResult:
    asyncio.run(_apply_schema(dsn))
    return pg_common.lateness_scenario(
        dsn,
        count,
        window,
        workers,
        schedule=_schedule(dsn),
        worker_command=_worker_command(dsn, concurrency, poll),
        ready=_ready(dsn),
    )


async def _work(dsn: str, concurrency: int, poll: float, name: str) -> None:
    app = make_app(dsn, min(concurrency, 8))
    try:
        async with app.open_async():
            await app.run_worker_async(
                concurrency=concurrency,
                fetch_job_polling_interval=poll,
                listen_notify=True,
                name=name,
            )
    finally:
        await pg_record.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    commands = parser.add_subparsers(dest="command", required=True)
    worker = commands.add_parser("worker", help="run one procrastinate worker until SIGTERM")
    worker.add_argument("--dsn", required=True)
    worker.add_argument("--concurrency", type=int, default=16)
    worker.add_argument("--poll", type=float, default=1.0)
    worker.add_argument("--name", default="worker")
    args = parser.parse_args(argv)
    asyncio.run(_work(args.dsn, args.concurrency, args.poll, args.name))


if __name__ == "__main__":
    main()
