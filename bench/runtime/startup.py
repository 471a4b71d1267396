"""Figure 6 (and figure 5 for one session): start to "armed" with many
reminders pending in one session, in a fresh process, without and with a
snapshot; the interpreter's start and the imports separately. APScheduler
is armed when its first job-processing round is done."""

from __future__ import annotations

import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from . import aps, harness
from .common import T_ARMED_SNAP_X_APS, T_ARMED_X_APS, T_BYTES, Record, log, rss_bytes
from .context import Bench
from .report import Row, better, secs, size, status
from .workers import Worker, aps_worker, tickler_worker


class TicklerStartupParams(Record, frozen=True):
    directory: str
    session_id: str
    save: bool  # save a snapshot after the measurement


class TicklerStartup(Record, frozen=True):
    open_s: float
    armed_s: float
    loaded_s: float
    cpu_s: float
    pending: int
    bytes_per_pending: float


class ApsStartupParams(Record, frozen=True):
    path: str


class ApsStartup(Record, frozen=True):
    armed_s: float
    cpu_s: float
    pending: int
    bytes_per_pending: float


async def tickler_startup(p: TicklerStartupParams) -> TicklerStartup:
    started = await harness.start_session(p.directory, p.session_id, p.save)
    return TicklerStartup(
        open_s=started.open_s,
        armed_s=started.armed_s,
        loaded_s=started.loaded_s,
        cpu_s=started.cpu_s,
        pending=started.pending,
        bytes_per_pending=started.rss_delta / started.pending,
    )


def aps_startup(p: ApsStartupParams) -> ApsStartup:
    """Start a scheduler on the store until its first job-processing round
    is done (due jobs fetched, next wake computed): its "armed"."""
    aps.preload()
    rss0 = rss_bytes()
    armed = threading.Event()
    t0, c0 = time.perf_counter(), time.process_time()
    sched = aps.aps_scheduler(p.path, armed.set)
    sched.start()
    armed.wait()
    t1, c1 = time.perf_counter(), time.process_time()
    rss1 = rss_bytes()
    sched.shutdown(wait=False)
    pending = aps.aps_count(p.path)
    return ApsStartup(
        armed_s=t1 - t0, cpu_s=c1 - c0, pending=pending, bytes_per_pending=(rss1 - rss0) / pending
    )


TICKLER: Final = tickler_worker("startup", TicklerStartupParams, TicklerStartup, tickler_startup)
APS: Final = aps_worker("startup", ApsStartupParams, ApsStartup, aps_startup)
WORKERS: Final[tuple[Worker[Any, Any], ...]] = (TICKLER, APS)

_IMPORT_PROBE: Final = """
import sys, time
t0 = time.perf_counter()
for name in sys.argv[1:]:
    __import__(name)
print(repr(time.perf_counter() - t0))
"""


@dataclass(frozen=True)
class Overheads:
    """Medians, in seconds, each in a fresh process."""

    bare_s: float  # a bare interpreter start and exit
    tickler_imports_s: float  # importing what a tickler process imports
    aps_imports_s: float  # importing APScheduler's scheduler and SQLAlchemy job store (or a peer's)


def interpreter_and_imports(
    runs: int,
    tickler_modules: Sequence[str] = harness.TICKLER_MODULES,
    peer_modules: Sequence[str] = aps.APS_MODULES,
) -> Overheads:
    """Each in a fresh process: the bare interpreter, and importing what a
    tickler process imports (``tickler_modules``) and what a peer's does."""
    bare: list[float] = []
    tickler: list[float] = []
    peer: list[float] = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        bare.append(time.perf_counter() - t0)
        for modules, out in ((tickler_modules, tickler), (peer_modules, peer)):
            probe = [sys.executable, "-c", _IMPORT_PROBE, *modules]
            done = subprocess.run(probe, check=True, stdout=subprocess.PIPE, text=True)
            out.append(float(done.stdout))
    return Overheads(
        bare_s=statistics.median(bare),
        tickler_imports_s=statistics.median(tickler),
        aps_imports_s=statistics.median(peer),
    )


def med(values: Iterable[float]) -> float:
    return statistics.median(values)


def measure(bench: Bench) -> None:
    s = bench.scale
    directory = bench.path("start")
    log(f"generating one session with {s.start_pending:,} pending")
    harness.write_sessions(directory, "big", [s.start_pending], int(time.time() * 1000))
    db = bench.path("start.sqlite")  # a copy of figure 3's jobs, when it ran
    extra = s.start_pending - (s.pending - s.due) if db.exists() else s.start_pending
    if extra > 0:
        aps.aps_populate(str(db), aps.far_jobs("extra-", extra, time.time() * 1000))
    runs = s.start_runs
    cold: list[TicklerStartup] = []
    warm: list[TicklerStartup] = []
    peer: list[ApsStartup] = []
    # The first open: the store never held the session (its files were
    # written behind its back), so its wake index knows nothing of it. Every
    # later start reopens it after a clean stop, as a restarted process does.
    log("start to armed: tickler, the first open (nothing in the wake index)")
    first = bench.runner.run(TICKLER, TicklerStartupParams(str(directory), "big0", save=False))
    for run in range(runs):
        log(f"start to armed: tickler without a snapshot ({run + 1}/{runs})")
        params = TicklerStartupParams(str(directory), "big0", save=run == runs - 1)
        cold.append(bench.runner.run(TICKLER, params))
    for run in range(runs):
        log(f"start to armed: tickler with a snapshot ({run + 1}/{runs})")
        params = TicklerStartupParams(str(directory), "big0", save=False)
        warm.append(bench.runner.run(TICKLER, params))
    for run in range(runs):
        log(f"start to armed: APScheduler ({run + 1}/{runs})")
        peer.append(bench.runner.run(APS, ApsStartupParams(path=str(db))))
    log("interpreter start and imports")
    over = interpreter_and_imports(runs)

    c, w = med(r.armed_s for r in cold), med(r.armed_s for r in warm)
    a = med(r.armed_s for r in peer)
    tb, ab = med(r.bytes_per_pending for r in cold), med(r.bytes_per_pending for r in peer)
    n = f"{cold[0].pending:,}"
    bench.rows[6] += [
        Row(
            f"6. start to armed, {n} pending in 1 session, no snapshot (reopened)",
            secs(c),
            secs(a),
            better(a / c),
            f"<= {T_ARMED_X_APS:.0f}x APS",
            status(c <= T_ARMED_X_APS * a),
        ),
        Row(
            "   start to armed, with a snapshot",
            secs(w),
            secs(a),
            better(a / w),
            "< APS",
            status(w < T_ARMED_SNAP_X_APS * a),
        ),
        Row(
            "   the first open, no snapshot, the wake index empty: armed / loaded",
            f"{secs(first.armed_s)} / {secs(first.loaded_s)}",
            secs(a),
            better(a / first.armed_s),
        ),
        Row(
            "   start to state loaded (no snapshot / snapshot)",
            f"{secs(med(r.loaded_s for r in cold))} / {secs(med(r.loaded_s for r in warm))}",
        ),
        Row(
            "   CPU time to armed (no snapshot / snapshot)",
            f"{secs(med(r.cpu_s for r in cold))} / {secs(med(r.cpu_s for r in warm))}",
            secs(med(r.cpu_s for r in peer)),
        ),
        Row(
            "   of which opening the session (no snapshot / snapshot)",
            f"{secs(med(r.open_s for r in cold))} / {secs(med(r.open_s for r in warm))}",
        ),
        Row("   interpreter start+exit (python -c pass)", secs(over.bare_s), secs(over.bare_s)),
        Row(
            "   imports (tickler / apscheduler+sqlalchemy)",
            secs(over.tickler_imports_s),
            secs(over.aps_imports_s),
        ),
    ]
    bench.rows[5].append(
        Row(
            f"   RSS per pending ({n} pending, 1 session)",
            size(tb),
            size(ab),
            better(ab / tb),
            f"< {T_BYTES:,.0f} B",
            status(tb < T_BYTES),
        )
    )
    bench.notes.append(
        "figure 6: 'reopened' starts a session a process closed cleanly before, its wake kept "
        "in the store's wake index (the runtime is armed from it, then replays the log); "
        "'the first open' starts one the store never held"
    )
    if runs > 1:
        bench.notes.append(f"figure 6: medians of {runs} fresh processes each")
