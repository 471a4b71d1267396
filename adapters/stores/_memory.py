"""An in-memory store: for tests, demos and ephemeral sessions.

Nothing survives the process; ``flush`` succeeds at once (there is nothing
to make durable), so an ephemeral session never answers
``persistence_uncertain`` (unlike the reference without a flush listener).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import msgspec

from tickler.adapters.stores._lines import refuse_packed
from tickler.core import SessionEvent, SessionHeader, event, is_json
from tickler.shell import NewEvent, SessionLocked, Snapshot, StoreError, validate_session_id


class MemoryLog:
    def __init__(self, header: SessionHeader, store: MemoryStore | None = None) -> None:
        self._header = header
        self._events: list[SessionEvent] = []
        self._snapshot: Snapshot | None = None
        self._store = store
        self.closed = False

    @property
    def header(self) -> SessionHeader:
        return self._header

    @property
    def length(self) -> int:
        return len(self._events)

    def events(self, start: int = 0) -> Iterator[SessionEvent]:
        return iter(self._events[start:])

    def append(self, batch: Sequence[NewEvent]) -> tuple[SessionEvent, ...]:
        if self.closed:
            raise StoreError(f"session {self._header.id!r} is closed")
        for item in batch:
            _check(item)
        first = len(self._events)
        added = tuple(
            event(item.type, first + offset, item.time, item.data)
            for offset, item in enumerate(batch)
        )
        self._events.extend(added)
        return added

    async def flush(self) -> None:
        return None

    def load_snapshot(self) -> Snapshot | None:
        return self._snapshot

    async def save_snapshot(self, snapshot: Snapshot) -> None:
        if not 0 <= snapshot.through <= len(self._events):
            raise StoreError(f"a snapshot through {snapshot.through} is beyond the log")
        self._snapshot = snapshot

    async def close(self) -> None:
        if not self.closed and self._store is not None:
            self._store.release(self._header.id)
        self.closed = True


def _check(item: NewEvent) -> None:
    """What a durable store would refuse: an event that would not read back
    as one JSONL line (a packed chunk row's type included)."""
    refuse_packed(item.type)
    if item.time < 0 or b"\n" in item.data:
        raise ValueError(f"event {item.type!r} would not read back as one line")
    try:
        msgspec.json.decode(item.data)
    except (msgspec.DecodeError, RecursionError):
        # msgspec refuses a lone surrogate's escape (JavaScript reads it, and
        # so do the durable stores) and reads only so deep: the core's reader.
        if not is_json(item.data):
            raise ValueError(f"event {item.type!r} would not read back: data is not JSON") from None


class MemoryStore:
    """Sessions kept in this process; one open writer per session."""

    def __init__(self) -> None:
        self._logs: dict[str, MemoryLog] = {}
        self._open: set[str] = set()

    async def open(self, session_id: str, *, created_at: int) -> MemoryLog:
        validate_session_id(session_id)
        if session_id in self._open:
            raise SessionLocked(f"session {session_id!r} is already open for writing")
        log = self._logs.get(session_id)
        if log is None:
            log = MemoryLog(SessionHeader(id=session_id, created_at=created_at), self)
            self._logs[session_id] = log
        log.closed = False
        self._open.add(session_id)
        return log

    def release(self, session_id: str) -> None:
        self._open.discard(session_id)

    def session_ids(self) -> list[str]:
        return sorted(self._logs)

    async def close(self) -> None:
        for session_id in list(self._open):
            await self._logs[session_id].close()
