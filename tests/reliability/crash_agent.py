"""A child process for the kill -9 test: one session, a runtime and the
reference host over the JSONL store, on the real clock (shifted by
TICKLER_CLOCK_OFFSET_MS, to jump the wall clock across restarts).

It tops the session up to TARGET one-shot reminders (+ EVERY fixed-rate
ones), then runs until killed. TICKLER_CRASH_POINT makes it kill itself at
one chosen step: "append" (part of a batch written, then death), "flushing"
(appended, before the barrier), "flushed" (after the barrier, before the
host hears), "handover" (inside the host, after it took the follow-up).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import Iterator, Sequence

from tickler.adapters.stores._jsonl import JsonlStore
from tickler.core import SessionEvent, SessionHeader
from tickler.shell._clock import SystemClock
from tickler.shell._host import FollowUp
from tickler.shell._ports import NewEvent, SessionLog, Snapshot
from tickler.shell._reference_host import ReferenceHost, TurnInput
from tickler.shell._session import Session, open_log_session

SESSION = "crash"
CRASH_POINT = os.environ.get("TICKLER_CRASH_POINT", "")


def die() -> None:
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


class ShiftedClock(SystemClock):
    def __init__(self, offset_ms: int) -> None:
        self._offset = offset_ms

    def now_ms(self) -> int:
        return super().now_ms() + self._offset


class CrashingLog:
    """Delegates to the store's log; dies at the chosen point of a delivery
    batch (the one that carries a tickler/followup)."""

    def __init__(self, inner: SessionLog, path: str) -> None:
        self._inner = inner
        self._path = path
        self._armed = False
        self._tear_at: int | None = None

    @property
    def header(self) -> SessionHeader:
        return self._inner.header

    @property
    def length(self) -> int:
        return self._inner.length

    def events(self, start: int = 0) -> Iterator[SessionEvent]:
        return self._inner.events(start)

    def append(self, batch: Sequence[NewEvent]) -> tuple[SessionEvent, ...]:
        delivering = any(e.type == "tickler/followup" for e in batch)
        if delivering and CRASH_POINT == "append":
            # Torn by the flush that writes it (an append only queues).
            self._tear_at = os.path.getsize(self._path)  # noqa: PTH202
        added = self._inner.append(batch)
        self._armed = delivering
        if delivering and CRASH_POINT == "flushing":
            die()
        return added

    async def flush(self) -> None:
        await self._inner.flush()
        if self._tear_at is not None:
            # A torn write as kill -9 leaves one: the batch's record reached
            # the journal, then only part of its first line reached the file.
            os.truncate(self._path, self._tear_at + 20)
            die()
        if self._armed and CRASH_POINT == "flushed":
            die()
        self._armed = False

    def load_snapshot(self) -> Snapshot | None:
        return self._inner.load_snapshot()

    async def save_snapshot(self, snapshot: Snapshot) -> None:
        await self._inner.save_snapshot(snapshot)

    async def close(self) -> None:
        await self._inner.close()


class CrashingHost(ReferenceHost):
    async def followup(self, message: FollowUp) -> None:
        await super().followup(message)
        if CRASH_POINT == "handover":
            die()


async def main(store_dir: str, target: int, every: int) -> None:
    clock = ShiftedClock(int(os.environ.get("TICKLER_CLOCK_OFFSET_MS", "0")))
    store = JsonlStore(store_dir)
    inner = await store.open(SESSION, created_at=clock.now_ms())
    log = CrashingLog(inner, os.path.join(store_dir, f"{SESSION}.jsonl"))  # noqa: PTH118

    async def model(turn: TurnInput) -> str:
        return "ok"

    def host(session: Session) -> CrashingHost:
        return CrashingHost(session.log, model, session.clock)

    async with open_log_session(log, host=host, clock=clock) as session:
        made = len(session.state.seen_ids)
        while made < target + every:
            if made < target:
                args: dict[str, object] = {
                    "prompt": f"one-shot {made}",
                    "after_seconds": 1 + made % 3,
                }
            else:
                args = {"prompt": f"every {made}", "every_seconds": 300 + 60 * (made - target)}
            await session.tools.call_tool("schedule_create", args)
            made = len(session.state.seen_ids)
        print(f"ready {time.time()}", flush=True)
        await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
