"""Figure 3: firing lateness of a worker on the large store, with ``due``
occurrences due at known instants spread evenly over ``window_s`` (one per
session, the rest of the sessions far ahead): from each occurrence's
instant (the follow-up's key holds it) to the target's call. APScheduler:
each job's run minus its run date, the same instants, its jobs in its SQLite
job store. The window starts ``lead_s`` after the sessions are written, once
the worker is up (checked: a note says when it was not)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from bench.runtime import harness
from bench.runtime.common import log, percentile, wall_ms
from bench.runtime.report import Row, better, ms, status

from . import peer
from .check import CheckFailed, check_once
from .plan import T_P99_MS, T_RSS, Cold
from .process import WorkerProcess
from .start import mib
from .stores import ColdStore, Session, due_session


@dataclass(frozen=True)
class Lateness:
    p50: float
    p99: float
    max: float
    fired: int
    cpu_ms: float  # the worker's CPU per delivery, from the first to the last
    peak_rss: int


def window(cold: Cold) -> list[Session]:
    """The run's sessions: one occurrence each, due evenly over the window."""
    s = cold.scale
    begin = int(wall_ms() + s.lead_s * 1000)
    span = int(s.window_s * 1000)
    return [due_session(f"x{i}", i, begin + span * i // s.due) for i in range(s.due)]


def tickler_lateness(cold: Cold, store: ColdStore) -> Lateness:
    s, sessions = cold.scale, cold.scale.sessions
    run = window(cold)
    store.replace_run(run)
    worker = WorkerProcess(
        store.path, cold.root / "notes", cold.profile_path(f"tickler worker ({store.kind}) due")
    )
    worker.start()
    try:
        worker.wait_for(1, (run[0].due_at - wall_ms()) / 1000 + s.drain_s)
        c0, n0 = worker.cpu_s(), len(worker.deliveries())
        complete = worker.wait_for(s.due, (run[-1].due_at - wall_ms()) / 1000 + s.drain_s)
        c1, n1 = worker.cpu_s(), len(worker.deliveries())
        worker.wait_for(s.due + 1, s.linger_s)  # a repeat would show now
        rss = worker.peak_rss()
    finally:
        worker.stop()
    where = f"lateness, {sessions:,} sessions ({store.kind})"
    deliveries = worker.deliveries()
    if not complete:
        raise CheckFailed(
            f"{where}: {len(deliveries):,} of {s.due:,} delivered by {s.drain_s:g} s after "
            f"the window; the log:\n{worker.log_text()}"
        )
    check_once(deliveries, run, where)
    ready = worker.ready_ms()
    if ready is None or ready > run[0].due_at:
        cold.notes.append(
            f"figure 3 ({store.kind}): the worker began claiming after the window had begun"
        )
    late = [d.at_ms - harness.instant_ms(d.key.split("@", 1)[1]) for d in deliveries]
    return Lateness(
        p50=percentile(late, 50),
        p99=percentile(late, 99),
        max=max(late),
        fired=len(late),
        cpu_ms=(c1 - c0) * 1000 / (n1 - n0) if n1 > n0 else math.nan,
        peak_rss=rss,
    )


def aps_lateness(cold: Cold) -> peer.ApsRun:
    s = cold.scale
    store = cold.peers[s.sessions]
    run = window(cold)
    store.replace_run(run)
    until = run[-1].due_at + s.drain_s * 1000
    targets = [r.due_at for r in run]
    return peer.aps_run(store.file, cold.root / "aps-notes", targets, until, s.linger_s)


def measure(cold: Cold) -> None:
    s = cold.scale
    found: dict[str, Lateness] = {}
    for kind in ("JSONL", "SQLite"):
        log(f"lateness: tickler ({kind}), {s.due:,} due over {s.window_s:g} s")
        found[kind] = tickler_lateness(cold, cold.stores[kind, s.sessions])
    log(f"lateness: APScheduler, {s.due:,} due over {s.window_s:g} s")
    a = aps_lateness(cold)
    if not a.complete:
        cold.notes.append(
            f"figure 3: APScheduler ran {a.fired:,} of its {s.due:,} due jobs by "
            f"{s.drain_s:g} s after the window; the others count as later than that ('> cap')"
        )
    where = f"{s.due:,} due over {s.window_s:g} s, {s.sessions:,} sessions"
    for kind, t in found.items():
        cold.rows[3] += [
            Row(
                f"3. firing lateness p50 ({kind}; {where})",
                ms(t.p50),
                ms(a.p50),
                better(a.p50 / t.p50),
            ),
            Row(
                "   firing lateness p99",
                ms(t.p99),
                ms(a.p99),
                better(a.p99 / t.p99),
                f"< {T_P99_MS:g} ms",
                status(t.p99 < T_P99_MS),
            ),
            Row("   firing lateness max", ms(t.max), ms(a.max), better(a.max / t.max)),
            Row(
                "   CPU per delivery (the process's, first to last)",
                ms(t.cpu_ms),
                ms(a.cpu_ms),
                better(a.cpu_ms / t.cpu_ms),
            ),
        ]
        cold.rows[2].append(
            Row(
                f"   peak RSS after {t.fired:,} deliveries ({kind}, figure 3)",
                mib(t.peak_rss),
                mib(a.peak_rss),
                better(a.peak_rss / t.peak_rss),
                f"< {mib(T_RSS)}",
                status(t.peak_rss < T_RSS),
            )
        )
