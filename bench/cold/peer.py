"""APScheduler 3 doing the same work: a BackgroundScheduler on its
SQLAlchemy job store (SQLite) holding one date job per session, each run in
a fresh, lean process (:mod:`bench.cold.aps_start`) whose jobs note when
they ran (:func:`bench.cold.target.fired`); and, in-process, what its
scheduler asks the job store each round."""

from __future__ import annotations

import functools
import json
import math
import os
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from bench.runtime import aps
from bench.runtime.common import Record, percentile, wall_ms
from bench.runtime.workers import ROOT, Worker, aps_worker

from .target import NOTES_ENV
from .timing import interleaved_us


@dataclass(frozen=True)
class ApsRun:
    first_ms: float  # spawned to the first job run
    fired: int
    complete: bool
    p50: float  # job run minus its run date, ms (inf: not run by until_ms)
    p99: float
    max: float
    cpu_ms: float  # process CPU per job run, from the first run to the last
    peak_rss: int  # VmHWM at the end, bytes


class ApsRunFailed(RuntimeError):
    """APScheduler's process failed, or ran other jobs than expected."""


def aps_run(
    path: Path, notes: Path, targets: Sequence[float], until_ms: float, linger_s: float
) -> ApsRun:
    """Start a scheduler on the job store at ``path`` in a fresh process and
    let it run the jobs due at ``targets`` (each must run once, and nothing
    else)."""
    notes.write_bytes(b"")
    params = {"path": str(path), "expect": len(targets), "until_ms": until_ms, "linger_s": linger_s}
    command = [sys.executable, "-m", "bench.cold.aps_start", json.dumps(params)]
    spawned = wall_ms()
    done = subprocess.run(
        command,
        cwd=ROOT,
        env={**os.environ, NOTES_ENV: str(notes)},
        stdout=subprocess.PIPE,
        text=True,
        check=False,
    )
    if done.returncode != 0 or not done.stdout.strip():
        raise ApsRunFailed(f"APScheduler's process failed (exit status {done.returncode})")
    reply = json.loads(done.stdout.strip().splitlines()[-1])
    runs = [(int(ns) / 1e6, float(target)) for ns, target, _ in _lines(notes)]
    got = Counter(target for _, target in runs)
    extra = got - Counter(targets)
    if extra or max(got.values(), default=1) > 1:
        raise ApsRunFailed(f"APScheduler ran jobs not expected, or twice: {sorted(extra)[:3]}")
    late = [ran - target for ran, target in runs]
    padded = late + [math.inf] * (len(targets) - len(late))  # not run by until_ms
    return ApsRun(
        first_ms=min((ran for ran, _ in runs), default=math.inf) - spawned,
        fired=len(late),
        complete=bool(reply["complete"]),
        p50=percentile(padded, 50),
        p99=percentile(padded, 99),
        max=max(padded, default=math.nan),
        cpu_ms=float(reply["cpu_ms"]),
        peak_rss=int(reply["peak_rss"]),
    )


def _lines(notes: Path) -> list[list[str]]:
    return [line.split(" ") for line in notes.read_text().splitlines()]


class ApsIndexParams(Record, frozen=True):
    paths: list[str]  # job stores of different sizes
    calls: int


class ApsIndex(Record, frozen=True):
    jobs: int
    next_run_us: float  # get_next_run_time(), median per call
    due_us: float  # get_due_jobs(now), nothing due, median per call


class ApsIndexes(Record, frozen=True):
    stores: list[ApsIndex]  # as the paths


def aps_index(p: ApsIndexParams) -> ApsIndexes:
    """What APScheduler's scheduler asks its job store each round: the due
    jobs (none) and the next run time; the stores' calls interleaved."""
    from datetime import UTC, datetime

    from apscheduler.jobstores.sqlalchemy import (  # type: ignore[import-untyped]
        SQLAlchemyJobStore,
    )

    stores = [SQLAlchemyJobStore(url=f"sqlite:///{path}") for path in p.paths]
    for path, store in zip(p.paths, stores, strict=True):
        if store.get_next_run_time() is None:
            raise RuntimeError(f"no job in {path}")
        if store.get_due_jobs(datetime.now(UTC)):
            raise RuntimeError(f"a job of {path} is due: the measured query finds none")
    next_run = interleaved_us([store.get_next_run_time for store in stores], p.calls)
    due = interleaved_us([functools.partial(_due_now, store) for store in stores], p.calls)
    for store in stores:
        store.engine.dispose()
    return ApsIndexes(
        [
            ApsIndex(jobs=aps.aps_count(path), next_run_us=n, due_us=d)
            for path, n, d in zip(p.paths, next_run, due, strict=True)
        ]
    )


def _due_now(store: Any) -> object:
    from datetime import UTC, datetime

    return store.get_due_jobs(datetime.now(UTC))


INDEX: Final = aps_worker("index", ApsIndexParams, ApsIndexes, aps_index)
WORKERS: Final[tuple[Worker[Any, Any], ...]] = (INDEX,)
