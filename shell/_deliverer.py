"""The deliverer of one session: drive loop, outbox, hand-over, retries.

One drive task per session at most, asked for by a timer, a tool change or
a retry (coalesced). Under the session's FIFO it flushes, claims the idle
host, and takes the outbox head, or appends the due delivery and its
follow-up as one batch and flushes it (the outbox: durable before the host
hears of it). The hand-over itself runs outside the FIFO, so a slow or hung
host never delays a tool call; taken, the follow-up is marked delivered;
not taken, it stays in the outbox and comes again after a backoff.
"""

from __future__ import annotations

import asyncio
import logging

from tickler.core import DeliverDue, Delivery, Wait, decide
from tickler.shell._handover import HandOver
from tickler.shell._handover_failures import HandoverFailures
from tickler.shell._host import AgentHost, FollowUp, IdleClaim
from tickler.shell._observer import NO_OBSERVER, RuntimeObserver
from tickler.shell._ports import NewEvent
from tickler.shell._records import FOLLOWUP, encode_followup, followup_for
from tickler.shell._retry import Backoff, Outage
from tickler.shell._unit_of_work import UnitOfWork

logger = logging.getLogger("tickler.runtime")


class Deliverer:
    """Delivers one session's due reminders to its host, in outbox order."""

    def __init__(
        self,
        work: UnitOfWork,
        host: AgentHost,
        failures: HandoverFailures,
        *,
        backoff: Backoff | None = None,
        observer: RuntimeObserver = NO_OBSERVER,
    ) -> None:
        self._work = work
        self._host = host
        self._handover = HandOver(work, host, failures, self, observer)
        self._backoff = backoff  # made when first needed: most sessions never retry
        self._observer = observer
        self._requested = False  # a drive was asked for (coalesced)
        self._just_idle = False  # the host said it is idle; a refused claim then backs off
        self._drive_task: asyncio.Task[None] | None = None
        self._idle_task: asyncio.Task[None] | None = None
        self._retry_task: asyncio.Task[None] | None = None
        self._drive_outage = Outage(logger, "schedule: looking for due deliveries")
        self._idle_outage = Outage(logger, "schedule: waiting for the agent to be idle")

    def request_drive(self) -> None:
        """Look for due work now (coalesced; runs in the session's FIFO)."""
        if not self._work.is_running():
            return
        self._requested = True
        if self._drive_task is None or self._drive_task.done():
            self._drive_task = asyncio.get_running_loop().create_task(
                self._drive_loop(), name="tickler-drive"
            )

    def retry_later(self) -> None:
        if self._work.is_stopping() or (
            self._retry_task is not None and not self._retry_task.done()
        ):
            return
        if self._backoff is None:
            self._backoff = Backoff()
        delay = self._backoff.next_delay()
        self._retry_task = asyncio.get_running_loop().create_task(self._retry_after(delay))

    async def _retry_after(self, delay: float) -> None:
        await self._work.clock.sleep(delay)
        self.request_drive()

    def reset_backoff(self) -> None:
        """A follow-up was taken: the next failure waits the shortest delay."""
        if self._backoff is not None:
            self._backoff.reset()

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
            self.retry_later()
            return
        self._idle_outage.ok()
        self._just_idle = True
        self.request_drive()

    async def settle(self) -> bool:
        """Run the delivery work due now to its end (see
        :meth:`~tickler.shell._runtime.ScheduleRuntime.settle`)."""
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
        if not self._work.is_running() or self._work.loaded.outbox:
            return False
        return self._peek_wait() is not None

    # -- the drive loop -----------------------------------------------------

    async def _drive_loop(self) -> None:
        work = self._work
        self._observer.bind_session(work.log.header.id)  # this task's log lines
        try:
            while self._requested and work.is_running():
                self._requested = False
                async with work.lock:
                    if not work.is_running():
                        return
                    try:
                        ready = await self._drive_once()
                    except Exception as exc:  # noqa: BLE001 - logged once per outage
                        self._drive_outage.failed(exc)
                        self.retry_later()
                        continue
                    self._drive_outage.ok()
                if ready is not None:
                    # Outside the FIFO: tool calls never wait on the host.
                    # This loop is the session's only driver, so at most one
                    # hand-over is in flight and the outbox order holds.
                    with self._observer.attempt(work.log.header.id, ready[1].key):
                        await self._handover.run(*ready)
        finally:
            # A finished task is not kept: thousands of idle sessions would
            # each hold one.
            if self._drive_task is asyncio.current_task():
                self._drive_task = None

    async def _drive_once(self) -> tuple[IdleClaim, FollowUp] | None:
        """Under the FIFO: the claim and the durable follow-up to hand over
        (the outbox head, or a due delivery appended and flushed now)."""
        work = self._work
        just_idle, self._just_idle = self._just_idle, False
        if not await work.flushed():
            self.retry_later()
            return None
        if not work.is_running():
            return None
        loaded = work.current()
        if not loaded.outbox and self._peek_wait() is not None:
            return None
        claim = self._host.claim_idle()
        if claim is None:
            # Busy: wait for idle once. Refused right after reporting idle
            # (the reference's livelock): back off instead of spinning.
            self.retry_later() if just_idle else self._wait_for_idle()
            return None
        message: FollowUp | None = None
        try:
            if loaded.outbox:
                message = next(iter(loaded.outbox.values()))
            else:
                message = await self._deliver_due()
        finally:
            if message is None or work.is_stopping():
                claim.release()
        return None if message is None or work.is_stopping() else (claim, message)

    def _peek_wait(self) -> Wait | None:
        """The Wait decision at the current wall clock (arming the timer),
        or None when something is due."""
        work = self._work
        now = work.clock.now_ms()
        _, result = decide(work.current().state, DeliverDue(), now)
        outcome = result.value_or(None)
        if isinstance(outcome, Wait):
            work.arm(outcome.next_wake)
            return outcome
        if outcome is None:  # the clock is outside years 0001-9999
            self.retry_later()
            return Wait(None)
        return None

    async def _deliver_due(self) -> FollowUp | None:
        """Append the due delivery and its follow-up as one batch and make it
        durable; the follow-up to hand over, or None."""
        work = self._work
        # Decide again under the claim, from a fresh clock sample: the clock
        # may have been rolled back since the timer fired.
        now = work.clock.now_ms()
        decision = decide(work.current().state, DeliverDue(), now)
        changes, result = decision
        outcome = result.value_or(None)
        if not isinstance(outcome, Delivery):
            work.arm(outcome.next_wake if isinstance(outcome, Wait) else None)
            return None
        message = followup_for(outcome)
        _log_skipped(outcome)
        followup = NewEvent(FOLLOWUP, encode_followup(message), now)
        if not work.commit(changes, decision.state, now, followup):
            self.retry_later()
            return None
        work.current().outbox[message.key] = message
        work.note_wake()
        if not await work.flushed():
            self.retry_later()  # stays in the outbox; the host is not told yet
            return None
        return message

    # -- stopping -----------------------------------------------------------

    async def stop(self, grace_s: float) -> None:
        """Drive no more: cancel the waits, and let a hand-over in flight
        finish for up to ``grace_s`` before the drive task is cancelled."""
        self._requested = False
        self._work.disarm()
        for task in (self._idle_task, self._retry_task):
            if task is not None:
                task.cancel()
        drive = self._drive_task
        if self._handover.in_flight is not None and drive is not None:
            # Let the hand-over finish and its outcome be recorded, for a
            # while; then a hung host must not hold the disposal.
            grace = asyncio.ensure_future(self._work.clock.sleep(grace_s))
            try:
                await asyncio.wait((drive, grace), return_when=asyncio.FIRST_COMPLETED)
            finally:
                grace.cancel()
            if self._handover.in_flight is not None:
                drive.cancel()

    async def join(self) -> None:
        """Wait for the drive task to end (after :meth:`stop`)."""
        if self._drive_task is not None:
            await asyncio.gather(self._drive_task, return_exceptions=True)


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
