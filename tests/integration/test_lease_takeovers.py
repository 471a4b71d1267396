# ruff: noqa: F811 - pytest fixtures imported by name are parameters too
"""``tickler.lease.takeovers`` on the real PostgreSQL: a session leased
while its previous holder's lease had expired (the holder died, or stalled
past its lease) counts once, whether a worker claims it or a process opens
it; a session let go (closed) and leased again does not, nor does one whose
holder is still live (it is not leased at all).

A stall is simulated deterministically: the holder's lease is ended in the
database (``lease_until`` in the past), as the holder would leave it had it
stopped renewing.
"""

from __future__ import annotations

import contextlib
import logging

import pytest

from tickler.adapters.stores._postgres import SessionLost
from tickler.shell._ports import SessionLocked

from ..shell.telemetry_support import readings  # noqa: TID252 - shared with the shell tests
from .pgsupport import PgSchema, pg_schema  # noqa: F401 - the fixture
from .worker_support import now_ms, seed, session_row

TAKEOVERS = "tickler.lease.takeovers"


def expire(pg: PgSchema, session_id: str) -> None:
    pg.query(
        "UPDATE {s}.sessions SET lease_until = now() - interval '1 second' WHERE id = %s",
        (session_id,),
    )


async def test_a_lease_that_expired_while_held_is_a_takeover_once(
    pg_schema: PgSchema, caplog: pytest.LogCaptureFixture
) -> None:
    pg = pg_schema
    seeder = pg.store()
    due = [{"prompt": "p", "after_seconds": 1}]
    await seed(seeder, {"let-go": due, "stalled": due, "live": due, "opened": due})
    await seeder.close()  # every session's lease let go

    holder = pg.store()  # a process that holds three sessions, then stalls
    stalled = await holder.open("stalled", created_at=now_ms())
    live = await holder.open("live", created_at=now_ms())
    await holder.open("opened", created_at=now_ms())
    expire(pg, "stalled")
    holder_id = holder.owner
    worker = pg.store()
    other = pg.store()
    try:
        with readings() as otel, caplog.at_level(logging.INFO, "tickler.postgres"):
            assert otel.value(TAKEOVERS) == 0
            # A worker claims what is due and free: the session let go and
            # the one whose holder stalled; not the live holder's.
            claimed = await worker.claim_due(10, now_ms() + 3_600_000)
            assert sorted(log.header.id for log in claimed) == ["let-go", "stalled"]
            assert otel.value(TAKEOVERS) == 1
            # A process opens another session whose holder stalled: a takeover too.
            expire(pg, "opened")
            reopened = await other.open("opened", created_at=now_ms())
            assert otel.value(TAKEOVERS) == 2
            metric = otel.metrics()[TAKEOVERS]
            # A live lease is not taken over, and costs no count.
            with pytest.raises(SessionLocked):
                await other.open("live", created_at=now_ms())
            assert otel.value(TAKEOVERS) == 2
            # Let go and leased again: not a takeover.
            for log in claimed:
                await log.close()
            await reopened.close()
            assert session_row(pg, "let-go")[2] is None
            again = await worker.claim_due(10, now_ms() + 3_600_000)
            assert sorted(log.header.id for log in again) == ["let-go", "opened", "stalled"]
            assert otel.value(TAKEOVERS) == 2
            for log in again:
                await log.close()
        assert metric.unit == "{session}"
        takeovers = [r for r in caplog.records if "taken over" in r.getMessage()]
        assert [r.__dict__["tickler.session.id"] for r in takeovers] == ["stalled", "opened"]
        assert all(holder_id in r.getMessage() for r in takeovers)
        # The stalled holder learns it lost them; its live session is intact.
        stalled.set_next_wake(None)
        with pytest.raises(SessionLost):
            await stalled.flush()
        assert live.lost is None
    finally:
        await worker.close()
        await other.close()
        with contextlib.suppress(SessionLost):  # the sessions it lost say so
            await holder.close()
