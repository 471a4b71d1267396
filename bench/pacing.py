"""A fleet waking to a backlog: ``--sessions`` reminders (100,000 by
default) all due when the workers start, as after an outage, drained by
``--workers`` ``tickler worker`` processes each with ``--max-rate N``.

    python -m bench.pacing [--quick] [--sessions N] [--workers W] [--max-rate N]
        [--outage S] [--concurrency C] [--poll S] [--dsn postgresql://...]

The backlog: one session per reminder, each a one-shot due at an instant
spread evenly over the ``--outage`` seconds before the workers start (so
the order they are delivered in shows), bulk-loaded with COPY (the rows of
bench/reminder_rows.py: the core's decisions and the runtime's encoders,
checked against the real store by bench/reminders.py), never through the
tools. A delivery is bench/pg_record.py's durable INSERT of (session, due
instant, delivered instant), as in bench/postgres.py.

Printed: the achieved rate (deliveries - 1 over first to last delivery)
beside the configured one (N x W, the limit being per process), the
busiest second, lateness (delivered - due) at p50/p90/p99/max, the wait
the pacing added (delivered - the later of due and the workers' start),
how far the order strays from oldest-due-first (the most a delivery's due
instant lies before one delivered earlier), and whether every reminder
was delivered exactly once. Runs in a fresh database, dropped after.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import sys
import time
from dataclasses import dataclass
from types import FrameType

from tickler.core import parse_instant
from tickler.shell._host import FollowUp

from . import pg_record

SCHEMA = "tickler"
TARGET = "bench.pacing:deliver"
AFTER_S = 60  # each reminder is created a minute before it falls due


async def deliver(message: FollowUp, session: str) -> None:
    """The workers' target: record each occurrence with its due instant."""
    for occurrence in message.occurrences:
        await pg_record.record(session, parse_instant(occurrence.occurrence_at) / 1000)


def load(dsn: str, count: int, outage_s: float, start_ms: int) -> None:
    """``count`` sessions, one reminder each, due evenly over the outage
    before ``start_ms``, bulk-loaded; seeded in a shuffled order."""
    import random

    from bench.reminder_rows import Capture, Spec, write_session
    from bench.reminders import copy_in
    from tickler.adapters.stores import migrate
    from tickler.core import SessionHeader

    migrate(dsn, SCHEMA)
    first = start_ms - round(outage_s * 1000)
    dues = [first + round(outage_s * 1000 * i / count) for i in range(count)]
    random.Random(30).shuffle(dues)
    spec = Spec((AFTER_S,), None, None, 0)

    async def captured() -> list[Capture]:
        logs = []
        for n, due in enumerate(dues):
            created = due - AFTER_S * 1000
            log = Capture(SessionHeader(id=f"p{n:06d}", created_at=created))
            await write_session(log, spec, created)
            logs.append(log)
        return logs

    copy_in(dsn, SCHEMA, asyncio.run(captured()))


def worker_command(dsn: str, args: argparse.Namespace) -> list[str]:
    return [
        sys.executable,
        *("-m", "tickler.adapters.cli", "worker", f"--dsn={dsn}", f"--schema={SCHEMA}"),
        f"--deliver={TARGET}",
        f"--concurrency={args.concurrency}",
        f"--poll={args.poll}",
        f"--max-rate={args.max_rate}",
        "--log-level=WARNING",
    ]


@dataclass(frozen=True)
class Drain:
    count: int
    rows: list[tuple[str, float, float]]  # key, due_at, delivered_at (s)
    started: float  # when the workers were started (s)

    def percentile(self, values: list[float], fraction: float) -> float:
        ordered = sorted(values)
        if fraction >= 1 or len(ordered) == 1:
            return ordered[-1]
        return statistics.quantiles(ordered, n=1000, method="inclusive")[round(fraction * 1000) - 1]

    @property
    def achieved(self) -> float:
        delivered = sorted(row[2] for row in self.rows)
        span = delivered[-1] - delivered[0]
        return (len(delivered) - 1) / span if span > 0 else float("nan")

    @property
    def busiest_second(self) -> int:
        """The most deliveries in any one second (a sliding window)."""
        delivered = sorted(row[2] for row in self.rows)
        most, low = 0, 0
        for high, at in enumerate(delivered):
            while at - delivered[low] >= 1.0:
                low += 1
            most = max(most, high - low + 1)
        return most

    @property
    def out_of_order_s(self) -> float:
        """The most a delivery's due instant lies before that of one
        delivered earlier (0 when strictly oldest due first)."""
        latest_due, worst = float("-inf"), 0.0
        for _, due, _ in sorted(self.rows, key=lambda row: row[2]):
            worst = max(worst, latest_due - due)
            latest_due = max(latest_due, due)
        return worst

    @property
    def places_out_of_order(self) -> int:
        """The most places a delivery came before or after its turn in
        oldest-due-first order."""
        by_due = sorted(range(len(self.rows)), key=lambda i: self.rows[i][1])
        by_delivery = sorted(range(len(self.rows)), key=lambda i: self.rows[i][2])
        turn = {row: place for place, row in enumerate(by_due)}
        return max((abs(turn[row] - place) for place, row in enumerate(by_delivery)), default=0)

    def exactly_once(self) -> bool:
        return len(self.rows) == len({row[0] for row in self.rows}) == self.count


def drain(dsn: str, args: argparse.Namespace) -> Drain:
    import psycopg

    from bench import pg_common

    load(dsn, args.sessions, args.outage, time.time_ns() // 1_000_000)
    started = time.time()  # every one is due by now: the loading took a while more
    fleet = args.max_rate * args.workers
    commands = [worker_command(dsn, args) for _ in range(args.workers)]
    with pg_common.WorkerProcesses(commands, dsn) as procs:
        timeout = 60.0 + 1.5 * args.sessions / fleet
        pg_common.wait_for_deliveries(dsn, args.sessions, timeout, procs)
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute("SELECT key, due_at, delivered_at FROM bench_deliveries").fetchall()
    return Drain(args.sessions, [(str(k), float(d), float(t)) for k, d, t in rows], started)


def report(result: Drain, args: argparse.Namespace) -> None:
    fleet = args.max_rate * args.workers
    late = [t - d for _, d, t in result.rows]
    paced = [t - max(d, result.started) for _, d, t in result.rows]

    def ms(values: list[float], fraction: float) -> str:
        return f"{result.percentile(values, fraction) * 1000:,.0f} ms"

    print(
        f"achieved rate: {result.achieved:,.1f} deliveries/s against {fleet:g} configured "
        f"({result.achieved / fleet:.3f}x); busiest second: {result.busiest_second}"
    )
    print(
        "lateness (delivered - due): "
        + ", ".join(f"p{round(f * 100)} {ms(late, f)}" for f in (0.5, 0.9, 0.99))
        + f", max {max(late) * 1000:,.0f} ms"
    )
    print(
        "wait added by pacing (delivered - max(due, start)): "
        + ", ".join(f"p{round(f * 100)} {ms(paced, f)}" for f in (0.5, 0.99))
        + f", max {max(paced) * 1000:,.0f} ms"
    )
    dues = [d for _, d, _ in result.rows]
    print(
        f"order: at most {result.places_out_of_order} places from oldest-due-first (in flight: "
        f"{args.workers} x {args.concurrency}); a due instant at most "
        f"{result.out_of_order_s * 1000:,.0f} ms before one delivered earlier (the backlog was "
        f"due {result.started - min(dues):,.0f} to {result.started - max(dues):,.0f} s before "
        "the workers started)"
    )
    once = "yes" if result.exactly_once() else "NO"
    print(f"every reminder delivered exactly once: {once} ({len(result.rows)} rows)")


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="3,000 sessions at 50/s a worker, about a minute"
    )
    parser.add_argument("--dsn", default="postgresql://postgres@127.0.0.1:5432")
    parser.add_argument("--sessions", type=int)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--max-rate", type=float, help="per worker process (100; quick 50)")
    parser.add_argument("--outage", type=float, default=600.0, help="seconds the backlog spans")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--poll", type=float, default=1.0)
    args = parser.parse_args(argv)
    if args.sessions is None:
        args.sessions = 3_000 if args.quick else 100_000
    if args.max_rate is None:
        args.max_rate = 50.0 if args.quick else 100.0
    return args


def stop_on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # unwinds: workers stopped, the database dropped


def main(argv: list[str] | None = None) -> int:
    from bench.postgres import fresh_database

    args = parse(argv)
    signal.signal(signal.SIGTERM, stop_on_sigterm)
    fleet = args.max_rate * args.workers
    print(
        f"{args.sessions:,} reminders due over the {args.outage:g} s before {args.workers} "
        f"worker(s) start, --max-rate {args.max_rate:g} each (a fleet of {fleet:g}/s), "
        f"--concurrency {args.concurrency}; {os.cpu_count()} CPUs; about "
        f"{args.sessions / fleet:,.0f} s to drain"
    )
    with fresh_database(args.dsn, f"bench_pacing_{os.getpid()}") as dsn:
        result = drain(dsn, args)
    report(result, args)
    return 0 if result.exactly_once() else 1


if __name__ == "__main__":
    sys.exit(main())
