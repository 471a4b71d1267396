"""A child that holds one session (run as a script, not collected):

operate_holder.py KIND LOCATION SESSION ROLE

KIND jsonl|sqlite|postgres (LOCATION a path, or SCHEMA:DSN); ROLE live (a
process that opened the session, as ``open_session`` does) or worker (an
embedded store's worker claim; PostgreSQL has only leases). Prints "held"
once it holds the session, lets it go at the first line on stdin, prints
"released" and exits.
"""

from __future__ import annotations

import asyncio
import sys

from tickler.adapters.stores import JsonlStore, SqliteStore
from tickler.adapters.stores import _wakes as wakes
from tickler.shell._ports import SessionLog, SessionStore


async def main(kind: str, location: str, session_id: str, role: str) -> None:
    store: SessionStore
    if kind == "postgres":
        from tickler.adapters.stores._postgres import PostgresStore

        schema, _, dsn = location.partition(":")
        store = PostgresStore(dsn, schema=schema)
    else:
        store = JsonlStore(location) if kind == "jsonl" else SqliteStore(location)
    log: SessionLog
    if role == "worker" and isinstance(store, JsonlStore | SqliteStore):
        log = await store.open_claimed(session_id, wakes.holder_token("worker"))
    else:
        log = await store.open(session_id, created_at=0)
    print("held", flush=True)
    await asyncio.to_thread(sys.stdin.readline)
    await log.close()
    await store.close()
    print("released", flush=True)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
