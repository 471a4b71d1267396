"""Runtime benchmarks: tickler's shell and JSONL store beside APScheduler 3.

Run ``python bench/runtime.py`` (about 4 minutes on 2 cores), or
``python bench/runtime.py --quick`` (smaller, under 2 minutes). ``--profile``
also runs tickler's workers under cProfile, for their measured phase only,
and prints the hotspots (a profiled run's figures are slower than real);
``--keep`` keeps the generated data.

The same work on both sides, in one run, each part in a fresh process:

1. the disk's raw ``write`` + ``fsync`` rate: the ceiling for anything durable;
2. durable creates per second: ``schedule_create`` through
   ``ScheduleRuntime.call_tool`` (returning after its flush) on the JSONL
   store, one in flight on one session and 64 sessions each creating in a
   loop, in one process and spread over one process per core (as the
   README advises: each session belongs to one process, all on one store
   directory; the rates add up over a window they share), and for
   information one in flight with the process pinned to one CPU (a thread
   hand-off then needs no cross-CPU wake-up, which is slow on a VM); APScheduler
   ``add_job(trigger="date")`` on a ``SQLAlchemyJobStore("sqlite:///...")``,
   sequential and from 64 threads;
3. firing lateness (arrival at the host minus the target) with 100,000
   pending reminders in one process, about 2,000 of them due within
   10-20 s at known instants; APScheduler: job start minus its run time,
   100,000 jobs in its SQLite store;
4. a burst of 10,000 reminders due at the same instant: deliveries per
   second until the last one is handed over;
5. resident memory per pending reminder (RSS delta after ``gc``);
6. start to "armed" with 100,000 pending in one session, in a fresh process,
   without and with a snapshot; the interpreter and imports separately.

The bulk data (pending reminders, APScheduler's jobs) is generated once
directly on disk; only what each figure names is timed. Beside each figure,
rows without a target say where the time goes (CPU per operation, fsyncs,
timer wake versus hand-over, garbage-collector passes). The number of
sessions held open in one process is capped by the open-files limit (the
store's descriptors per session are probed first) and printed.

The machine is shared and noisy: only ratios measured in the same run mean
much.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import json
import logging
import math
import os
import pickle
import platform
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Coroutine, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from tickler.shell._host import FollowUp, IdleClaim
    from tickler.shell._runtime import ScheduleRuntime

BENCH: Final = Path(__file__).resolve().parent
FD_RESERVE: Final = 2_500  # descriptors kept for the interpreter, journals, threads


@dataclass(frozen=True)
class Scale:
    fsync_s: float = 3.0
    create_s: float = 3.0
    warmup_s: float = 0.5
    pending: int = 100_000
    sessions: int = 10_000
    due: int = 2_000
    window_s: tuple[float, float] = (10.0, 20.0)
    drain_s: float = 30.0
    burst: int = 10_000
    burst_cap_s: float = 20.0
    start_pending: int = 100_000
    start_runs: int = 3


DEFAULT: Final = Scale()
QUICK: Final = Scale(
    fsync_s=1.0,
    create_s=1.0,
    warmup_s=0.3,
    pending=20_000,
    sessions=2_000,
    due=500,
    window_s=(5.0, 10.0),
    drain_s=10.0,
    burst=2_000,
    burst_cap_s=8.0,
    start_pending=20_000,
    start_runs=1,
)

# Targets
T_CREATE_1: Final = 3_000.0
T_CREATE_64: Final = 20_000.0
T_CREATE_64_X_FSYNC: Final = 3.0
T_P99_MS: Final = 20.0
T_BURST: Final = 5_000.0
T_BYTES: Final = 1_024.0
T_ARMED_S: Final = 1.0
T_ARMED_SNAP_S: Final = 0.05


# --------------------------------------------------------------------------------------
# Small helpers

RESULT_MARK: Final = "BENCH-RESULT "
PAGE_SIZE: Final = os.sysconf("SC_PAGE_SIZE")
Result = dict[str, Any]


def emit(result: Result) -> None:
    """A worker's answer: one marked JSON line on stdout."""
    sys.stdout.write(RESULT_MARK + json.dumps(result) + "\n")
    sys.stdout.flush()


def log(message: str) -> None:
    """Progress, on stderr."""
    sys.stderr.write(f"  [{time.strftime('%H:%M:%S')}] {message}\n")
    sys.stderr.flush()


def rss_bytes() -> int:
    """Resident set size after a full collection (``/proc/self/statm``)."""
    gc.collect()
    statm = Path("/proc/self/statm").read_bytes()
    return int(statm.split()[1]) * PAGE_SIZE


def wall_ms() -> float:
    return time.time_ns() / 1e6


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile."""
    if not values:
        return math.nan
    ordered = sorted(values)
    return ordered[min(len(ordered), max(1, math.ceil(p / 100 * len(ordered)))) - 1]


def raise_fd_limit() -> int:
    """Raise the soft open-files limit to the hard one; return it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


def open_fds() -> int:
    return sum(1 for _ in Path("/proc/self/fd").iterdir())


_PROFILER: list[cProfile.Profile] = []  # set in a worker run with --profile-to


def measuring(on: bool) -> None:
    """Mark the start / end of the measured phase (profiled with --profile)."""
    for profiler in _PROFILER:
        if on:
            profiler.enable()
        else:
            profiler.disable()


def until(done: Callable[[], bool], timeout_s: float, step_s: float = 0.005) -> bool:
    deadline = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(step_s)
    return True


async def until_async(done: Callable[[], bool], timeout_s: float, step_s: float = 0.005) -> bool:
    deadline = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(step_s)
    return True


# --------------------------------------------------------------------------------------
# Pre-generated sessions
#
# Writing 100,000 pending reminders through ``call_tool`` would spend minutes
# on durable creates that figure 2 already measures, so the files are written
# directly: each line is exactly what a runtime appends for a
# ``schedule_create`` with ``after_seconds`` (the first lines of the first
# files are checked byte for byte against the core's ``encode_change`` and the
# store's own line encoder), and the store validates every line on open.

DAY_MS: Final = 86_400_000
SPREAD_MS: Final = 29 * DAY_MS  # far-future targets: 1 to 30 days ahead
CHECKED_SESSIONS: Final = 3
CHECKED_LINES: Final = 3
LINE: Final = (
    b'{"type":"schedule/change","seq":%d,"time":%d,"data":{"version":1,"operation":"create",'
    b'"schedule":{"id":"schedule-%d","kind":"after","prompt":"%s","afterSeconds":%d,'
    b'"scheduledAt":"%s"}}}\n'
)


def prompt_for(session: int, index: int) -> str:
    """A short prompt (about 20 characters)."""
    return f"check on build {session}.{index}"


def far_offset_ms(n: int) -> int:
    """The n-th far-future target's distance from now (whole seconds)."""
    return DAY_MS + (n * 7_919_000) % SPREAD_MS


def _instant(ms: int) -> str:
    seconds, millis = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


def _reference_line(seq: int, now: int, session: int, after_s: int) -> bytes:
    """The same line, built by the core and the store's line encoder."""
    from tickler.adapters.stores._lines import encode_batch
    from tickler.core import SCHEDULE_CHANGE, AfterSchedule, encode_change, format_instant
    from tickler.core._model import create
    from tickler.shell._ports import NewEvent

    record = AfterSchedule(
        id=f"schedule-{seq + 1}",
        prompt=prompt_for(session, seq),
        after_seconds=after_s,
        scheduled_at=format_instant(now + after_s * 1000),
    )
    batch = [NewEvent(SCHEDULE_CHANGE, encode_change(create(record)), now)]
    return encode_batch(seq, batch)[1][0]


def session_bytes(session_id: str, session: int, pending: int, now: int, salt: int) -> bytes:
    """A session file holding ``pending`` far-future one-shot reminders."""
    from tickler.adapters.stores._lines import header_line
    from tickler.core import SessionHeader

    parts = [header_line(SessionHeader(id=session_id, created_at=now))]
    for seq in range(pending):
        after_s = far_offset_ms(salt + seq) // 1000
        target = _instant(now + after_s * 1000).encode()
        prompt = prompt_for(session, seq).encode()
        line = LINE % (seq, now, seq + 1, prompt, after_s, target)
        checked = session < CHECKED_SESSIONS and seq < CHECKED_LINES
        if checked and line != _reference_line(seq, now, session, after_s):
            raise AssertionError(f"a generated line differs from the core's: {line!r}")
        parts.append(line)
    return b"".join(parts)


def write_sessions(directory: Path, prefix: str, counts: Sequence[int], now: int) -> int:
    """One file per entry of ``counts`` (its pending reminders), then one
    ``sync``, so the files are on disk like a previous run's. Returns bytes."""
    directory.mkdir(parents=True, exist_ok=True)
    total = salt = 0
    for session, pending in enumerate(counts):
        session_id = f"{prefix}{session}"
        data = session_bytes(session_id, session, pending, now, salt)
        (directory / f"{session_id}.jsonl").write_bytes(data)
        total += len(data)
        salt += pending
    os.sync()
    return total


def spread(total: int, sessions: int) -> list[int]:
    """``total`` reminders over ``sessions`` as evenly as possible."""
    base, extra = divmod(total, sessions)
    return [base + (1 if i < extra else 0) for i in range(sessions)]


# --------------------------------------------------------------------------------------
# tickler's workers: JsonlStore (fsync group commit), a ScheduleRuntime per
# session, the process's shared timer heap, and a host that is always idle,
# grants every claim and notes when each follow-up arrives.

CREATE: Final = "schedule_create"
OPEN_BATCH: Final = 256


class _Claim:
    def release(self) -> None:
        return None


class BenchHost:
    def __init__(self) -> None:
        self.arrivals: list[tuple[float, str]] = []  # (wall ms, occurrence instant)
        self._claim = _Claim()

    def claim_idle(self) -> IdleClaim | None:
        return self._claim

    async def when_idle(self) -> None:
        return None

    async def followup(self, message: FollowUp) -> None:
        self.arrivals.append((wall_ms(), message.occurrences[0].occurrence_at))

    def lateness_ms(self) -> list[float]:
        from tickler.core import parse_instant

        return [arrived - parse_instant(target) for arrived, target in self.arrivals]


class TimedFsync:
    """``os.fsync`` noting each call's duration (the store's ``fsync`` hook)."""

    def __init__(self) -> None:
        self.seconds: list[float] = []

    def __call__(self, fd: int) -> None:
        t0 = time.perf_counter()
        os.fsync(fd)
        self.seconds.append(time.perf_counter() - t0)

    def summary(self, since: int = 0) -> Result:
        taken = [t * 1000 for t in self.seconds[since:]]
        return {
            "fsyncs": len(taken),
            "fsync_p50": percentile(taken, 50),
            "fsync_p99": percentile(taken, 99),
            "fsync_total_ms": sum(taken),
        }


class GcPauses:
    """Durations of the collector's passes (``gc.callbacks``) while active."""

    def __init__(self) -> None:
        self.pauses: list[tuple[int, float]] = []  # (generation, ms)
        self._t0 = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._t0 = time.perf_counter()
        else:
            self.pauses.append((info["generation"], (time.perf_counter() - self._t0) * 1000))

    def __enter__(self) -> GcPauses:
        gc.callbacks.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self)

    def summary(self) -> Result:
        return {
            "gc_passes": len(self.pauses),
            "gc_full": sum(1 for generation, _ in self.pauses if generation == 2),
            "gc_max_ms": max((taken for _, taken in self.pauses), default=0.0),
            "gc_total_ms": sum(taken for _, taken in self.pauses),
        }


class Rig:
    """A store, the wall clock, the shared timer heap and the runtimes."""

    def __init__(self, directory: str) -> None:
        from tickler.adapters.stores._jsonl import JsonlStore
        from tickler.shell._clock import SystemClock

        self.fsync = TimedFsync()
        self.store = JsonlStore(directory, fsync=self.fsync)
        self.clock = SystemClock()
        self.host = BenchHost()
        self.runtimes: list[ScheduleRuntime] = []

    async def open(self, session_ids: Sequence[str], created_at: int) -> float:
        """Open and start a runtime per session; seconds taken."""
        from tickler.shell._runtime import ScheduleRuntime
        from tickler.shell._timers import shared_timers

        started = time.perf_counter()
        timers = shared_timers(self.clock)
        for first in range(0, len(session_ids), OPEN_BATCH):
            batch = session_ids[first : first + OPEN_BATCH]
            logs = await asyncio.gather(
                *(self.store.open(sid, created_at=created_at) for sid in batch)
            )
            for session_log in logs:
                runtime = ScheduleRuntime(session_log, self.host, self.clock, timers=timers)
                await runtime.start()
                self.runtimes.append(runtime)
        return time.perf_counter() - started

    def all_armed(self) -> bool:
        return all(rt.next_wake is not None or not rt.state.entries for rt in self.runtimes)

    async def create_all(self, calls: Sequence[tuple[int, Mapping[str, object]]]) -> float:
        """``schedule_create`` calls ``(runtime index, args)``, all at once;
        seconds until the last returned."""
        t0 = time.perf_counter()
        outputs = await asyncio.gather(
            *(self.runtimes[i].call_tool(CREATE, args) for i, args in calls)
        )
        elapsed = time.perf_counter() - t0
        for output in outputs:
            check_created(output)
        return elapsed

    async def close(self) -> None:
        await asyncio.gather(*(rt.dispose() for rt in self.runtimes))
        await self.store.close()


def check_created(output: str) -> None:
    if not output.startswith('{"id":'):
        raise RuntimeError(f"schedule_create failed: {output}")


async def tickler_creates(
    directory: str,
    sessions: int,
    seconds: float,
    warmup: float,
    prefix: str = "c",
    start_at: float | None = None,
    pin_cpu: int | None = None,
) -> Result:
    """One task per session, each creating in a loop (each call returns after
    its flush); the rate over ``seconds`` after ``warmup``. With
    ``start_at`` (epoch seconds) the measured window starts then, so
    workers in several processes measure the same window. With ``pin_cpu``
    the process (and the threads it starts) runs on that CPU only."""
    if pin_cpu is not None:
        os.sched_setaffinity(0, {pin_cpu})
    rig = Rig(directory)
    ids = [f"{prefix}{sessions}-{i}" for i in range(sessions)]
    await rig.open(ids, created_at=int(wall_ms()))
    counts = [0] * sessions
    stop = asyncio.Event()

    async def loop(index: int) -> None:
        runtime = rig.runtimes[index]
        n = 0
        while not stop.is_set():
            args = {"prompt": prompt_for(index, n), "after_seconds": 86_400 + n}
            check_created(await runtime.call_tool(CREATE, args))
            n += 1
            counts[index] = n

    tasks = [asyncio.create_task(loop(i)) for i in range(sessions)]
    await asyncio.sleep(warmup)
    if start_at is not None:
        await asyncio.sleep(max(0.0, start_at - time.time()))
    wall0 = time.time()
    before, t0, c0 = sum(counts), time.perf_counter(), time.process_time()
    f0 = len(rig.fsync.seconds)
    measuring(True)
    await asyncio.sleep(seconds)
    measuring(False)
    after, t1, c1 = sum(counts), time.perf_counter(), time.process_time()
    fsyncs = rig.fsync.summary(f0)
    stop.set()
    await asyncio.gather(*tasks)
    await rig.close()
    n = after - before
    return {
        "rate": n / (t1 - t0),
        "creates": n,
        "cpu_us": (c1 - c0) / max(n, 1) * 1e6,
        "window": [wall0, wall0 + (t1 - t0)],
        **fsyncs,
    }


def note_first_wake(runtime: ScheduleRuntime, target: int, out: list[tuple[int, float]]) -> None:
    """Note when the timer heap first asks ``runtime`` to look for due work
    at or after ``target`` (wall ms): the wake's share of the lateness. Set
    before the reminder is created, so the timer it arms calls the wrapper."""
    drive = runtime.request_drive
    noted = False

    def wrapped() -> None:
        nonlocal noted
        now = wall_ms()
        if not noted and now >= target:
            noted = True
            out.append((target, now))
        drive()

    runtime.request_drive = wrapped  # type: ignore[method-assign]


async def tickler_lateness(
    directory: str, sessions: int, pregenerated: int, due: int, window_s: Sequence[float]
) -> Result:
    """Open the pre-generated sessions, create ``due`` reminders due within
    ``window_s`` (one per session, at known instants), note each follow-up's
    lateness. RSS is read before opening and once everything is pending."""
    from tickler.core import format_instant, parse_instant

    fd_limit = raise_fd_limit()
    rig = Rig(directory)
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
        (i % sessions, {"prompt": f"due reminder {i}", "at": format_instant(target)})
        for i, target in enumerate(targets)
    ]
    wakes: list[tuple[int, float]] = []
    for i, target in enumerate(targets):
        note_first_wake(rig.runtimes[i % sessions], target, wakes)
    create_s = await rig.create_all(calls)
    pending = sum(len(rt.state.entries) for rt in rig.runtimes)
    rss1 = rss_bytes()
    fds = open_fds()
    log(f"tickler: {pending:,} pending, {due:,} due within {window_s[0]:.0f}-{window_s[1]:.0f} s")
    f0 = len(rig.fsync.seconds)
    measuring(True)
    with GcPauses() as pauses:
        complete = await until_async(lambda: len(rig.host.arrivals) >= due, high / 1000 + 30)
    measuring(False)
    late = rig.host.lateness_ms()
    woken = dict(wakes)
    after_wake = [
        arrived - woken[parse_instant(at)]
        for arrived, at in rig.host.arrivals
        if parse_instant(at) in woken
    ]
    fsyncs = rig.fsync.summary(f0)
    await rig.close()
    return {
        "pending": pending,
        "expected_pending": pregenerated + due,
        "open_s": open_s,
        "due_create_rate": due / create_s,
        "fired": len(late),
        "complete": complete,
        "p50": percentile(late, 50),
        "p99": percentile(late, 99),
        "max": max(late, default=math.nan),
        "wake_p50": percentile([w - t for t, w in wakes], 50),
        "wake_p99": percentile([w - t for t, w in wakes], 99),
        "after_wake_p50": percentile(after_wake, 50),
        "after_wake_p99": percentile(after_wake, 99),
        **pauses.summary(),
        "rss_delta": rss1 - rss0,
        "bytes_per_pending": (rss1 - rss0) / pending,
        "fds": fds,
        "fd_limit": fd_limit,
        **fsyncs,
    }


async def tickler_burst(directory: str, sessions: int, count: int, margin_s: float) -> Result:
    """``count`` reminders over ``sessions`` sessions, all due at one instant;
    deliveries per second from that instant to the last hand-over."""
    from tickler.core import format_instant

    fd_limit = raise_fd_limit()
    rig = Rig(directory)
    open_s = await rig.open([f"b{i}" for i in range(sessions)], created_at=0)
    await asyncio.sleep(0.2)
    log(f"tickler: opened and started {sessions:,} empty sessions in {open_s:.1f} s")
    target = int(wall_ms() + margin_s * 1000)
    at = format_instant(target)
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
    return {
        "delivered": len(arrivals),
        "complete": complete,
        "setup_late": created > target,
        "rate": len(arrivals) / ((last - target) / 1000),
        "first_ms": min(arrivals, default=math.nan) - target,
        "last_ms": last - target,
        "cpu_us": cpu_s / max(len(arrivals), 1) * 1e6,
        **pauses.summary(),
        "fds": fds,
        "fd_limit": fd_limit,
        **fsyncs,
    }


async def tickler_fdprobe(directory: str, sessions: int) -> Result:
    """File descriptors the store holds per open session, per session with an
    append not yet flushed (the peak), and per session written and flushed."""
    from tickler.adapters.stores._jsonl import JsonlStore
    from tickler.shell._ports import NewEvent

    store = JsonlStore(directory)
    fds0 = open_fds()
    logs = [await store.open(f"p{i}", created_at=int(wall_ms())) for i in range(sessions)]
    fds1 = open_fds()
    for session_log in logs:
        session_log.append([NewEvent("probe", b"{}", int(wall_ms()))])
    fds2 = open_fds()
    await asyncio.gather(*(session_log.flush() for session_log in logs))
    fds3 = open_fds()
    await store.close()
    return {
        "per_open": (fds1 - fds0) / sessions,
        "per_appended": (fds2 - fds1) / sessions,
        "per_written": (fds3 - fds1) / sessions,
    }


async def tickler_startup(directory: str, session_id: str, save: bool) -> Result:
    """Open the store and the session, start its runtime, wait until its timer
    is armed; then save a snapshot when asked."""
    from tickler.adapters.stores._jsonl import JsonlStore
    from tickler.shell._clock import SystemClock
    from tickler.shell._runtime import ScheduleRuntime
    from tickler.shell._timers import shared_timers

    rss0 = rss_bytes()
    t0, c0 = time.perf_counter(), time.process_time()
    measuring(True)
    store = JsonlStore(directory)
    clock = SystemClock()
    session_log = await store.open(session_id, created_at=0)
    t_open = time.perf_counter()
    runtime = ScheduleRuntime(session_log, BenchHost(), clock, timers=shared_timers(clock))
    # "Armed": the runtime's timer is set (from a snapshot's first bytes, it
    # is set before the state has loaded); "loaded": start() has returned.
    starting = asyncio.ensure_future(runtime.start())
    await until_async(lambda: runtime.next_wake is not None or starting.done(), 60, 0)
    t_armed, c_armed = time.perf_counter(), time.process_time()
    await starting
    await until_async(lambda: runtime.next_wake is not None, 60, 0)
    t_loaded = time.perf_counter()
    measuring(False)
    rss1 = rss_bytes()
    pending = len(runtime.state.entries)
    if save and not await runtime.save_snapshot():
        raise RuntimeError("save_snapshot failed")
    await runtime.dispose()
    await store.close()
    return {
        "open_s": t_open - t0,
        "armed_s": t_armed - t0,
        "loaded_s": t_loaded - t0,
        "cpu_s": c_armed - c0,
        "pending": pending,
        "bytes_per_pending": (rss1 - rss0) / pending,
    }


# --------------------------------------------------------------------------------------
# APScheduler's workers: a BackgroundScheduler on a SQLAlchemyJobStore on
# SQLite with its defaults (rollback journal, synchronous=FULL: every
# committed job survives a crash, like a flushed tickler create). Bulk jobs
# are written straight into the store's table in one transaction, each row as
# ``SQLAlchemyJobStore.add_job`` writes it (the pickled
# ``Job.__getstate__()``); durable ``add_job`` itself is figure 2. Jobs run
# ``fire``, which notes when it ran.

_FIRED: list[tuple[float, float]] = []  # (ran at, target), wall ms
_FIRED_LOCK: Final = threading.Lock()


def fire(target_ms: float) -> None:
    ran = wall_ms()
    with _FIRED_LOCK:
        _FIRED.append((ran, target_ms))


def _fired_count() -> int:
    with _FIRED_LOCK:
        return len(_FIRED)


def _utc(ms: float) -> datetime:
    return datetime.fromtimestamp(ms / 1000, UTC)


def _sqlite(path: str) -> str:
    return f"sqlite:///{path}"


def aps_scheduler(path: str, after_round: Callable[[], None] | None = None) -> Any:
    """A background scheduler on the SQLite store at ``path``; ``after_round``
    runs after each of its job-processing rounds."""
    from apscheduler.jobstores.sqlalchemy import (  # type: ignore[import-untyped]
        SQLAlchemyJobStore,
    )
    from apscheduler.schedulers.background import (  # type: ignore[import-untyped]
        BackgroundScheduler,
    )

    class Scheduler(BackgroundScheduler):  # type: ignore[misc]
        def _process_jobs(self) -> Any:
            wait = super()._process_jobs()
            if after_round is not None:
                after_round()
            return wait

    return Scheduler(jobstores={"default": SQLAlchemyJobStore(url=_sqlite(path))}, timezone=UTC)


def aps_populate(path: str, jobs: Iterable[tuple[str, float]]) -> int:
    """Insert ``(id, target ms)`` date jobs running ``fire(target)`` into the
    job store at ``path`` (created if needed), in one transaction."""
    from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
    from apscheduler.triggers.date import DateTrigger  # type: ignore[import-untyped]

    store = SQLAlchemyJobStore(url=_sqlite(path))
    store.jobs_t.create(store.engine, checkfirst=True)
    func = f"{fire.__module__}:{fire.__qualname__}"
    rows = []
    for job_id, target in jobs:
        run_at = _utc(target)
        state = {
            "version": 1,
            "id": job_id,
            "func": func,
            "trigger": DateTrigger(run_at, timezone=UTC),
            "executor": "default",
            "args": (target,),
            "kwargs": {},
            "name": "fire",
            "misfire_grace_time": None,
            "coalesce": True,
            "max_instances": 1,
            "next_run_time": run_at,
        }
        state_bytes = pickle.dumps(state, store.pickle_protocol)
        rows.append({"id": job_id, "next_run_time": target / 1000, "job_state": state_bytes})
    with store.engine.begin() as connection:
        connection.execute(store.jobs_t.insert(), rows)
    store.engine.dispose()
    return len(rows)


def far_jobs(prefix: str, count: int, now_ms: float) -> Iterator[tuple[str, float]]:
    """``count`` jobs with the same spread of targets as tickler's reminders."""
    for n in range(count):
        yield f"{prefix}{n}", now_ms + far_offset_ms(n)


def aps_count(path: str) -> int:
    with sqlite3.connect(path) as connection:
        (count,) = connection.execute("SELECT count(*) FROM apscheduler_jobs").fetchone()
    return int(count)


def aps_creates(path: str, threads: int, seconds: float, warmup: float) -> Result:
    sched = aps_scheduler(path)
    sched.start()
    counts = [0] * threads
    stop = threading.Event()
    far = wall_ms() + DAY_MS

    def loop(index: int) -> None:
        n = 0
        while not stop.is_set():
            target = far + n
            sched.add_job(
                fire, trigger="date", run_date=_utc(target), args=(target,), misfire_grace_time=None
            )
            n += 1
            counts[index] = n

    workers = [threading.Thread(target=loop, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    time.sleep(warmup)
    before, t0 = sum(counts), time.perf_counter()
    time.sleep(seconds)
    after, t1 = sum(counts), time.perf_counter()
    stop.set()
    for worker in workers:
        worker.join()
    sched.shutdown(wait=False)
    return {"rate": (after - before) / (t1 - t0), "creates": after - before}


def aps_lateness(path: str, due: int, window_s: Sequence[float], drain_s: float) -> Result:
    rss0 = rss_bytes()
    begin = wall_ms()
    low, high = (w * 1000 for w in window_s)
    aps_populate(path, ((f"due-{i}", begin + low + (high - low) * i / due) for i in range(due)))
    sched = aps_scheduler(path)
    sched.start()
    time.sleep(0.5)
    rss1 = rss_bytes()
    pending = aps_count(path)
    log(f"APScheduler: {pending:,} jobs, {due:,} due within {window_s[0]:.0f}-{window_s[1]:.0f} s")
    complete = until(lambda: _fired_count() >= due, (begin + high) / 1000 - time.time() + drain_s)
    with _FIRED_LOCK:
        late = [ran - target for ran, target in _FIRED]
    padded = late + [math.inf] * (due - len(late))  # unfired: later than the drain cap
    return {
        "pending": pending,
        "fired": len(late),
        "complete": complete,
        "p50": percentile(padded, 50),
        "p99": percentile(padded, 99),
        "rss_delta": rss1 - rss0,
        "bytes_per_pending": (rss1 - rss0) / pending,
    }


def aps_burst(path: str, count: int, margin_s: float, cap_s: float) -> Result:
    target = wall_ms() + margin_s * 1000
    aps_populate(path, ((f"burst-{i}", target) for i in range(count)))
    sched = aps_scheduler(path)
    sched.start()
    log(f"APScheduler: {count:,} jobs due in {(target - wall_ms()) / 1000:.1f} s")
    complete = until(lambda: _fired_count() >= count, margin_s + cap_s)
    elapsed = (wall_ms() - target) / 1000
    with _FIRED_LOCK:
        ran = [r for r, _ in _FIRED]
    span = (max(ran) - target) / 1000 if complete else elapsed
    return {
        "delivered": len(ran),
        "complete": complete,
        "rate": len(ran) / span,
        "first_ms": min(ran, default=math.nan) - target,
        "span_s": span,
    }


def aps_startup(path: str) -> Result:
    """Start a scheduler on the store until its first job-processing round
    is done (due jobs fetched, next wake computed): its "armed"."""
    import apscheduler.jobstores.sqlalchemy  # type: ignore[import-untyped]
    import apscheduler.schedulers.background  # type: ignore[import-untyped]  # noqa: F401

    rss0 = rss_bytes()
    armed = threading.Event()
    t0, c0 = time.perf_counter(), time.process_time()
    sched = aps_scheduler(path, armed.set)
    sched.start()
    armed.wait()
    t1, c1 = time.perf_counter(), time.process_time()
    rss1 = rss_bytes()
    sched.shutdown(wait=False)
    pending = aps_count(path)
    return {
        "armed_s": t1 - t0,
        "cpu_s": c1 - c0,
        "pending": pending,
        "bytes_per_pending": (rss1 - rss0) / pending,
    }


TICKLER_WORKERS: Final[dict[str, Callable[..., Coroutine[Any, Any, Result]]]] = {
    "creates": tickler_creates,
    "lateness": tickler_lateness,
    "burst": tickler_burst,
    "startup": tickler_startup,
    "fdprobe": tickler_fdprobe,
}
APS_WORKERS: Final[dict[str, Callable[..., Result]]] = {
    "creates": aps_creates,
    "lateness": aps_lateness,
    "burst": aps_burst,
    "startup": aps_startup,
}

# --------------------------------------------------------------------------------------
# Workers (each figure runs in a fresh interpreter)


PROFILED: Final = {"tickler.creates", "tickler.lateness", "tickler.burst", "tickler.startup"}


class WorkerFailed(Exception):
    pass


class Runner:
    """Runs one worker in a fresh interpreter and reads its result."""

    def __init__(self, profile_dir: Path | None) -> None:
        self.profile_dir = profile_dir
        self.profiles: list[tuple[str, Path]] = []
        self.warnings: list[str] = []

    def run(self, spec: str, **params: object) -> Result:
        command = [sys.executable, str(BENCH / "runtime.py"), "--worker", spec, json.dumps(params)]
        if self.profile_dir is not None and spec in PROFILED:
            path = self.profile_dir / f"{spec}-{len(self.profiles)}.prof"
            command += ["--profile-to", str(path)]
            self.profiles.append((spec, path))
        done = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=False)
        return self._result(spec, done.stdout, done.returncode)

    def run_together(self, spec: str, params: Sequence[Mapping[str, object]]) -> list[Result]:
        """One worker per entry of ``params``, all at once (never profiled)."""
        script = str(BENCH / "runtime.py")
        children = [
            subprocess.Popen(
                [sys.executable, script, "--worker", spec, json.dumps(dict(one))],
                stdout=subprocess.PIPE,
                text=True,
            )
            for one in params
        ]
        outputs = [child.communicate()[0] for child in children]
        return [
            self._result(spec, out, child.returncode)
            for out, child in zip(outputs, children, strict=True)
        ]

    def _result(self, spec: str, stdout: str, returncode: int) -> Result:
        for line in stdout.splitlines():
            if line.startswith(RESULT_MARK):
                result: Result = json.loads(line[len(RESULT_MARK) :])
                if result.get("warnings"):
                    self.warnings.append(
                        f"{spec}: {result['warnings']:,} warnings logged; the first: "
                        f"{result['first_warning']}"
                    )
                return result
        raise WorkerFailed(f"worker {spec} failed (exit status {returncode}); see above")


class LogCounter(logging.Handler):
    """Counts the warnings the libraries log instead of printing each one;
    keeps the first."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.count = 0
        self.first = ""

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1
        if not self.first:
            cause = f" ({record.exc_info[1]!r})" if record.exc_info else ""
            self.first = f"{record.name}: {record.getMessage()}{cause}"[:300]


def worker_main(spec: str, params_json: str, profile_to: str | None) -> None:
    side, name = spec.split(".")
    params = json.loads(params_json)
    counter = LogCounter()
    logging.getLogger().addHandler(counter)
    if profile_to is not None:
        _PROFILER.append(cProfile.Profile())
    try:
        if side == "tickler":
            result = asyncio.run(TICKLER_WORKERS[name](**params))
        else:
            result = APS_WORKERS[name](**params)
    finally:
        if counter.count:
            log(f"{spec}: {counter.count:,} warnings logged; the first: {counter.first}")
    if profile_to is not None:
        _PROFILER[0].dump_stats(profile_to)
    result["warnings"] = counter.count
    result["first_warning"] = counter.first
    emit(result)
    if side == "aps":
        # Its scheduler thread may be mid-round (committing one job at a time):
        # leave without waiting for it; everything it wrote is scratch data.
        os._exit(0)


# --------------------------------------------------------------------------------------
# Measurements in this process


def raw_fsync(directory: Path, seconds: float, zeroed: bool = False) -> tuple[float, float, float]:
    """A single file: append 100 bytes, fsync, repeat. Rate, p50 and p99 ms.
    With ``zeroed``: the 100 bytes overwrite zeros written (and synced)
    beforehand, as the JSONL store's journal does, instead of appending."""
    path = directory / "fsync-probe"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | (0 if zeroed else os.O_APPEND), 0o644)
    taken: list[float] = []
    try:
        if zeroed:
            os.write(fd, bytes(64 << 20))
        os.pwrite(fd, b"x" * 100, 0)
        os.fsync(fd)
        offset = 100
        t0 = time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            t1 = time.perf_counter()
            if zeroed:
                os.pwrite(fd, b"x" * 100, offset)
                offset += 100
            else:
                os.write(fd, b"x" * 100)
            os.fsync(fd)
            taken.append((time.perf_counter() - t1) * 1000)
        elapsed = time.perf_counter() - t0
    finally:
        os.close(fd)
        path.unlink()
    return len(taken) / elapsed, percentile(taken, 50), percentile(taken, 99)


_IMPORT_PROBE: Final = """
import sys, time
t0 = time.perf_counter()
for name in sys.argv[1:]:
    __import__(name)
print(repr(time.perf_counter() - t0))
"""
TICKLER_MODULES: Final = (
    "tickler.adapters.stores._jsonl",
    "tickler.shell._runtime",
    "tickler.shell._clock",
    "tickler.shell._timers",
)
APS_MODULES: Final = ("apscheduler.schedulers.background", "apscheduler.jobstores.sqlalchemy")


def interpreter_and_imports(runs: int) -> tuple[float, float, float]:
    """Medians, in seconds, of: a bare interpreter start and exit; importing
    what a tickler process imports; importing APScheduler's scheduler and
    SQLAlchemy job store. Each in a fresh process."""
    bare: list[float] = []
    tickler: list[float] = []
    aps: list[float] = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        bare.append(time.perf_counter() - t0)
        for modules, out in ((TICKLER_MODULES, tickler), (APS_MODULES, aps)):
            probe = [sys.executable, "-c", _IMPORT_PROBE, *modules]
            done = subprocess.run(probe, check=True, stdout=subprocess.PIPE, text=True)
            out.append(float(done.stdout))
    return statistics.median(bare), statistics.median(tickler), statistics.median(aps)


# --------------------------------------------------------------------------------------
# Formatting


def rate(value: float) -> str:
    return f"{value:,.0f}/s"


def ms(value: float) -> str:
    if math.isinf(value):
        return "> cap"
    return f"{value:,.1f} ms" if value < 10_000 else f"{value / 1000:,.1f} s"


def secs(value: float) -> str:
    return f"{value * 1000:,.0f} ms" if value < 10 else f"{value:,.1f} s"


def size(value: float) -> str:
    return f"{value:,.0f} B"


def better(ratio: float) -> str:
    """How many times better tickler is (below 1: worse)."""
    if math.isnan(ratio) or math.isinf(ratio):
        return "-"
    return f"{ratio:,.1f}x" if ratio >= 1 else f"{ratio:.2f}x"


def status(ok: bool) -> str:
    return "PASS" if ok else "MISS"


@dataclass
class Row:
    figure: str
    tickler: str
    aps: str = "-"
    ratio: str = "-"
    target: str = "-"
    status: str = "-"


def print_table(rows: Sequence[Row]) -> None:
    header = Row("figure", "tickler", "APScheduler", "tickler adv.", "target", "status")
    cols = [
        max(len(getattr(r, f)) for r in (header, *rows))
        for f in ("figure", "tickler", "aps", "ratio", "target", "status")
    ]

    def line(r: Row) -> str:
        cells = (r.figure, r.tickler, r.aps, r.ratio, r.target, r.status)
        left = cells[0].ljust(cols[0])
        rest = "  ".join(c.rjust(w) for c, w in zip(cells[1:], cols[1:], strict=True))
        return f"{left}  {rest}"

    print(line(header))
    print("-" * len(line(header)))
    for r in rows:
        print(line(r))


# --------------------------------------------------------------------------------------
# The run


def _round_down(value: int, step: int) -> int:
    return max(step, value // step * step)


class Bench:
    def __init__(self, scale: Scale, root: Path, runner: Runner) -> None:
        self.scale = scale
        self.root = root
        self.runner = runner
        self.rows: dict[int, list[Row]] = {n: [] for n in range(1, 7)}
        self.notes: list[str] = []
        self.fd_limit = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        self.fsync_rate = math.nan
        self.create_rate = math.nan
        self.per_open = 2.0
        self.per_written = 1.0
        self.fd_note = ""

    def path(self, name: str) -> Path:
        return self.root / name

    def fresh_dir(self, name: str) -> str:
        path = self.path(name)
        path.mkdir()
        return str(path)

    # 1 and 2 -------------------------------------------------------------------------

    def creates(self) -> None:
        s = self.scale
        log(f"raw fsync rate ({s.fsync_s:.0f} s)")
        fsync, p50, p99 = raw_fsync(self.root, s.fsync_s)
        zeroed, _, _ = raw_fsync(self.root, s.fsync_s, zeroed=True)
        self.fsync_rate = fsync
        self.rows[1] += [
            Row("1. raw write+fsync, one file", rate(fsync), target="ceiling"),
            Row("   fsync latency p50 / p99", f"{ms(p50)} / {ms(p99)}"),
            Row("   raw overwrite of zeros+fsync (as the journal writes)", rate(zeroed)),
        ]
        timing = {"seconds": s.create_s, "warmup": s.warmup_s}
        log("durable creates: tickler, 1 in flight")
        t1 = self.runner.run(
            "tickler.creates", directory=self.fresh_dir("c1"), sessions=1, **timing
        )
        pinned: Result | None = None
        if hasattr(os, "sched_setaffinity"):
            log("durable creates: tickler, 1 in flight, pinned to one CPU")
            cpu = max(os.sched_getaffinity(0))
            pinned = self.runner.run(
                "tickler.creates",
                directory=self.fresh_dir("c1p"),
                sessions=1,
                pin_cpu=cpu,
                **timing,
            )
        log("durable creates: tickler, 64 sessions")
        t64 = self.runner.run(
            "tickler.creates", directory=self.fresh_dir("c64"), sessions=64, **timing
        )
        procs = max(2, min(os.cpu_count() or 2, 8))
        log(f"durable creates: tickler, 64 sessions over {procs} processes (one per core)")
        start_at = time.time() + 3.0 + s.warmup_s  # after every worker has opened its sessions
        shared = self.fresh_dir("c64p")
        parts = self.runner.run_together(
            "tickler.creates",
            [
                {
                    "directory": shared,
                    "sessions": 64 // procs,
                    "prefix": f"p{i}-",
                    "start_at": start_at,
                    **timing,
                }
                for i in range(procs)
            ],
        )
        rp = sum(float(part["rate"]) for part in parts)
        overlap = _overlap([part["window"] for part in parts])
        log("durable creates: APScheduler, sequential")
        a1 = self.runner.run("aps.creates", path=str(self.path("c1.sqlite")), threads=1, **timing)
        log("durable creates: APScheduler, 64 threads")
        a64 = self.runner.run(
            "aps.creates", path=str(self.path("c64.sqlite")), threads=64, **timing
        )
        r1, r64 = float(t1["rate"]), float(t64["rate"])
        q1, q64 = float(a1["rate"]), float(a64["rate"])
        self.create_rate = r64
        self.rows[2] += [
            Row(
                "2. durable creates, 1 in flight",
                rate(r1),
                rate(q1),
                better(r1 / q1),
                f">= {T_CREATE_1:,.0f}/s",
                status(r1 >= T_CREATE_1),
            ),
            Row("   1 in flight / raw fsync rate", f"{r1 / fsync:.2f}x", f"{q1 / fsync:.2f}x"),
            Row(
                "   1 in flight, process pinned to one CPU (no cross-CPU wake-ups)",
                "-" if pinned is None else rate(float(pinned["rate"])),
            ),
            Row(
                "   durable creates, 64 sessions (APS: 64 threads)",
                rate(r64),
                rate(q64),
                better(r64 / q64),
                f">= {T_CREATE_64:,.0f}/s",
                status(r64 >= T_CREATE_64),
            ),
            Row(
                "   64 sessions / raw fsync rate",
                f"{r64 / fsync:.2f}x",
                f"{q64 / fsync:.2f}x",
                "-",
                f">= {T_CREATE_64_X_FSYNC:.0f}x",
                status(r64 / fsync >= T_CREATE_64_X_FSYNC),
            ),
            Row(
                f"   durable creates, 64 sessions over {procs} processes (one store dir)",
                rate(rp),
                rate(q64),
                better(rp / q64),
                f">= {T_CREATE_64:,.0f}/s",
                status(rp >= T_CREATE_64 and overlap >= 0.95),
            ),
            Row(
                f"   {procs} processes / raw fsync rate (windows overlap {overlap:.0%})",
                f"{rp / fsync:.2f}x",
                f"{q64 / fsync:.2f}x",
                "-",
                f">= {T_CREATE_64_X_FSYNC:.0f}x",
                status(rp / fsync >= T_CREATE_64_X_FSYNC and overlap >= 0.95),
            ),
            Row(
                "   CPU per create, 1 / 64 (all threads)",
                f"{float(t1['cpu_us']):,.0f} / {float(t64['cpu_us']):,.0f} us",
            ),
            Row(
                "   creates per store fsync, 1 / 64",
                f"{_per(t1['creates'], t1['fsyncs'])} / {_per(t64['creates'], t64['fsyncs'])}",
            ),
        ]

    # 3 and 5 -------------------------------------------------------------------------

    def fd_probe(self) -> None:
        """How many descriptors the store holds per open / written session."""
        probe = self.runner.run("tickler.fdprobe", directory=self.fresh_dir("fds"), sessions=200)
        self.per_open = max(float(probe["per_open"]), 0.5)
        self.per_written = max(float(probe["per_appended"]), float(probe["per_written"]), 0.0)
        self.fd_note = (
            f"the hard open-files limit is {self.fd_limit:,}; the JSONL store holds "
            f"{self.per_open:.1f} descriptors per open session, plus "
            f"{float(probe['per_appended']):.1f} per session appended to and not yet flushed "
            f"({float(probe['per_written']):.1f} once flushed, until the journal's checkpoint)"
        )

    def sessions_within_fds(self, wanted: int, written: int) -> int:
        room = (self.fd_limit - FD_RESERVE - written * self.per_written) / self.per_open
        return min(wanted, _round_down(int(room), 50))

    def lateness(self) -> None:
        s = self.scale
        sessions = self.sessions_within_fds(s.sessions, s.due)
        if sessions < s.sessions:
            self.notes.append(
                f"figures 3 and 5 use {sessions:,} sessions, not {s.sessions:,}: {self.fd_note}"
            )
        far = s.pending - s.due
        log(f"generating {far:,} far-future reminders in {sessions:,} session files")
        t0 = time.perf_counter()
        directory = self.path("late")
        disk = write_sessions(directory, "s", spread(far, sessions), int(time.time() * 1000))
        log(f"  written in {time.perf_counter() - t0:.1f} s ({disk / far:.0f} bytes each on disk)")
        log(f"generating {far:,} far-future APScheduler jobs")
        t0 = time.perf_counter()
        db = self.path("late.sqlite")
        aps_populate(str(db), far_jobs("far-", far, time.time() * 1000))
        shutil.copy(db, self.path("start.sqlite"))
        log(f"  written in {time.perf_counter() - t0:.1f} s")
        log("lateness: tickler")
        window = list(s.window_s)
        t = self.runner.run(
            "tickler.lateness",
            directory=str(directory),
            sessions=sessions,
            pregenerated=far,
            due=s.due,
            window_s=window,
        )
        log("lateness: APScheduler")
        a = self.runner.run(
            "aps.lateness", path=str(db), due=s.due, window_s=window, drain_s=s.drain_s
        )
        if t["pending"] != t["expected_pending"] or not t["complete"]:
            self.notes.append(f"figure 3 (tickler) is incomplete: {t}")
        if not a["complete"]:
            self.notes.append(
                f"figure 3: APScheduler ran {a['fired']:,} of its {s.due:,} due jobs by "
                f"{s.drain_s:.0f} s after the window; the others count as later than that "
                "(shown as '> cap')"
            )
        tp50, tp99, ap50, ap99 = (float(x) for x in (t["p50"], t["p99"], a["p50"], a["p99"]))
        where = f"{t['pending']:,} pending, {sessions:,} sessions"
        self.rows[3] += [
            Row(f"3. firing lateness p50 ({where})", ms(tp50), ms(ap50), better(ap50 / tp50)),
            Row(
                "   firing lateness p99",
                ms(tp99),
                ms(ap99),
                better(ap99 / tp99),
                f"< {T_P99_MS:.0f} ms",
                status(tp99 < T_P99_MS),
            ),
            Row("   firing lateness max", ms(float(t["max"]))),
            Row(
                "   timer wake after target p50 / p99",
                f"{ms(float(t['wake_p50']))} / {ms(float(t['wake_p99']))}",
            ),
            Row(
                "   hand-over after wake p50 / p99",
                f"{ms(float(t['after_wake_p50']))} / {ms(float(t['after_wake_p99']))}",
            ),
            Row(
                "   gc while firing: full passes; longest pass",
                f"{t['gc_full']:,}; {ms(float(t['gc_max_ms']))}",
            ),
            Row(
                "   store fsync p50 / p99 while firing",
                f"{ms(float(t['fsync_p50']))} / {ms(float(t['fsync_p99']))}",
            ),
        ]
        tb, ab = float(t["bytes_per_pending"]), float(a["bytes_per_pending"])
        self.rows[5].append(
            Row(
                f"5. RSS per pending ({where})",
                size(tb),
                size(ab),
                better(ab / tb),
                f"< {T_BYTES:,.0f} B",
                status(tb < T_BYTES),
            )
        )
        self.notes.append(
            f"figure 3: tickler opened and started {sessions:,} sessions in "
            f"{float(t['open_s']):.1f} s, then created the {s.due:,} due reminders at "
            f"{float(t['due_create_rate']):,.0f}/s; {t['fds']:,} descriptors open"
        )
        self.notes.append(
            f"figure 5: APScheduler keeps its jobs in SQLite, not in memory (RSS delta "
            f"{float(a['rss_delta']) / 2**20:.1f} MiB for {a['pending']:,} jobs, mostly "
            f"fixed); on disk {db.stat().st_size / int(a['pending']):,.0f} B/job in SQLite, "
            f"{disk / far:,.0f} B/reminder in tickler's session files"
        )

    # 4 ---------------------------------------------------------------------------------

    def burst(self) -> None:
        s = self.scale
        sessions = min(
            s.burst,
            _round_down(int((self.fd_limit - FD_RESERVE) / (self.per_open + self.per_written)), 50),
        )
        if sessions < s.burst:
            self.notes.append(
                f"figure 4 spreads {s.burst:,} reminders over {sessions:,} sessions "
                f"({self.fd_note}); a session holding two delivers them one after the other"
            )
        directory = self.path("burst")
        write_sessions(directory, "b", [0] * sessions, int(time.time() * 1000))
        creates = self.create_rate if self.create_rate > 100 else 1_000.0  # NaN: unknown
        margin = min(30.0, max(3.0, 2.0 + 1.5 * s.burst / creates))
        log("burst: tickler")
        t = self.runner.run(
            "tickler.burst",
            directory=str(directory),
            sessions=sessions,
            count=s.burst,
            margin_s=margin,
        )
        log("burst: APScheduler")
        a = self.runner.run(
            "aps.burst",
            path=str(self.path("burst.sqlite")),
            count=s.burst,
            margin_s=3.0,
            cap_s=s.burst_cap_s,
        )
        if t["setup_late"] or not t["complete"]:
            self.notes.append(f"figure 4 (tickler) is not valid: {t}")
        if not a["complete"]:
            self.notes.append(
                f"figure 4: APScheduler ran {a['delivered']:,} of {s.burst:,} jobs in "
                f"{s.burst_cap_s:.0f} s; its rate is over that span"
            )
        tr, ar = float(t["rate"]), float(a["rate"])
        self.rows[4] += [
            Row(
                f"4. burst of {s.burst:,} due at once: deliveries",
                rate(tr),
                rate(ar),
                better(tr / ar),
                f">= {T_BURST:,.0f}/s",
                status(tr >= T_BURST),
            ),
            Row(
                "   first / last hand-over after the due instant",
                f"{ms(float(t['first_ms']))} / {ms(float(t['last_ms']))}",
                f"{ms(float(a['first_ms']))} / {secs(float(a['span_s']))}",
            ),
            Row(
                "   CPU per delivery; store fsyncs (their total time)",
                f"{float(t['cpu_us']):,.0f} us; {int(t['fsyncs']):,} "
                f"({secs(float(t['fsync_total_ms']) / 1000)})",
            ),
            Row(
                "   gc during the burst: full passes; longest pass",
                f"{t['gc_full']:,}; {ms(float(t['gc_max_ms']))}",
            ),
        ]

    # 6 ---------------------------------------------------------------------------------

    def startup(self) -> None:
        s = self.scale
        directory = self.path("start")
        log(f"generating one session with {s.start_pending:,} pending")
        write_sessions(directory, "big", [s.start_pending], int(time.time() * 1000))
        db = self.path("start.sqlite")
        extra = s.start_pending - (s.pending - s.due) if db.exists() else s.start_pending
        if extra > 0:
            aps_populate(str(db), far_jobs("extra-", extra, time.time() * 1000))
        runs = s.start_runs
        cold: list[Result] = []
        warm: list[Result] = []
        aps: list[Result] = []
        for run in range(runs):
            log(f"start to armed: tickler without a snapshot ({run + 1}/{runs})")
            params = {"directory": str(directory), "session_id": "big0"}
            cold.append(self.runner.run("tickler.startup", **params, save=run == runs - 1))
        for run in range(runs):
            log(f"start to armed: tickler with a snapshot ({run + 1}/{runs})")
            params = {"directory": str(directory), "session_id": "big0"}
            warm.append(self.runner.run("tickler.startup", **params, save=False))
        for run in range(runs):
            log(f"start to armed: APScheduler ({run + 1}/{runs})")
            aps.append(self.runner.run("aps.startup", path=str(db)))
        log("interpreter start and imports")
        bare, imp_t, imp_a = interpreter_and_imports(runs)

        def med(results: list[Result], key: str) -> float:
            return statistics.median(float(r[key]) for r in results)

        c, w, a = med(cold, "armed_s"), med(warm, "armed_s"), med(aps, "armed_s")
        tb, ab = med(cold, "bytes_per_pending"), med(aps, "bytes_per_pending")
        n = f"{int(cold[0]['pending']):,}"
        self.rows[6] += [
            Row(
                f"6. start to armed, {n} pending in 1 session, no snapshot",
                secs(c),
                secs(a),
                better(a / c),
                f"<= {T_ARMED_S * 1000:,.0f} ms",
                status(c <= T_ARMED_S),
            ),
            Row(
                "   start to armed, with a snapshot",
                secs(w),
                secs(a),
                better(a / w),
                f"<= {T_ARMED_SNAP_S * 1000:,.0f} ms",
                status(w <= T_ARMED_SNAP_S),
            ),
            Row(
                "   start to state loaded (no snapshot / snapshot)",
                f"{secs(med(cold, 'loaded_s'))} / {secs(med(warm, 'loaded_s'))}",
            ),
            Row(
                "   CPU time to armed (no snapshot / snapshot)",
                f"{secs(med(cold, 'cpu_s'))} / {secs(med(warm, 'cpu_s'))}",
                secs(med(aps, "cpu_s")),
            ),
            Row(
                "   of which opening the session (no snapshot / snapshot)",
                f"{secs(med(cold, 'open_s'))} / {secs(med(warm, 'open_s'))}",
            ),
            Row("   interpreter start+exit (python -c pass)", secs(bare), secs(bare)),
            Row("   imports (tickler / apscheduler+sqlalchemy)", secs(imp_t), secs(imp_a)),
        ]
        self.rows[5].append(
            Row(
                f"   RSS per pending ({n} pending, 1 session)",
                size(tb),
                size(ab),
                better(ab / tb),
                f"< {T_BYTES:,.0f} B",
                status(tb < T_BYTES),
            )
        )
        if runs > 1:
            self.notes.append(f"figure 6: medians of {runs} fresh processes each")


def _overlap(windows: Sequence[Sequence[float]]) -> float:
    """The share of the shortest measured window that every worker shares
    (the processes' rates add up only over a common window)."""
    common = min(w[1] for w in windows) - max(w[0] for w in windows)
    shortest = min(w[1] - w[0] for w in windows)
    return max(0.0, common) / shortest if shortest > 0 else 0.0


def _per(count: int, fsyncs: int) -> str:
    return f"{count / fsyncs:.1f}" if fsyncs else "-"


def print_profiles(runner: Runner) -> None:
    import pstats

    for spec, path in runner.profiles:
        if not path.exists():
            continue
        print(f"\n--- cProfile of {spec}, measured phase only (top 25 by internal time) ---")
        stats = pstats.Stats(str(path), stream=sys.stdout)
        stats.strip_dirs().sort_stats("tottime").print_stats(25)


def report(bench: Bench, runner: Runner) -> None:
    print()
    print_table([row for n in sorted(bench.rows) for row in bench.rows[n]])
    print()
    print(
        "tickler adv. = how many times better tickler is (rate ratio, or APS/tickler for "
        "times and bytes); below 1x tickler is worse."
    )
    for note in [*bench.notes, *runner.warnings]:
        print(f"note: {note}")
    if runner.profile_dir is not None:
        print("note: --profile: tickler's workers ran under cProfile; figures are slower than real")
        print_profiles(runner)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="tickler runtime benchmarks vs APScheduler 3")
    parser.add_argument("--quick", action="store_true", help="smaller scale (about a minute)")
    parser.add_argument(
        "--profile", action="store_true", help="also profile tickler's workers (slower)"
    )
    parser.add_argument("--keep", action="store_true", help="keep the generated data")
    parser.add_argument("--worker", nargs=2, metavar=("SPEC", "PARAMS"), help=argparse.SUPPRESS)
    parser.add_argument("--profile-to", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    if args.worker is not None:
        worker_main(args.worker[0], args.worker[1], args.profile_to)
        return
    scale = QUICK if args.quick else DEFAULT
    began = time.perf_counter()
    root = Path(tempfile.mkdtemp(prefix="tickler-bench-"))
    runner = Runner(root / "profiles" if args.profile else None)
    if runner.profile_dir is not None:
        runner.profile_dir.mkdir()
    load = os.getloadavg()[0]
    print(
        f"tickler runtime bench{' (--quick: smaller scale)' if args.quick else ''}: "
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs, load {load:.1f} at start; "
        f"data in {root}"
    )
    print(
        "tickler: JsonlStore + ScheduleRuntime; APScheduler 3 BackgroundScheduler + "
        "SQLAlchemyJobStore(sqlite), both durable per call",
        flush=True,
    )
    bench = Bench(scale, root, runner)
    try:
        bench.fd_probe()
        for section in (bench.creates, bench.lateness, bench.burst, bench.startup):
            try:
                section()
            except WorkerFailed as exc:
                bench.notes.append(f"FAILED: {exc}; its figures are missing")
        report(bench, runner)
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    print(
        f"\ntotal wall time {time.perf_counter() - began:.0f} s; load {os.getloadavg()[0]:.1f} "
        "at the end"
    )


if __name__ == "__main__":
    main()
