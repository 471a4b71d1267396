"""Group commit on the event loop.

``barrier()`` waits for one commit *round* that starts after the call. A round
serves every barrier waiting when it starts, so N concurrent flushes (one
session with many appends in flight, or many sessions) share one fsync or one
COMMIT. The round's blocking part runs on a worker thread; everything else
(what to commit, who to wake) stays on the loop, so a store needs no locks
and the loop never waits on the disk. A store is used from one event loop at
a time.

:class:`GroupCommit` runs rounds that are coroutines, in a task.
:class:`Rounds` runs rounds that report back by callback: no task and no
loop iteration per round, and a round that finds the committer idle starts
inside ``barrier()`` itself, before any other ready task runs, so the disk
is busy at once (a batching window of zero: what arrives meanwhile shares
the next round). :class:`SyncThread` is the thread such rounds hand their
syncs to.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Awaitable, Callable, Iterable
from typing import Protocol, TypeAlias

from tickler.shell import HAND_BACKS, StoreError

Done: TypeAlias = Callable[[BaseException | None], None]
Job: TypeAlias = Callable[[], None]


class GroupCommit:
    def __init__(self, commit_round: Callable[[], Awaitable[None]]) -> None:
        self._round = commit_round
        self._waiters: list[asyncio.Future[None]] = []
        self._task: asyncio.Task[None] | None = None

    async def barrier(self) -> None:
        """Return after a commit round that started after this call succeeded;
        raise :class:`StoreError` when that round failed."""
        loop = asyncio.get_running_loop()
        waiter = loop.create_future()
        self._waiters.append(waiter)
        task = self._task
        if task is None or task.done() or task.get_loop() is not loop:
            self._task = loop.create_task(self._run())
        await waiter

    async def idle(self) -> None:
        """Wait until no round is running."""
        task = self._task
        while (
            task is not None and not task.done() and task.get_loop() is asyncio.get_running_loop()
        ):
            await asyncio.wait([task])
            task = self._task

    async def _run(self) -> None:
        while self._waiters:
            waiters, self._waiters = self._waiters, []
            error: Exception | None = None
            try:
                await self._round()
            except Exception as exc:  # noqa: BLE001 - handed to every waiter
                error = exc
            _wake(waiters, error)


class Rounds:
    """Group commit driven by callbacks.

    ``start(done)`` begins a round: it does the round's quick part at once
    and hands the blocking part to a thread, or raises (the round failed);
    when it does not raise it calls ``done(error)`` exactly once, on the
    loop, when the round is over.
    """

    def __init__(self, start: Callable[[Done], None]) -> None:
        self._start = start
        self._waiters: list[asyncio.Future[None]] = []
        self._running: list[asyncio.Future[None]] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._idle: list[asyncio.Future[None]] = []

    async def barrier(self) -> None:
        """Return after a round that started after this call succeeded;
        raise :class:`StoreError` when that round failed."""
        loop = asyncio.get_running_loop()
        if self._running is not None and self._loop is not loop:
            assert self._loop is not None
            if not self._loop.is_closed():
                raise StoreError("the store is used from two event loops at once")
            self._running, self._waiters = None, []  # its loop ended with a round in flight
        waiter = loop.create_future()
        self._waiters.append(waiter)
        if self._running is None:
            self._next(loop)
        await waiter

    async def idle(self) -> None:
        """Wait until no round is running."""
        loop = asyncio.get_running_loop()
        while self._running is not None and self._loop is loop:
            waiter = loop.create_future()
            self._idle.append(waiter)
            await waiter

    def _next(self, loop: asyncio.AbstractEventLoop) -> None:
        waiters, self._waiters = self._waiters, []
        self._running, self._loop = waiters, loop
        try:
            self._start(self._done)
        except Exception as exc:  # noqa: BLE001 - handed to every waiter
            self._done(exc)

    def _done(self, error: BaseException | None) -> None:
        waiters, self._running = self._running or [], None
        _wake(waiters, error)
        if self._waiters and self._loop is not None:
            self._next(self._loop)
            return
        idle, self._idle = self._idle, []
        for waiter in idle:
            if not waiter.done():
                waiter.set_result(None)


class SyncThread:
    """One daemon thread that runs blocking jobs in order and hands each
    outcome to its ``done`` on the loop that submitted it. Cheaper per job
    than an executor and ``run_in_executor`` (no concurrent future, no
    chained asyncio future): one queue put, one wake-up of the loop."""

    def __init__(self, name: str) -> None:
        self._name = name
        self._jobs: queue.SimpleQueue[tuple[asyncio.AbstractEventLoop, Job, Done] | None] = (
            queue.SimpleQueue()
        )
        self._thread: threading.Thread | None = None

    def submit(self, job: Job, done: Done) -> None:
        loop = asyncio.get_running_loop()
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
            self._thread.start()
        HAND_BACKS.started()  # the timer heap lets this thread take the GIL
        self._jobs.put((loop, job, done))

    def stop(self) -> None:
        """Finish the queued jobs and end the thread (blocking)."""
        if self._thread is not None:
            self._jobs.put(None)
            self._thread.join()
            self._thread = None

    def _run(self) -> None:
        while (item := self._jobs.get()) is not None:
            loop, job, done = item
            error: BaseException | None = None
            try:
                job()
            except BaseException as exc:  # noqa: BLE001 - handed to ``done``
                error = exc
            try:
                loop.call_soon_threadsafe(_handed_back, done, error)
            except RuntimeError:  # the loop was closed meanwhile
                HAND_BACKS.finished()


def _handed_back(done: Done, error: BaseException | None) -> None:
    """A sync thread's job, back on its loop."""
    HAND_BACKS.finished()
    done(error)


def _wake(waiters: list[asyncio.Future[None]], error: BaseException | None) -> None:
    for waiter in waiters:
        if waiter.done():  # its flush was cancelled
            continue
        if error is None:
            waiter.set_result(None)
        else:
            # One exception object per waiter: each task gets its own traceback.
            failure = StoreError(f"flush failed: {error}")
            failure.__cause__ = error
            waiter.set_exception(failure)


class _Closable(Protocol):
    async def close(self) -> None: ...


async def close_all(logs: Iterable[_Closable]) -> None:
    """Close every log, even when one fails; raise the first failure."""
    errors: list[StoreError] = []
    for log in list(logs):
        try:
            await log.close()
        except StoreError as exc:
            errors.append(exc)
    if errors:
        raise errors[0]
