"""1, 2 or 4 ``tickler worker --dsn`` processes draining the burst:
``BURST`` sessions due at one instant before the workers start.

The target is cheap (:func:`bench.cold.target.note`: one line appended to
a file, no database), so the figure is tickler's own cost. Timed from the
spawn of the first worker to the last delivery (start-up included), and
from the first delivery to the last. Checked: every burst occurrence
delivered exactly once, nothing else. Read before the workers stop: their
peak resident memory (``VmHWM``) and CPU time, and the CPU time of their
database backends; from ``pg_stat_database``, the transactions committed
and rows written per delivery (the database's share in the capacity model).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import psycopg

from bench.cold.target import NOTES_ENV
from bench.pg_common import WorkerProcesses

from .load import BURST, SCHEMA, burst_id, burst_key, load_burst

TARGET: Final = "bench.cold.target:note"
STATS: Final = "xact_commit, tup_inserted + tup_updated + tup_deleted"
SETTLE_S: Final = 1.0  # after the last expected delivery: a repeat would show by then


class DrainWrong(Exception):
    """A burst occurrence was lost or delivered twice, or something else came."""


@dataclass(frozen=True)
class Drain:
    workers: int
    from_spawn_s: float
    first_to_last_s: float
    peak_rss: list[int]  # bytes, each worker
    worker_cpu_s: float  # all workers, from the first delivery on
    backend_cpu_s: float  # their database backends
    commits: int  # transactions committed in the database meanwhile
    rows_written: int
    rows_scanned: int  # by sequential scans of the store's tables
    session_updates: int
    hot_updates: int  # of those, HOT: no index entry written
    count: int
    vacuum_s: float  # VACUUM ANALYZE before it (the previous drain's dead rows)

    @property
    def rate(self) -> float:
        """Deliveries a second from the spawn (start-up included)."""
        return self.count / self.from_spawn_s

    @property
    def steady_rate(self) -> float:
        """Deliveries a second from the first delivery to the last."""
        return (self.count - 1) / self.first_to_last_s


def worker_command(dsn: str) -> list[str]:
    return [
        sys.executable,
        *("-m", "tickler.adapters.cli", "worker", f"--dsn={dsn}", f"--schema={SCHEMA}"),
        f"--deliver={TARGET}",
        "--log-level=WARNING",
    ]


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _peak_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmHWM in /proc/<pid>/status")


def _stats(conn: psycopg.Connection[tuple[object, ...]]) -> tuple[int, int, int, int, int]:
    """Transactions committed, rows written, rows read by sequential scans
    of the store's tables (a query that scans shows here), updates of the
    sessions table and how many of them were HOT (no index entry written)."""
    conn.execute("SELECT pg_stat_clear_snapshot()")
    row = conn.execute(
        f"SELECT {STATS} FROM pg_stat_database WHERE datname = current_database()"
    ).fetchone()
    scanned = conn.execute(
        "SELECT coalesce(sum(seq_tup_read), 0) FROM pg_stat_user_tables WHERE schemaname = %s",
        (SCHEMA,),
    ).fetchone()
    updates = conn.execute(
        "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables"
        " WHERE schemaname = %s AND relname = 'sessions'",
        (SCHEMA,),
    ).fetchone()
    assert row is not None
    assert scanned is not None
    assert updates is not None
    return (
        int(str(row[0])),
        int(str(row[1])),
        int(str(scanned[0])),
        int(str(updates[0])),
        int(str(updates[1])),
    )


def _backends(conn: psycopg.Connection[tuple[object, ...]]) -> list[int]:
    rows = conn.execute(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
        " AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
    ).fetchall()
    return [int(str(row[0])) for row in rows]


def _notes(path: Path) -> list[tuple[int, str, str]]:
    found = []
    for line in path.read_text().splitlines():
        ns, key, session = line.split(" ")
        found.append((int(ns), key, session))
    return found


def _lines(path: Path) -> int:
    return path.read_bytes().count(b"\n")


def _wait(path: Path, count: int, procs: WorkerProcesses) -> float:
    """Until ``count`` deliveries; the workers' CPU seconds at the first
    (their start-up: imports, connections), left out of the cost per delivery."""
    deadline = time.monotonic() + 120.0 + count / 20
    start_up: float | None = None
    while (done := _lines(path)) < count:
        if done and start_up is None:
            start_up = sum(_cpu_s(p.pid) for p in procs.processes)
        procs.check_alive()
        if time.monotonic() > deadline:
            raise DrainWrong(f"{done} of {count} delivered before the time-out")
        time.sleep(0.05)
    return start_up if start_up is not None else 0.0


def drain(dsn: str, workers: int, count: int = BURST) -> Drain:
    """``count`` burst sessions loaded, then drained by ``workers`` processes."""
    due_ms = time.time_ns() // 1_000_000 - 1000
    vacuum_s = load_burst(dsn, due_ms, count)
    notes = Path(tempfile.mkstemp(prefix="bench-pg-scale-", suffix=".notes")[1])
    try:
        with psycopg.connect(dsn, autocommit=True) as conn:
            commits0, rows0, scanned0, upd0, hot0 = _stats(conn)
            procs = WorkerProcesses([worker_command(dsn) for _ in range(workers)], dsn)
            procs.env[NOTES_ENV] = str(notes)
            spawned = time.time_ns()
            with procs:
                start_up = _wait(notes, count, procs)
                time.sleep(SETTLE_S)
                pids = [p.pid for p in procs.processes]
                rss = [_peak_rss(pid) for pid in pids]
                cpu = sum(_cpu_s(pid) for pid in pids) - start_up
                backend_cpu = sum(_cpu_s(pid) for pid in _backends(conn))
            time.sleep(1.5)  # the backends' statistics are reported when they end
            commits1, rows1, scanned1, upd1, hot1 = _stats(conn)
        delivered = _notes(notes)
    finally:
        notes.unlink(missing_ok=True)
    _check_once(delivered, due_ms, count)
    times = sorted(ns for ns, _, _ in delivered)
    return Drain(
        workers,
        (times[-1] - spawned) / 1e9,
        (times[-1] - times[0]) / 1e9,
        rss,
        cpu,
        backend_cpu,
        commits1 - commits0,
        rows1 - rows0,
        scanned1 - scanned0,
        upd1 - upd0,
        hot1 - hot0,
        count,
        vacuum_s,
    )


def _check_once(delivered: list[tuple[int, str, str]], due_ms: int, count: int) -> None:
    got = Counter((session, key) for _, key, session in delivered)
    want = Counter((burst_id(n), burst_key(due_ms)) for n in range(count))
    if got != want:
        missing = sorted((want - got).elements())[:3]
        extra = sorted((got - want).elements())[:3]
        raise DrainWrong(
            f"{sum(got.values())} deliveries for {count} occurrences; "
            f"missing {missing}, unexpected or repeated {extra}"
        )
