"""Figure 4: a burst of reminders all due at the same instant; deliveries
per second from that instant until the last one is handed over."""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any, Final

from . import aps, harness
from .common import (
    FD_RESERVE,
    T_BURST,
    FsyncStats,
    GcPauses,
    GcStats,
    Record,
    log,
    measuring,
    open_fds,
    raise_fd_limit,
    until,
    until_async,
    wall_ms,
)
from .context import Bench, round_down
from .report import Row, better, ms, rate, secs, status
from .workers import Worker, aps_worker, tickler_worker


class TicklerBurstParams(Record, frozen=True):
    directory: str  # empty sessions b0, b1, ...
    sessions: int
    count: int  # reminders, spread over the sessions
    margin_s: float  # from now to the due instant


class TicklerBurst(Record, frozen=True):
    delivered: int
    complete: bool
    setup_late: bool  # the creates ended after the due instant: not valid
    rate: float  # deliveries per second, from the due instant to the last
    first_ms: float  # after the due instant
    last_ms: float
    cpu_us: float  # CPU per delivery
    gc: GcStats
    fds: int
    fd_limit: int
    fsync: FsyncStats


class ApsBurstParams(Record, frozen=True):
    path: str
    count: int
    margin_s: float
    cap_s: float  # how long after the due instant to wait


class ApsBurst(Record, frozen=True):
    delivered: int
    complete: bool
    rate: float  # over the span
    first_ms: float
    span_s: float  # to the last job, or to the cap


async def tickler_burst(p: TicklerBurstParams) -> TicklerBurst:
    """``count`` reminders over ``sessions`` sessions, all due at one instant;
    deliveries per second from that instant to the last hand-over."""
    sessions, count, margin_s = p.sessions, p.count, p.margin_s
    fd_limit = raise_fd_limit()
    rig = harness.Rig(p.directory)
    open_s = await rig.open([f"b{i}" for i in range(sessions)], created_at=0)
    await asyncio.sleep(0.2)
    log(f"tickler: opened and started {sessions:,} empty sessions in {open_s:.1f} s")
    target = int(wall_ms() + margin_s * 1000)
    at = harness.instant_text(target)
    await rig.create_all(
        [(i % sessions, {"prompt": f"burst reminder {i}", "at": at}) for i in range(count)]
    )
    created = wall_ms()
    log(f"tickler: {count:,} reminders created, due in {(target - created) / 1000:.1f} s")
    await asyncio.sleep(max(0.0, (target - wall_ms()) / 1000 - 0.2))
    f0, c0 = len(rig.fsync.seconds), time.process_time()
    measuring(True)
    with GcPauses() as pauses:
        complete = await until_async(lambda: len(rig.host.arrivals) >= count, margin_s + 60)
    measuring(False)
    cpu_s = time.process_time() - c0
    fsyncs = rig.fsync.summary(f0)
    arrivals = [arrived for arrived, _ in rig.host.arrivals]
    fds = open_fds()
    await rig.close()
    last = max(arrivals, default=math.nan)
    return TicklerBurst(
        delivered=len(arrivals),
        complete=complete,
        setup_late=created > target,
        rate=len(arrivals) / ((last - target) / 1000),
        first_ms=min(arrivals, default=math.nan) - target,
        last_ms=last - target,
        cpu_us=cpu_s / max(len(arrivals), 1) * 1e6,
        gc=pauses.summary(),
        fds=fds,
        fd_limit=fd_limit,
        fsync=fsyncs,
    )


def aps_burst(p: ApsBurstParams) -> ApsBurst:
    target = wall_ms() + p.margin_s * 1000
    aps.aps_populate(p.path, ((f"burst-{i}", target) for i in range(p.count)))
    sched = aps.aps_scheduler(p.path)
    sched.start()
    log(f"APScheduler: {p.count:,} jobs due in {(target - wall_ms()) / 1000:.1f} s")
    complete = until(lambda: aps.fired_count() >= p.count, p.margin_s + p.cap_s)
    elapsed = (wall_ms() - target) / 1000
    ran = [r for r, _ in aps.fired()]
    span = (max(ran) - target) / 1000 if complete else elapsed
    return ApsBurst(
        delivered=len(ran),
        complete=complete,
        rate=len(ran) / span,
        first_ms=min(ran, default=math.nan) - target,
        span_s=span,
    )


TICKLER: Final = tickler_worker("burst", TicklerBurstParams, TicklerBurst, tickler_burst)
APS: Final = aps_worker("burst", ApsBurstParams, ApsBurst, aps_burst)
WORKERS: Final[tuple[Worker[Any, Any], ...]] = (TICKLER, APS)


def measure(bench: Bench) -> None:
    s = bench.scale
    sessions = min(
        s.burst,
        round_down(int((bench.fd_limit - FD_RESERVE) / (bench.per_open + bench.per_written)), 50),
    )
    if sessions < s.burst:
        bench.notes.append(
            f"figure 4 spreads {s.burst:,} reminders over {sessions:,} sessions "
            f"({bench.fd_note}); a session holding two delivers them one after the other"
        )
    directory = bench.path("burst")
    harness.write_sessions(directory, "b", [0] * sessions, int(time.time() * 1000))
    creates = bench.create_rate if bench.create_rate > 100 else 1_000.0  # NaN: unknown
    margin = min(30.0, max(3.0, 2.0 + 1.5 * s.burst / creates))
    log("burst: tickler")
    t = bench.runner.run(
        TICKLER,
        TicklerBurstParams(
            directory=str(directory), sessions=sessions, count=s.burst, margin_s=margin
        ),
    )
    log("burst: APScheduler")
    a = bench.runner.run(
        APS,
        ApsBurstParams(
            path=str(bench.path("burst.sqlite")), count=s.burst, margin_s=3.0, cap_s=s.burst_cap_s
        ),
    )
    if t.setup_late or not t.complete:
        bench.notes.append(f"figure 4 (tickler) is not valid: {t}")
    if not a.complete:
        bench.notes.append(
            f"figure 4: APScheduler ran {a.delivered:,} of {s.burst:,} jobs in "
            f"{s.burst_cap_s:.0f} s; its rate is over that span"
        )
    bench.rows[4] += [
        Row(
            f"4. burst of {s.burst:,} due at once: deliveries",
            rate(t.rate),
            rate(a.rate),
            better(t.rate / a.rate),
            f">= {T_BURST:,.0f}/s",
            status(t.rate >= T_BURST),
        ),
        Row(
            "   first / last hand-over after the due instant",
            f"{ms(t.first_ms)} / {ms(t.last_ms)}",
            f"{ms(a.first_ms)} / {secs(a.span_s)}",
        ),
        Row(
            "   CPU per delivery; store fsyncs (their total time)",
            f"{t.cpu_us:,.0f} us; {t.fsync.count:,} ({secs(t.fsync.total_ms / 1000)})",
        ),
        Row(
            "   gc during the burst: full passes; longest pass",
            f"{t.gc.full:,}; {ms(t.gc.max_ms)}",
        ),
    ]
