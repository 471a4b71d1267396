"""The delivery callable of bench/postgres.py, the same for both sides: one
durable INSERT of (key, due_at, delivered_at) into bench_deliveries of the
database named by $BENCH_PG_DSN, in autocommit (so one commit, fsynced as
the server's synchronous_commit says), through a per-process pool of at most
``POOL_SIZE`` connections. ``delivered_at`` is the wall clock when the
callable is entered: the instant the item is delivered.

``record`` is for an event loop (procrastinate runs async tasks on its
worker's loop); ``record_sync`` is the same for a caller on a thread, with
one connection per thread.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time

import psycopg
from psycopg_pool import AsyncConnectionPool

POOL_SIZE = 4  # per worker process; 4 workers stay well under max_connections
INSERT = "INSERT INTO bench_deliveries (key, due_at, delivered_at) VALUES (%s, %s, %s)"

_pool: AsyncConnectionPool | None = None
_pool_lock = asyncio.Lock()
_local = threading.local()


def _dsn() -> str:
    return os.environ["BENCH_PG_DSN"]


async def _open_pool() -> AsyncConnectionPool:
    global _pool  # noqa: PLW0603 - one pool a process, opened on first use
    async with _pool_lock:
        if _pool is None:
            pool = AsyncConnectionPool(
                _dsn(),
                min_size=POOL_SIZE,
                max_size=POOL_SIZE,
                open=False,
                kwargs={"autocommit": True},
            )
            await pool.open(wait=True)
            _pool = pool
    return _pool


async def record(key: str, due_at: float) -> None:
    delivered_at = time.time()
    pool = _pool or await _open_pool()
    async with pool.connection() as conn:
        await conn.execute(INSERT, (key, due_at, delivered_at))


def record_sync(key: str, due_at: float) -> None:
    delivered_at = time.time()
    conn: psycopg.Connection[tuple[object, ...]] | None = getattr(_local, "conn", None)
    if conn is None or conn.closed:
        conn = psycopg.connect(_dsn(), autocommit=True)
        _local.conn = conn
    conn.execute(INSERT, (key, due_at, delivered_at))


async def close() -> None:
    """Close the process's pool (a worker calls it on the way out)."""
    global _pool  # noqa: PLW0603
    if _pool is not None:
        await _pool.close()
        _pool = None
