"""A child process of the embedded chaos test, in one of two roles:

* ``live STORE SEED SESSION...``: an agent process. For each session it
  opens (waiting for a worker that holds it), creates one reminder due a few
  seconds later, keeps the session open for a moment (delivering what falls
  due meanwhile to the same target as the workers), and closes it.
* ``worker STORE SEED ARGS...``: ``tickler worker --store STORE ARGS...``.

Either may die on purpose between a log append and its wake index update:
with probability ``CHAOS_CUT_P`` a store's ``release_wake`` (the index update
at a session's close, after its log is durable) kills the process first,
until the file ``CHAOS_CALM`` names exists (the run is over: a worker then
stops cleanly on SIGTERM).
The draws come from SEED, so a run is repeatable. The target
(``deliver``) appends ``<session> <key> <pid>`` to ``CHAOS_OUT``, one write
each (O_APPEND: lines from several processes never mix).
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sys
import zlib
from pathlib import Path
from typing import Any

from tickler.adapters.delivery._target import delivery_target
from tickler.adapters.stores import JsonlStore, SqliteStore
from tickler.shell._host import FollowUp
from tickler.shell._session import open_session


def deliver(message: FollowUp, session: str) -> None:
    line = f"{session} {message.key} {os.getpid()}\n".encode()
    fd = os.open(os.environ["CHAOS_OUT"], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)


def cut_between_append_and_index(rng: random.Random) -> None:
    """Kill this process, now and then, right before a session's index
    update (until the file CHAOS_CALM names exists: the run is ending)."""
    chance = float(os.environ.get("CHAOS_CUT_P", "0"))
    calm = Path(os.environ.get("CHAOS_CALM", "/nonexistent/calm"))
    for store_type in (JsonlStore, SqliteStore):
        original = store_type.release_wake

        async def release_wake(
            self: Any, log: Any, *, durable: bool, _original: Any = original
        ) -> None:
            if rng.random() < chance and not os.path.exists(calm):  # noqa: ASYNC240, PTH110
                os.kill(os.getpid(), signal.SIGKILL)
            await _original(self, log, durable=durable)

        store_type.release_wake = release_wake  # type: ignore[method-assign]


async def live(store: JsonlStore | SqliteStore, rng: random.Random, sessions: list[str]) -> None:
    target = delivery_target(function=deliver, timeout=5)
    try:
        for session_id in sessions:
            async with open_session(store, session_id, host=target) as session:
                due = 2 + zlib.crc32(session_id.encode()) % 10  # the same after a restart
                # A restarted agent creates again: the request id makes it the same reminder.
                args = {"prompt": f"chaos {session_id}", "after_seconds": due}
                answer = await session.tools.call_tool(
                    "schedule_create", {**args, "request_id": session_id}
                )
                assert '"id":"schedule-1"' in answer, answer
                await asyncio.sleep(rng.random() * 0.5)
            print(f"created {session_id}", flush=True)
    finally:
        await store.close()


def main() -> None:
    role, path, seed, *rest = sys.argv[1:]
    rng = random.Random(int(seed))
    cut_between_append_and_index(rng)
    if role == "live":
        where = Path(path)
        asyncio.run(live(JsonlStore(where) if where.is_dir() else SqliteStore(where), rng, rest))
        print("done", flush=True)
        return
    from tickler.adapters.cli import main as tickler

    tickler(["worker", "--store", path, *rest])


if __name__ == "__main__":
    main()
