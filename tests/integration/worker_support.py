"""Helpers for the worker tests: seeding sessions through the real runtime,
recording targets, running workers in the test's event loop, and reading
what the log and the wake index hold."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import msgspec

from tickler.adapters.delivery._callable import DeliverCallable, DeliverFunction
from tickler.adapters.delivery._hosts import DeliveryHost
from tickler.adapters.stores._postgres import PostgresLog, PostgresStore
from tickler.adapters.worker._worker import Worker
from tickler.shell._host import FollowUp, IdleClaim
from tickler.shell._records import DELIVERED, FOLLOWUP, decode_delivered, decode_followup
from tickler.shell._runtime import ScheduleRuntime
from tickler.shell._session import Session

from .pgsupport import PgSchema

ToolArgs = Mapping[str, object]


class NeverIdle:
    """A host that never takes a turn: a process that only edits schedules."""

    def claim_idle(self) -> IdleClaim | None:
        return None

    async def when_idle(self) -> None:
        await asyncio.Event().wait()

    async def followup(self, message: FollowUp) -> None:
        raise AssertionError(f"a schedule-only process was handed {message.key}")


def at_text(epoch_ms: int) -> str:
    """An ``at`` value (RFC 3339, UTC, whole seconds) at or after ``epoch_ms``."""
    seconds = -(-epoch_ms // 1000)
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def now_ms() -> int:
    return time.time_ns() // 1_000_000


async def seed(
    store: PostgresStore, plan: Mapping[str, Sequence[ToolArgs]], *, parallel: int = 32
) -> None:
    """Create each session's reminders through a live runtime (so the wake
    index is written as in production), then let the session go."""

    async def one(session_id: str, creates: Sequence[ToolArgs]) -> None:
        log = await store.open(session_id, created_at=now_ms())
        runtime = ScheduleRuntime(log, NeverIdle())
        try:
            await runtime.start()
            for args in creates:
                answer = await runtime.call_tool("schedule_create", dict(args))
                assert '"state":"scheduled"' in answer, answer
        finally:
            await runtime.dispose()
            await log.close()

    items = list(plan.items())
    for start in range(0, len(items), parallel):
        await asyncio.gather(
            *(one(sid, creates) for sid, creates in items[start : start + parallel])
        )


@dataclass
class Call:
    worker: str
    session: str
    key: str


@dataclass
class Recorder:
    """In-process delivery targets that record every call, per worker."""

    calls: list[Call] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def target(
        self,
        worker: str,
        *,
        before: Callable[[FollowUp, str], Awaitable[None]] | None = None,
        timeout: float = 10.0,
    ) -> Callable[[Session], DeliveryHost]:
        """A host factory for :class:`Worker` (or ``open_session``):
        ``before`` runs first (it may block or raise: a slow or failing
        target); the call is recorded only when the target took the
        follow-up."""

        async def deliver(message: FollowUp, session: str) -> None:
            if before is not None:
                await before(message, session)
            self.calls.append(Call(worker, session, message.key))
            self.changed.set()

        function: DeliverFunction = deliver
        return lambda session: DeliverCallable(function, session=session.id, timeout=timeout)

    def keys(self) -> list[tuple[str, str]]:
        """(session, key) of every call: keys are unique within a session."""
        return [(c.session, c.key) for c in self.calls]

    async def wait_for(self, count: int, bound_s: float = 60.0) -> None:
        await wait_until(lambda: len(self.calls) >= count, bound_s, f"{count} deliveries")


async def wait_until(
    condition: Callable[[], bool], bound_s: float, what: str, *, step_s: float = 0.02
) -> None:
    """Wait for observed progress, with a generous bound (never a timing claim)."""
    deadline = time.monotonic() + bound_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting {bound_s:g} s for {what}")
        await asyncio.sleep(step_s)


@contextlib.asynccontextmanager
async def running(worker: Worker) -> AsyncIterator[Worker]:
    """``worker.run`` in a task for the block; stopped (gracefully) after."""
    stop = asyncio.Event()
    task = asyncio.get_running_loop().create_task(worker.run(stop))
    try:
        yield worker
    finally:
        stop.set()
        await task
        await worker.store.close()


class SpyStore(PostgresStore):
    """A real store that keeps the logs it claimed (to look at them after)."""

    claimed: list[PostgresLog]

    async def claim_due(self, limit: int, now_ms: int) -> list[PostgresLog]:
        logs = await super().claim_due(limit, now_ms)
        if not hasattr(self, "claimed"):
            self.claimed = []
        self.claimed.extend(logs)
        return logs


def spy_store(pg: PgSchema, *, lease_s: float = 60.0) -> SpyStore:
    return SpyStore(pg.dsn, schema=pg.schema, lease_s=lease_s)


def as_bytes(value: object) -> bytes:
    """A bytea column's value."""
    assert isinstance(value, bytes | memoryview), value
    return bytes(value)


def log_types(pg: PgSchema, session_id: str) -> list[str]:
    rows = pg.query("SELECT type FROM {s}.events WHERE session_id = %s ORDER BY seq", (session_id,))
    return [str(row[0]) for row in rows]


def followup_keys(pg: PgSchema, session_id: str | None = None) -> list[tuple[str, str]]:
    """(session, key) of every follow-up in the logs, in order."""
    where = "" if session_id is None else " AND session_id = %s"
    rows = pg.query(
        "SELECT session_id, data FROM {s}.events WHERE type = %s"
        + where
        + " ORDER BY session_id, seq",
        (FOLLOWUP,) if session_id is None else (FOLLOWUP, session_id),
    )
    return [(str(sid), decode_followup(as_bytes(data)).key) for sid, data in rows]


def delivered_keys(pg: PgSchema, session_id: str | None = None) -> list[tuple[str, str]]:
    where = "" if session_id is None else " AND session_id = %s"
    rows = pg.query(
        "SELECT session_id, data FROM {s}.events WHERE type = %s"
        + where
        + " ORDER BY session_id, seq",
        (DELIVERED,) if session_id is None else (DELIVERED, session_id),
    )
    return [(str(sid), decode_delivered(as_bytes(data))) for sid, data in rows]


def session_row(pg: PgSchema, session_id: str) -> tuple[int | None, int, str | None]:
    """(next_due_at, failures, lease_owner) of a session."""
    rows = pg.query(
        "SELECT next_due_at, failures, lease_owner FROM {s}.sessions WHERE id = %s", (session_id,)
    )
    due, failures, owner = rows[0]
    return (
        None if due is None else int(str(due)),
        int(str(failures)),
        None if owner is None else str(owner),
    )


def change_kinds(pg: PgSchema, session_id: str) -> list[str]:
    """The ``operation`` of each schedule change in a session's log (create, dispatch...)."""
    rows = pg.query(
        "SELECT data FROM {s}.events WHERE session_id = %s AND type = 'schedule/change'"
        " ORDER BY seq",
        (session_id,),
    )
    return [str(msgspec.json.decode(as_bytes(row[0]))["operation"]) for row in rows]
