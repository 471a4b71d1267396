"""A session process that is SIGKILLed between a durable append and the
answer: run as ``python idempotency_child.py STORE_DIR MODE``.

``create``: one ``schedule_create`` with a ``request_id``; ``pause``: a
create, then ``schedule_update`` pausing it; ``snooze``: a create, then a
snooze to before its first occurrence (its series continues apart). The store's log is wrapped so
that once the targeted change is flushed (durable: the barrier returned),
the process kills itself before the runtime can answer the call. The clock
is fixed, so the answer the call would have given is known in advance."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tickler.adapters.stores._jsonl import JsonlStore
from tickler.shell._clock import VirtualClock
from tickler.shell._host import FollowUp, IdleClaim
from tickler.shell._ports import NewEvent, SessionLog
from tickler.shell._session import open_session

T0 = 1_785_931_200_000  # 2026-08-05T12:00:00.000Z
CREATE = {"prompt": "stand-up notes", "after_seconds": 600, "request_id": "req-42"}
PLAIN = {"prompt": "water", "every_seconds": 3600}
PAUSE = {"id": "schedule-1", "paused": True}
SNOOZE = {"id": "schedule-1", "snooze_seconds": 600}


class KillAfterDurable:
    """A session log that SIGKILLs its process right after the flush that
    makes a change holding ``marker`` durable."""

    def __init__(self, inner: SessionLog, marker: bytes) -> None:
        self._inner = inner
        self._marker = marker
        self._armed = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def append(self, batch: Sequence[NewEvent]) -> None:
        self._inner.append(batch)
        self._armed = self._armed or any(self._marker in event.data for event in batch)

    async def flush(self) -> None:
        await self._inner.flush()
        if self._armed:
            os.kill(os.getpid(), signal.SIGKILL)


class KillingStore:
    def __init__(self, inner: JsonlStore, marker: bytes) -> None:
        self._inner = inner
        self._marker = marker

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def open(self, session_id: str, *, created_at: int) -> KillAfterDurable:
        log = await self._inner.open(session_id, created_at=created_at)
        return KillAfterDurable(log, self._marker)


class Quiet:
    def claim_idle(self) -> IdleClaim | None:
        return None

    async def when_idle(self) -> None:
        await asyncio.Event().wait()

    async def followup(self, message: FollowUp) -> None:
        raise AssertionError("nothing falls due")


async def main(store_dir: str, mode: str) -> None:
    marker = b'"requestId":"req-42"' if mode == "create" else b'"operation":"update"'
    store = KillingStore(JsonlStore(Path(store_dir)), marker)
    clock = VirtualClock(T0)
    async with open_session(store, "s1", host=lambda _s: Quiet(), clock=clock) as session:  # type: ignore[arg-type]
        if mode == "create":
            await session.tools.call_tool("schedule_create", CREATE)
        else:
            print(await session.tools.call_tool("schedule_create", PLAIN), flush=True)
            change = PAUSE if mode == "pause" else SNOOZE
            await session.tools.call_tool("schedule_update", change)
        print("answered: the kill did not happen", flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
