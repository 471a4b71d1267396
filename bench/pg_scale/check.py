"""Is the load honest? Three checks before anything is measured:

1. the first sessions written through the real ``PostgresStore`` give the
   same rows as the bulk load, row for row (``bench.reminders``' check);
2. a seeded sample of the loaded sessions, read by the read model
   (``tickler reminders``' code), holds exactly the reminders its spec
   asked for, each due at its instant;
3. the same sample opened through the real store (a lease) and started by
   the real ``ScheduleRuntime``: the log passes the project's checker
   (``check_log``) and the runtime computes the wake the load wrote.
"""

from __future__ import annotations

import asyncio
import itertools
import random
from typing import Final

import psycopg
from returns.pipeline import is_successful

from bench.pg_tickler import NeverIdle
from bench.reminder_rows import Spec
from bench.reminders import CHECKED, check_bulk_rows, created_at, session_id
from tickler.adapters import open_read_model
from tickler.adapters.stores import PostgresStore
from tickler.core import check_log
from tickler.shell._runtime import ScheduleRuntime

from .load import SCHEMA, background_specs

SAMPLE: Final = 100


class LoadWrong(Exception):
    """The loaded rows are not what the store would have written."""


def expected_dues(spec: Spec, t0: int) -> list[int]:
    dues = [t0 + after * 1000 for after in spec.afters]
    if spec.every_s is not None:
        dues.append(created_at(t0) + spec.every_s * 1000)
    return sorted(dues)


async def _check(dsn: str, count: int, t0: int) -> str:
    await check_bulk_rows(dsn, list(itertools.islice(background_specs(count), CHECKED)), t0)
    picked = sorted(random.Random(31).sample(range(count), min(SAMPLE, count)))
    wanted = _specs_at(picked, count)
    with psycopg.connect(dsn) as conn:
        stored: dict[str, int | None] = dict(
            conn.execute(
                f"SELECT id, next_due_at FROM {SCHEMA}.sessions WHERE id = ANY(%s)",
                ([session_id(n) for n in picked],),
            ).fetchall()
        )
    async with open_read_model(dsn, schema=SCHEMA) as model:
        for n in picked:
            views = await model.reminders(now_ms=t0, session_id=session_id(n))
            got = sorted(v.next_due_ms for v in views if v.next_due_ms is not None)
            if got != expected_dues(wanted[n], t0) or len(views) != len(got):
                raise LoadWrong(f"the read model reads {session_id(n)} as {views}")
    store = PostgresStore(dsn, schema=SCHEMA)
    try:
        for n in picked:
            log = await store.open(session_id(n), created_at=created_at(t0))
            runtime = ScheduleRuntime(log, NeverIdle())
            try:
                if not is_successful(check_log(list(log.events()))):
                    raise LoadWrong(f"{session_id(n)}'s log fails the checker")
                await runtime.start()
                if log.wake != stored[session_id(n)] or log.wake != expected_dues(wanted[n], t0)[0]:
                    raise LoadWrong(
                        f"{session_id(n)}: the runtime's wake {log.wake}, "
                        f"the loaded {stored[session_id(n)]}"
                    )
            finally:
                await runtime.dispose()
                await log.close()
    finally:
        await store.close()
    return (
        f"load checked: the first {CHECKED} sessions' rows equal the real store's; "
        f"{len(picked)} sampled sessions read by the read model hold exactly their "
        "reminders, pass check_log and get from the runtime the wake loaded"
    )


def _specs_at(picked: list[int], count: int) -> dict[int, Spec]:
    want = set(picked)
    return {n: spec for n, spec in enumerate(background_specs(count)) if n in want}


def check_load(dsn: str, count: int, t0: int) -> str:
    """Raise :class:`LoadWrong` (or exit, from check 1) unless the load is
    what the store writes; the line that says what was checked."""
    return asyncio.run(_check(dsn, count, t0))
