"""The loaded sessions, bulk-loaded with COPY, never through the tools.

Every session is written by the code that writes a real one
(:func:`bench.reminder_rows.write_session`: the core's decisions, the
runtime's record encoders, the wake index it sets) into a capturing log,
and its rows are COPYed into the store's tables in the columns the store
writes (``bench.reminders.copy_in``'s: header, length, wake, failures and
every event), a chunk at a time so a million sessions never sit in memory.

* The **background**: ``n`` sessions (ids ``user-NNNNNN``, as
  :mod:`bench.reminders` names them, so its row-for-row check against the
  real store covers the first ones), each holding 1 to 3 one-shots due
  2 hours to 30 days ahead, a third of them also a daily reminder: nothing
  of theirs falls due while the bench runs.
* The **burst**: ``BURST`` sessions (``burst-NNNNN``) of one one-shot each,
  all due at one instant just past, reloaded before each drain.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

import psycopg

from bench.reminder_rows import Capture, Spec, write_session
from bench.reminders import created_at, session_id
from tickler.adapters.stores._lines import header_line
from tickler.core import SessionHeader, format_instant

SCHEMA: Final = "tickler"
BURST: Final = 10_000
BURST_PREFIX: Final = "burst-"
CHUNK: Final = 20_000
HOUR_S: Final = 3600
BURST_AFTER_S: Final = 60  # a burst reminder is created a minute before it falls due


def background_spec(rng: random.Random) -> Spec:
    """1-3 one-shots 2 h to 30 days ahead; a third with a daily reminder
    (created half an hour before the load: next due in 23.5 h)."""
    afters = tuple(rng.randint(2 * HOUR_S, 30 * 86_400) for _ in range(rng.randint(1, 3)))
    every = 86_400 if rng.random() < 1 / 3 else None
    return Spec(afters, every, None, 0)


def background_specs(count: int, seed: int = 30) -> Iterator[Spec]:
    rng = random.Random(seed)
    return (background_spec(rng) for _ in range(count))


@dataclass(frozen=True)
class Loaded:
    sessions: int
    events: int


async def _capture(ids_specs: list[tuple[str, Spec, int]]) -> list[Capture]:
    logs = []
    for sid, spec, t0 in ids_specs:
        log = Capture(SessionHeader(id=sid, created_at=created_at(t0)))
        await write_session(log, spec, t0)
        logs.append(log)
    return logs


def _copy(conn: psycopg.Connection[tuple[object, ...]], logs: list[Capture]) -> int:
    """The store's rows of ``logs``; how many events."""
    events = 0
    with conn.cursor() as cur:
        with cur.copy(
            f"COPY {SCHEMA}.sessions (id, header, length, next_due_at, failures) FROM STDIN"
        ) as copy:
            for log in logs:
                header = header_line(log.session)[:-1]
                copy.write_row((log.session.id, header, log.length, log.wake, log.failures))
        with cur.copy(
            f"COPY {SCHEMA}.events (session_id, seq, type, time, data) FROM STDIN"
        ) as copy:
            for log in logs:
                for e in log.rows:
                    copy.write_row((log.session.id, e.seq, e.type, e.time, bytes(e.data)))
                events += log.length
    return events


def load_background(dsn: str, count: int, t0: int) -> Loaded:
    """``count`` background sessions created at ``t0`` (epoch ms)."""
    events = 0
    specs = background_specs(count)
    with psycopg.connect(dsn) as conn:
        for start in range(0, count, CHUNK):
            batch = [
                (session_id(n), next(specs), t0) for n in range(start, min(count, start + CHUNK))
            ]
            events += _copy(conn, asyncio.run(_capture(batch)))
            conn.commit()
    analyze(dsn, vacuum=True)  # as a settled table: its visibility map set
    return Loaded(count, events)


def burst_id(n: int) -> str:
    return f"{BURST_PREFIX}{n:05d}"


def burst_key(due_ms: int) -> str:
    """The follow-up key of a burst session's one reminder."""
    return f"schedule-1@{format_instant(due_ms)}"


def load_burst(dsn: str, due_ms: int, count: int = BURST) -> float:
    """Replace the burst sessions by ``count`` fresh ones due at ``due_ms``;
    vacuum what the last drain left, so each drain starts alike. Returns
    the seconds the VACUUM ANALYZE took (what autovacuum does after a
    burst: a vacuum reads every index of a table with dead rows whole)."""
    spec = Spec((BURST_AFTER_S,), None, None, 0)
    t0 = due_ms - BURST_AFTER_S * 1000  # the instant each is created
    with psycopg.connect(dsn) as conn:
        # By key (LIKE 'burst-%' would read every event), each drain's
        # sessions: the same ids every time.
        ids = [burst_id(n) for n in range(count)]
        for table, key in (("events", "session_id"), ("snapshots", "session_id")):
            conn.execute(f"DELETE FROM {SCHEMA}.{table} WHERE {key} = ANY(%s)", (ids,))
        conn.execute(f"DELETE FROM {SCHEMA}.sessions WHERE id = ANY(%s)", (ids,))
        batch = [(burst_id(n), spec, t0) for n in range(count)]
        _copy(conn, asyncio.run(_capture(batch)))
        conn.commit()
    started = time.perf_counter()
    analyze(dsn, vacuum=True)
    return time.perf_counter() - started


def analyze(dsn: str, *, vacuum: bool = False) -> None:
    verb = "VACUUM ANALYZE" if vacuum else "ANALYZE"
    with psycopg.connect(dsn, autocommit=True) as conn:
        for table in ("sessions", "events", "snapshots"):
            conn.execute(f"{verb} {SCHEMA}.{table}")
