"""``tickler reminders`` over many sessions: the read model's answer time on
PostgreSQL (100,000 sessions by default) beside a full scan of the events,
and the same over a JSONL directory and an SQLite file (fewer sessions:
those stores keep no index across sessions, so every call reads them all).

    python -m bench.reminders [--sessions N] [--jsonl N] [--sqlite N] [--dsn DSN]

PostgreSQL sessions are bulk-loaded: each is written by the same code as a
real one (``bench/reminder_rows.py``: the core's decisions, the runtime's
encoders, the wake and failure indexes it sets) into a capturing log, and
its rows are COPYed into the tables. The first sessions are also written
through the real ``PostgresStore`` into a second schema, and the bench
stops unless their rows (header, length, wake, failures, every event) are
equal to the captured ones. JSONL and SQLite sessions go through the real
stores.

The mix: 1-3 one-shots within 30 days per session; a third with an every
(half delivered once, up to 10 s late); 1 in 100 with a follow-up whose
hand-over keeps failing. Times are medians of 5 runs, in one process.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import psycopg

from bench.reminder_rows import MIN, Capture, Spec, spec_for, write_session
from tickler.adapters import open_read_model
from tickler.adapters.stores import JsonlStore, PostgresStore, SqliteStore, migrate
from tickler.adapters.stores._lines import header_line
from tickler.core import SessionHeader
from tickler.shell._ports import SessionStore

DSN = "host=127.0.0.1 port=5432 user=postgres dbname=test"
SCHEMA = "bench_reminders"
CHECK_SCHEMA = "bench_reminders_check"
CHECKED = 50  # sessions written through the real store to check the bulk rows
RUNS = 5
HOUR = 60 * MIN


def session_id(n: int) -> str:
    return f"user-{n:06d}"


async def median_ms(run: Callable[[], Awaitable[object]], runs: int = RUNS) -> tuple[float, object]:
    times = []
    result: object = None
    for _ in range(runs):
        started = time.perf_counter()
        result = await run()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times), result


def created_at(t0: int) -> int:
    return t0 - 30 * MIN


# -- PostgreSQL ---------------------------------------------------------------


def reset(dsn: str, schema: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
    migrate(dsn, schema)


async def captured(specs: list[Spec], t0: int) -> list[Capture]:
    logs = []
    for n, spec in enumerate(specs):
        log = Capture(SessionHeader(id=session_id(n), created_at=created_at(t0)))
        await write_session(log, spec, t0)
        logs.append(log)
    return logs


def copy_in(dsn: str, schema: str, logs: list[Capture]) -> None:
    with psycopg.connect(dsn) as conn, conn.cursor() as cur:
        with cur.copy(
            f"COPY {schema}.sessions (id, header, length, next_due_at, failures) FROM STDIN"
        ) as copy:
            for log in logs:
                header = header_line(log.session)[:-1]
                copy.write_row((log.session.id, header, log.length, log.wake, log.failures))
        with cur.copy(
            f"COPY {schema}.events (session_id, seq, type, time, data) FROM STDIN"
        ) as copy:
            for log in logs:
                for e in log.rows:
                    copy.write_row((log.session.id, e.seq, e.type, e.time, bytes(e.data)))
        conn.commit()
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"ANALYZE {schema}.sessions")
        conn.execute(f"ANALYZE {schema}.events")


def stored_rows(dsn: str, schema: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(dsn) as conn:
        sessions = conn.execute(
            f"SELECT id, header, length, next_due_at, failures FROM {schema}.sessions ORDER BY id"
        ).fetchall()
        events = conn.execute(
            f"SELECT session_id, seq, type, time, data FROM {schema}.events"
            " ORDER BY session_id, seq"
        ).fetchall()
    return [*sessions, *events]


async def check_bulk_rows(dsn: str, specs: list[Spec], t0: int) -> None:
    """The first sessions through the real store vs the captured rows."""
    reset(dsn, CHECK_SCHEMA)
    store = PostgresStore(dsn, schema=CHECK_SCHEMA)
    try:
        for n, spec in enumerate(specs[:CHECKED]):
            log = await store.open(session_id(n), created_at=created_at(t0))
            await write_session(log, spec, t0)
            await log.close()
    finally:
        await store.close()
    real = stored_rows(dsn, CHECK_SCHEMA)
    reset(dsn, CHECK_SCHEMA)
    copy_in(dsn, CHECK_SCHEMA, await captured(specs[:CHECKED], t0))
    bulk = stored_rows(dsn, CHECK_SCHEMA)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA {CHECK_SCHEMA} CASCADE")
    if real != bulk:
        sys.exit("bench: the bulk rows differ from the store's: fix bench/reminder_rows.py")
    print(
        f"bulk rows equal to the real store's for the first {CHECKED} sessions ({len(real)} rows)"
    )


async def bench_postgres(dsn: str, count: int, t0: int, rng: random.Random) -> None:
    specs = [spec_for(rng) for _ in range(count)]
    await check_bulk_rows(dsn, specs, t0)
    reset(dsn, SCHEMA)
    started = time.perf_counter()
    logs = await captured(specs, t0)
    copy_in(dsn, SCHEMA, logs)
    events = sum(log.length for log in logs)
    print(
        f"PostgreSQL: {count:,} sessions, {events:,} events loaded in "
        f"{time.perf_counter() - started:.1f} s"
    )
    await report_queries(dsn, SCHEMA, t0, f"PostgreSQL, {count:,} sessions")
    async with open_read_model(dsn, schema=SCHEMA) as model:

        async def scan_events() -> int:
            with psycopg.connect(dsn) as conn:
                rows = conn.execute(
                    f"SELECT session_id, seq, type, time, data FROM {SCHEMA}.events"
                ).fetchall()
            return len(rows)

        scan_ms, scanned = await median_ms(scan_events)
        print(f"  full scan of events (every row fetched): {scan_ms:9.1f} ms ({scanned:,} rows)")
        started = time.perf_counter()
        every = await model.reminders(now_ms=t0, limit=None)
        all_ms = (time.perf_counter() - started) * 1000
        print(f"  every session read (--limit 0): {all_ms:9.1f} ms ({len(every):,} reminders)")
    cli_ms = cli_wall_ms(["reminders", dsn, "--schema", SCHEMA, "--json"])
    print(
        f"  `tickler reminders DSN --json` as a process (Python start-up included): {cli_ms:.0f} ms"
    )
    print(
        f"  ratio: full scan of events / tickler reminders (cold) = {scan_ms / FIRST[0]:.1f}x;"
        f" every session read / tickler reminders (cold) = {all_ms / FIRST[0]:.1f}x"
    )


FIRST: list[float] = []


async def report_queries(source: str, schema: str, t0: int, label: str) -> None:
    """Each query on a fresh read model (cold: nothing cached), then again
    on the same one (warm: a session whose rows did not change is not
    read again, as when a dashboard refreshes)."""
    print(f"{label}: cold (first call), warm (median of {RUNS - 1} more)")
    queries: list[tuple[str, Callable[[Any], Awaitable[list[Any]]]]] = [
        ("tickler reminders (the 100 soonest)", lambda m: m.reminders(now_ms=t0, limit=100)),
        ("--due-within 1h", lambda m: m.reminders(now_ms=t0, due_within_ms=HOUR, limit=100)),
        ("--failing", lambda m: m.reminders(now_ms=t0, failing=True, limit=100)),
        ("--sort session", lambda m: m.reminders(now_ms=t0, sort="session", limit=100)),
        ("--sort failures", lambda m: m.reminders(now_ms=t0, sort="failures", limit=100)),
        ("deliveries (the latest 100)", lambda m: m.deliveries(limit=100)),
    ]
    FIRST.clear()
    for name, run in queries:
        async with open_read_model(source, schema=schema) as model:
            started = time.perf_counter()
            rows = await run(model)
            cold = (time.perf_counter() - started) * 1000
            warm, _ = await median_ms(functools.partial(run, model), RUNS - 1)
        FIRST.append(cold)
        print(f"  {name:<38} cold {cold:8.1f} ms, warm {warm:8.1f} ms ({len(rows)} rows)")


def cli_wall_ms(args: list[str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "tickler.adapters.cli", *args],
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"bench: tickler {' '.join(args)} failed: {done.stderr.decode()}")
    return (time.perf_counter() - started) * 1000


# -- the embedded stores ------------------------------------------------------


async def fill(store: SessionStore, specs: list[Spec], t0: int) -> None:
    """Sessions through the real store, 100 at a time (group commit)."""

    async def one(n: int, spec: Spec) -> None:
        log = await store.open(session_id(n), created_at=created_at(t0))
        await write_session(log, spec, t0)
        await log.close()

    try:
        for start in range(0, len(specs), 100):
            await asyncio.gather(
                *(one(n, specs[n]) for n in range(start, min(start + 100, len(specs))))
            )
    finally:
        await store.close()


async def bench_file_store(kind: str, count: int, t0: int, rng: random.Random) -> None:
    specs = [spec_for(rng) for _ in range(count)]
    with tempfile.TemporaryDirectory(prefix="tickler-bench-") as tmp:
        source = Path(tmp) / ("sessions.db" if kind == "SQLite" else "sessions")
        store: SessionStore = SqliteStore(source) if kind == "SQLite" else JsonlStore(source)
        started = time.perf_counter()
        await fill(store, specs, t0)
        print(f"{kind}: {count:,} sessions written in {time.perf_counter() - started:.1f} s")
        await report_queries(
            str(source), "tickler", t0, f"{kind}, {count:,} sessions (each call reads all)"
        )
        cli_ms = cli_wall_ms(["reminders", str(source), "--json"])
        print(f"  `tickler reminders {kind} --json` as a process: {cli_ms:.0f} ms")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=100_000, help="PostgreSQL sessions")
    parser.add_argument("--jsonl", type=int, default=2_000, help="JSONL sessions")
    parser.add_argument("--sqlite", type=int, default=10_000, help="SQLite sessions")
    parser.add_argument("--dsn", default=DSN)
    args = parser.parse_args()
    t0 = time.time_ns() // 1_000_000
    await bench_postgres(args.dsn, args.sessions, t0, random.Random(16))
    await bench_file_store("SQLite", args.sqlite, t0, random.Random(17))
    await bench_file_store("JSONL", args.jsonl, t0, random.Random(18))
    with psycopg.connect(args.dsn, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")


if __name__ == "__main__":
    asyncio.run(main())
