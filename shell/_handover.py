"""One hand-over of a durable follow-up to the host, and its outcome.

The deliverer's drive task runs it outside the session's FIFO (no task per
delivery: a burst hands over thousands). Taken, the follow-up leaves the
outbox and is marked delivered; not taken (the host raised, or a lease was
too short to start), it stays in the outbox, its failure is counted and a
retry is asked for; cancelled by the disposal, it stays in the outbox.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Final, Protocol

from tickler.shell._handover_failures import HandoverFailures
from tickler.shell._host import AgentHost, FollowUp, IdleClaim, TimedHost
from tickler.shell._observer import RuntimeObserver
from tickler.shell._ports import LeasedLog, NewEvent
from tickler.shell._records import DELIVERED, encode_delivered
from tickler.shell._unit_of_work import UnitOfWork

logger = logging.getLogger("tickler.runtime")

LEASE_MARGIN_S: Final = 1.0
"""A hand-over under a lease starts only when the lease outlasts the host's
deadline (:class:`~tickler.shell._host.TimedHost`) by this much."""


class LeaseTooShort(Exception):
    """A hand-over was not started: the log's lease may end before it would."""


class Retries(Protocol):
    """What a hand-over asks of its deliverer afterwards."""

    def request_drive(self) -> None: ...

    def retry_later(self) -> None: ...

    def reset_backoff(self) -> None: ...


class HandOver:
    """Hands one session's follow-ups to its host, one at a time."""

    def __init__(
        self,
        work: UnitOfWork,
        host: AgentHost,
        failures: HandoverFailures,
        retries: Retries,
        observer: RuntimeObserver,
    ) -> None:
        self._work = work
        self._host = host
        self._failures = failures
        self._retries = retries
        self._observer = observer
        self.in_flight: FollowUp | None = None  # the drive task waits on the host with it
        self._lease = work.log if isinstance(work.log, LeasedLog) else None
        self._host_deadline = host.timeout if isinstance(host, TimedHost) else 0.0

    async def run(self, claim: IdleClaim, message: FollowUp) -> None:
        """Give ``message`` to the host under ``claim``. ``dispose()``
        cancels the drive task while it waits here once its grace is over,
        so a hung host cannot hold the disposal; cancelled or failed, the
        follow-up stays in the outbox and comes again. Under a lease, a
        hand-over the lease might not outlast is not started (a failed
        attempt: the lease may be renewed meanwhile)."""
        work = self._work
        if work.is_stopping():
            claim.release()
            return
        refused = self._lease_refusal(message)
        if refused is not None:
            claim.release()
            if not work.check_lost():
                await self._failed(message, refused)
            return
        error: Exception | None = None
        self.in_flight = message
        try:
            await self._host.followup(message)
        except asyncio.CancelledError:
            if not work.is_stopping():
                raise  # not the disposal's: not ours to swallow
            _uncancel()
            return
        except Exception as exc:  # noqa: BLE001 - any host failure means "not taken"
            error = exc
        finally:
            self.in_flight = None
            claim.release()
        if error is not None:
            await self._failed(message, error)
            return
        await self._taken(message)

    async def _taken(self, message: FollowUp) -> None:
        """The host took ``message``: mark it delivered, look for the next."""
        work = self._work
        self._observer.delivered(message, work.clock)
        loaded = work.current()
        loaded.outbox.pop(message.key, None)
        loaded.failures.pop(message.key, None)
        work.note_wake()
        self._failures.taken(message.key)
        self._retries.reset_backoff()
        async with work.lock:
            _mark_delivered(work, message)
            if work.is_stopping():  # the log closes next: make the mark durable first
                await work.flushed()
        self._retries.request_drive()  # one follow-up per claim; look for the next

    def _lease_refusal(self, message: FollowUp) -> LeaseTooShort | None:
        """Why a hand-over of ``message`` must not start under the log's
        lease now, or None (no lease, or it outlasts the attempt)."""
        if self._lease is None:
            return None
        needed = self._host_deadline + LEASE_MARGIN_S
        if self._lease.lost is None and self._lease.lease_left() >= needed:
            return None
        return LeaseTooShort(
            f"the lease of session {self._work.log.header.id!r} might end before the hand-over "
            f"of {message.key} would; it was not started"
        )

    async def _failed(self, message: FollowUp, error: BaseException) -> None:
        """Retry with backoff (a target that is down loses nothing), and keep
        it visible (:class:`~tickler.shell._handover_failures.HandoverFailures`)."""
        self._observer.delivery_failed(error)
        count = self._failures.failed(message.key, error)
        self._retries.retry_later()
        await self._failures.record(message.key, count)


def _mark_delivered(work: UnitOfWork, message: FollowUp) -> None:
    try:
        ack = NewEvent(DELIVERED, encode_delivered(message.key), work.clock.now_ms())
        work.log.append([ack])
    except Exception:
        # The host took it; without the mark it is handed over again
        # after a restart, and the host drops the repeat by its key.
        logger.warning("schedule: could not mark %s delivered", message.key, exc_info=True)


def _uncancel() -> None:
    """The drive task swallowed the disposal's cancellation: say so, so an
    ``asyncio.timeout`` it may still enter is not confused by it."""
    task = asyncio.current_task()
    if task is not None:
        task.uncancel()
