"""Stores written as a user of tickler would write one: from the public
ports (``tickler.shell``) and the public event types (``tickler.core``)
only, never a private tickler module. test_third_party_store.py runs the
store contract (``tickler.testing``) on them.

- :class:`DictStore`: sessions in a dict of this process (like memory);
- :class:`FileDictStore`: each session's dict kept as one JSON document in
  a directory, rewritten whole by every flush (temp file, fsync, rename);
  one writer per session through an exclusive ``flock`` on ``ID.lock``, so
  a second store, in this process or another, is locked out.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import msgspec

from tickler.core import SessionEvent, SessionHeader
from tickler.shell import NewEvent, SessionLocked, Snapshot, StoreError, validate_session_id


def check(item: NewEvent) -> None:
    """Refuse an event that would not read back: one line of JSON, time >= 0."""
    if item.time < 0 or b"\n" in item.data:
        raise ValueError(f"event {item.type!r} would not read back as one line")
    try:
        json.loads(item.data.decode())
    except ValueError:
        raise ValueError(f"event {item.type!r} would not read back: data is not JSON") from None


class DictLog:
    """One session: its header, events and snapshot, held in this object.
    ``persist`` (if any) is called with the log by ``flush``; ``release``
    by the first ``close``."""

    def __init__(
        self,
        header: SessionHeader,
        events: list[SessionEvent],
        snapshot: Snapshot | None,
        *,
        persist: Callable[[DictLog], None] | None = None,
        release: Callable[[], None] = lambda: None,
    ) -> None:
        self._header = header
        self.stored = events
        self.snapshot = snapshot
        self._persist = persist
        self._release = release
        self.closed = False

    @property
    def header(self) -> SessionHeader:
        return self._header

    @property
    def length(self) -> int:
        return len(self.stored)

    def events(self, start: int = 0) -> Iterator[SessionEvent]:
        return iter(self.stored[start:])

    def append(self, batch: Sequence[NewEvent]) -> tuple[SessionEvent, ...]:
        if self.closed:
            raise StoreError(f"session {self._header.id!r} is closed")
        for item in batch:  # all checked before any is added: atomic
            check(item)
        first = len(self.stored)
        added = tuple(
            SessionEvent(type=item.type, seq=first + n, time=item.time, data=msgspec.Raw(item.data))
            for n, item in enumerate(batch)
        )
        self.stored.extend(added)
        return added

    async def flush(self) -> None:
        if self._persist is not None and not self.closed:
            self._persist(self)

    def load_snapshot(self) -> Snapshot | None:
        return self.snapshot

    async def save_snapshot(self, snapshot: Snapshot) -> None:
        if not 0 <= snapshot.through <= len(self.stored):
            raise StoreError(f"a snapshot through {snapshot.through} is beyond the log")
        self.snapshot = snapshot
        await self.flush()

    async def close(self) -> None:
        if not self.closed:
            await self.flush()
            self.closed = True
            self._release()


class DictStore:
    """Sessions kept in a dict of this process; one open writer each."""

    def __init__(self) -> None:
        self.logs: dict[str, DictLog] = {}

    async def open(self, session_id: str, *, created_at: int) -> DictLog:
        validate_session_id(session_id)
        old = self.logs.get(session_id)
        if old is None:
            log = DictLog(SessionHeader(id=session_id, created_at=created_at), [], None)
        elif not old.closed:
            raise SessionLocked(f"session {session_id!r} is already open for writing")
        else:
            log = DictLog(old.header, old.stored, old.snapshot)
        self.logs[session_id] = log
        return log

    def session_ids(self) -> list[str]:
        return sorted(self.logs)

    async def close(self) -> None:
        for log in self.logs.values():
            await log.close()


def to_document(log: DictLog) -> dict[str, object]:
    """A session as JSON: every bytes value in base64."""
    return {
        "id": log.header.id,
        "createdAt": log.header.created_at,
        "events": [
            [item.type, item.time, base64.b64encode(bytes(item.data)).decode()]
            for item in log.stored
        ],
        "snapshot": None
        if log.snapshot is None
        else [log.snapshot.through, base64.b64encode(log.snapshot.data).decode()],
    }


def from_document(document: dict[str, object]) -> DictLog:
    events = document["events"]
    snapshot = document["snapshot"]
    assert isinstance(events, list)
    assert snapshot is None or isinstance(snapshot, list)
    header = SessionHeader(id=str(document["id"]), created_at=int(str(document["createdAt"])))
    stored = [
        SessionEvent(type=type_, seq=seq, time=time, data=msgspec.Raw(base64.b64decode(data)))
        for seq, (type_, time, data) in enumerate(events)
    ]
    kept = None if snapshot is None else Snapshot(snapshot[0], base64.b64decode(snapshot[1]))
    return DictLog(header, stored, kept)


class FileDictStore:
    """Sessions as JSON documents in ``directory`` (see the module)."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)
        self.logs: list[DictLog] = []

    def path(self, session_id: str, suffix: str) -> Path:
        return self.directory / f"{session_id}{suffix}"

    async def open(self, session_id: str, *, created_at: int) -> DictLog:
        validate_session_id(session_id)
        lock = self.lock_file(session_id)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(lock)
            raise SessionLocked(f"session {session_id!r} has another writer") from None
        try:
            log = self.load(session_id, created_at, release=lambda: os.close(lock))
        except BaseException:
            os.close(lock)
            raise
        self.logs.append(log)
        return log

    def lock_file(self, session_id: str) -> int:
        self.directory.mkdir(parents=True, exist_ok=True)
        return os.open(self.path(session_id, ".lock"), os.O_RDWR | os.O_CREAT, 0o644)

    def load(self, session_id: str, created_at: int, release: Callable[[], None]) -> DictLog:
        document = self.path(session_id, ".json")
        if document.exists():
            loaded = from_document(json.loads(document.read_bytes()))
        else:
            loaded = DictLog(SessionHeader(id=session_id, created_at=created_at), [], None)
        log = DictLog(
            loaded.header, loaded.stored, loaded.snapshot, persist=self.write, release=release
        )
        self.write(log)  # a new session exists from its open on
        return log

    def write(self, log: DictLog) -> None:
        """Replace the session's document with ``log``, durably."""
        target = self.path(log.header.id, ".json")
        temporary = self.path(log.header.id, ".json.tmp")
        with temporary.open("wb") as file:
            file.write(json.dumps(to_document(log)).encode())
            file.flush()
            os.fsync(file.fileno())
        temporary.replace(target)
        directory = os.open(self.directory, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)

    def session_ids(self) -> list[str]:
        if not self.directory.exists():
            return []
        return sorted(path.name.removesuffix(".json") for path in self.directory.glob("*.json"))

    async def close(self) -> None:
        for log in self.logs:
            await log.close()
        self.logs.clear()


# -- the backends: how the contract reaches each store's storage ------------


class DictBackend:
    """A :class:`DictStore` is its own storage."""

    def __init__(self, store: DictStore | None = None) -> None:
        self.store = DictStore() if store is None else store

    async def open_store(self) -> DictStore:
        return self.store

    async def footprint(self) -> object:
        return {key: (log.header, len(log.stored)) for key, log in self.store.logs.items()}


class FileDictBackend:
    """A directory (``root / "data"``): each ``open_store`` is a new store."""

    def __init__(self, root: Path, opener: Callable[[Path], FileDictStore] = FileDictStore) -> None:
        self.root = root
        self.opener = opener

    async def open_store(self) -> FileDictStore:
        return self.opener(self.root / "data")

    async def footprint(self) -> object:
        """Every path under the root, so a stray file beside the data counts too."""
        return sorted(str(path.relative_to(self.root)) for path in self.root.rglob("*"))

    def child_spec(self) -> tuple[str, str]:
        """The store class by its file (its module may not be importable by
        name in another process): the same storage, opened there."""
        return (f"{__file__}:FileDictStore", str(self.root / "data"))
