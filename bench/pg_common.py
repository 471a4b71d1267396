"""What both sides of bench/postgres.py share, so that they do the same work
and are measured the same way: the deliveries table, the worker processes
(start, readiness, SIGTERM then SIGKILL), the burst and lateness scenarios
and the results they read back from the deliveries table.

A side supplies only what is its own: how to schedule items, the command
line of one worker process, and how many of its workers are ready.
"""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import psycopg

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent  # on PYTHONPATH and the cwd of workers: bench.pg_record imports
# The deliveries table: one row per call of the delivery callable, no unique
# key on purpose, so a second delivery of an item shows up as a second row.
DELIVERIES_DDL = (
    "CREATE TABLE bench_deliveries ("
    " key text NOT NULL,"
    " due_at double precision NOT NULL,"
    " delivered_at double precision NOT NULL)"
)
DSN_ENV = "BENCH_PG_DSN"  # where pg_record's callable writes, in a worker process

# An item: its key and the instant it is due (seconds since the epoch).
Item = tuple[str, float]
Schedule = Callable[[Sequence[Item]], None]
WorkerCommand = Callable[[int], list[str]]
ReadyCount = Callable[[], int]


@dataclass(frozen=True)
class Delivered:
    """What the deliveries table holds after a run."""

    rows: int  # every recorded delivery, duplicates included
    keys: int  # distinct keys delivered
    first: float  # earliest delivered_at
    last: float  # latest delivered_at
    late: list[float]  # delivered_at - due_at of every row, seconds

    def exactly_once(self, expected: int) -> bool:
        return self.rows == self.keys == expected


@dataclass(frozen=True)
class BurstResult:
    count: int  # items scheduled
    workers: int
    due_at: float  # the instant every item was due; workers start right after
    delivered: Delivered

    @property
    def rate_from_due(self) -> float:
        """Items / (last delivery - due instant): includes worker start-up."""
        return self.count / max(self.delivered.last - self.due_at, 1e-9)

    @property
    def rate_steady(self) -> float:
        """Deliveries / (last - first delivery): start-up left out."""
        span = self.delivered.last - self.delivered.first
        return (self.delivered.rows - 1) / span if span > 0 else float("nan")


@dataclass(frozen=True)
class LatenessResult:
    count: int
    workers: int
    window: float
    created_late: int  # items whose create returned after they were due
    delivered: Delivered

    def percentile(self, fraction: float) -> float:
        """Lateness in seconds at ``fraction`` (0..1) of all delivered rows."""
        late = sorted(self.delivered.late)
        if not late:
            return float("nan")
        if fraction >= 1 or len(late) == 1:
            return late[-1]
        return statistics.quantiles(late, n=1000, method="inclusive")[
            max(0, round(fraction * 1000) - 1)
        ]


def create_deliveries_table(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(DELIVERIES_DDL)


def read_delivered(dsn: str) -> Delivered:
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute("SELECT key, due_at, delivered_at FROM bench_deliveries").fetchall()
    if not rows:
        return Delivered(0, 0, float("nan"), float("nan"), [])
    delivered = [row[2] for row in rows]
    return Delivered(
        rows=len(rows),
        keys=len({row[0] for row in rows}),
        first=min(delivered),
        last=max(delivered),
        late=[row[2] - row[1] for row in rows],
    )


def count_delivered(conn: psycopg.Connection[tuple[object, ...]]) -> int:
    row = conn.execute("SELECT count(*) FROM bench_deliveries").fetchone()
    return int(str(row[0])) if row else 0


class WorkerProcesses:
    """Worker processes of one side: started on enter, stopped on exit
    (SIGTERM to each, then SIGKILL to any still alive after ``grace``).
    Their output goes to a log file, shown if a worker dies early."""

    def __init__(self, commands: list[list[str]], dsn: str, grace: float = 10.0) -> None:
        self.commands = commands
        self.env = {**os.environ, DSN_ENV: dsn}
        self.env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p
        )
        self.grace = grace
        self.processes: list[subprocess.Popen[bytes]] = []
        self.log = Path(tempfile.mkstemp(prefix="bench-pg-workers-", suffix=".log")[1])

    def __enter__(self) -> WorkerProcesses:
        with self.log.open("ab") as log:
            for command in self.commands:
                self.processes.append(
                    subprocess.Popen(command, env=self.env, cwd=ROOT, stdout=log, stderr=log)
                )
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()
        if kind is None:
            self.log.unlink(missing_ok=True)
        else:
            print(f"worker output kept in {self.log}", file=sys.stderr)

    def check_alive(self) -> None:
        for process in self.processes:
            if process.poll() is not None:
                tail = self.log.read_text(errors="replace")[-2000:]
                raise RuntimeError(
                    f"worker pid {process.pid} exited with {process.returncode}:\n{tail}"
                )

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + self.grace
        for process in self.processes:
            try:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def wait_until(
    what: str, done: Callable[[], bool], timeout: float, workers: WorkerProcesses
) -> None:
    """Poll ``done`` every 20 ms until true; fail after ``timeout`` seconds or
    as soon as a worker process has died."""
    deadline = time.monotonic() + timeout
    while not done():
        workers.check_alive()
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not done after {timeout:.0f} s")
        time.sleep(0.02)


def wait_for_deliveries(dsn: str, count: int, timeout: float, workers: WorkerProcesses) -> None:
    """Until ``count`` rows are recorded, or ``timeout``: a run that does not
    deliver everything still returns, and its check shows what is missing.
    One connection, polled every 20 ms (a new one each time would cost the
    server a process start each)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        try:
            wait_until("deliveries", lambda: count_delivered(conn) >= count, timeout, workers)
        except TimeoutError as error:
            print(f"warning: {error} ({count_delivered(conn)}/{count})", file=sys.stderr)


def burst_scenario(
    dsn: str,
    count: int,
    workers: int,
    *,
    schedule: Schedule,
    worker_command: WorkerCommand,
    create_s: float = 1 / 2000,
) -> BurstResult:
    """``count`` items all due at one instant a little after they are
    created (creation untimed; ``create_s`` seconds an item allowed for it:
    a side that refuses a due instant already past needs enough); at that
    instant ``workers`` processes start; returns once every item is
    recorded (or after a generous timeout) and the workers are stopped."""
    due_at = time.time() + 1.0 + count * create_s
    schedule([(f"b{index}", due_at) for index in range(count)])
    # Items created after the instant they were due would start the clock
    # before they exist: start it when they all exist.
    due_at = max(due_at, time.time())
    time.sleep(max(0.0, due_at - time.time()))
    with WorkerProcesses([worker_command(index) for index in range(workers)], dsn) as procs:
        wait_for_deliveries(dsn, count, 60.0 + count / 20, procs)
    return BurstResult(count, workers, due_at, read_delivered(dsn))


def lateness_scenario(
    dsn: str,
    count: int,
    window: float,
    workers: int,
    *,
    schedule: Schedule,
    worker_command: WorkerCommand,
    ready: ReadyCount,
) -> LatenessResult:
    """``workers`` processes started and ready (``ready() >= workers``);
    then ``count`` items due evenly over ``window`` seconds, the first due
    a little after all are created; returns once all are recorded (or after
    a generous timeout) and the workers are stopped."""
    with WorkerProcesses([worker_command(index) for index in range(workers)], dsn) as procs:
        wait_until("workers ready", lambda: ready() >= workers, 60.0, procs)
        # Creates run beside the workers here (slower than alone): a wide margin.
        start = time.time() + 1.0 + count / 200
        items = [(f"l{index}", start + window * index / count) for index in range(count)]
        schedule(items)
        created = time.time()
        wait_for_deliveries(dsn, count, window + 60.0 + count / 20, procs)
    late = sum(1 for _, due in items if due < created)
    return LatenessResult(count, workers, window, late, read_delivered(dsn))
