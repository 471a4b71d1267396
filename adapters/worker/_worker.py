"""``tickler worker``: deliver the reminders of sessions no process holds.

Any number of workers share one store: a PostgreSQL schema (on any number
of machines), or, on one machine, a JSONL directory or an SQLite file (the
embedded stores, with their wake index: see
:mod:`tickler.adapters.stores._wakes`). Each loops:

1. claim up to ``concurrency`` due sessions (PostgreSQL: a lease, ``FOR
   UPDATE SKIP LOCKED``; the embedded stores: the session's own lock, taken
   without waiting), so workers get disjoint sessions; a session open in a
   live process is held by it and never taken;
2. for each, in a task: open it as a live process does
   (:func:`~tickler.shell._session.open_log_session`: snapshot + tail, the
   same runtime, the target built by the factory) and run it until
   nothing is due (dispatch changes and follow-up appended and committed
   before the target hears of it; the hand-over outside the session's
   queue, with a total deadline per attempt), save a snapshot now and then,
   write the wake index and let the session go;
3. sleep until the earliest wake of a free session, a change in the index
   (PostgreSQL: a ``NOTIFY`` that a wake moved earlier; the embedded
   stores: another process committed to the index), a free slot, or the
   poll interval (the fallback when notifications are lost), whichever
   comes first.

Sessions are claimed earliest wake first (the wake index's order), so after
an outage the oldest due reminders go first; within a session, a missed
fixed-rate reminder is delivered once, its latest occurrence. With
``max_rate`` a worker hands over at most that many follow-ups a second
(:mod:`tickler.adapters.worker._pacing`). :meth:`Worker.readiness` says whether the
worker is serving (``tickler worker --health``: :mod:`tickler.adapters.worker._health`).

A target that fails is tried again with backoff (1, 2, 4 ... 60 s, kept in
the wake index), never lost. A session that cannot be read (a bad stored
row, a corrupt log) is reported in one log line naming it, taken out of the
wake index and let go; the rest of its batch is served. SIGTERM (or
SIGINT) stops claiming and lets the deliveries in flight finish, for at
most ``grace_s``; then, or at a second signal, they are cut and their
follow-ups stay in the outbox. A worker killed outright leaves its sessions
to the others: on PostgreSQL once its leases expire, on the embedded stores
at once (the kernel releases its locks; another worker's sweep finds them).
A follow-up committed but not yet marked delivered is handed over again
with the same key.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Final, Protocol, runtime_checkable

from tickler.adapters.stores._wake_claims import SET_ASIDE
from tickler.adapters.worker._health import HealthServer, Readiness, readiness_of
from tickler.adapters.worker._pacing import Pace
from tickler.core import DEFAULT_PROFILE, Profile
from tickler.shell import (
    DELIVERED,
    LEASE_MARGIN_S,
    AgentHost,
    Clock,
    FailureIndex,
    Session,
    SessionLog,
    StoreError,
    SystemClock,
    TimerHeap,
    WakeIndex,
    bind_session,
    open_log_session,
)

logger = logging.getLogger("tickler.worker")
_WHO: Final = f"{socket.gethostname()}:{os.getpid()}"

DEFAULT_CONCURRENCY: Final = 16
DEFAULT_POLL_S: Final = 1.0
SNAPSHOT_EVERY: Final = 64  # events after the last snapshot before a new one
RETRY_MOST_MS: Final = 60_000
PROGRESS_EVERY: Final = 10_000  # sessions run between two progress lines
READY_FLOOR_S: Final = 10.0


def readiness_bound(poll_s: float) -> float:
    """How old the last successful store round trip may be while a worker
    polling every ``poll_s`` is ready: three polls, at least 10 s (a busy
    worker makes one at least every poll; one slow query is no outage)."""
    return max(3 * poll_s, READY_FLOOR_S)


HostFactory = Callable[[Session], AgentHost]
"""Builds a claimed session's delivery target (see
:func:`~tickler.adapters.delivery._target.delivery_target`), or its agent (the
factory a live process gives ``open_session``)."""


@runtime_checkable
class ClaimedLog(SessionLog, WakeIndex, FailureIndex, Protocol):
    """A session a worker claimed: a log that keeps its wake index and
    failure count, and hears how the delivery went."""

    @property
    def failures(self) -> int:
        """Failed hand-overs of the outbox's first follow-up, as claimed
        (the worker's backoff grows with it)."""
        ...

    def defer(self, until: int) -> None:
        """A hand-over failed: count it and look again at ``until``."""
        ...

    def delivered_all(self) -> None:
        """Every follow-up was taken."""
        ...


class WakeStore(Protocol):
    """A store a worker serves: :class:`~tickler.adapters.stores.PostgresStore`,
    :class:`~tickler.adapters.stores.JsonlStore` or
    :class:`~tickler.adapters.stores.SqliteStore`."""

    @property
    def where(self) -> str:
        """What the worker's log lines call the store."""
        ...

    @property
    def unreadable(self) -> tuple[type[StoreError], ...]:
        """The errors that mean a session cannot be read (set aside)."""
        ...

    async def prepare_worker(self, progress: Callable[[int], None] | None = None) -> None:
        """Before the first claim: fail at once when the store cannot be used
        (StoreError); bring the wake index up to date (the JSONL store
        compares its files with it in the background, beside the claims)."""
        ...

    async def claim_due(self, limit: int, now_ms: int) -> Sequence[ClaimedLog]: ...

    async def next_due(self) -> int | None: ...

    def changes(self) -> AsyncIterator[None]:
        """Yields when a wake may have moved earlier (runs until cancelled)."""
        ...

    async def close(self) -> None: ...


def shortest_lease_s(timeout: float) -> float:
    """The shortest lease under which attempts of ``timeout`` seconds can be
    made: a lease is renewed every third of it, so only two thirds of it are
    sure to be left when an attempt starts, and the runtime wants the
    deadline plus :data:`~tickler.shell._runtime.LEASE_MARGIN_S` left (see
    :class:`~tickler.shell._ports.LeasedLog`). With a shorter lease no
    attempt is ever made."""
    return 1.5 * (timeout + LEASE_MARGIN_S)


@dataclass
class WorkerStats:
    sessions: int = 0  # sessions leased and run
    settled: int = 0  # of which everything due was delivered
    deferred: int = 0  # of which a hand-over failed (tried again later)
    unreadable: int = 0  # of which the log could not be read (set aside)


class Worker:
    """One worker process's loop; see the module docstring."""

    def __init__(
        self,
        store: WakeStore,
        deliver: HostFactory,
        *,
        concurrency: int = DEFAULT_CONCURRENCY,
        poll_s: float = DEFAULT_POLL_S,
        clock: Clock | None = None,
        grace_s: float | None = None,
        profile: Profile = DEFAULT_PROFILE,
        max_rate: float | None = None,
        ready_bound_s: float | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if not poll_s > 0:
            raise ValueError("the poll interval must be positive")
        if ready_bound_s is not None and not ready_bound_s > 0:
            raise ValueError("the readiness bound must be positive")
        self.store = store
        self.stats = WorkerStats()
        self._deliver = deliver
        self._concurrency = concurrency
        self._poll_s = poll_s
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._grace_s = grace_s
        self._profile: Profile = profile
        self._timers = TimerHeap(self._clock)
        self._active: set[asyncio.Task[None]] = set()
        self._look = asyncio.Event()  # look for due sessions now
        self._backlog = False  # the last claim was full: more is probably due
        self._refill = max(1, concurrency // 2)
        self._pace = Pace(max_rate, self._clock.now_ms()) if max_rate is not None else None
        self.ready_bound_s = ready_bound_s if ready_bound_s is not None else readiness_bound(poll_s)
        self._monotonic = monotonic
        self._stop: asyncio.Event | None = None  # set while running
        self._started = False  # the store answered prepare_worker
        self._last_ok = 0.0  # monotonic time of the last successful store round trip

    def readiness(self) -> Readiness:
        """Ready: started, not stopping, and the last successful store round
        trip (a claim, a look at the wake index) at most ``ready_bound_s``
        old. A worker that cannot reach its store, or whose store calls hang
        (a half-open connection until it is cut), is not ready."""
        return readiness_of(
            started=self._stop is not None and self._started,
            stopping=self._stop is not None and self._stop.is_set(),
            since_ok_s=self._monotonic() - self._last_ok,
            bound_s=self.ready_bound_s,
        )

    @property
    def pace(self) -> Pace | None:
        """The delivery rate limit, if any (``max_rate``)."""
        return self._pace

    def _store_ok(self) -> None:
        self._last_ok = self._monotonic()

    async def run(self, stop: asyncio.Event) -> None:
        """Deliver until ``stop`` is set; then finish (see ``grace_s``).
        Raises :class:`~tickler.shell._ports.StoreError` at once when the
        store cannot be used at the start (no schema, no database)."""
        self._stop = stop
        # Fail now, not once per poll, when the schema is missing or the
        # database cannot be reached at all.
        await self.store.prepare_worker(self._progress)
        self._store_ok()
        self._started = True
        rate = "" if self._pace is None else f", at most {self._pace.rate:g} hand-overs/s"
        logger.info(
            "worker %s: %s, concurrency %d%s", _WHO, self.store.where, self._concurrency, rate
        )
        listener = asyncio.get_running_loop().create_task(self._listen())
        stopping = asyncio.get_running_loop().create_task(stop.wait())
        try:
            while not stop.is_set():
                self._look.clear()  # before the claim: a NOTIFY during it counts
                timeout = await self._claim_round()
                if timeout > 0 and not self._look.is_set():
                    looking = asyncio.ensure_future(self._look.wait())
                    await asyncio.wait(
                        [looking, stopping], timeout=timeout, return_when=asyncio.FIRST_COMPLETED
                    )
                    looking.cancel()
        finally:
            stopping.cancel()
            listener.cancel()
            await asyncio.gather(listener, stopping, return_exceptions=True)
            await self._finish()

    async def _claim_round(self) -> float:
        """Lease and start what is due; the seconds to sleep after."""
        free = self._concurrency - len(self._active)
        if free <= 0 or (self._backlog and free < self._refill):
            # A backlog is claimed in batches, not one query per finished
            # session: a finishing session wakes us when enough are free.
            await self._heartbeat()
            return self._poll_s
        now = self._clock.now_ms()
        limit = free
        if self._pace is not None:
            want = self._pace.want(free)
            if self._pace.available(now) < want:  # no token: nothing is claimed
                await self._heartbeat()
                return min(self._poll_s, self._pace.wait_s(want, now))
            limit = min(free, self._pace.available(now))
        try:
            logs = await self.store.claim_due(limit, now)
            self._store_ok()
            if self._pace is not None:
                self._pace.take(len(logs), now)
            for log in logs:
                task = asyncio.get_running_loop().create_task(self._run_session(log))
                self._active.add(task)
                task.add_done_callback(self._session_done)
            self._backlog = len(logs) == free
            if self._backlog:
                return self._poll_s  # full: a finishing session wakes us
            if len(logs) == limit and self._pace is not None:
                # The rate, not the slots, bounded the claim: more is due.
                left = free - len(logs)
                return min(self._poll_s, self._pace.wait_s(self._pace.want(left), now))
            due = await self.store.next_due()
            self._store_ok()
        except StoreError as exc:
            logger.warning("worker: %s; trying again in %g s", exc, self._poll_s)
            return self._poll_s
        if due is None:
            return self._poll_s
        return min(self._poll_s, max(0.0, (due - self._clock.now_ms()) / 1000))

    async def _heartbeat(self) -> None:
        """While nothing is claimed (every slot busy, or no token): one look
        at the wake index per poll, so readiness still means "the store
        answers"."""
        if self._monotonic() - self._last_ok < self._poll_s:
            return
        try:
            await self.store.next_due()
        except StoreError as exc:
            logger.debug("worker: %s", exc)
            return
        self._store_ok()

    def _session_done(self, task: asyncio.Task[None]) -> None:
        self._active.discard(task)
        self._look.set()
        if not task.cancelled() and task.exception() is not None:
            logger.error("worker: a session run failed", exc_info=task.exception())

    @staticmethod
    def _progress(checked: int) -> None:
        if checked and not checked % 10_000:
            logger.info("worker: checked %d session(s) against the wake index", checked)

    async def _run_session(self, log: ClaimedLog) -> None:
        """Run one leased session until nothing is due (the runtime hands a
        follow-up over only while the lease outlasts the target's deadline,
        as in a live process on PostgreSQL, so a worker that stalled past
        its lease never delivers beside the one that took the session
        over); leaving the block commits the wake index and ends the lease."""
        bind_session(log.header.id)  # this task's log lines name it
        self.stats.sessions += 1
        if not self.stats.sessions % PROGRESS_EVERY:  # a backlog (a rebuilt index) shows progress
            logger.info("worker: %d session(s) run so far", self.stats.sessions)
        ran = False
        start = log.length
        try:
            async with open_log_session(
                log,
                host=self._deliver,
                clock=self._clock,
                timers=self._timers,
                snapshot_after=SNAPSHOT_EVERY,
                on_start_error=lambda exc: self._not_started(log, exc),
                profile=self._profile,
            ) as session:
                settled = await session.settle()
                self._settled(log, session, settled)
                ran = True
                self._charge(log, start, settled)
        except StoreError as exc:
            if ran:
                # Closing failed (the session's warning says why): its lease
                # expires, and another worker takes the session over.
                logger.debug("worker: session %s: %s", log.header.id, exc)
            elif isinstance(exc, self.store.unreadable):  # found while reading the log
                self.stats.unreadable += 1
                logger.error("worker: %s; %s", exc, SET_ASIDE)
            else:
                raise

    def _not_started(self, log: ClaimedLog, exc: Exception) -> None:
        """Before the log closes: a session that cannot be read leaves the
        wake index; any other failure looks again later, not in a hot loop."""
        if isinstance(exc, self.store.unreadable):
            log.set_next_wake(None)
        else:
            log.defer(self._clock.now_ms() + RETRY_MOST_MS)

    def _charge(self, log: ClaimedLog, start: int, settled: bool) -> None:
        """Under a rate limit: the claim paid for one hand-over; charge the
        others this session made (marks, and a failed last attempt)."""
        if self._pace is None:
            return
        marks = 0
        with contextlib.suppress(StoreError):  # events read back: memory, or a page
            marks = sum(1 for item in log.events(start) if item.type == DELIVERED)
        self._pace.charge(marks + (0 if settled else 1) - 1, self._clock.now_ms())

    def _settled(self, log: ClaimedLog, session: Session, settled: bool) -> None:
        if settled:
            self.stats.settled += 1
            log.delivered_all()
        elif session.fault is None:
            self.stats.deferred += 1
            delay = min(RETRY_MOST_MS, 1000 * 2 ** min(log.failures, 16))
            log.defer(self._clock.now_ms() + delay)
        else:  # reported by the runtime; its wake index is cleared
            self.stats.unreadable += 1

    async def _listen(self) -> None:
        """Look again whenever the store says a wake may have moved earlier."""
        async for _ in self.store.changes():
            self._look.set()

    async def _finish(self) -> None:
        """Let the sessions in flight end, for at most ``grace_s``; cut the
        rest (their follow-ups stay in the outbox)."""
        if self._active:
            logger.info("worker: finishing %d session(s) in flight", len(self._active))
            _, late = await asyncio.wait(set(self._active), timeout=self._grace_s)
            for task in late:
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)
        await self._timers.close()


async def run_worker(
    store: WakeStore,
    deliver: HostFactory,
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
    poll_s: float = DEFAULT_POLL_S,
    grace_s: float | None = None,
    signalled_early: Callable[[], bool] | None = None,
    profile: Profile = DEFAULT_PROFILE,
    max_rate: float | None = None,
    health: tuple[str, int] | None = None,
) -> WorkerStats:
    """Run a worker until SIGTERM or SIGINT (a second one cuts the grace
    period short); closes ``store`` at the end. ``signalled_early`` tells
    whether such a signal came while the process was starting (the CLI
    catches them from its first moment), so it stops at once. ``health``
    (host, port) serves ``/livez`` and ``/readyz`` from the start (raises
    :class:`~tickler.adapters.worker._health.HealthUnavailable` when it cannot
    listen there)."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    worker = Worker(
        store,
        deliver,
        concurrency=concurrency,
        poll_s=poll_s,
        grace_s=grace_s,
        profile=profile,
        max_rate=max_rate,
    )
    main = asyncio.current_task()

    def on_signal() -> None:
        if stop.is_set() and main is not None:
            logger.info("worker: second signal: cutting the deliveries in flight")
            for task in list(worker._active):
                task.cancel()
            return
        logger.info("worker: stopping (deliveries in flight finish first)")
        stop.set()

    server = HealthServer(worker.readiness)
    try:
        if health is not None:
            host, port = await server.start(*health)
            shown = f"[{host}]" if ":" in host else host
            logger.info("worker: health on http://%s:%d/livez and /readyz", shown, port)
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, on_signal)
        if signalled_early is not None and signalled_early():
            stop.set()
        await worker.run(stop)
    finally:
        for signum in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(Exception):
                loop.remove_signal_handler(signum)
        await server.close()
        await store.close()
    logger.info(
        "worker %s stopped: %d session(s) run, %d deferred",
        _WHO,
        worker.stats.sessions,
        worker.stats.deferred,
    )
    return worker.stats
