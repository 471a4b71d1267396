"""Third-party stores each broken in one way, which the store contract must
catch (test_third_party_store.py runs it on them in a project of their
own: a contract that passes a broken store proves nothing)."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from tickler.core import SessionEvent
from tickler.shell import NewEvent, SessionLocked, StoreError

from .third_party_store import DictLog, DictStore, FileDictStore, check


class TornLog(DictLog):
    """Checks and adds the events of a batch one by one: a bad event in
    the middle leaves the ones before it appended."""

    def append(self, batch: Sequence[NewEvent]) -> tuple[SessionEvent, ...]:
        if self.closed:
            raise StoreError(f"session {self.header.id!r} is closed")
        added = []
        for item in batch:
            check(item)
            seq = len(self.stored)
            self.stored.append(
                SessionEvent(type=item.type, seq=seq, time=item.time, data=msgspec.Raw(item.data))
            )
            added.append(self.stored[-1])
        return tuple(added)


class TornDictStore(DictStore):
    """A :class:`DictStore` whose appends are not atomic."""

    async def open(self, session_id: str, *, created_at: int) -> DictLog:
        log = await super().open(session_id, created_at=created_at)
        self.logs[session_id] = TornLog(log.header, log.stored, log.snapshot)
        return self.logs[session_id]


class ForgetfulFileDictStore(FileDictStore):
    """Every flush writes all but the newest event."""

    def write(self, log: DictLog) -> None:
        super().write(DictLog(log.header, log.stored[:-1], log.snapshot))


_HELD: set[tuple[str, str]] = set()


class ProcessLockFileDictStore(FileDictStore):
    """One writer per session in this process only (a set, not a file
    lock): another process opens a held session."""

    async def open(self, session_id: str, *, created_at: int) -> DictLog:
        key = (str(self.directory), session_id)
        if key in _HELD:
            raise SessionLocked(f"session {session_id!r} has another writer")
        log = await super().open(session_id, created_at=created_at)
        await log.close()  # drop the file lock; the set holds the session
        reopened = self.load(session_id, created_at, release=lambda: _HELD.discard(key))
        _HELD.add(key)
        self.logs.append(reopened)
        return reopened
