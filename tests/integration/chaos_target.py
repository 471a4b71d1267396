"""The chaos test's delivery target (``--deliver chaos_target:deliver``): it
records every call in PostgreSQL, in the schema ``CHAOS_SCHEMA`` at
``CHAOS_DSN``: each attempt in ``chaos_attempts``, and the first delivery of
each (session, key) in ``chaos_deliveries`` (a repeat is dropped by its key,
as a real target would). Both rows are written by one statement, so a worker
killed mid-call leaves both or neither."""

from __future__ import annotations

import asyncio
import os

import psycopg

from tickler.shell._host import FollowUp

# One connection per worker process (one event loop), used one statement at a time.
_state: dict[str, object] = {}


def tables_sql(schema: str) -> str:
    return (
        f"CREATE TABLE {schema}.chaos_attempts (session text NOT NULL, key text NOT NULL,"
        " pid integer NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp());"
        f"CREATE TABLE {schema}.chaos_deliveries (session text NOT NULL, key text NOT NULL,"
        " pid integer NOT NULL, PRIMARY KEY (session, key))"
    )


async def deliver(message: FollowUp, session: str) -> None:
    lock = _state.setdefault("lock", asyncio.Lock())
    assert isinstance(lock, asyncio.Lock)
    schema = os.environ["CHAOS_SCHEMA"]
    async with lock:
        conn = _state.get("conn")
        if not isinstance(conn, psycopg.AsyncConnection) or conn.closed:
            conn = await psycopg.AsyncConnection.connect(os.environ["CHAOS_DSN"], autocommit=True)
            _state["conn"] = conn
        await conn.execute(
            f"WITH a AS (INSERT INTO {schema}.chaos_attempts (session, key, pid)"
            "  VALUES (%(s)s, %(k)s, %(p)s))"
            f" INSERT INTO {schema}.chaos_deliveries (session, key, pid)"
            " VALUES (%(s)s, %(k)s, %(p)s) ON CONFLICT DO NOTHING",
            {"s": session, "k": message.key, "p": os.getpid()},
        )
