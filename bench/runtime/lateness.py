"""Figures 3 and 5: firing lateness (arrival at the host minus the target)
with many reminders pending in one process, a few of them due within a
window at known instants, and the resident memory per pending reminder.
APScheduler: job start minus its run time, as many jobs in its SQLite
store."""

from __future__ import annotations

import math
import shutil
import time
from typing import Any, Final

from . import aps, harness
from .common import (
    DEFAULT,
    T_BYTES_X_APS,
    T_P99_X_APS,
    FsyncStats,
    GcPauses,
    GcStats,
    Record,
    log,
    measuring,
    open_fds,
    percentile,
    raise_fd_limit,
    rss_bytes,
    until,
    until_async,
    wall_ms,
)
from .context import Bench
from .report import Row, better, ms, size, status
from .workers import Worker, aps_worker, tickler_worker


class TicklerLatenessParams(Record, frozen=True):
    directory: str  # the pre-generated sessions s0, s1, ...
    sessions: int
    pregenerated: int  # far-future reminders in them
    due: int  # reminders created due within the window
    window_s: tuple[float, float]  # from now


class TicklerLateness(Record, frozen=True):
    pending: int
    expected_pending: int
    open_s: float  # opening and starting every session
    due_create_rate: float  # the due reminders' creates per second
    fired: int
    complete: bool  # every due reminder arrived
    p50: float  # lateness, ms
    p99: float
    max: float
    wake_p50: float  # the timer's wake after the target, ms
    wake_p99: float
    after_wake_p50: float  # the hand-over after that wake, ms
    after_wake_p99: float
    gc: GcStats  # while firing
    rss_delta: int
    bytes_per_pending: float
    fds: int
    fd_limit: int
    fsync: FsyncStats  # while firing


class ApsLatenessParams(Record, frozen=True):
    path: str  # the job store, with its far-future jobs
    due: int
    window_s: tuple[float, float]
    drain_s: float  # how long after the window to wait for the last due jobs


class ApsLateness(Record, frozen=True):
    pending: int
    fired: int
    complete: bool
    p50: float  # ms; a job not run by the drain cap counts as infinitely late
    p99: float
    rss_delta: int
    bytes_per_pending: float


async def tickler_lateness(p: TicklerLatenessParams) -> TicklerLateness:
    """Open the pre-generated sessions, create ``due`` reminders due within
    ``window_s`` (one per session, at known instants), note each follow-up's
    lateness. RSS is read before opening and once everything is pending."""
    sessions, due, window_s = p.sessions, p.due, p.window_s
    fd_limit = raise_fd_limit()
    rig = harness.Rig(p.directory)
    rss0 = rss_bytes()
    open_s = await rig.open([f"s{i}" for i in range(sessions)], created_at=0)
    await until_async(rig.all_armed, 60, 0.05)
    log(f"tickler: opened and started {sessions:,} sessions in {open_s:.1f} s")
    begin = int(wall_ms())
    low, high = (int(w * 1000) for w in window_s)
    targets = [begin + low + (high - low) * i // due for i in range(due)]
    if len(set(targets)) != due:
        raise ValueError("the due window is too short for distinct millisecond targets")
    calls = [
        (i % sessions, {"prompt": f"due reminder {i}", "at": harness.instant_text(target)})
        for i, target in enumerate(targets)
    ]
    wakes: list[tuple[int, float]] = []
    for i, target in enumerate(targets):
        rig.note_first_wake(i % sessions, target, wakes)
    create_s = await rig.create_all(calls)
    pending = rig.pending()
    rss1 = rss_bytes()
    fds = open_fds()
    log(f"tickler: {pending:,} pending, {due:,} due within {window_s[0]:.0f}-{window_s[1]:.0f} s")
    f0 = len(rig.fsync.seconds)
    measuring(True)
    with GcPauses() as pauses:
        complete = await until_async(lambda: len(rig.host.arrivals) >= due, high / 1000 + 30)
    measuring(False)
    arrivals = rig.host.targeted()
    late = [arrived - target for arrived, target in arrivals]
    woken = dict(wakes)
    after_wake = [arrived - woken[target] for arrived, target in arrivals if target in woken]
    fsyncs = rig.fsync.summary(f0)
    await rig.close()
    return TicklerLateness(
        pending=pending,
        expected_pending=p.pregenerated + due,
        open_s=open_s,
        due_create_rate=due / create_s,
        fired=len(late),
        complete=complete,
        p50=percentile(late, 50),
        p99=percentile(late, 99),
        max=max(late, default=math.nan),
        wake_p50=percentile([w - t for t, w in wakes], 50),
        wake_p99=percentile([w - t for t, w in wakes], 99),
        after_wake_p50=percentile(after_wake, 50),
        after_wake_p99=percentile(after_wake, 99),
        gc=pauses.summary(),
        rss_delta=rss1 - rss0,
        bytes_per_pending=(rss1 - rss0) / pending,
        fds=fds,
        fd_limit=fd_limit,
        fsync=fsyncs,
    )


def aps_lateness(p: ApsLatenessParams) -> ApsLateness:
    due, window_s = p.due, p.window_s
    rss0 = rss_bytes()
    begin = wall_ms()
    low, high = (w * 1000 for w in window_s)
    aps.aps_populate(
        p.path, ((f"due-{i}", begin + low + (high - low) * i / due) for i in range(due))
    )
    sched = aps.aps_scheduler(p.path)
    sched.start()
    time.sleep(0.5)
    rss1 = rss_bytes()
    pending = aps.aps_count(p.path)
    log(f"APScheduler: {pending:,} jobs, {due:,} due within {window_s[0]:.0f}-{window_s[1]:.0f} s")
    complete = until(
        lambda: aps.fired_count() >= due, (begin + high) / 1000 - time.time() + p.drain_s
    )
    late = [ran - target for ran, target in aps.fired()]
    padded = late + [math.inf] * (due - len(late))  # unfired: later than the drain cap
    return ApsLateness(
        pending=pending,
        fired=len(late),
        complete=complete,
        p50=percentile(padded, 50),
        p99=percentile(padded, 99),
        rss_delta=rss1 - rss0,
        bytes_per_pending=(rss1 - rss0) / pending,
    )


TICKLER: Final = tickler_worker(
    "lateness", TicklerLatenessParams, TicklerLateness, tickler_lateness
)
APS: Final = aps_worker("lateness", ApsLatenessParams, ApsLateness, aps_lateness)
WORKERS: Final[tuple[Worker[Any, Any], ...]] = (TICKLER, APS)


def measure(bench: Bench) -> None:
    s = bench.scale
    sessions = bench.sessions_within_fds(s.sessions, s.due)
    if sessions < s.sessions:
        bench.notes.append(
            f"figures 3 and 5 use {sessions:,} sessions, not {s.sessions:,}: {bench.fd_note}"
        )
    far = s.pending - s.due
    log(f"generating {far:,} far-future reminders in {sessions:,} session files")
    t0 = time.perf_counter()
    directory = bench.path("late")
    disk = harness.write_sessions(
        directory, "s", harness.spread(far, sessions), int(time.time() * 1000)
    )
    log(f"  written in {time.perf_counter() - t0:.1f} s ({disk / far:.0f} bytes each on disk)")
    log(f"generating {far:,} far-future APScheduler jobs")
    t0 = time.perf_counter()
    db = bench.path("late.sqlite")
    aps.aps_populate(str(db), aps.far_jobs("far-", far, time.time() * 1000))
    shutil.copy(db, bench.path("start.sqlite"))  # figure 6 adds to these
    log(f"  written in {time.perf_counter() - t0:.1f} s")
    log("lateness: tickler")
    t = bench.runner.run(
        TICKLER,
        TicklerLatenessParams(
            directory=str(directory),
            sessions=sessions,
            pregenerated=far,
            due=s.due,
            window_s=s.window_s,
        ),
    )
    log("lateness: APScheduler")
    a = bench.runner.run(
        APS, ApsLatenessParams(path=str(db), due=s.due, window_s=s.window_s, drain_s=s.drain_s)
    )
    if t.pending != t.expected_pending or not t.complete:
        bench.notes.append(f"figure 3 (tickler) is incomplete: {t}")
    if not a.complete:
        bench.notes.append(
            f"figure 3: APScheduler ran {a.fired:,} of its {s.due:,} due jobs by "
            f"{s.drain_s:.0f} s after the window; the others count as later than that "
            "(shown as '> cap')"
        )
    where = f"{t.pending:,} pending, {sessions:,} sessions"
    if s.pending < DEFAULT.pending or sessions < DEFAULT.sessions:
        bench.notes.append(
            f"figures 3 and 5 ran at {t.pending:,} pending in {sessions:,} sessions only; "
            f"issue 29's second scale ({DEFAULT.pending:,} in {DEFAULT.sessions:,}) is "
            "measured by the full run (without --quick)"
        )
    bench.rows[3] += lateness_rows(t, a, where)
    bench.rows[5].append(
        Row(
            f"5. RSS per pending ({where})",
            size(t.bytes_per_pending),
            size(a.bytes_per_pending),
            better(a.bytes_per_pending / t.bytes_per_pending),
            "<= APS",
            status(t.bytes_per_pending <= T_BYTES_X_APS * a.bytes_per_pending),
        )
    )
    bench.notes.append(
        f"figure 3: tickler opened and started {sessions:,} sessions in "
        f"{t.open_s:.1f} s, then created the {s.due:,} due reminders at "
        f"{t.due_create_rate:,.0f}/s; {t.fds:,} descriptors open"
    )
    bench.notes.append(
        f"figure 5: APScheduler keeps its jobs in SQLite, not in memory (RSS delta "
        f"{a.rss_delta / 2**20:.1f} MiB for {a.pending:,} jobs, mostly "
        f"fixed); on disk {db.stat().st_size / a.pending:,.0f} B/job in SQLite, "
        f"{disk / far:,.0f} B/reminder in tickler's session files"
    )


def lateness_rows(t: TicklerLateness, a: ApsLateness, where: str) -> list[Row]:
    return [
        Row(f"3. firing lateness p50 ({where})", ms(t.p50), ms(a.p50), better(a.p50 / t.p50)),
        Row(
            "   firing lateness p99",
            ms(t.p99),
            ms(a.p99),
            better(a.p99 / t.p99),
            "<= APS",
            status(t.p99 <= T_P99_X_APS * a.p99),
        ),
        Row("   firing lateness max", ms(t.max)),
        Row("   timer wake after target p50 / p99", f"{ms(t.wake_p50)} / {ms(t.wake_p99)}"),
        Row(
            "   hand-over after wake p50 / p99",
            f"{ms(t.after_wake_p50)} / {ms(t.after_wake_p99)}",
        ),
        Row("   gc while firing: full passes; longest pass", f"{t.gc.full:,}; {ms(t.gc.max_ms)}"),
        Row(
            "   store fsync p50 / p99 while firing",
            f"{ms(t.fsync.p50_ms)} / {ms(t.fsync.p99_ms)}",
        ),
    ]
