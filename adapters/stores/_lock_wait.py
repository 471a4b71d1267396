"""Waiting for a session a worker holds.

A worker holds a cold session only while it delivers (each attempt bounded
by the target's deadline), so a live process that opens the session
meanwhile waits for it rather than failing: up to ``lock_wait_s`` (default
:data:`DEFAULT_LOCK_WAIT_S`), trying again every few milliseconds, doubling
to 100 ms. A session held by another live process is refused at once
(SessionLocked, after a few tries within some 30 ms: a worker's sweep
tries a lock for an instant): two live writers of one session are a
mistake to report, not a turn to wait for. A holder the wake index does not
name yet (the lock taken, its row not written: a moment) is waited for
like a worker.
"""

from __future__ import annotations

import asyncio
import time
from typing import Final

from tickler.adapters.stores._wakes import is_worker

DEFAULT_LOCK_WAIT_S: Final = 30.0
_FIRST_S: Final = 0.005
_MOST_S: Final = 0.1
_QUICK_TRIES: Final = 3  # whoever holds it: a lock tried for an instant goes at once


class LockWait:
    """One opener's wait for a session's lock."""

    def __init__(self, wait_s: float) -> None:
        self._deadline = time.monotonic() + wait_s
        self._delay = _FIRST_S
        self._tries = 0

    async def again(self, holder: str | None) -> bool:
        """After SessionLocked: whether to try again (having slept), given
        the holder the wake index names."""
        self._tries += 1
        if holder is not None and not is_worker(holder) and self._tries > _QUICK_TRIES:
            return False
        left = self._deadline - time.monotonic()
        if left <= 0:
            return False
        await asyncio.sleep(min(self._delay, left))
        self._delay = min(self._delay * 2, _MOST_S)
        return True
