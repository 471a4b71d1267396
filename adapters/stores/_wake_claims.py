"""A worker's claims on an embedded store (JSONL directory, SQLite file).

A claim is an open: the worker finds due sessions in the wake index and
opens each as any process does, taking its lock without waiting (a session
another process holds is left to it). Every ``sweep_s`` it also looks at the
sessions the index says are held by someone else: a holder that died
(``kill -9``) left its row held but its lock free (the kernel let it go), so
such a row is made due now and held by nobody, and the next claim opens the
session and writes its exact wake. (A live holder clears its row before it
lets its lock go, so a free lock under a held row means a dead holder.)
A session found locked is skipped for a moment (``BUSY_S``), so a live
holder's due session does not take a claim slot on every pass; one whose
files are gone leaves the index; one that cannot be read is set aside
(reported once, never due again until it is written).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Collection
from typing import Final, Generic, Protocol, TypeVar

from tickler.adapters.stores import _wakes as wakes
from tickler.adapters.stores._files import CorruptStore
from tickler.shell import SessionLocked, StoreError

logger = logging.getLogger("tickler.worker")

BUSY_S: Final = 1.0  # a session found locked is not tried again sooner
FAILED_S: Final = 60.0  # nor one that could not be opened (an I/O error)
SWEEP_S: Final = 2.0  # how often sessions held by others are tried
SET_ASIDE: Final = "out of the wake index until it is mended and opened again"
T = TypeVar("T")
L = TypeVar("L")
L_co = TypeVar("L_co", covariant=True)


class IndexedStore(Protocol[L_co]):
    """What claims need of a store."""

    async def index_write(self, job: Callable[..., T], *args: object) -> T: ...

    async def index_read(self, job: Callable[..., T], *args: object) -> T: ...

    async def open_claimed(self, session_id: str, holder: str) -> L_co: ...

    async def locks_free(self, session_ids: list[str]) -> list[bool]:
        """Whether nobody holds each session's lock now (tried, not taken)."""
        ...


class Claims(Generic[L]):
    """One worker's claims (its holder token, the sessions it skips)."""

    def __init__(self, store: IndexedStore[L], *, sweep_s: float = SWEEP_S) -> None:
        self.holder = wakes.holder_token("worker")
        self._store = store
        self._sweep_s = sweep_s
        self._busy: dict[str, float] = {}  # session -> skipped until (monotonic)
        self._next_sweep = 0.0

    async def claim_due(self, limit: int, now_ms: int, held: Collection[str] = ()) -> list[L]:
        """Open up to ``limit`` due sessions (and, at a sweep, sessions whose
        holder died), leaving out ``held`` (this worker's own)."""
        if limit <= 0:
            return []
        if time.monotonic() >= self._next_sweep:
            self._next_sweep = time.monotonic() + self._sweep_s
            await self._quietly(self._sweep(held))
        skip = self._skipped(held)
        ids = await self._store.index_read(wakes.due, now_ms, limit, skip)
        logs: list[L] = []
        for session_id in dict.fromkeys(ids):
            if len(logs) >= limit:
                break
            log = await self._claim(session_id)
            if log is not None:
                logs.append(log)
        return logs

    async def next_due(self, held: Collection[str] = ()) -> int | None:
        """The earliest wake of a session nobody holds (the ones skipped for
        being busy come back within :data:`BUSY_S`; the caller polls)."""
        return await self._store.index_read(wakes.next_due, self._skipped(held))

    async def _sweep(self, held: Collection[str]) -> None:
        """Rows held by a holder that died become due now, held by nobody."""
        others = [
            (sid, holder)
            for sid, holder in await self._store.index_read(wakes.held)
            if holder != self.holder and sid not in held
        ]
        if not others:
            return
        free = await self._store.locks_free([sid for sid, _ in others])
        dead = [row for row, is_free in zip(others, free, strict=True) if is_free]
        if dead:
            logger.info("worker: %d session(s) whose holder died: looked at again", len(dead))
            await self._store.index_write(wakes.orphaned, dead)

    def _skipped(self, held: Collection[str]) -> set[str]:
        now = time.monotonic()
        self._busy = {sid: until for sid, until in self._busy.items() if until > now}
        return {*held, *self._busy}

    async def _claim(self, session_id: str) -> L | None:
        try:
            return await self._store.open_claimed(session_id, self.holder)
        except SessionLocked:
            self._busy[session_id] = time.monotonic() + BUSY_S
        except FileNotFoundError:
            await self._quietly(self._store.index_write(wakes.forget, [session_id]))
        except CorruptStore as exc:
            logger.error("worker: %s; %s", exc, SET_ASIDE)
            await self._quietly(
                self._store.index_write(wakes.set_aside, session_id, self.holder, exc.reason)
            )
        except StoreError as exc:
            logger.warning(
                "worker: session %r: %s; trying again in %g s", session_id, exc, FAILED_S
            )
            self._busy[session_id] = time.monotonic() + FAILED_S
        return None

    async def _quietly(self, work: Awaitable[object]) -> None:
        try:
            await work
        except Exception as exc:  # noqa: BLE001 - derived data: the next pass tries again
            logger.warning("worker: the wake index: %s", exc)
