"""The ports every store and agent framework plugs into.

``tickler.shell`` depends only on these protocols; ``tickler.adapters``
implements them (memory, JSONL, SQLite stores; framework hosts).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple, Protocol, runtime_checkable

from tickler.core import SessionEvent, SessionHeader


class NewEvent(NamedTuple):
    """An event to append: the log assigns its ``seq``."""

    type: str
    data: bytes  # the event's ``data`` as JSON text
    time: int  # epoch ms, from the runtime's clock


class Snapshot(NamedTuple):
    """An opaque checkpoint of derived state, valid through event ``through``
    (exclusive: the events ``[0, through)`` are folded into ``data``)."""

    through: int
    data: bytes


class StoreError(Exception):
    """A store could not do what was asked (I/O failure, lock held, bad id)."""


class SessionLocked(StoreError):
    """Another process (or another open handle) writes this session."""


class InvalidSessionId(StoreError, ValueError):
    """A session id that could escape or confuse the store's namespace."""


@runtime_checkable
class SessionLog(Protocol):
    """One session's append-only event log, held by one writer.

    * ``append`` is atomic and ordered: all events of a batch get contiguous
      ``seq`` values and become readable together, or it raises and nothing
      was appended. Appended events are not yet durable.
    * ``flush`` is the durability barrier: when it returns, everything
      appended before the call survives a crash (kill -9, and power loss
      where the store promises it). It raises on failure; the appended events
      are kept and a later ``flush`` retries them.
    """

    @property
    def header(self) -> SessionHeader: ...

    @property
    def length(self) -> int:
        """Number of events appended so far (durable or not)."""
        ...

    def events(self, start: int = 0) -> Iterator[SessionEvent]:
        """The events from ``seq == start`` on, in order."""
        ...

    def append(self, batch: Sequence[NewEvent]) -> tuple[SessionEvent, ...]:
        """Add ``batch`` at the end, atomically. Synchronous: no store
        suspends here (writing is :meth:`flush`'s job), so an append cannot
        be cut half-way by a cancelled caller, and the log and the
        runtime's state never part."""
        ...

    async def flush(self) -> None: ...

    def load_snapshot(self) -> Snapshot | None:
        """The latest saved snapshot, or None."""
        ...

    async def save_snapshot(self, snapshot: Snapshot) -> None:
        """Keep ``snapshot`` for a faster reopen (best effort, never required)."""
        ...

    async def close(self) -> None:
        """Flush what can be flushed and release the writer lock; idempotent."""
        ...


@runtime_checkable
class WakeIndex(Protocol):
    """A log that keeps a wake index, so processes that do not hold the
    session can find it when it falls due (the PostgreSQL store).

    The runtime calls ``set_next_wake`` after every change to the schedule
    or the outbox, with the instant computed by the core (the earliest
    target; the current time while a follow-up waits in the outbox; None
    when nothing is pending). The store writes it with the next flush, in
    the same transaction as the events, so the index never disagrees with a
    committed log."""

    def set_next_wake(self, at: int | None) -> None: ...


@runtime_checkable
class RecordedWake(Protocol):
    """A log whose store kept the session's next wake when it was last
    closed (the JSONL store's wake index), so that a runtime arms its timer
    before it replays the log, as it does from a snapshot's first bytes.

    ``recorded_wake`` answers as the log was found at its open: ``(True,
    wake)`` when the wake its last close wrote still belongs to the log as
    it stands (``wake`` None: nothing pending), else ``(False, None)``.
    Only a cache, as a snapshot's hint is: it may be a worker's later
    back-off, or an instant long past; once the session has loaded, the
    runtime decides again (a start always looks for due work then)."""

    def recorded_wake(self) -> tuple[bool, int | None]: ...


@runtime_checkable
class LeasedLog(Protocol):
    """A log held under a lease that can end while its holder still runs
    (the PostgreSQL store): a process that stalls past it may find that
    another took the session over meanwhile.

    The runtime asks before every hand-over, and starts none the lease
    cannot cover: the appends of a holder that lost its lease are refused by
    the store, but a hand-over reaches the host whatever the store says."""

    @property
    def lost(self) -> str | None:
        """Why this handle no longer holds the session (taken over), or None."""
        ...

    def lease_left(self) -> float:
        """Seconds the lease is sure to last without another renewal (0 or
        less once it may have ended)."""
        ...


@runtime_checkable
class FailureIndex(Protocol):
    """A log that keeps, beside its events, how many hand-overs of its first
    pending follow-up failed in a row (the PostgreSQL store: the session's
    row), so the count goes on across the processes that hold the session
    in turn. The log itself records only the 1st, 2nd, 4th, 8th... failure.

    The runtime sets it after every failed hand-over and to 0 after a
    successful one; the store writes it with the next flush."""

    @property
    def handover_failures(self) -> int: ...

    def set_handover_failures(self, count: int) -> None: ...


@runtime_checkable
class SessionStore(Protocol):
    """A namespace of session logs (a directory, a database)."""

    async def open(self, session_id: str, *, created_at: int) -> SessionLog:
        """Open (creating when absent, with ``created_at`` in its header) the
        session for writing. Raises :class:`SessionLocked` when another
        writer holds it and :class:`InvalidSessionId` for a bad id."""
        ...

    def session_ids(self) -> list[str]: ...

    async def close(self) -> None: ...


_SESSION_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
MAX_SESSION_ID_LENGTH = 200


def is_valid_session_id(session_id: object) -> bool:
    """Whether :func:`validate_session_id` accepts ``session_id``."""
    try:
        validate_session_id(session_id)
    except InvalidSessionId:
        return False
    return True


def validate_session_id(session_id: object) -> str:
    """A session id every store accepts: 1-200 of ``[A-Za-z0-9._-]``, not
    starting with a dot (so never ``.``/``..``, never hidden or a path)."""
    if (
        not isinstance(session_id, str)
        or not 0 < len(session_id) <= MAX_SESSION_ID_LENGTH
        or session_id[0] == "."
        or not set(session_id) <= _SESSION_ID_CHARS
    ):
        raise InvalidSessionId(
            f"invalid session id {session_id!r}: use 1-{MAX_SESSION_ID_LENGTH} of "
            "A-Z a-z 0-9 . _ - , not starting with a dot"
        )
    return session_id
