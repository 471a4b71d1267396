"""Group commit on the event loop.

``barrier()`` waits for one commit *round* that starts after the call. A round
serves every barrier waiting when it starts, so N concurrent flushes (one
session with many appends in flight, or many sessions) share one fsync or one
COMMIT. The round's blocking part runs on a worker thread; everything else
(what to commit, who to wake) stays on the loop, so a store needs no locks
and the loop never waits on the disk. A store is used from one event loop at
a time.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from typing import Protocol

from tickler.shell.ports import StoreError


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


def _wake(waiters: list[asyncio.Future[None]], error: Exception | None) -> None:
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
