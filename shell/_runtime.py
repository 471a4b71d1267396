"""``ScheduleRuntime``: executes the core's decisions for one session.

One FIFO per session for tool calls and deliveries; a flush before every
read and a barrier after every write; state kept incrementally (the state
each ``core.decide`` returns with its changes); due reminders delivered
through an outbox (dispatch changes and the follow-up in one atomic append,
flushed before the host hears of it); the hand-over to the host outside
the FIFO, so a slow or hung host never delays a tool call; one
process-wide timer heap; failed flushes and hand-overs retried with backoff
instead of waiting for the next activity.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Final

from returns.pipeline import is_successful
from returns.result import Failure, Result

from tickler.core import (
    CORRUPT_LOG,
    DEFAULT_PROFILE,
    EMPTY_STATE,
    INTERNAL_ERROR,
    SCHEDULE_CHANGE,
    CorruptScheduleLog,
    Created,
    DeleteSchedule,
    DeliverDue,
    Delivery,
    ListSchedules,
    Operation,
    Profile,
    ScheduleChange,
    ScheduleError,
    State,
    ToolCommand,
    ToolOutcome,
    UpdateSchedule,
    Wait,
    decide,
    encode_change,
    parse_tool_call,
    persistence_uncertain,
    render,
)
from tickler.shell import _telemetry
from tickler.shell._clock import Clock, SystemClock
from tickler.shell._host import AgentHost, FollowUp, IdleClaim, SessionClosed, TimedHost
from tickler.shell._loading import (
    Loaded,
    load_session,
    next_wake,
    snapshot_of,
    usable,
    wake_hint,
)
from tickler.shell._pending import PendingDelivery
from tickler.shell._phase import Phase
from tickler.shell._ports import FailureIndex, LeasedLog, NewEvent, SessionLog, WakeIndex
from tickler.shell._records import (
    DELIVERED,
    FOLLOWUP,
    FOLLOWUP_FAILED,
    FailureCount,
    encode_delivered,
    encode_followup,
    encode_followup_failed,
    error_text,
    followup_for,
)
from tickler.shell._retry import Backoff, Outage
from tickler.shell._timers import TimerHeap, shared_timers

logger = logging.getLogger("tickler.runtime")

_OPERATIONS: Final[dict[type, Operation]] = {
    ListSchedules: "list",
    DeleteSchedule: "delete",
    UpdateSchedule: "update",
}
ToolResult = Result[ToolOutcome, ScheduleError]
"""What a tool call comes to before it is shown: the outcome, or a closed
error. ``render`` makes it the model's text; the typed API makes it a
``Reminder`` or raises."""
_NO_FAILURES: Final = FailureCount()

DISPOSE_GRACE_S: Final = 1.0
"""How long ``dispose()`` lets a hand-over in flight finish by default: long
enough for a host that is about to answer, short enough that a process
stops promptly when a target hangs (an MCP client kills a server 2 s after
closing its stdin)."""

LEASE_MARGIN_S: Final = 1.0
"""A hand-over under a lease starts only when the lease outlasts the host's
deadline (:class:`~tickler.shell._host.TimedHost`) by this much."""


class LeaseTooShort(Exception):
    """A hand-over was not started: the log's lease may end before it would."""


class ScheduleRuntime:
    """The live runtime of one session: tools, timers and deliveries.

    ``start()`` loads the session (snapshot, then the log after it) and makes
    the first delivery check; ``call_tool`` answers the profile's tools;
    ``dispose()`` stops it: it waits for the transaction in flight, lets a
    hand-over in flight finish for up to ``dispose_grace_s`` (and records its
    outcome) before it cancels it (that follow-up stays in the outbox), and
    deletes nothing.

    On a log held under a lease (:class:`~tickler.shell._ports.LeasedLog`),
    no hand-over starts that the lease might not outlast, and deliveries
    stop once the log says another process took the session over.
    """

    def __init__(
        self,
        log: SessionLog,
        host: AgentHost,
        clock: Clock | None = None,
        *,
        timers: TimerHeap | None = None,
        backoff: Backoff | None = None,
        on_fault: Callable[[CorruptScheduleLog], None] | None = None,
        dispose_grace_s: float = DISPOSE_GRACE_S,
        profile: Profile = DEFAULT_PROFILE,
    ) -> None:
        self._log = log
        self._profile: Profile = profile
        self._host = host
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._timers = timers
        self._backoff = backoff  # made when first needed: most sessions never retry
        self._on_fault = on_fault
        self._lock = asyncio.Lock()  # the session's FIFO: waiters are served in order
        self._phase = Phase.NEW
        self._loaded = Loaded(EMPTY_STATE)  # replaced by start()
        self._ready = False  # the session loaded: its state may be snapshotted
        self._fault: CorruptScheduleLog | None = None
        self._requested = False  # a drive was asked for (coalesced)
        self._just_idle = False  # the host said it is idle; a refused claim then backs off
        self._drive_task: asyncio.Task[None] | None = None
        self._idle_task: asyncio.Task[None] | None = None
        self._retry_task: asyncio.Task[None] | None = None
        self._in_flight: FollowUp | None = None  # the drive task waits on the host with it
        self._failures: dict[str, FailureCount] = {}  # failed hand-overs by key, live
        self._disposal: asyncio.Task[None] | None = None
        self._dispose_grace_s = dispose_grace_s
        self._wake_index = log.set_next_wake if isinstance(log, WakeIndex) else None
        self._failure_index = log if isinstance(log, FailureIndex) else None
        self._lease = log if isinstance(log, LeasedLog) else None
        self._host_deadline = host.timeout if isinstance(host, TimedHost) else 0.0
        self._flush_outage = Outage(logger, "schedule: flushing the session log")
        self._append_outage = Outage(logger, "schedule: appending to the session log")
        self._drive_outage = Outage(logger, "schedule: looking for due deliveries")
        self._idle_outage = Outage(logger, "schedule: waiting for the agent to be idle")

    # -- public surface ---------------------------------------------------

    @property
    def phase(self) -> Phase:
        return self._phase

    @property
    def profile(self) -> Profile:
        """The tool contract this runtime answers (``reference``: exactly v1)."""
        return self._profile

    @property
    def state(self) -> State:
        return self._current().state

    @property
    def pending_followups(self) -> tuple[FollowUp, ...]:
        """Follow-ups appended but not yet taken by the host, in log order."""
        return tuple(self._current().outbox.values())

    @property
    def pending_deliveries(self) -> tuple[PendingDelivery, ...]:
        """The outbox as the operator sees it: each follow-up not yet taken,
        with its failed hand-overs so far (this runtime's and the ones
        before it that the log, or the log's failure index, kept) and the
        last error."""
        rows = []
        for message in self._current().outbox.values():
            failures = self._failures.get(message.key, _NO_FAILURES)
            rows.append(PendingDelivery.of(message, failures.total, failures.error))
        return tuple(rows)

    @property
    def fault(self) -> CorruptScheduleLog | None:
        """Why deliveries stopped (a corrupt log), or None."""
        return self._fault

    @property
    def next_wake(self) -> int | None:
        return None if self._timers is None else self._timers.deadline(self)

    async def start(self) -> None:
        """Load the session and make the first delivery check."""
        if self._timers is None:
            self._timers = shared_timers(self._clock)
        if self._phase is not Phase.NEW:
            raise RuntimeError(f"ScheduleRuntime.start(): the runtime is {self._phase.value}")
        async with self._lock:
            snapshot = usable(self._log, self._log.load_snapshot())
            hint = None if snapshot is None else wake_hint(snapshot)
            if hint is not None:
                # Armed from the snapshot's first bytes; the state loads next,
                # off the event loop, so other sessions keep running meanwhile.
                self._arm(hint)
            try:
                self._loaded = await asyncio.to_thread(load_session, self._log, snapshot)
                self._phase = Phase.RUNNING
                self._ready = True
            except CorruptScheduleLog as exc:
                self._set_fault(exc)
            self._load_failures(self._loaded)
            self._note_wake()
        _telemetry.watch(self)
        self.request_drive()

    def _load_failures(self, loaded: Loaded) -> None:
        """The failure counts so far: the log's records, raised to the
        failure index's count for the outbox head (it also counts the
        failures after the last record)."""
        self._failures = dict(loaded.failures)
        if self._failure_index is None or not loaded.outbox:
            return
        head = next(iter(loaded.outbox))
        count = self._failures.get(head, _NO_FAILURES)
        self._failures[head] = count.at_least(self._failure_index.handover_failures)

    async def settle(self) -> bool:
        """Run the delivery work due now to its end, for a process that holds
        the session only while it delivers (``tickler worker``). True when
        nothing is due and every follow-up was taken; False when a flush or
        a hand-over failed (its retry is then the caller's), or the log is
        corrupt. Cancelling the caller leaves the work running."""
        if self._drive_task is None or self._drive_task.done():
            # A drive in flight is doing the work due now: asking for another
            # pass would hand a follow-up that fails now over again at once,
            # past its backoff.
            self.request_drive()
        while True:
            running = [t for t in (self._drive_task, self._idle_task) if t and not t.done()]
            if not running:
                break
            await asyncio.wait(running)
        if not self._is_running() or self._loaded.outbox:
            return False
        return self._peek_wait() is not None

    async def call_tool(self, name: str, args: object) -> str:
        """One tool call: the exact output text the model sees. Never raises
        for any ``args``; a malformed call answers a closed error code.
        Raises :class:`SessionClosed` once :meth:`dispose` has begun."""
        return render(
            await tool_result(
                self.execute, name, args, session_id=self._log.header.id, profile=self._profile
            )
        )

    async def execute(self, command: ToolCommand) -> ToolResult:
        """One tool transaction in the session's FIFO: the one pipeline every
        surface (the model's tools, the typed API) goes through, with the
        same rules, events and durability barrier. Never raises for a
        command; a refused one is a closed error. Raises
        :class:`SessionClosed` once :meth:`dispose` has begun: nothing is
        run then, and an answer would read as if it had been."""
        if self._phase is Phase.NEW:
            raise RuntimeError("ScheduleRuntime.start() has not been awaited")
        if self._is_stopping():
            logger.warning("schedule: a tool was called on a disposed runtime; it raises")
            raise SessionClosed(
                f"session {self._log.header.id!r} is closed: the tool call was not run"
            )
        tool = f"schedule_{_OPERATIONS.get(type(command), 'create')}"
        with _telemetry.tool_call(self._log.header.id, tool) as call:
            return call.ended(await self._tool(command))

    def request_drive(self) -> None:
        """Look for due work now (coalesced; runs in the session's FIFO)."""
        if not self._is_running():
            return
        self._requested = True
        if self._drive_task is None or self._drive_task.done():
            self._drive_task = asyncio.get_running_loop().create_task(
                self._drive_loop(), name="tickler-drive"
            )

    async def save_snapshot(self) -> bool:
        """Flush, then keep a snapshot of the state for a fast reopen."""
        async with self._lock:
            return await self._save_snapshot()

    def dispose(self) -> Awaitable[None]:
        """Stop: cancel timers and waits, wait for the transaction in flight,
        let a hand-over in flight finish for up to ``dispose_grace_s`` (its
        outcome is recorded: the delivered mark, flushed, or the failure)
        and then cancel it (it stays in the outbox). Idempotent."""
        if self._disposal is None:
            self._disposal = asyncio.get_running_loop().create_task(self._dispose())
        return self._disposal

    # -- tool calls ---------------------------------------------------------

    async def _tool(self, command: ToolCommand) -> ToolResult:
        """One tool transaction in the session's FIFO. A caller cancelled
        before the append leaves nothing behind; the append itself cannot be
        cut (it does not suspend), so state and log always agree."""
        operation: Operation = _OPERATIONS.get(type(command), "create")
        known_id = command.id if isinstance(command, DeleteSchedule | UpdateSchedule) else None
        async with self._lock:
            loaded = self._current()
            if not await self._flushed():
                return Failure(persistence_uncertain(operation, known_id))
            if self._fault is not None:
                return Failure(CORRUPT_LOG)
            now = self._clock.now_ms()
            try:
                decision = decide(loaded.state, command, now, profile=self._profile)
                changes, result = decision
            except Exception:  # a fault in the rules is the call's answer, as in ``handle``
                logger.exception("schedule: the rules failed on a %s call", operation)
                return Failure(INTERNAL_ERROR)
            if not changes:
                return result  # type: ignore[return-value] # a tool command's outcome
            created_id = _created_id(result.value_or(None))
            if not self._commit(changes, decision.state, now):
                return Failure(INTERNAL_ERROR)
            _telemetry.committed(result.value_or(None))
            self._rearm(now)  # the change is live: it fires even if the barrier fails
            self._note_wake()
            try:
                confirmed = await self._flushed()
            except asyncio.CancelledError:
                self.request_drive()  # the caller left; its preflight is the barrier
                raise
            if not confirmed:
                self._retry_later()  # the retained change is flushed by the retry
                return Failure(persistence_uncertain(operation, created_id or known_id))
            return result  # type: ignore[return-value] # a tool command's outcome

    def _commit(
        self, changes: tuple[ScheduleChange, ...], state: State, now: int, *extra: NewEvent
    ) -> bool:
        """Append ``changes`` (+ ``extra``) atomically; the state follows
        (``state``: the one ``decide`` made with them) only when the append
        succeeded."""
        loaded = self._current()
        batch = [NewEvent(SCHEDULE_CHANGE, encode_change(c), now) for c in changes]
        try:
            self._log.append([*batch, *extra])
        except Exception as exc:  # noqa: BLE001 - logged once per outage
            self._append_outage.failed(exc)
            return False
        self._append_outage.ok()
        loaded.state = state
        return True

    async def _flushed(self) -> bool:
        """The barrier: True once everything appended so far is durable."""
        try:
            await self._log.flush()
        except Exception as exc:  # noqa: BLE001 - logged once per outage
            if not self._check_lost():
                self._flush_outage.failed(exc)
            return False
        self._flush_outage.ok()
        return True

    # -- deliveries ---------------------------------------------------------

    async def _drive_loop(self) -> None:
        _telemetry.bind_session(self._log.header.id)  # this task's log lines
        try:
            while self._requested and self._is_running():
                self._requested = False
                async with self._lock:
                    if not self._is_running():
                        return
                    try:
                        ready = await self._drive_once()
                    except Exception as exc:  # noqa: BLE001 - logged once per outage
                        self._drive_outage.failed(exc)
                        self._retry_later()
                        continue
                    self._drive_outage.ok()
                if ready is not None:
                    # Outside the FIFO: tool calls never wait on the host.
                    # This loop is the session's only driver, so at most one
                    # hand-over is in flight and the outbox order holds.
                    with _telemetry.attempt(self._log.header.id, ready[1].key):
                        await self._hand_over(*ready)
        finally:
            # A finished task is not kept: thousands of idle sessions would
            # each hold one.
            if self._drive_task is asyncio.current_task():
                self._drive_task = None

    async def _drive_once(self) -> tuple[IdleClaim, FollowUp] | None:
        """Under the FIFO: the claim and the durable follow-up to hand over
        (the outbox head, or a due delivery appended and flushed now)."""
        just_idle, self._just_idle = self._just_idle, False
        if not await self._flushed():
            self._retry_later()
            return None
        if not self._is_running():
            return None
        loaded = self._current()
        if not loaded.outbox and self._peek_wait() is not None:
            return None
        claim = self._host.claim_idle()
        if claim is None:
            # Busy: wait for idle once. Refused right after reporting idle
            # (the reference's livelock): back off instead of spinning.
            self._retry_later() if just_idle else self._wait_for_idle()
            return None
        message: FollowUp | None = None
        try:
            if loaded.outbox:
                message = next(iter(loaded.outbox.values()))
            else:
                message = await self._deliver_due()
        finally:
            if message is None or self._is_stopping():
                claim.release()
        return None if message is None or self._is_stopping() else (claim, message)

    def _peek_wait(self) -> Wait | None:
        """The Wait decision at the current wall clock (arming the timer),
        or None when something is due."""
        now = self._clock.now_ms()
        _, result = decide(self._current().state, DeliverDue(), now)
        outcome = result.value_or(None)
        if isinstance(outcome, Wait):
            self._arm(outcome.next_wake)
            return outcome
        if outcome is None:  # the clock is outside years 0001-9999
            self._retry_later()
            return Wait(None)
        return None

    async def _deliver_due(self) -> FollowUp | None:
        """Append the due delivery and its follow-up as one batch and make it
        durable; the follow-up to hand over, or None."""
        # Decide again under the claim, from a fresh clock sample: the clock
        # may have been rolled back since the timer fired.
        now = self._clock.now_ms()
        decision = decide(self._current().state, DeliverDue(), now)
        changes, result = decision
        outcome = result.value_or(None)
        if not isinstance(outcome, Delivery):
            self._arm(outcome.next_wake if isinstance(outcome, Wait) else None)
            return None
        message = followup_for(outcome)
        _log_skipped(outcome)
        followup = NewEvent(FOLLOWUP, encode_followup(message), now)
        if not self._commit(changes, decision.state, now, followup):
            self._retry_later()
            return None
        self._current().outbox[message.key] = message
        self._note_wake()
        if not await self._flushed():
            self._retry_later()  # stays in the outbox; the host is not told yet
            return None
        return message

    async def _hand_over(self, claim: IdleClaim, message: FollowUp) -> None:
        """Give ``message`` to the host under ``claim``, outside the FIFO, in
        the drive task itself (no task per delivery: a burst hands over
        thousands). ``dispose()`` cancels the drive task while it waits here
        once its grace is over, so a hung host cannot hold the disposal;
        cancelled or failed, the follow-up stays in the outbox and comes
        again. Under a lease, a hand-over the lease might not outlast is not
        started (a failed attempt: the lease may be renewed meanwhile)."""
        if self._is_stopping():
            claim.release()
            return
        refused = self._lease_refusal(message)
        if refused is not None:
            claim.release()
            if not self._check_lost():
                await self._handover_failed(message, refused)
            return
        error: Exception | None = None
        self._in_flight = message
        try:
            await self._host.followup(message)
        except asyncio.CancelledError:
            if not self._is_stopping():
                raise  # not the disposal's: not ours to swallow
            _uncancel()
            return
        except Exception as exc:  # noqa: BLE001 - any host failure means "not taken"
            error = exc
        finally:
            self._in_flight = None
            claim.release()
        if error is not None:
            await self._handover_failed(message, error)
            return
        await self._handed_over(message)

    async def _handed_over(self, message: FollowUp) -> None:
        """The host took ``message``: mark it delivered, look for the next."""
        _telemetry.delivered(message, self._clock)
        loaded = self._current()
        loaded.outbox.pop(message.key, None)
        loaded.failures.pop(message.key, None)
        self._note_wake()
        failed = self._failures.pop(message.key, _NO_FAILURES)
        if failed.total:
            logger.warning(
                "schedule: follow-up %s taken after %d failed hand-overs", message.key, failed.total
            )
        if self._failure_index is not None:
            self._failure_index.set_handover_failures(0)
        if self._backoff is not None:
            self._backoff.reset()
        async with self._lock:
            await self._mark_delivered(message)
            if self._is_stopping():  # the log closes next: make the mark durable first
                await self._flushed()
        self.request_drive()  # one follow-up per claim; look for the next

    def _lease_refusal(self, message: FollowUp) -> LeaseTooShort | None:
        """Why a hand-over of ``message`` must not start under the log's
        lease now, or None (no lease, or it outlasts the attempt)."""
        if self._lease is None:
            return None
        needed = self._host_deadline + LEASE_MARGIN_S
        if self._lease.lost is None and self._lease.lease_left() >= needed:
            return None
        return LeaseTooShort(
            f"the lease of session {self._log.header.id!r} might end before the hand-over "
            f"of {message.key} would; it was not started"
        )

    def _check_lost(self) -> bool:
        """True once the log's lease was taken over; then, once, stop
        delivering (the new holder delivers; this one could only repeat)."""
        if self._lease is None or self._lease.lost is None:
            return False
        if self._is_running():
            self._phase = Phase.LOST
            self._requested = False
            if self._timers is not None:
                self._timers.cancel(self)
            logger.error("schedule: deliveries stopped: %s", self._lease.lost)
        return True

    async def _handover_failed(self, message: FollowUp, error: BaseException) -> None:
        """Retry with backoff (a target that is down loses nothing), and keep
        it visible: live in ``pending_deliveries``, and in the log (and in
        this log line) at the 1st, 2nd, 4th, 8th... failure of the follow-up,
        counted across runtimes (bounded growth while a target is down)."""
        _telemetry.delivery_failed(error)
        text = error_text(error)
        count = self._failures.get(message.key, _NO_FAILURES).failed(text)
        self._failures[message.key] = count
        if self._failure_index is not None:
            self._failure_index.set_handover_failures(count.total)
        sparse = count.total & (count.total - 1) == 0
        logger.log(
            logging.WARNING if sparse else logging.DEBUG,
            "schedule: follow-up %s not taken (failure %d: %s); retrying",
            message.key,
            count.total,
            text,
        )
        logger.debug("schedule: follow-up %s failure", message.key, exc_info=error)
        self._retry_later()
        if not sparse or self._phase is Phase.LOST:
            return
        record = encode_followup_failed(message.key, count.last, text)
        async with self._lock:
            try:
                self._log.append([NewEvent(FOLLOWUP_FAILED, record, self._clock.now_ms())])
            except Exception:
                logger.debug("schedule: could not record the failure", exc_info=True)
                return
            loaded = self._current()
            if message.key in loaded.outbox:
                recorded = loaded.failures.get(message.key, _NO_FAILURES)
                loaded.failures[message.key] = recorded.recorded(count.last, text)
            if self._is_stopping():  # the log closes next
                await self._flushed()

    async def _mark_delivered(self, message: FollowUp) -> None:
        try:
            ack = NewEvent(DELIVERED, encode_delivered(message.key), self._clock.now_ms())
            self._log.append([ack])
        except Exception:
            # The host took it; without the mark it is handed over again
            # after a restart, and the host drops the repeat by its key.
            logger.warning("schedule: could not mark %s delivered", message.key, exc_info=True)

    # -- waking -------------------------------------------------------------

    def _arm(self, at_ms: int | None) -> None:
        assert self._timers is not None
        if at_ms is None or self._is_stopping():  # a call admitted before dispose() arms nothing
            self._timers.cancel(self)
        else:
            self._timers.arm(self, at_ms, self.request_drive)

    def _note_wake(self) -> None:
        """Tell a log that keeps a wake index when this session next needs a
        process (:func:`~tickler.shell._loading.next_wake`)."""
        if self._wake_index is None or self._phase is Phase.NEW:
            return
        if self._fault is not None:
            self._wake_index(None)  # nothing will be delivered until it is mended
        else:
            self._wake_index(next_wake(self._loaded, self._clock.now_ms()))

    def _rearm(self, now: int) -> None:
        """After a tool change: arm for the next wake, or drive if it is due."""
        wake = next_wake(self._current(), now)
        if wake is not None and wake <= now:
            self.request_drive()
        else:
            self._arm(wake)

    def _wait_for_idle(self) -> None:
        """The agent is busy: look again once it is idle (one wait at most)."""
        if self._idle_task is not None and not self._idle_task.done():
            return
        self._idle_task = asyncio.get_running_loop().create_task(self._idle_then_drive())

    async def _idle_then_drive(self) -> None:
        try:
            await self._host.when_idle()
        except Exception as exc:  # noqa: BLE001 - logged once per outage
            self._idle_outage.failed(exc)
            self._retry_later()
            return
        self._idle_outage.ok()
        self._just_idle = True
        self.request_drive()

    def _retry_later(self) -> None:
        if self._is_stopping() or (self._retry_task is not None and not self._retry_task.done()):
            return
        if self._backoff is None:
            self._backoff = Backoff()
        delay = self._backoff.next_delay()
        self._retry_task = asyncio.get_running_loop().create_task(self._retry_after(delay))

    async def _retry_after(self, delay: float) -> None:
        await self._clock.sleep(delay)
        self.request_drive()

    # -- lifecycle ----------------------------------------------------------

    # Methods, not attributes: the phase moves while a coroutine awaits, and a
    # type checker narrows attributes as if it could not.
    def _is_stopping(self) -> bool:
        return self._phase in (Phase.STOPPING, Phase.STOPPED)

    def _is_running(self) -> bool:
        return self._phase is Phase.RUNNING

    def _current(self) -> Loaded:
        if self._phase is Phase.NEW:
            raise RuntimeError("ScheduleRuntime.start() has not been awaited")
        return self._loaded

    def _set_fault(self, exc: CorruptScheduleLog) -> None:
        self._fault = exc
        self._phase = Phase.FAULTED
        logger.error(
            "schedule: session %s: corrupt schedule log, deliveries stopped: %s",
            self._log.header.id,
            exc,
        )
        if self._on_fault is not None:
            self._on_fault(exc)

    async def _save_snapshot(self) -> bool:
        if not self._ready or self._fault is not None or not await self._flushed():
            return False  # never the placeholder state of a session that did not load
        try:
            snapshot = snapshot_of(self._loaded, self._log.length, self._clock.now_ms())
            await self._log.save_snapshot(snapshot)
        except Exception:
            logger.warning("schedule: could not save a snapshot", exc_info=True)
            return False
        return True

    async def _dispose(self) -> None:
        lost = self._phase is Phase.LOST
        self._phase = Phase.STOPPING
        self._requested = False
        if self._timers is not None:
            self._timers.cancel(self)
        for task in (self._idle_task, self._retry_task):
            if task is not None:
                task.cancel()
        drive = self._drive_task
        if self._in_flight is not None and drive is not None:
            # Let the hand-over finish and its outcome be recorded, for a
            # while; then a hung host must not hold the disposal.
            grace = asyncio.ensure_future(self._clock.sleep(self._dispose_grace_s))
            try:
                await asyncio.wait((drive, grace), return_when=asyncio.FIRST_COMPLETED)
            finally:
                grace.cancel()
            if self._in_flight is not None:
                drive.cancel()
        async with self._lock:  # waits for the transaction in flight
            pass
        if self._drive_task is not None:
            await asyncio.gather(self._drive_task, return_exceptions=True)
        if not lost:
            await self._keep_failure_counts()
        self._phase = Phase.STOPPED

    async def _keep_failure_counts(self) -> None:
        """Record the failure count each follow-up reached, when the log has
        no failure index and this runtime counted failures it did not record
        (the log keeps the 1st, 2nd, 4th... only): else the next runtime
        would count from the last record again. One record per follow-up
        and runtime at most."""
        loaded = self._loaded
        if self._failure_index is not None or self._fault is not None:
            return
        counts = {
            key: live
            for key in loaded.outbox
            if (live := self._failures.get(key)) is not None
            and live.total > loaded.failures.get(key, _NO_FAILURES).total
        }
        if not counts:
            return
        now = self._clock.now_ms()
        records = [encode_followup_failed(k, c.last, c.error or "") for k, c in counts.items()]
        batch = [NewEvent(FOLLOWUP_FAILED, record, now) for record in records]
        async with self._lock:
            try:
                self._log.append(batch)
            except Exception:
                logger.debug("schedule: could not record the failure counts", exc_info=True)
                return
            loaded.failures.update(counts)
            await self._flushed()


async def tool_result(
    execute: Callable[[ToolCommand], Awaitable[ToolResult]],
    name: str,
    args: object,
    *,
    session_id: str = "",
    profile: Profile = DEFAULT_PROFILE,
) -> ToolResult:
    """A tool call before it is shown: checked as the tool checks it (shape
    only, before the session's queue), then run by ``execute``. ``render``
    of it is the model's text; the typed API makes it a value or raises."""
    parsed = parse_tool_call(name, args, profile=profile)
    if not is_successful(parsed):
        _telemetry.refused_call(session_id, name, parsed.failure())
        return Failure(parsed.failure())
    return await execute(parsed.unwrap())


def _log_skipped(delivery: Delivery) -> None:
    """Latest-only catch-up: say how many missed occurrences a delivered
    one stands for (the log's dispatch implies it; this says it)."""
    for occurrence, skipped in zip(delivery.occurrences, delivery.skipped, strict=False):
        if skipped:
            logger.info(
                "schedule: %s stands for %d earlier missed occurrence(s) (latest-only catch-up)",
                occurrence.key,
                skipped,
            )


def _uncancel() -> None:
    """The drive task swallowed the disposal's cancellation: say so, so an
    ``asyncio.timeout`` it may still enter is not confused by it."""
    task = asyncio.current_task()
    if task is not None:
        task.uncancel()


def _created_id(outcome: object) -> str | None:
    return outcome.view.record.id if isinstance(outcome, Created) else None
