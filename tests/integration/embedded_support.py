"""Helpers for the tests of ``tickler worker --store``: the two embedded
stores by kind, seeding through the real runtime, and reading what the
logs and the wake index hold once every process let go."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Mapping, Sequence
from contextlib import closing
from pathlib import Path
from typing import Literal

from tickler.adapters.stores import JsonlStore, SqliteStore
from tickler.adapters.stores import _wakes as wakes
from tickler.adapters.stores._wake_file import FILE_NAME
from tickler.core import SCHEDULE_CHANGE, SessionEvent
from tickler.shell._clock import Clock
from tickler.shell._records import DELIVERED, FOLLOWUP, decode_delivered, decode_followup
from tickler.shell._runtime import ScheduleRuntime

from .worker_support import NeverIdle, ToolArgs

Kind = Literal["jsonl", "sqlite"]
KINDS: tuple[Kind, ...] = ("jsonl", "sqlite")


def store_at(kind: Kind, root: Path, **options: float) -> JsonlStore | SqliteStore:
    """A JSONL store in ``root/sessions`` or an SQLite store in ``root/store.db``."""
    if kind == "jsonl":
        return JsonlStore(root / "sessions", **options)  # type: ignore[arg-type]
    return SqliteStore(root / "store.db", **options)  # type: ignore[arg-type]


def store_path(kind: Kind, root: Path) -> Path:
    return root / ("sessions" if kind == "jsonl" else "store.db")


def index_db(kind: Kind, root: Path) -> Path:
    """The database holding the wake index."""
    return root / "sessions" / FILE_NAME if kind == "jsonl" else root / "store.db"


def index_rows(kind: Kind, root: Path) -> dict[str, wakes.WakeRow]:
    with closing(sqlite3.connect(index_db(kind, root))) as conn:
        return {row.session_id: row for row in wakes.rows(conn)}


async def seed(
    store: JsonlStore | SqliteStore,
    plan: Mapping[str, Sequence[ToolArgs]],
    *,
    clock: Clock | None = None,
) -> None:
    """Create each session's reminders through a live runtime (so the wake
    index is written as in production), then let the session go."""

    async def one(session_id: str, creates: Sequence[ToolArgs]) -> None:
        now = clock.now_ms() if clock is not None else 0
        log = await store.open(session_id, created_at=now)
        runtime = ScheduleRuntime(log, NeverIdle(), clock)
        try:
            await runtime.start()
            for args in creates:
                answer = await runtime.call_tool("schedule_create", dict(args))
                assert '"state":"scheduled"' in answer, answer
        finally:
            await runtime.dispose()
            await log.close()

    await asyncio.gather(*(one(sid, creates) for sid, creates in plan.items()))


async def events_of(kind: Kind, root: Path, session_id: str) -> list[SessionEvent]:
    """A session's whole log, read by a store opened for it alone."""
    store = store_at(kind, root)
    try:
        log = await store.open(session_id, created_at=0)
        try:
            return list(log.events(0))
        finally:
            await log.close()
    finally:
        await store.close()


def followups(events: Sequence[SessionEvent]) -> list[str]:
    return [decode_followup(e.data).key for e in events if e.type == FOLLOWUP]


def delivered(events: Sequence[SessionEvent]) -> list[str]:
    return [decode_delivered(e.data) for e in events if e.type == DELIVERED]


def changes(events: Sequence[SessionEvent]) -> int:
    return sum(e.type == SCHEDULE_CHANGE for e in events)
