"""The database's commit rate: single-row INSERTs, each its own
transaction (autocommit: a commit and its WAL flush each, as
``synchronous_commit`` says), from 1 and from N connections at once, for a
few seconds each, in a table of the bench's database."""

from __future__ import annotations

import asyncio
import time
from typing import Final

import psycopg

SECONDS: Final = 3.0
CONNECTIONS: Final = (1, 4, 16)


async def _rate(dsn: str, connections: int, seconds: float) -> float:
    connect = psycopg.AsyncConnection.connect
    conns = [await connect(dsn, autocommit=True) for _ in range(connections)]
    done = 0
    try:

        async def lane(conn: psycopg.AsyncConnection[tuple[object, ...]]) -> None:
            nonlocal done
            while time.perf_counter() < end:
                await conn.execute("INSERT INTO bench_commits (at) VALUES (now())")
                done += 1

        end = time.perf_counter() + seconds
        started = time.perf_counter()
        await asyncio.gather(*(lane(c) for c in conns))
        elapsed = time.perf_counter() - started
    finally:
        for conn in conns:
            await conn.close()
    return done / elapsed


def commit_rates(dsn: str, seconds: float = SECONDS) -> dict[int, float]:
    """Commits a second, by the number of connections."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE bench_commits (id bigserial PRIMARY KEY, at timestamptz)")
    try:
        return {n: asyncio.run(_rate(dsn, n, seconds)) for n in CONNECTIONS}
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("DROP TABLE bench_commits")
