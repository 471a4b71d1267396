"""The dashboard's page, read at most once per refresh interval and shared:
every request within the interval gets the page of the latest read, and
requests that come while a read runs wait for that one read, not for a
read each. The page says when its data was read ("as of")."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class SharedRead(Generic[T]):
    """``read(now_ms)`` run at most once per ``max_age_ms`` (by ``now``,
    epoch milliseconds, counted from the end of the read: one slower than
    the interval is not started again at once; a clock that went back
    reads again), its result shared by every caller meanwhile. A read that
    fails is not kept: each caller waiting on it gets its error, and the
    next call reads again."""

    def __init__(
        self, read: Callable[[int], Awaitable[T]], now: Callable[[], int], max_age_ms: int
    ) -> None:
        self._read = read
        self._now = now
        self._max_age_ms = max_age_ms
        self._latest: tuple[int, T] | None = None
        self._running: asyncio.Future[T] | None = None

    async def get(self) -> T:
        now_ms = self._now()
        latest = self._latest
        if latest is not None and 0 <= now_ms - latest[0] < self._max_age_ms:
            return latest[1]
        running = self._running
        if running is None:
            running = self._running = asyncio.ensure_future(self._refresh(now_ms))
            running.add_done_callback(_retrieved)
        # A caller that goes away (the client hung up) does not stop the
        # read the others wait for.
        return await asyncio.shield(running)

    def forget(self) -> None:
        """The latest read is stale (an operator changed a session): the
        next call reads again."""
        self._latest = None

    async def _refresh(self, now_ms: int) -> T:
        try:
            value = await self._read(now_ms)
            self._latest = (self._now(), value)
            return value
        finally:
            self._running = None


def _retrieved(future: asyncio.Future[T]) -> None:
    """Its error reached every caller still waiting; none is left unheard."""
    if not future.cancelled():
        future.exception()
