"""Figures 1 and 2: the disk's raw write+fsync rate (the ceiling), then
durable creates per second. tickler: ``schedule_create`` through the
runtime, returning after its flush, with 1 in flight, 1 in flight pinned to
one CPU, 64 sessions in one process and 64 sessions over one process per
core on one store directory; APScheduler: ``add_job`` on its SQLite store,
sequential and from 64 threads."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from . import aps, harness
from .common import (
    DAY_MS,
    FAST_DISK,
    T_CPU_CREATE_64_US,
    T_CREATE_1,
    T_CREATE_1_X_FSYNC,
    T_CREATE_64,
    T_CREATE_64_X_FSYNC,
    FsyncStats,
    Record,
    log,
    measuring,
    percentile,
    wall_ms,
)
from .context import Bench
from .report import Row, better, ms, rate, status
from .workers import Worker, aps_worker, tickler_worker


class TicklerCreatesParams(Record, frozen=True):
    directory: str
    sessions: int
    seconds: float  # measured
    warmup: float  # before the measured window
    prefix: str = "c"  # of the session ids
    start_at: float | None = None  # epoch seconds: the measured window starts then
    pin_cpu: int | None = None  # run on this CPU only


class TicklerCreates(Record, frozen=True):
    rate: float  # creates per second over the window
    creates: int
    cpu_us: float  # CPU per create, every thread
    window: tuple[float, float]  # epoch seconds
    fsync: FsyncStats


class ApsCreatesParams(Record, frozen=True):
    path: str
    threads: int
    seconds: float
    warmup: float


class ApsCreates(Record, frozen=True):
    rate: float
    creates: int


async def tickler_creates(p: TicklerCreatesParams) -> TicklerCreates:
    """One task per session, each creating in a loop (each call returns after
    its flush); the rate over ``seconds`` after ``warmup``. With
    ``start_at`` (epoch seconds) the measured window starts then, so
    workers in several processes measure the same window. With ``pin_cpu``
    the process (and the threads it starts) runs on that CPU only."""
    if p.pin_cpu is not None:
        os.sched_setaffinity(0, {p.pin_cpu})
    rig = harness.Rig(p.directory)
    ids = [f"{p.prefix}{p.sessions}-{i}" for i in range(p.sessions)]
    await rig.open(ids, created_at=int(wall_ms()))
    counts = [0] * p.sessions
    stop = asyncio.Event()

    async def loop(index: int) -> None:
        create = rig.creator(index)
        n = 0
        while not stop.is_set():
            args = {"prompt": harness.prompt_for(index, n), "after_seconds": 86_400 + n}
            harness.check_created(await create(args))
            n += 1
            counts[index] = n

    tasks = [asyncio.create_task(loop(i)) for i in range(p.sessions)]
    await asyncio.sleep(p.warmup)
    if p.start_at is not None:
        await asyncio.sleep(max(0.0, p.start_at - time.time()))
    wall0 = time.time()
    before, t0, c0 = sum(counts), time.perf_counter(), time.process_time()
    f0 = len(rig.fsync.seconds)
    measuring(True)
    await asyncio.sleep(p.seconds)
    measuring(False)
    after, t1, c1 = sum(counts), time.perf_counter(), time.process_time()
    fsyncs = rig.fsync.summary(f0)
    stop.set()
    await asyncio.gather(*tasks)
    await rig.close()
    n = after - before
    return TicklerCreates(
        rate=n / (t1 - t0),
        creates=n,
        cpu_us=(c1 - c0) / max(n, 1) * 1e6,
        window=(wall0, wall0 + (t1 - t0)),
        fsync=fsyncs,
    )


def aps_creates(p: ApsCreatesParams) -> ApsCreates:
    sched = aps.aps_scheduler(p.path)
    sched.start()
    counts = [0] * p.threads
    stop = threading.Event()
    far = wall_ms() + DAY_MS

    def loop(index: int) -> None:
        n = 0
        while not stop.is_set():
            aps.add_date_job(sched, far + n)
            n += 1
            counts[index] = n

    workers = [threading.Thread(target=loop, args=(i,)) for i in range(p.threads)]
    for worker in workers:
        worker.start()
    time.sleep(p.warmup)
    before, t0 = sum(counts), time.perf_counter()
    time.sleep(p.seconds)
    after, t1 = sum(counts), time.perf_counter()
    stop.set()
    for worker in workers:
        worker.join()
    sched.shutdown(wait=False)
    return ApsCreates(rate=(after - before) / (t1 - t0), creates=after - before)


TICKLER: Final = tickler_worker("creates", TicklerCreatesParams, TicklerCreates, tickler_creates)
APS: Final = aps_worker("creates", ApsCreatesParams, ApsCreates, aps_creates)
WORKERS: Final[tuple[Worker[Any, Any], ...]] = (TICKLER, APS)


@dataclass(frozen=True)
class RawFsync:
    rate: float  # per second
    p50_ms: float
    p99_ms: float


def raw_fsync(directory: Path, seconds: float, zeroed: bool = False) -> RawFsync:
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
    return RawFsync(
        rate=len(taken) / elapsed, p50_ms=percentile(taken, 50), p99_ms=percentile(taken, 99)
    )


def disk_speed(fsync: float) -> str:
    """ "fast" from ``FAST_DISK`` write+fsync a second, else "slow"."""
    return "fast" if fsync >= FAST_DISK else "slow"


def overlap(windows: Sequence[tuple[float, float]]) -> float:
    """The share of the shortest measured window that every worker shares
    (the processes' rates add up only over a common window)."""
    common = min(w[1] for w in windows) - max(w[0] for w in windows)
    shortest = min(w[1] - w[0] for w in windows)
    return max(0.0, common) / shortest if shortest > 0 else 0.0


def per_fsync(creates: TicklerCreates) -> str:
    fsyncs = creates.fsync.count
    return f"{creates.creates / fsyncs:.1f}" if fsyncs else "-"


@dataclass(frozen=True)
class Figure2:
    """Figure 2's runs, both sides."""

    t1: TicklerCreates  # 1 in flight
    pinned: TicklerCreates | None  # 1 in flight on one CPU, where affinity can be set
    t64: TicklerCreates  # 64 sessions in one process
    procs: int  # processes sharing 64 sessions
    together: float  # their rates added up
    overlap: float  # the share of their windows they all share
    a1: ApsCreates  # sequential
    a64: ApsCreates  # 64 threads


def _tickler(
    bench: Bench, name: str, sessions: int, pin_cpu: int | None = None
) -> TicklerCreatesParams:
    return TicklerCreatesParams(
        directory=bench.fresh_dir(name),
        sessions=sessions,
        seconds=bench.scale.create_s,
        warmup=bench.scale.warmup_s,
        pin_cpu=pin_cpu,
    )


def _aps(bench: Bench, name: str, threads: int) -> ApsCreatesParams:
    return ApsCreatesParams(
        path=str(bench.path(name)),
        threads=threads,
        seconds=bench.scale.create_s,
        warmup=bench.scale.warmup_s,
    )


def figure2(bench: Bench) -> Figure2:
    s = bench.scale
    runner = bench.runner
    log("durable creates: tickler, 1 in flight")
    t1 = runner.run(TICKLER, _tickler(bench, "c1", 1))
    pinned: TicklerCreates | None = None
    if hasattr(os, "sched_setaffinity"):
        log("durable creates: tickler, 1 in flight, pinned to one CPU")
        cpu = max(os.sched_getaffinity(0))
        pinned = runner.run(TICKLER, _tickler(bench, "c1p", 1, pin_cpu=cpu))
    log("durable creates: tickler, 64 sessions")
    t64 = runner.run(TICKLER, _tickler(bench, "c64", 64))
    procs = max(2, min(os.cpu_count() or 2, 8))
    log(f"durable creates: tickler, 64 sessions over {procs} processes (one per core)")
    start_at = time.time() + 3.0 + s.warmup_s  # after every worker has opened its sessions
    shared = bench.fresh_dir("c64p")
    parts = runner.run_together(
        TICKLER,
        [
            TicklerCreatesParams(
                directory=shared,
                sessions=64 // procs,
                prefix=f"p{i}-",
                start_at=start_at,
                seconds=s.create_s,
                warmup=s.warmup_s,
            )
            for i in range(procs)
        ],
    )
    log("durable creates: APScheduler, sequential")
    a1 = runner.run(APS, _aps(bench, "c1.sqlite", 1))
    log("durable creates: APScheduler, 64 threads")
    a64 = runner.run(APS, _aps(bench, "c64.sqlite", 64))
    return Figure2(
        t1=t1,
        pinned=pinned,
        t64=t64,
        procs=procs,
        together=sum(part.rate for part in parts),
        overlap=overlap([part.window for part in parts]),
        a1=a1,
        a64=a64,
    )


def measure(bench: Bench) -> None:
    s = bench.scale
    log(f"raw fsync rate ({s.fsync_s:.0f} s)")
    raw = raw_fsync(bench.root, s.fsync_s)
    zeroed = raw_fsync(bench.root, s.fsync_s, zeroed=True)
    bench.rows[1] += [
        Row(
            f"1. raw write+fsync, one file ({disk_speed(raw.rate)} disk)",
            rate(raw.rate),
            target="ceiling",
        ),
        Row("   fsync latency p50 / p99", f"{ms(raw.p50_ms)} / {ms(raw.p99_ms)}"),
        Row("   raw overwrite of zeros+fsync (as the journal writes)", rate(zeroed.rate)),
    ]
    m = figure2(bench)
    bench.create_rate = m.t64.rate
    bench.rows[2] += rows(m, raw.rate)


def rows(m: Figure2, fsync: float) -> list[Row]:
    """Figure 2's rows; ``fsync``: the raw write+fsync rate."""
    r1, r64, rp = m.t1.rate, m.t64.rate, m.together
    q1, q64 = m.a1.rate, m.a64.rate
    procs, shared = m.procs, m.overlap
    return [
        Row(
            "2. durable creates, 1 in flight",
            rate(r1),
            rate(q1),
            better(r1 / q1),
            f">= {T_CREATE_1:,.0f}/s",
            status(r1 >= T_CREATE_1),
        ),
        Row(
            f"   1 in flight / raw fsync rate ({disk_speed(fsync)} disk, {rate(fsync)})",
            f"{r1 / fsync:.2f}x",
            f"{q1 / fsync:.2f}x",
            "-",
            f">= {T_CREATE_1_X_FSYNC:.1f}x",
            status(r1 / fsync >= T_CREATE_1_X_FSYNC),
        ),
        Row(
            "   1 in flight, process pinned to one CPU (no cross-CPU wake-ups)",
            "-" if m.pinned is None else rate(m.pinned.rate),
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
            status(rp >= T_CREATE_64 and shared >= 0.95),
        ),
        Row(
            f"   {procs} processes / raw fsync rate (windows overlap {shared:.0%})",
            f"{rp / fsync:.2f}x",
            f"{q64 / fsync:.2f}x",
            "-",
            f">= {T_CREATE_64_X_FSYNC:.0f}x",
            status(rp / fsync >= T_CREATE_64_X_FSYNC and shared >= 0.95),
        ),
        Row("   CPU per create, 1 in flight (all threads)", f"{m.t1.cpu_us:,.0f} us"),
        Row(
            "   CPU per create, 64 sessions (all threads)",
            f"{m.t64.cpu_us:,.0f} us",
            target=f"<= {T_CPU_CREATE_64_US:,.0f} us",
            status=status(m.t64.cpu_us <= T_CPU_CREATE_64_US),
        ),
        Row(
            "   creates per store fsync, 1 / 64",
            f"{per_fsync(m.t1)} / {per_fsync(m.t64)}",
        ),
    ]
