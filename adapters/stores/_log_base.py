"""What the durable stores' session logs (JSONL, SQLite, PostgreSQL) share:
the header, the refusal of a closed log, a snapshot's bounds and a close
that runs once (:class:`StoreLog`); and for the two databases, events kept
as ``committed`` ones in the database plus ``pending`` ones not yet
committed, read back page by page (:class:`PendingLog`)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence

from tickler.adapters.stores._lines import encode_batch
from tickler.core import SessionEvent, SessionHeader
from tickler.shell import NewEvent, Snapshot, StoreError


class StoreLog(ABC):
    """The base of a durable store's :class:`~tickler.shell.SessionLog`."""

    _header: SessionHeader
    _closed: bool

    @property
    def header(self) -> SessionHeader:
        return self._header

    @property
    @abstractmethod
    def length(self) -> int:
        """The number of events in the log, appended ones included."""

    async def close(self) -> None:
        """Let the session go, once: a second close does nothing."""
        if self._closed:
            return
        self._closed = True
        await self._close()

    @abstractmethod
    async def _close(self) -> None:
        """The store's own close, run by the first :meth:`close`."""

    def _check_writable(self) -> None:
        if self._closed:
            raise StoreError(f"session {self._header.id!r} is closed")

    def _check_through(self, snapshot: Snapshot) -> None:
        """A snapshot covers events the log holds, and no more."""
        if not 0 <= snapshot.through <= self.length:
            raise StoreError(f"a snapshot through {snapshot.through} is beyond {self.length}")


class PendingLog(StoreLog):
    """A database store's log: ``committed`` events in the database, then
    ``pending`` ones appended and not committed yet (a commit round writes
    them), and the latest snapshot saved."""

    committed: int
    pending: list[SessionEvent]
    _snapshot: Snapshot | None

    @property
    def length(self) -> int:
        return self.committed + len(self.pending)

    def append(self, batch: Sequence[NewEvent]) -> tuple[SessionEvent, ...]:
        self._check_writable()
        added, _ = encode_batch(self.length, batch)  # refuses what would not read back
        self.pending.extend(added)
        return added

    def load_snapshot(self) -> Snapshot | None:
        snapshot = self._snapshot
        return snapshot if snapshot is not None and snapshot.through <= self.length else None


def read_pages(
    start: int,
    end: int,
    page: Callable[[int, int], Sequence[SessionEvent]],
    missing: Callable[[int], StoreError],
) -> Iterator[SessionEvent]:
    """Events ``start`` .. ``end`` - 1 from the database, a ``page`` (of
    events from ``start`` before ``end``) at a time; an empty page means
    event ``start`` is missing, reported as ``missing(start)``."""
    while start < end:
        found = page(start, end)
        if not found:
            raise missing(start)
        yield from found
        start = found[-1].seq + 1
