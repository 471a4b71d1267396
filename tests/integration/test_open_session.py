"""``open_session`` on every store: however the block is left - normally,
by an exception, by a cancelled task, or cancelled again while it tears
down - the session leaves nothing behind: no task of ours, no lock (another
open succeeds here and from another process), no SQLite lock file, no
PostgreSQL lease, no open file; and the teardown runs in one order (the
host's turns drained while the runtime runs, the runtime stopped before
the host is closed, then a snapshot, the log last).
A session that cannot start leaves no snapshot of a state it never loaded,
and a task cancelled while the session loads waits for the load before the
log closes."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Literal

import pytest

from tickler.adapters.stores._memory import MemoryLog, MemoryStore
from tickler.core import SessionEvent, SessionHeader
from tickler.shell._clock import settle
from tickler.shell._host import FollowUp, IdleClaim
from tickler.shell._ports import NewEvent, SessionLog, SessionStore, Snapshot, StoreError
from tickler.shell._reference_host import ReferenceHost, TurnInput
from tickler.shell._session import Session, open_log_session, open_session

from .conftest import make_store, run_child, store_path
from .pgsupport import PgSchema, pg_schema  # noqa: F401 - the fixture

SESSION = "s1"
Exit = Literal["normally", "raise", "cancel", "cancel-twice"]


class Boom(Exception):
    """The exception a block raises."""


@dataclass
class Backend:
    """One kind of store over storage that outlives its instances."""

    kind: str
    root: Path
    pg: PgSchema | None = None
    memory: MemoryStore | None = None

    def store(self) -> SessionStore:
        if self.kind == "memory":
            if self.memory is None:
                self.memory = MemoryStore()
            return self.memory
        if self.pg is not None:
            return self.pg.store()
        return make_store(self.kind, self.root)

    def child_spec(self) -> tuple[str, str] | None:
        """How a child process names the storage (none for memory)."""
        if self.pg is not None:
            return ("postgres", f"{self.pg.schema}:{self.pg.dsn}")
        if self.kind == "memory":
            return None
        return (self.kind, str(store_path(self.kind, self.root)))

    def lock_files(self) -> list[str]:
        """SQLite's per-session lock files (the JSONL store locks the
        session file itself; memory and PostgreSQL have none)."""
        if self.kind != "sqlite":
            return []
        path = store_path(self.kind, self.root)
        return sorted(p.name for p in path.with_name(path.name + ".locks").glob("*"))

    def lease_owner(self) -> object:
        assert self.pg is not None
        return self.pg.query("SELECT lease_owner FROM {s}.sessions WHERE id = %s", (SESSION,))[0][0]


@pytest.fixture(params=["memory", "jsonl", "sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    kind = str(request.param)
    pg = request.getfixturevalue("pg_schema") if kind == "postgres" else None
    return Backend(kind, tmp_path / "data", pg)


def descriptors() -> dict[int, str]:
    """This process's open descriptors and what each names."""
    found = {}
    for entry in Path("/proc/self/fd").iterdir():
        try:
            found[int(entry.name)] = str(entry.readlink())
        except FileNotFoundError:  # the listing's own descriptor, gone
            continue
    return found


def our_tasks() -> set[asyncio.Task[object]]:
    return asyncio.all_tasks() - {asyncio.current_task()}


@dataclass
class Gated:
    """Holds the host's close until ``release`` (set by default)."""

    closing: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)


class Agent(ReferenceHost):
    """A reference host whose turns answer at once; its close can be held."""

    def __init__(self, session: Session, gate: Gated, record: list[str]) -> None:
        async def model(turn: TurnInput) -> str:
            return f"turn {turn.n}"

        super().__init__(session.log, model, session.clock)
        self._session = session
        self._gate = gate
        self._record = record

    async def drain(self, timeout_s: float = 10.0) -> None:
        self._record.append(f"host drained (runtime {self._session.phase.value})")
        await super().drain(timeout_s)

    async def close(self, *, grace_s: float = 10.0) -> None:
        self._record.append(f"host closed (runtime {self._session.phase.value})")
        self._gate.closing.set()
        await self._gate.release.wait()
        await super().close(grace_s=grace_s)


async def leave(store: SessionStore, how: Exit, record: list[str] | None = None) -> None:
    """Open the session, use it (a turn, a reminder armed an hour out) and
    leave the block as ``how`` says."""
    gate = Gated()
    if how != "cancel-twice":
        gate.release.set()
    inside = asyncio.Event()
    notes = record if record is not None else []

    async def block() -> None:
        async with open_session(
            store, SESSION, host=lambda session: Agent(session, gate, notes)
        ) as session:
            await session.schedule("later", after=timedelta(hours=1))
            await session.host.send("hello")
            await session.host.when_idle()
            inside.set()
            if how == "raise":
                raise Boom("inside the block")
            if how != "normally":
                await asyncio.Event().wait()

    task = asyncio.ensure_future(block())
    await asyncio.wait_for(inside.wait(), 30)
    if how in ("cancel", "cancel-twice"):
        task.cancel()
    if how == "cancel-twice":
        await asyncio.wait_for(gate.closing.wait(), 30)  # the teardown is under way
        task.cancel()
        await settle()
        assert not task.done()  # the teardown goes on
        gate.release.set()
    if how == "raise":
        with pytest.raises(Boom):
            await task
    elif how == "normally":
        await task
    else:
        with pytest.raises(asyncio.CancelledError):
            await task


@pytest.mark.parametrize("how", ["normally", "raise", "cancel", "cancel-twice"])
async def test_leaving_the_block_leaves_nothing_behind(backend: Backend, how: Exit) -> None:
    tasks, fds = our_tasks(), descriptors()
    store = backend.store()
    try:
        await leave(store, how)
        assert backend.lock_files() == []
        if backend.pg is not None:
            assert backend.lease_owner() is None
        spec = backend.child_spec()
        if spec is not None:  # another process can take the session
            assert run_child("try-open", *spec, SESSION).split() == ["opened"]
        # And this process can, with what the session wrote kept.
        async with open_session(
            store, SESSION, host=lambda session: Agent(session, Gated(), [])
        ) as again:
            again.host._gate.release.set()
            assert [r.prompt for r in await again.reminders()] == ["later"]
    finally:
        await store.close()
    assert our_tasks() == tasks
    assert descriptors() == fds


@pytest.mark.parametrize("how", ["normally", "raise", "cancel", "cancel-twice"])
async def test_the_teardown_runs_in_one_order(how: Exit) -> None:
    record: list[str] = []
    store = RecordingStore(record)
    await leave(store, how, record)
    assert [line for line in record if line != "flush"][-4:] == [
        # The turns end while the runtime still answers their tool calls.
        "host drained (runtime running)",
        "host closed (runtime stopped)",
        "snapshot",
        "log closed",
    ]


async def test_a_session_that_does_not_load_saves_no_snapshot() -> None:
    store = MemoryStore()
    async with open_session(store, SESSION, host=lambda s: Agent(s, released(), [])) as session:
        await session.schedule("kept", after=timedelta(hours=1))
    log = await store.open(SESSION, created_at=1)
    snapshot = log.load_snapshot()
    assert snapshot is not None
    await log.close()
    failing = UnreadableLog(await store.open(SESSION, created_at=1))
    marked: list[Exception] = []
    with pytest.raises(StoreError, match="the database went away"):
        async with open_log_session(failing, host=lambda s: Quiet(), on_start_error=marked.append):
            raise AssertionError("the block never runs")
    assert [str(e) for e in marked] == ["the database went away"]
    assert failing.closed
    assert failing.inner.load_snapshot() == snapshot  # no snapshot of an empty state
    async with open_session(store, SESSION, host=lambda s: Agent(s, released(), [])) as session:
        assert [r.prompt for r in await session.reminders()] == ["kept"]


async def test_a_task_cancelled_while_the_session_loads_waits_for_the_load() -> None:
    store = MemoryStore()
    record: list[str] = []
    held = HeldLog(await store.open(SESSION, created_at=1), record)
    task = asyncio.ensure_future(enter(held))
    await asyncio.to_thread(held.reading.wait, 30)  # the load is in its thread
    task.cancel()
    await settle()
    assert record == []  # the log stays open while the thread reads it
    held.go_on.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert record == ["loaded", "log closed"]


async def enter(log: SessionLog) -> None:
    async with open_log_session(log, host=lambda s: Quiet()):
        raise AssertionError("the block never runs: the task is cancelled first")


def released() -> Gated:
    gate = Gated()
    gate.release.set()
    return gate


class Quiet:
    """A host that takes no turn and reads nothing of the log."""

    def claim_idle(self) -> IdleClaim | None:
        return None

    async def when_idle(self) -> None:
        await asyncio.Event().wait()

    async def followup(self, message: FollowUp) -> None:
        raise AssertionError(f"nothing is due, yet {message.key} came")


class LogProxy:
    """A ``SessionLog`` passing every call to a memory log."""

    def __init__(self, inner: MemoryLog) -> None:
        self.inner = inner

    @property
    def header(self) -> SessionHeader:
        return self.inner.header

    @property
    def length(self) -> int:
        return self.inner.length

    def events(self, start: int = 0) -> Iterator[SessionEvent]:
        return self.inner.events(start)

    def append(self, batch: Sequence[NewEvent]) -> tuple[SessionEvent, ...]:
        return self.inner.append(batch)

    async def flush(self) -> None:
        await self.inner.flush()

    def load_snapshot(self) -> Snapshot | None:
        return self.inner.load_snapshot()

    async def save_snapshot(self, snapshot: Snapshot) -> None:
        await self.inner.save_snapshot(snapshot)

    async def close(self) -> None:
        await self.inner.close()


class RecordingLog(LogProxy):
    def __init__(self, inner: MemoryLog, record: list[str]) -> None:
        super().__init__(inner)
        self.record = record

    async def flush(self) -> None:
        self.record.append("flush")
        await super().flush()

    async def save_snapshot(self, snapshot: Snapshot) -> None:
        self.record.append("snapshot")
        await super().save_snapshot(snapshot)

    async def close(self) -> None:
        self.record.append("log closed")
        await super().close()


class RecordingStore:
    def __init__(self, record: list[str]) -> None:
        self.inner = MemoryStore()
        self.record = record

    async def open(self, session_id: str, *, created_at: int) -> RecordingLog:
        return RecordingLog(await self.inner.open(session_id, created_at=created_at), self.record)

    def session_ids(self) -> list[str]:
        return self.inner.session_ids()

    async def close(self) -> None:
        await self.inner.close()


class UnreadableLog(LogProxy):
    """Its events cannot be read (a database gone away mid-load); no
    snapshot is usable, so the load reads them."""

    closed = False

    def events(self, start: int = 0) -> Iterator[SessionEvent]:
        raise StoreError("the database went away")

    def load_snapshot(self) -> Snapshot | None:
        return None

    async def close(self) -> None:
        self.closed = True
        await super().close()


class HeldLog(LogProxy):
    """Its load (in the runtime's thread) waits until ``go_on``."""

    def __init__(self, inner: MemoryLog, record: list[str]) -> None:
        super().__init__(inner)
        self.record = record
        self.reading = threading.Event()
        self.go_on = threading.Event()

    def events(self, start: int = 0) -> Iterator[SessionEvent]:
        self.reading.set()
        assert self.go_on.wait(30)
        events = list(super().events(start))
        self.record.append("loaded")
        return iter(events)

    async def close(self) -> None:
        self.record.append("log closed")
        await super().close()
