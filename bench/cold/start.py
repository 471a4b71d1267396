"""Figures 1 and 2: a worker started on a store of cold sessions, one of
them a minute overdue: process start to the first delivery its target
notes (and to the log line saying it began claiming), then its peak
resident memory once it has run on for a moment. APScheduler: process start
to its first job run, its jobs in its SQLite job store, then its peak
resident memory. Each run in a fresh process; the median of the runs (the
largest for memory)."""

from __future__ import annotations

import math
import statistics
import time
from dataclasses import dataclass
from typing import Final

from bench.runtime.common import log, until, wall_ms
from bench.runtime.report import Row, better, secs, status
from bench.runtime.startup import interpreter_and_imports

from . import peer
from .check import CheckFailed, check_once
from .data import far_run
from .plan import T_FIRST_S, T_FLAT, T_RSS, Cold, ratio
from .process import CHANGED, WorkerProcess
from .stores import RUN, ColdStore, Session, due_session

# What ``tickler worker --store`` imports before its first claim.
WORKER_MODULES: Final = (
    "tickler.adapters.cli",
    "tickler.adapters.worker._worker",
    "tickler.adapters.delivery._callable",
    "tickler.adapters.stores._jsonl",
    "tickler.adapters.stores._sqlite",
)
BEFORE_CLAIMS: Final = {
    "JSONL": "interpreter, imports, index opened",
    "SQLite": "interpreter, imports, unindexed sessions checked",
}
CHECK: Final = {
    "JSONL": "every file's size, beside the claims",
    "SQLite": "one query, before the claims",
}


@dataclass(frozen=True)
class Started:
    first_s: float  # spawned to the first delivery
    ready_s: float  # spawned to "began claiming" (tickler) or nan
    checked_s: float  # spawned to the end of the start check (tickler) or nan
    peak_rss: int


def run_sessions(cold: Cold, sessions: int) -> list[Session]:
    """The run's sessions: one a minute overdue, the others far ahead."""
    return [due_session(f"{RUN}0", 0, int(wall_ms()) - 60_000), *far_run(cold, sessions, 1)]


def tickler_start(cold: Cold, store: ColdStore, sessions: int) -> Started:
    run = run_sessions(cold, sessions)
    store.replace_run(run)
    worker = WorkerProcess(
        store.path, cold.root / "notes", cold.profile_path(f"tickler worker ({store.kind}) start")
    )
    worker.start()
    try:
        delivered = worker.wait_for(1, 60)
        # Memory once the start check is over too (JSONL: it runs beside the claims).
        done = worker.checked_ms if store.kind == "JSONL" else worker.ready_ms
        checked = until(lambda: worker.exited() or done() is not None, 60, 0.02)
        time.sleep(cold.scale.linger_s)
        rss = worker.peak_rss()
    finally:
        worker.stop()
    where = f"start, {sessions:,} sessions ({store.kind})"
    if not delivered:
        raise CheckFailed(f"{where}: no delivery within 60 s; the log:\n{worker.log_text()}")
    deliveries = worker.deliveries()
    check_once(deliveries, run[:1], where)
    if worker.said(CHANGED):
        raise CheckFailed(f"{where}: the start check found generated rows stale")
    ready, checked_at = worker.ready_ms(), worker.checked_ms()
    if store.kind == "SQLite":
        checked_at = ready  # its check ends before it begins claiming
    if not checked or checked_at is None:
        raise CheckFailed(f"{where}: the start check did not end; the log:\n{worker.log_text()}")
    return Started(
        first_s=(deliveries[0].at_ms - worker.spawned_ms) / 1000,
        ready_s=math.nan if ready is None else (ready - worker.spawned_ms) / 1000,
        checked_s=(checked_at - worker.spawned_ms) / 1000,
        peak_rss=rss,
    )


def aps_start(cold: Cold, sessions: int) -> Started:
    store = cold.peers[sessions]
    run = run_sessions(cold, sessions)
    store.replace_run(run)
    notes = cold.root / "aps-notes"
    done = peer.aps_run(store.file, notes, [run[0].due_at], wall_ms() + 60_000, cold.scale.linger_s)
    if not done.complete:
        raise CheckFailed(f"APScheduler, {sessions:,} jobs: no job run within 60 s")
    return Started(
        first_s=done.first_ms / 1000, ready_s=math.nan, checked_s=math.nan, peak_rss=done.peak_rss
    )


def median_of(runs: list[Started]) -> Started:
    return Started(
        first_s=statistics.median(r.first_s for r in runs),
        ready_s=statistics.median(r.ready_s for r in runs),
        checked_s=statistics.median(r.checked_s for r in runs),
        peak_rss=max(r.peak_rss for r in runs),
    )


def mib(value: float) -> str:
    return f"{value / 2**20:,.1f} MiB"


def measure(cold: Cold) -> None:
    runs = cold.scale.start_runs
    small, large = cold.sizes
    found: dict[tuple[str, int], Started] = {}
    for sessions in (large, small):
        for kind in ("JSONL", "SQLite"):
            store = cold.stores[kind, sessions]
            log(f"start to first delivery: tickler, {sessions:,} sessions ({kind}), {runs} runs")
            found[kind, sessions] = median_of(
                [tickler_start(cold, store, sessions) for _ in range(runs)]
            )
        log(f"start to first job run: APScheduler, {sessions:,} jobs, {runs} runs")
        found["APScheduler", sessions] = median_of([aps_start(cold, sessions) for _ in range(runs)])
    aps_first = found["APScheduler", large].first_s
    for kind in ("JSONL", "SQLite"):
        t = found[kind, large]
        cold.rows[1] += [
            Row(
                f"1. start to first delivery, {large:,} sessions ({kind})",
                secs(t.first_s),
                secs(aps_first),
                better(aps_first / t.first_s),
                f"< {T_FIRST_S:g} s",
                status(t.first_s < T_FIRST_S),
            ),
            Row(f"   of which start to claiming ({BEFORE_CLAIMS[kind]})", secs(t.ready_s)),
            Row(
                f"   start to the end of the check of every session ({CHECK[kind]})",
                secs(t.checked_s),
            ),
            Row(
                f"   at {small:,} sessions",
                secs(found[kind, small].first_s),
                secs(found["APScheduler", small].first_s),
                better(found["APScheduler", small].first_s / found[kind, small].first_s),
            ),
        ]
    log("interpreter start and imports")
    over = interpreter_and_imports(runs, WORKER_MODULES)
    cold.rows[1] += [
        Row("   interpreter start+exit (python -c pass)", secs(over.bare_s), secs(over.bare_s)),
        Row(
            "   imports (the tickler CLI's worker / apscheduler+sqlalchemy)",
            secs(over.tickler_imports_s),
            secs(over.aps_imports_s),
            better(over.aps_imports_s / over.tickler_imports_s),
        ),
    ]
    rss_rows(cold, found)
    if runs > 1:
        cold.notes.append(
            f"figures 1 and 2: {runs} fresh processes each; the median time, the largest RSS"
        )


def rss_rows(cold: Cold, found: dict[tuple[str, int], Started]) -> None:
    small, large = cold.sizes
    a_small, a_large = (found["APScheduler", n].peak_rss for n in (small, large))
    for kind in ("JSONL", "SQLite"):
        t_small, t_large = (found[kind, n].peak_rss for n in (small, large))
        flat = ratio(t_large, t_small)
        cold.rows[2] += [
            Row(
                f"2. peak RSS, {large:,} sessions ({kind}, after start)",
                mib(t_large),
                mib(a_large),
                better(a_large / t_large),
                f"< {mib(T_RSS)}",
                status(t_large < T_RSS),
            ),
            Row(f"   at {small:,} sessions", mib(t_small), mib(a_small), better(a_small / t_small)),
            Row(
                f"   ratio {large:,} / {small:,} sessions",
                f"{flat:.2f}x",
                f"{ratio(a_large, a_small):.2f}x",
                "-",
                f"<= {T_FLAT:g}x",
                status(flat <= T_FLAT),
            ),
        ]
