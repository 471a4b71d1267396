"""``ScheduleRuntime``: executes the core's decisions for one session.

One FIFO per session for tool calls and deliveries; a flush before every
read and a barrier after every write; state kept incrementally with
``core.evolve``; due reminders delivered through an outbox (dispatch changes
and the follow-up in one atomic append, flushed before the host hears of
it); the hand-over to the host outside the FIFO, so a slow or hung host never
delays a tool call; one process-wide timer heap; failed flushes and
hand-overs retried with backoff instead of waiting for the next activity.
"""

from __future__ import annotations

import asyncio
import logging
import types
from collections.abc import Awaitable, Callable, Coroutine, Generator
from typing import Any, Final, NamedTuple

from returns.pipeline import is_successful
from returns.result import Failure

from tickler.core import (
    EMPTY_STATE,
    SCHEDULE_CHANGE,
    CorruptScheduleLog,
    Created,
    DeleteSchedule,
    DeliverDue,
    Delivery,
    ListSchedules,
    ScheduleChange,
    State,
    ToolCommand,
    Wait,
    decide,
    encode_change,
    fold_changes,
    next_target,
    parse_tool_call,
    persistence_uncertain,
    render,
)
from tickler.core.errors import CORRUPT_LOG, INTERNAL_ERROR, Operation
from tickler.shell.clock import Clock, SystemClock
from tickler.shell.host import AgentHost, FollowUp, IdleClaim
from tickler.shell.loading import Loaded, load_session, snapshot_of, usable, wake_hint
from tickler.shell.pending import PendingDelivery
from tickler.shell.ports import NewEvent, SessionLog, WakeIndex
from tickler.shell.records import (
    DELIVERED,
    FOLLOWUP,
    FOLLOWUP_FAILED,
    encode_delivered,
    encode_followup,
    encode_followup_failed,
    error_text,
    followup_for,
)
from tickler.shell.retry import Backoff
from tickler.shell.timers import TimerHeap, shared_timers

logger = logging.getLogger("tickler.runtime")

_OPERATIONS: Final[dict[type, Operation]] = {ListSchedules: "list", DeleteSchedule: "delete"}
# What a transaction answers when its caller went away before it committed
# anything (nobody reads it).
_ABORTED: Final = render(Failure(INTERNAL_ERROR))


class _Failures(NamedTuple):
    failures: int
    last_error: str | None


_NO_FAILURES: Final = _Failures(0, None)


class ScheduleRuntime:
    """The live runtime of one session: tools, timers and deliveries.

    ``start()`` loads the session (snapshot, then the log after it) and makes
    the first delivery check; ``call_tool`` answers the three tools;
    ``dispose()`` stops it: it waits for the transaction in flight, cancels
    a hand-over in flight (that follow-up stays in the outbox) and deletes
    nothing.
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
    ) -> None:
        self._log = log
        self._host = host
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._timers = timers
        self._backoff = backoff  # made when first needed: most sessions never retry
        self._on_fault = on_fault
        self._lock = asyncio.Lock()  # the session's FIFO: waiters are served in order
        self._loaded: Loaded | None = None
        self._fault: CorruptScheduleLog | None = None
        self._stopping = False
        self._requested = False
        self._drive_task: asyncio.Task[None] | None = None
        self._idle_task: asyncio.Task[None] | None = None
        self._retry_task: asyncio.Task[None] | None = None
        self._handing_over = False  # the drive task waits on the host
        self._failures: dict[str, _Failures] = {}  # failed hand-overs by key, this runtime
        self._disposal: asyncio.Task[None] | None = None
        self._just_idle = False
        self._wake_index = log.set_next_wake if isinstance(log, WakeIndex) else None

    # -- public surface ---------------------------------------------------

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
        with the hand-overs that failed in this runtime and the last error."""
        rows = []
        for message in self._current().outbox.values():
            failures = self._failures.get(message.key, _NO_FAILURES)
            rows.append(PendingDelivery.of(message, failures.failures, failures.last_error))
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
        async with self._lock:
            snapshot = usable(self._log, self._log.load_snapshot())
            hint = None if snapshot is None else wake_hint(snapshot)
            if hint is not None:
                # Armed from the snapshot's first bytes; the state loads next,
                # off the event loop, so other sessions keep running meanwhile.
                self._arm(hint)
            try:
                self._loaded = await asyncio.to_thread(load_session, self._log, snapshot)
            except CorruptScheduleLog as exc:
                self._loaded = Loaded(EMPTY_STATE)
                self._set_fault(exc)
            self._note_wake()
        self.request_drive()

    async def settle(self) -> bool:
        """Run the delivery work due now to its end, for a process that holds
        the session only while it delivers (``tickler worker``). True when
        nothing is due and every follow-up was taken; False when a flush or
        a hand-over failed (its retry is then the caller's), or the log is
        corrupt. Cancelling the caller leaves the work running."""
        self.request_drive()
        while True:
            running = [t for t in (self._drive_task, self._idle_task) if t and not t.done()]
            if not running:
                break
            await asyncio.wait(running)
        if self._loaded is None or self._fault is not None or self._loaded.outbox:
            return False
        return self._peek_wait() is not None

    async def call_tool(self, name: str, args: object) -> str:
        """One tool call: the exact output text the model sees. Never raises
        for any ``args``; a malformed call answers a closed error code."""
        parsed = parse_tool_call(name, args)
        if not is_successful(parsed):
            return render(Failure(parsed.failure()))
        if self._stopping:
            logger.warning("schedule: %s called on a disposed runtime", name)
            return _ABORTED
        return await self._tool(parsed.unwrap())

    def request_drive(self) -> None:
        """Look for due work now (coalesced; runs in the session's FIFO)."""
        if self._stopping or self._fault is not None or self._loaded is None:
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
        """Stop: cancel timers, waits and the hand-over in flight (it stays in
        the outbox), wait for the transaction in flight. Idempotent."""
        if self._disposal is None:
            self._disposal = asyncio.get_running_loop().create_task(self._dispose())
        return self._disposal

    # -- tool calls ---------------------------------------------------------

    async def _tool(self, command: ToolCommand) -> str:
        """One tool transaction in the session's FIFO. A caller cancelled
        before the append leaves nothing behind; the append itself cannot be
        cut (see ``_append``), so state and log always agree."""
        operation: Operation = _OPERATIONS.get(type(command), "create")
        known_id = command.id if isinstance(command, DeleteSchedule) else None
        async with self._lock:
            loaded = self._current()
            if not await self._flushed():
                return render(Failure(persistence_uncertain(operation, known_id)))
            if self._fault is not None:
                return render(Failure(CORRUPT_LOG))
            now = self._clock.now_ms()
            changes, result = decide(loaded.state, command, now)
            if not changes:
                return render(result)
            created_id = _created_id(result.value_or(None))
            if not await self._commit(changes, now):
                return render(Failure(INTERNAL_ERROR))
            self._rearm(now)  # the change is live: it fires even if the barrier fails
            self._note_wake()
            try:
                confirmed = await self._flushed()
            except asyncio.CancelledError:
                self.request_drive()  # the caller left; its preflight is the barrier
                raise
            if not confirmed:
                self._retry_later()  # the retained change is flushed by the retry
                return render(Failure(persistence_uncertain(operation, created_id or known_id)))
            return render(result)

    async def _commit(
        self, changes: tuple[ScheduleChange, ...], now: int, *extra: NewEvent
    ) -> bool:
        """Append ``changes`` (+ ``extra``) atomically; the state follows
        only when the append succeeded."""
        loaded = self._current()
        state = fold_changes(changes, loaded.state)
        batch = [NewEvent(SCHEDULE_CHANGE, encode_change(c), now) for c in changes]
        try:
            await _append(self._log, [*batch, *extra])
        except Exception:
            logger.warning("schedule: append failed", exc_info=True)
            return False
        loaded.state = state
        return True

    async def _flushed(self) -> bool:
        """The barrier: True once everything appended so far is durable."""
        try:
            await self._log.flush()
        except Exception:
            logger.warning("schedule: flush failed", exc_info=True)
            return False
        return True

    # -- deliveries ---------------------------------------------------------

    async def _drive_loop(self) -> None:
        try:
            while self._requested and not self._stopping and self._fault is None:
                self._requested = False
                async with self._lock:
                    if self._is_stopping():
                        return
                    try:
                        ready = await self._drive_once()
                    except Exception:
                        logger.exception("schedule: delivery failed; retrying")
                        self._retry_later()
                        continue
                if ready is not None:
                    # Outside the FIFO: tool calls never wait on the host.
                    # This loop is the session's only driver, so at most one
                    # hand-over is in flight and the outbox order holds.
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
        if self._stopping:
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
            if message is None or self._stopping:
                claim.release()
        return None if message is None or self._stopping else (claim, message)

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
        changes, result = decide(self._current().state, DeliverDue(), now)
        outcome = result.value_or(None)
        if not isinstance(outcome, Delivery):
            self._arm(outcome.next_wake if isinstance(outcome, Wait) else None)
            return None
        message = followup_for(outcome)
        followup = NewEvent(FOLLOWUP, encode_followup(message), now)
        if not await self._commit(changes, now, followup):
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
        thousands). ``dispose()`` cancels the drive task while it waits here,
        so a hung host cannot hold the disposal; cancelled or failed, the
        follow-up stays in the outbox and comes again."""
        if self._stopping:
            claim.release()
            return
        error: Exception | None = None
        self._handing_over = True
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
            self._handing_over = False
            claim.release()
        if error is not None:
            await self._handover_failed(message, error)
            return
        self._current().outbox.pop(message.key, None)
        self._note_wake()
        self._failures.pop(message.key, None)
        if self._backoff is not None:
            self._backoff.reset()
        async with self._lock:
            await self._mark_delivered(message)
        self.request_drive()  # one follow-up per claim; look for the next

    async def _handover_failed(self, message: FollowUp, error: BaseException) -> None:
        """Retry with backoff (a target that is down loses nothing), and keep
        it visible: live in ``pending_deliveries``, and in the log at the
        1st, 2nd, 4th, 8th... failure (bounded growth while a target is down)."""
        attempt = self._failures.get(message.key, _NO_FAILURES).failures + 1
        text = error_text(error)
        self._failures[message.key] = _Failures(attempt, text)
        logger.warning(
            "schedule: follow-up %s not taken (attempt %d: %s); retrying",
            message.key,
            attempt,
            text,
        )
        logger.debug("schedule: follow-up %s failure", message.key, exc_info=error)
        self._retry_later()
        if attempt & (attempt - 1) == 0 and not self._stopping:
            record = encode_followup_failed(message.key, attempt, text)
            async with self._lock:
                try:
                    await _append(
                        self._log, [NewEvent(FOLLOWUP_FAILED, record, self._clock.now_ms())]
                    )
                except Exception:
                    logger.debug("schedule: could not record the failure", exc_info=True)

    async def _mark_delivered(self, message: FollowUp) -> None:
        try:
            ack = NewEvent(DELIVERED, encode_delivered(message.key), self._clock.now_ms())
            await _append(self._log, [ack])
        except Exception:
            # The host took it; without the mark it is handed over again
            # after a restart, and the host drops the repeat by its key.
            logger.warning("schedule: could not mark %s delivered", message.key, exc_info=True)

    # -- waking -------------------------------------------------------------

    def _arm(self, at_ms: int | None) -> None:
        assert self._timers is not None
        if at_ms is None:
            self._timers.cancel(self)
        else:
            self._timers.arm(self, at_ms, self.request_drive)

    def _note_wake(self) -> None:
        """Tell a log that keeps a wake index when this session next needs a
        process: now while a follow-up waits, else the core's next target."""
        if self._wake_index is None or self._loaded is None:
            return
        if self._fault is not None:
            self._wake_index(None)  # nothing will be delivered until it is mended
        elif self._loaded.outbox:
            self._wake_index(self._clock.now_ms())
        else:
            self._wake_index(next_target(self._loaded.state))

    def _rearm(self, now: int) -> None:
        """After a tool change: arm for the earliest target, or drive if due."""
        target = next_target(self._current().state)
        if target is not None and target <= now:
            self.request_drive()
        else:
            self._arm(target)

    def _wait_for_idle(self) -> None:
        """The agent is busy: look again once it is idle (one wait at most)."""
        if self._idle_task is not None and not self._idle_task.done():
            return
        self._idle_task = asyncio.get_running_loop().create_task(self._idle_then_drive())

    async def _idle_then_drive(self) -> None:
        try:
            await self._host.when_idle()
        except Exception:
            logger.warning("schedule: idle wait failed; retrying", exc_info=True)
            self._retry_later()
            return
        self._just_idle = True
        self.request_drive()

    def _retry_later(self) -> None:
        if self._stopping or (self._retry_task is not None and not self._retry_task.done()):
            return
        if self._backoff is None:
            self._backoff = Backoff()
        delay = self._backoff.next_delay()
        self._retry_task = asyncio.get_running_loop().create_task(self._retry_after(delay))

    async def _retry_after(self, delay: float) -> None:
        await self._clock.sleep(delay)
        self.request_drive()

    # -- lifecycle ----------------------------------------------------------

    def _is_stopping(self) -> bool:
        return self._stopping

    def _current(self) -> Loaded:
        if self._loaded is None:
            raise RuntimeError("ScheduleRuntime.start() has not been awaited")
        return self._loaded

    def _set_fault(self, exc: CorruptScheduleLog) -> None:
        self._fault = exc
        logger.error(
            "schedule: session %s: corrupt schedule log, deliveries stopped: %s",
            self._log.header.id,
            exc,
        )
        if self._on_fault is not None:
            self._on_fault(exc)

    async def _save_snapshot(self) -> bool:
        if self._loaded is None or self._fault is not None or not await self._flushed():
            return False
        try:
            await self._log.save_snapshot(snapshot_of(self._loaded, self._log.length))
        except Exception:
            logger.warning("schedule: could not save a snapshot", exc_info=True)
            return False
        return True

    async def _dispose(self) -> None:
        self._stopping = True
        self._requested = False
        if self._timers is not None:
            self._timers.cancel(self)
        for task in (self._idle_task, self._retry_task):
            if task is not None:
                task.cancel()
        if self._handing_over and self._drive_task is not None:
            self._drive_task.cancel()  # a hung host must not hold the disposal
        async with self._lock:  # waits for the transaction in flight
            pass
        if self._drive_task is not None:
            await asyncio.gather(self._drive_task, return_exceptions=True)


async def _append(log: SessionLog, batch: list[NewEvent]) -> None:
    """``log.append(batch)``, never cut by the caller's cancellation: a
    cancelled append could leave the log and the in-memory state apart.

    Stores usually append without suspending; the coroutine is then run to
    its end right here, with no task. One that suspends is finished by a
    task of its own, shielded from our caller."""
    coro = log.append(batch)
    try:
        waiting = coro.send(None)
    except StopIteration:
        return
    await asyncio.shield(asyncio.ensure_future(_finish(coro, waiting)))


async def _finish(coro: Coroutine[Any, Any, object], waiting: object) -> None:
    await _resume(coro, waiting)


@types.coroutine
def _resume(coro: Coroutine[Any, Any, object], waiting: object) -> Generator[Any, Any, None]:
    """Continue a coroutine that was started by hand: hand each future it
    waits on to the running task, and send back what the task sends in."""
    while True:
        try:
            value = yield waiting
        except BaseException as exc:  # noqa: BLE001 - forwarded into the coroutine
            try:
                waiting = coro.throw(exc)
            except StopIteration:
                return
        else:
            try:
                waiting = coro.send(value)
            except StopIteration:
                return


def _uncancel() -> None:
    """The drive task swallowed the disposal's cancellation: say so, so an
    ``asyncio.timeout`` it may still enter is not confused by it."""
    task = asyncio.current_task()
    if task is not None:
        task.uncancel()


def _created_id(outcome: object) -> str | None:
    return outcome.view.record.id if isinstance(outcome, Created) else None
