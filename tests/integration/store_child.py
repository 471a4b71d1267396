"""A child process for the store tests (run as a script, not collected).

store_child.py try-open KIND LOCATION SESSION  print "locked" or "opened"
store_child.py die-after KIND LOCATION SESSION N  append+flush N batches, then kill -9 itself
store_child.py die-idle jsonl DIR IDLE BUSY  IDLE gets 2 flushed batches of 3; BUSY writes
                                                until the journal holding IDLE's records is
                                                checkpointed away, then one more batch, then
                                                kill -9 (exit 4 if that never happens)
store_child.py contend KIND LOCATION SESSION N MARKER  open and close SESSION N times, creating
                                                MARKER (O_EXCL) while holding it; print
                                                "held H locked L", or "overlap" and exit 3
                                                when MARKER exists (another holds it too)
store_child.py crash KIND LOCATION SEED [A,B,..]  print "started", then open the store (its
                                                recovery) and append+flush forever on a few
                                                sessions, printing "SESSION FIRST COUNT"
                                                per flushed batch

KIND LOCATION name the storage: KIND is a key of ``OPENERS``, LOCATION a
string its opener understands (a path, a connection string). A new store
kind is one entry there. (The store contract's own cross-process test needs
none of this: see ``tickler.testing``; its PostgreSQL backend names
``postgres_store`` here.)
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

from tickler.adapters.stores._jsonl import JsonlStore
from tickler.adapters.stores._sqlite import SqliteStore
from tickler.shell._ports import NewEvent, SessionLocked, SessionStore

SESSIONS = ("alpha", "beta", "gamma")


async def jsonl_store(location: str) -> SessionStore:
    Path(location).parent.mkdir(parents=True, exist_ok=True)
    # A small journal, so checkpoints happen during the crash test too.
    return JsonlStore(location, journal_limit=64 << 10)


async def sqlite_store(location: str) -> SessionStore:
    Path(location).parent.mkdir(parents=True, exist_ok=True)
    return SqliteStore(location)


async def postgres_store(location: str) -> SessionStore:
    """``SCHEMA:DSN`` (a schema name has no colon; the DSN may)."""
    from tickler.adapters.stores._postgres import PostgresStore  # psycopg is an extra

    schema, _, dsn = location.partition(":")
    return PostgresStore(dsn, schema=schema)


OPENERS: dict[str, Callable[[str], Awaitable[SessionStore]]] = {
    "jsonl": jsonl_store,
    "sqlite": sqlite_store,
    "postgres": postgres_store,
}


async def open_store(kind: str, location: str) -> SessionStore:
    """A store over the storage ``kind`` + ``location`` name."""
    if kind not in OPENERS:
        raise SystemExit(f"store_child.py: no store kind {kind!r} (known: {', '.join(OPENERS)})")
    return await OPENERS[kind](location)


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


async def try_open(kind: str, location: str, session: str) -> None:
    store = await open_store(kind, location)
    try:
        log = await store.open(session, created_at=1)
    except SessionLocked:
        print("locked")
    else:
        print("opened")
        await log.close()
    finally:
        await store.close()  # a store holding connections must not outlive the check


async def die_after(kind: str, location: str, session: str, batches: int) -> None:
    log = await (await open_store(kind, location)).open(session, created_at=1)
    for _ in range(batches):
        log.append(batch(log.length, 3, 10))
        await log.flush()
    os.kill(os.getpid(), signal.SIGKILL)


async def die_idle(location: str, idle: str, busy: str) -> None:
    from tickler.adapters.stores._lengthfile import read_length
    from tickler.adapters.stores._wal import read_records

    store = await open_store("jsonl", location)
    idle_log = await store.open(idle, created_at=1)
    for _ in range(2):
        idle_log.append(batch(idle_log.length, 3, 10))
        await idle_log.flush()
    busy_log = await store.open(busy, created_at=1)
    directory = Path(location)

    def idle_gone() -> bool:
        """IDLE's length is recorded and no journal holds a record of it."""
        if read_length(directory / f"{idle}.length") != idle_log.length:
            return False
        for journal in (directory / ".journal").glob("*.wal"):
            try:
                data = journal.read_bytes()
            except FileNotFoundError:
                continue
            if any(record.session_id == idle for record in read_records(data)):
                return False
        return True

    for _ in range(100_000):  # the journal limit is 64 KiB: a few dozen batches
        if idle_gone():
            break
        busy_log.append(batch(busy_log.length, 3, 3000))
        await busy_log.flush()
        await asyncio.sleep(0)  # the checkpoint runs in the background
    else:
        os._exit(4)
    busy_log.append(batch(busy_log.length, 3, 10))
    await busy_log.flush()
    os.kill(os.getpid(), signal.SIGKILL)


async def contend(kind: str, location: str, session: str, rounds: int, marker: str) -> None:
    store = await open_store(kind, location)
    held = locked = 0
    try:
        for _ in range(rounds):
            try:
                log = await store.open(session, created_at=1)
            except SessionLocked:
                locked += 1
                continue
            try:
                fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
            except FileExistsError:
                print("overlap", flush=True)
                os._exit(3)
            os.close(fd)
            held += 1
            await asyncio.sleep(0)
            Path(marker).unlink()  # noqa: ASYNC240 - at once, while the session is held
            await log.close()
    finally:
        await store.close()
    print("held", held, "locked", locked)


async def crash(kind: str, location: str, seed: int, sessions: tuple[str, ...] = SESSIONS) -> None:
    rng = random.Random(seed)
    print("started", flush=True)  # a kill from now on may land in the recovery
    opened = await open_store(kind, location)
    logs = [await opened.open(name, created_at=1) for name in sessions]

    async def drive(log_index: int) -> None:
        log = logs[log_index]
        while True:
            count = rng.randint(1, 6)
            pad = rng.choice((0, 10, 3000))  # some batches span pages
            first = log.length
            log.append(batch(first, count, pad))
            await log.flush()
            print(sessions[log_index], first, count, flush=True)

    await asyncio.gather(*(drive(index) for index in range(len(logs))))


def main() -> None:
    command, kind, location, *rest = sys.argv[1:]
    if command == "try-open":
        asyncio.run(try_open(kind, location, rest[0]))
    elif command == "die-after":
        asyncio.run(die_after(kind, location, rest[0], int(rest[1])))
    elif command == "die-idle":
        asyncio.run(die_idle(location, rest[0], rest[1]))
    elif command == "contend":
        asyncio.run(contend(kind, location, rest[0], int(rest[1]), rest[2]))
    elif command == "crash":
        names = tuple(rest[1].split(",")) if len(rest) > 1 else SESSIONS
        asyncio.run(crash(kind, location, int(rest[0]), names))
    else:
        raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    main()
