"""The peer, APScheduler 3, in one place: a BackgroundScheduler on a
SQLAlchemyJobStore on SQLite with its defaults (rollback journal,
synchronous=FULL: every committed job survives a crash, like a flushed
tickler create). Bulk jobs are written straight into the store's table in
one transaction, each row as ``SQLAlchemyJobStore.add_job`` writes it (the
pickled ``Job.__getstate__()``); durable ``add_job`` itself is figure 2.
Jobs run ``fire``, which notes when it ran.

APScheduler is imported inside the functions, so that a tickler worker
imports none of it.
"""

from __future__ import annotations

import pickle
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from typing import Any, Final

from .common import far_offset_ms, wall_ms

# What an APScheduler process imports (the import-time row of figure 6).
APS_MODULES: Final = ("apscheduler.schedulers.background", "apscheduler.jobstores.sqlalchemy")

_FIRED: list[tuple[float, float]] = []  # (ran at, target), wall ms
_FIRED_LOCK: Final = threading.Lock()


def fire(target_ms: float) -> None:
    ran = wall_ms()
    with _FIRED_LOCK:
        _FIRED.append((ran, target_ms))


def fired_count() -> int:
    with _FIRED_LOCK:
        return len(_FIRED)


def fired() -> list[tuple[float, float]]:
    """Every job run so far: (ran at, target), wall ms."""
    with _FIRED_LOCK:
        return list(_FIRED)


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


def add_date_job(sched: Any, target: float) -> None:
    """One durable ``add_job(trigger="date")`` running ``fire(target)``."""
    sched.add_job(
        fire, trigger="date", run_date=_utc(target), args=(target,), misfire_grace_time=None
    )


def aps_populate(
    path: str, jobs: Iterable[tuple[str, float]], func: Callable[[float], None] = fire
) -> int:
    """Insert ``(id, target ms)`` date jobs running ``func(target)`` (by
    default ``fire``) into the job store at ``path`` (created if needed), in
    one transaction."""
    from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
    from apscheduler.triggers.date import DateTrigger  # type: ignore[import-untyped]

    store = SQLAlchemyJobStore(url=_sqlite(path))
    store.jobs_t.create(store.engine, checkfirst=True)
    func_ref = f"{func.__module__}:{func.__qualname__}"
    rows = []
    for job_id, target in jobs:
        run_at = _utc(target)
        state = {
            "version": 1,
            "id": job_id,
            "func": func_ref,
            "trigger": DateTrigger(run_at, timezone=UTC),
            "executor": "default",
            "args": (target,),
            "kwargs": {},
            "name": func.__name__,
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


def preload() -> None:
    """Import the scheduler and its job store, so that they are not timed."""
    import apscheduler.jobstores.sqlalchemy  # type: ignore[import-untyped]
    import apscheduler.schedulers.background  # type: ignore[import-untyped]  # noqa: F401
