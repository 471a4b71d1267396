"""The wake index's part of an embedded store's log (JSONL, SQLite): the
session's next wake and failure count while it is held, and what its close
writes to the index (see :mod:`~tickler.adapters.stores._wakes`)."""

from __future__ import annotations

from typing import Final

from tickler.adapters.stores._wakes import Held

_UNKNOWN: Final[tuple[bool, int | None]] = (False, None)


class HeldWake:
    """Mixed into a log: :class:`~tickler.shell._ports.WakeIndex`,
    :class:`~tickler.shell._ports.FailureIndex` (the failed hand-overs of
    the outbox's first follow-up, kept in the index row as PostgreSQL keeps
    them in the session row: the log records the 1st, 2nd, 4th ...) and
    the worker's part (``defer``, ``delivered_all``, ``failures``)."""

    holder: str
    wake: int | None
    wake_known: bool
    failures: int
    failures_to_write: int
    wake_dirty: bool
    _opened_length: int
    _recorded: tuple[bool, int | None]

    def _hold(self, holder: str, held: Held, length: int, size: int | None = None) -> None:
        self.holder = holder  # the handle that holds the session until close
        self.wake = held.next_due_at  # the runtime's latest; exact at close
        # Released with its wake, and the log the same size since: that wake
        # is the session's (see recorded_wake). One attribute, not two: an
        # open session's instance dict stays small (shared keys).
        exact = size is not None and held.released_size == size
        self._recorded = (True, held.next_due_at) if exact else _UNKNOWN
        self.wake_known = False  # set_next_wake was called since the open
        self.failures = held.failures  # failed hand-overs of the outbox head, as found
        self.failures_to_write = held.failures
        self.wake_dirty = False  # changed since the index last heard of it
        self._opened_length = length

    def _wake_changed(self) -> None:
        """The store's cue that the row should be written (now and then, or
        with the next commit)."""

    def set_next_wake(self, at: int | None) -> None:
        """The session's next wake, computed by the runtime with the core."""
        self.wake = at
        self.wake_known = True
        self.wake_dirty = True
        self._wake_changed()

    @property
    def handover_failures(self) -> int:
        return self.failures_to_write

    def set_handover_failures(self, count: int) -> None:
        if count != self.failures_to_write:
            self.failures_to_write = count
            self.wake_dirty = True
            self._wake_changed()

    def defer(self, until: int) -> None:
        """A worker could not hand a follow-up over: count the failure (once:
        the runtime may have counted it already) and look again at ``until``."""
        self.failures_to_write = max(self.failures_to_write, self.failures + 1)
        self.wake = until if self.wake is None else max(self.wake, until)
        self.wake_known = True
        self.wake_dirty = True
        self._wake_changed()

    def delivered_all(self) -> None:
        """Every follow-up was taken: the failure count starts again."""
        self.set_handover_failures(0)

    def recorded_wake(self) -> tuple[bool, int | None]:
        """The session's next wake as the index held it when this handle
        opened the session, when it still belongs to the log: its last
        holder closed it with its log durable and wrote its wake (the core's,
        or a worker's back-off after a failed hand-over), and the log is the
        size it was then (nothing changed it behind the index). ``(False,
        None)`` otherwise. (A row of a session to look at again holds an
        instant long past.) The runtime decides again once loaded."""
        return self._recorded

    def exact_wake(self, length: int) -> tuple[bool, int | None]:
        """Whether the wake is known at close (the log holding ``length``
        events), and what it is: what the runtime said, or the row's own
        wake when nothing was appended."""
        if self.wake_known or length == self._opened_length:
            return True, self.wake
        return False, None
