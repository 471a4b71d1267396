"""A child process for the store tests (run as a script, not collected).

store_child.py try-open KIND PATH SESSION   print "locked" or "opened"
store_child.py die-after KIND PATH SESSION N   append+flush N batches, then kill -9 itself
store_child.py crash KIND PATH SEED [A,B,..] print "started", then open the store (its
                                            recovery) and append+flush forever on a few
                                            sessions, printing "SESSION FIRST COUNT" per
                                            flushed batch
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sys
from pathlib import Path

from tickler.adapters.stores.jsonl import JsonlStore
from tickler.adapters.stores.sqlite import SqliteStore
from tickler.shell.ports import NewEvent, SessionLocked, SessionStore

SESSIONS = ("alpha", "beta", "gamma")


def store(kind: str, path: str) -> SessionStore:
    # A small journal, so checkpoints happen during the crash test too.
    return JsonlStore(path, journal_limit=64 << 10) if kind == "jsonl" else SqliteStore(path)


def batch(first: int, count: int, pad: int) -> list[NewEvent]:
    """Events that say which batch they belong to (to check atomicity)."""
    return [
        NewEvent(
            "note",
            f'{{"seq":{first + i},"batch":{first},"of":{count},"pad":"{"x" * pad}"}}'.encode(),
            1,
        )
        for i in range(count)
    ]


async def try_open(kind: str, path: str, session: str) -> None:
    try:
        log = await store(kind, path).open(session, created_at=1)
    except SessionLocked:
        print("locked")
    else:
        print("opened")
        await log.close()


async def die_after(kind: str, path: str, session: str, batches: int) -> None:
    log = await store(kind, path).open(session, created_at=1)
    for _ in range(batches):
        await log.append(batch(log.length, 3, 10))
        await log.flush()
    os.kill(os.getpid(), signal.SIGKILL)


async def crash(kind: str, path: str, seed: int, sessions: tuple[str, ...] = SESSIONS) -> None:
    rng = random.Random(seed)
    print("started", flush=True)  # a kill from now on may land in the recovery
    opened = store(kind, path)
    logs = [await opened.open(name, created_at=1) for name in sessions]

    async def drive(log_index: int) -> None:
        log = logs[log_index]
        while True:
            count = rng.randint(1, 6)
            pad = rng.choice((0, 10, 3000))  # some batches span pages
            first = log.length
            await log.append(batch(first, count, pad))
            await log.flush()
            print(sessions[log_index], first, count, flush=True)

    await asyncio.gather(*(drive(index) for index in range(len(logs))))


def main() -> None:
    command, kind, path, *rest = sys.argv[1:]
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    if command == "try-open":
        asyncio.run(try_open(kind, path, rest[0]))
    elif command == "die-after":
        asyncio.run(die_after(kind, path, rest[0], int(rest[1])))
    elif command == "crash":
        names = tuple(rest[1].split(",")) if len(rest) > 1 else SESSIONS
        asyncio.run(crash(kind, path, int(rest[0]), names))
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main()
