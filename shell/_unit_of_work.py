"""The unit of work of one session: one tool call, start to end.

A tool call takes the session's FIFO (the lock every transaction and every
delivery check takes, served in order), flushes what earlier work appended
(the barrier before a read), decides with the core's rules, appends the
changes atomically and follows them in the state only when the append
succeeded, re-arms the session's timer, and flushes again (the barrier
after a write) before it answers. The session's state, phase and fault
live here, and so do the commit and the flush barrier the deliverer uses
as well. What should be delivered, and when to try again after a failed
barrier, is the deliverer's (:class:`Driver`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Final, Protocol

from returns.result import Failure

from tickler.core import (
    CORRUPT_LOG,
    EMPTY_STATE,
    INTERNAL_ERROR,
    SCHEDULE_CHANGE,
    CorruptScheduleLog,
    Created,
    DeleteSchedule,
    ListSchedules,
    Operation,
    Profile,
    ScheduleChange,
    State,
    ToolCommand,
    UpdateSchedule,
    decide,
    encode_change,
    persistence_uncertain,
)
from tickler.shell._clock import Clock
from tickler.shell._host import SessionClosed
from tickler.shell._loading import Loaded, load_session, next_wake, snapshot_of, usable, wake_hint
from tickler.shell._observer import NO_OBSERVER, RuntimeObserver, ToolResult
from tickler.shell._phase import Phase
from tickler.shell._ports import LeasedLog, NewEvent, RecordedWake, SessionLog, Snapshot, WakeIndex
from tickler.shell._retry import Outage
from tickler.shell._timers import TimerHeap

logger = logging.getLogger("tickler.runtime")

_OPERATIONS: Final[dict[type, Operation]] = {
    ListSchedules: "list",
    DeleteSchedule: "delete",
    UpdateSchedule: "update",
}


class Driver(Protocol):
    """Who delivers what the unit of work made due (the deliverer)."""

    def request_drive(self) -> None:
        """Look for due work now."""

    def retry_later(self) -> None:
        """Look again after a backoff (a flush or an append failed)."""


class _NoDriver:
    def request_drive(self) -> None:
        return None

    def retry_later(self) -> None:
        return None


class UnitOfWork:
    """One session's state, and one transaction at a time on it."""

    def __init__(
        self,
        log: SessionLog,
        clock: Clock,
        profile: Profile,
        *,
        timers: TimerHeap | None = None,
        on_fault: Callable[[CorruptScheduleLog], None] | None = None,
        observer: RuntimeObserver = NO_OBSERVER,
    ) -> None:
        self.log = log
        self.clock = clock
        self.profile: Profile = profile
        self.timers = timers  # the process's heap when None at start
        self.lock = asyncio.Lock()  # the session's FIFO: waiters are served in order
        self.phase = Phase.NEW
        self.loaded = Loaded(EMPTY_STATE)  # replaced by load()
        self.ready = False  # the session loaded: its state may be snapshotted
        self.fault: CorruptScheduleLog | None = None
        self.driver: Driver = _NoDriver()  # the deliverer, once connected
        self._on_fault = on_fault
        self._observer = observer
        self._wake_index = log.set_next_wake if isinstance(log, WakeIndex) else None
        self._lease = log if isinstance(log, LeasedLog) else None
        self._flush_outage = Outage(logger, "schedule: flushing the session log")
        self._append_outage = Outage(logger, "schedule: appending to the session log")

    # Methods, not attributes: the phase moves while a coroutine awaits, and a
    # type checker narrows attributes as if it could not.
    def is_stopping(self) -> bool:
        return self.phase in (Phase.STOPPING, Phase.STOPPED)

    def is_running(self) -> bool:
        return self.phase is Phase.RUNNING

    def current(self) -> Loaded:
        if self.phase is Phase.NEW:
            raise RuntimeError("ScheduleRuntime.start() has not been awaited")
        return self.loaded

    async def load(self) -> None:
        """Under the FIFO: load the session (snapshot, then the log after
        it), arming the timer from the snapshot's hint first."""
        # Armed from the wake the store kept at the last close, else from
        # the snapshot's first bytes; the state loads next, off the event
        # loop, so other sessions keep running meanwhile.
        known, hint = (
            self.log.recorded_wake() if isinstance(self.log, RecordedWake) else (False, None)
        )
        if hint is not None:
            self.arm(hint)
        snapshot = None
        if not known:  # (known: the snapshot is read with the log, off the loop)
            snapshot = usable(self.log, self.log.load_snapshot())
            hint = None if snapshot is None else wake_hint(snapshot)
            if hint is not None:
                self.arm(hint)
        # What is ready runs first: the load's thread holds the interpreter
        # through each long decode (a snapshot's, a chunk of the log's).
        await asyncio.sleep(0)
        try:
            self.loaded = await asyncio.to_thread(self._load, known, snapshot)
            self.phase = Phase.RUNNING
            self.ready = True
        except CorruptScheduleLog as exc:
            self.set_fault(exc)

    def _load(self, read_snapshot: bool, snapshot: Snapshot | None) -> Loaded:
        if read_snapshot:
            snapshot = usable(self.log, self.log.load_snapshot())
        return load_session(self.log, snapshot)

    async def execute(self, command: ToolCommand) -> ToolResult:
        """One tool transaction in the session's FIFO (see
        :meth:`~tickler.shell._runtime.ScheduleRuntime.execute`)."""
        if self.phase is Phase.NEW:
            raise RuntimeError("ScheduleRuntime.start() has not been awaited")
        if self.is_stopping():
            logger.warning("schedule: a tool was called on a disposed runtime; it raises")
            raise SessionClosed(
                f"session {self.log.header.id!r} is closed: the tool call was not run"
            )
        tool = f"schedule_{_OPERATIONS.get(type(command), 'create')}"
        with self._observer.tool_call(self.log.header.id, tool) as call:
            return call.ended(await self._tool(command))

    async def _tool(self, command: ToolCommand) -> ToolResult:
        """One tool transaction in the session's FIFO. A caller cancelled
        before the append leaves nothing behind; the append itself cannot be
        cut (it does not suspend), so state and log always agree."""
        operation: Operation = _OPERATIONS.get(type(command), "create")
        known_id = command.id if isinstance(command, DeleteSchedule | UpdateSchedule) else None
        async with self.lock:
            loaded = self.current()
            if not await self.flushed():
                return Failure(persistence_uncertain(operation, known_id))
            if self.fault is not None:
                return Failure(CORRUPT_LOG)
            now = self.clock.now_ms()
            try:
                decision = decide(loaded.state, command, now, profile=self.profile)
                changes, result = decision
            except Exception:  # a fault in the rules is the call's answer, as in ``handle``
                logger.exception("schedule: the rules failed on a %s call", operation)
                return Failure(INTERNAL_ERROR)
            if not changes:
                return result  # type: ignore[return-value] # a tool command's outcome
            created_id = _created_id(result.value_or(None))
            if not self.commit(changes, decision.state, now):
                return Failure(INTERNAL_ERROR)
            self._observer.committed(result.value_or(None))
            self._rearm(now)  # the change is live: it fires even if the barrier fails
            self.note_wake()
            try:
                confirmed = await self.flushed()
            except asyncio.CancelledError:
                self.driver.request_drive()  # the caller left; its preflight is the barrier
                raise
            if not confirmed:
                self.driver.retry_later()  # the retained change is flushed by the retry
                return Failure(persistence_uncertain(operation, created_id or known_id))
            return result  # type: ignore[return-value] # a tool command's outcome

    def commit(
        self, changes: tuple[ScheduleChange, ...], state: State, now: int, *extra: NewEvent
    ) -> bool:
        """Append ``changes`` (+ ``extra``) atomically; the state follows
        (``state``: the one ``decide`` made with them) only when the append
        succeeded."""
        loaded = self.current()
        batch = [NewEvent(SCHEDULE_CHANGE, encode_change(c), now) for c in changes]
        try:
            self.log.append([*batch, *extra])
        except Exception as exc:  # noqa: BLE001 - logged once per outage
            self._append_outage.failed(exc)
            return False
        self._append_outage.ok()
        loaded.state = state
        return True

    async def flushed(self) -> bool:
        """The barrier: True once everything appended so far is durable."""
        try:
            await self.log.flush()
        except Exception as exc:  # noqa: BLE001 - logged once per outage
            if not self.check_lost():
                self._flush_outage.failed(exc)
            return False
        self._flush_outage.ok()
        return True

    def check_lost(self) -> bool:
        """True once the log's lease was taken over; then, once, stop
        delivering (the new holder delivers; this one could only repeat)."""
        if self._lease is None or self._lease.lost is None:
            return False
        if self.is_running():
            self.phase = Phase.LOST
            self.disarm()
            logger.error("schedule: deliveries stopped: %s", self._lease.lost)
        return True

    # -- waking -------------------------------------------------------------

    def arm(self, at_ms: int | None) -> None:
        assert self.timers is not None
        if at_ms is None or self.is_stopping():  # a call admitted before dispose() arms nothing
            self.timers.cancel(self)
        else:
            self.timers.arm(self, at_ms, self.driver.request_drive)

    def disarm(self) -> None:
        if self.timers is not None:
            self.timers.cancel(self)

    def note_wake(self) -> None:
        """Tell a log that keeps a wake index when this session next needs a
        process (:func:`~tickler.shell._loading.next_wake`)."""
        if self._wake_index is None or self.phase is Phase.NEW:
            return
        if self.fault is not None:
            self._wake_index(None)  # nothing will be delivered until it is mended
        else:
            self._wake_index(next_wake(self.loaded, self.clock.now_ms()))

    def _rearm(self, now: int) -> None:
        """After a tool change: arm for the next wake, or drive if it is due."""
        wake = next_wake(self.current(), now)
        if wake is not None and wake <= now:
            self.driver.request_drive()
        else:
            self.arm(wake)

    # -- faults and snapshots -----------------------------------------------

    def set_fault(self, exc: CorruptScheduleLog) -> None:
        self.fault = exc
        self.phase = Phase.FAULTED
        logger.error(
            "schedule: session %s: corrupt schedule log, deliveries stopped: %s",
            self.log.header.id,
            exc,
        )
        if self._on_fault is not None:
            self._on_fault(exc)

    async def save_snapshot(self) -> bool:
        """Flush, then keep a snapshot of the state for a fast reopen."""
        async with self.lock:
            if not self.ready or self.fault is not None or not await self.flushed():
                return False  # never the placeholder state of a session that did not load
            try:
                snapshot = snapshot_of(self.loaded, self.log.length, self.clock.now_ms())
                await self.log.save_snapshot(snapshot)
            except Exception:
                logger.warning("schedule: could not save a snapshot", exc_info=True)
                return False
            return True


def _created_id(outcome: object) -> str | None:
    return outcome.view.record.id if isinstance(outcome, Created) else None
