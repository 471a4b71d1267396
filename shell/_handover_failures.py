"""The failed hand-overs of a session's outbox, counted and kept.

Each follow-up's failures are counted live (``pending_deliveries`` shows
them), in the log's failure index when it has one, and in the log itself
at the 1st, 2nd, 4th, 8th... failure (bounded growth while a target is
down), counted across runtimes: a runtime starts from what the log (and
its failure index) kept, and one that stops records the count it reached
when the log would not otherwise know it.
"""

from __future__ import annotations

import logging
from typing import Final

from tickler.shell._loading import Loaded
from tickler.shell._pending import PendingDelivery
from tickler.shell._phase import Phase
from tickler.shell._ports import FailureIndex, NewEvent
from tickler.shell._records import (
    FOLLOWUP_FAILED,
    FailureCount,
    encode_followup_failed,
    error_text,
)
from tickler.shell._unit_of_work import UnitOfWork

logger = logging.getLogger("tickler.runtime")

_NO_FAILURES: Final = FailureCount()


class HandoverFailures:
    """The failure counts of the follow-ups in one session's outbox."""

    def __init__(self, work: UnitOfWork) -> None:
        self._work = work
        self._counts: dict[str, FailureCount] = {}  # failed hand-overs by key, live
        self._index = work.log if isinstance(work.log, FailureIndex) else None

    def load(self, loaded: Loaded) -> None:
        """The failure counts so far: the log's records, raised to the
        failure index's count for the outbox head (it also counts the
        failures after the last record)."""
        self._counts = dict(loaded.failures)
        if self._index is None or not loaded.outbox:
            return
        head = next(iter(loaded.outbox))
        count = self._counts.get(head, _NO_FAILURES)
        self._counts[head] = count.at_least(self._index.handover_failures)

    def rows(self, loaded: Loaded) -> tuple[PendingDelivery, ...]:
        """The outbox with each follow-up's failures so far and last error."""
        rows = []
        for message in loaded.outbox.values():
            failures = self._counts.get(message.key, _NO_FAILURES)
            rows.append(PendingDelivery.of(message, failures.total, failures.error))
        return tuple(rows)

    def taken(self, key: str) -> None:
        """The host took the follow-up ``key``: its count ends."""
        failed = self._counts.pop(key, _NO_FAILURES)
        if failed.total:
            logger.warning(
                "schedule: follow-up %s taken after %d failed hand-overs", key, failed.total
            )
        if self._index is not None:
            self._index.set_handover_failures(0)

    def failed(self, key: str, error: BaseException) -> FailureCount:
        """One more failed hand-over of ``key``: counted and logged (a
        warning at the 1st, 2nd, 4th, 8th... failure); its count now."""
        text = error_text(error)
        count = self._counts.get(key, _NO_FAILURES).failed(text)
        self._counts[key] = count
        if self._index is not None:
            self._index.set_handover_failures(count.total)
        logger.log(
            logging.WARNING if _sparse(count) else logging.DEBUG,
            "schedule: follow-up %s not taken (failure %d: %s); retrying",
            key,
            count.total,
            text,
        )
        logger.debug("schedule: follow-up %s failure", key, exc_info=error)
        return count

    async def record(self, key: str, count: FailureCount) -> None:
        """Keep ``count`` in the log at the 1st, 2nd, 4th, 8th... failure."""
        work = self._work
        if not _sparse(count) or work.phase is Phase.LOST:
            return
        text = count.error or ""
        record = encode_followup_failed(key, count.last, text)
        async with work.lock:
            try:
                work.log.append([NewEvent(FOLLOWUP_FAILED, record, work.clock.now_ms())])
            except Exception:
                logger.debug("schedule: could not record the failure", exc_info=True)
                return
            loaded = work.current()
            if key in loaded.outbox:
                recorded = loaded.failures.get(key, _NO_FAILURES)
                loaded.failures[key] = recorded.recorded(count.last, text)
            if work.is_stopping():  # the log closes next
                await work.flushed()

    async def keep(self) -> None:
        """Record the failure count each follow-up reached, when the log has
        no failure index and this runtime counted failures it did not record
        (the log keeps the 1st, 2nd, 4th... only): else the next runtime
        would count from the last record again. One record per follow-up
        and runtime at most."""
        work = self._work
        loaded = work.loaded
        if self._index is not None or work.fault is not None:
            return
        counts = {
            key: live
            for key in loaded.outbox
            if (live := self._counts.get(key)) is not None
            and live.total > loaded.failures.get(key, _NO_FAILURES).total
        }
        if not counts:
            return
        now = work.clock.now_ms()
        records = [encode_followup_failed(k, c.last, c.error or "") for k, c in counts.items()]
        batch = [NewEvent(FOLLOWUP_FAILED, record, now) for record in records]
        async with work.lock:
            try:
                work.log.append(batch)
            except Exception:
                logger.debug("schedule: could not record the failure counts", exc_info=True)
                return
            loaded.failures.update(counts)
            await work.flushed()


def _sparse(count: FailureCount) -> bool:
    """The 1st, 2nd, 4th, 8th... failure."""
    return count.total & (count.total - 1) == 0
