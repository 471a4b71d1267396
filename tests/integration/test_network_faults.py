# ruff: noqa: F811 - pytest fixtures imported by name are parameters too
"""Network faults between the PostgreSQL store and the database, through a
fault-injecting proxy on loopback (tests/integration/faultproxy.py): a
link that stalls (freeze), slows (delay), closes (drop), resets (RST, also
after the server ran a statement and before its reply), or goes half-open
(nothing more is ever forwarded, nothing is closed).

The store bounds every round trip (``round_trip_s``): a stalled or
half-open connection is cut at that deadline and replaced; the lease is
never written after it expired. The fleet test puts three workers, each
behind its own proxy, through a seeded schedule of all of these faults
while reminders fall due, and checks that every occurrence is delivered,
none under two keys, and that no process wrote after its lease expired
(an audit trigger records every holder's write with its lease)."""

from __future__ import annotations

import asyncio
import collections
import logging
import os
import random
import time
from collections.abc import Awaitable
from typing import TypeVar

import pytest

from tickler.adapters.worker._worker import Worker
from tickler.shell._host import FollowUp
from tickler.shell._ports import NewEvent, StoreError

from .faultproxy import FaultProxy
from .net_support import (
    CutNotingStore,
    audited_writes,
    install_lease_audit,
    proxied,
    writes_after_expiry,
)
from .pgsupport import FIGURES, PgSchema, pg_schema  # noqa: F401 - the fixture
from .worker_support import Recorder, delivered_keys, followup_keys, running, seed, wait_until

ROUND_TRIP_S = 1.0
HANG_GUARD_S = 60.0  # far beyond every bound below: only a hang reaches it
T = TypeVar("T")


def events(first: int, count: int) -> list[NewEvent]:
    return [NewEvent("note", f'{{"n":{first + i}}}'.encode(), 1_000 + i) for i in range(count)]


def stored_seqs(pg: PgSchema, session_id: str) -> list[int]:
    rows = pg.query("SELECT seq FROM {s}.events WHERE session_id = %s ORDER BY seq", (session_id,))
    return [int(str(seq)) for (seq,) in rows]


def store_behind(pg: PgSchema, proxy: FaultProxy, **options: float) -> CutNotingStore:
    options.setdefault("round_trip_s", ROUND_TRIP_S)
    return CutNotingStore(proxy.dsn(pg.dsn), schema=pg.schema, **options)  # type: ignore[arg-type]


async def bounded(awaitable: Awaitable[T]) -> T:
    return await asyncio.wait_for(awaitable, HANG_GUARD_S)


@pytest.mark.parametrize("fault", ["freeze", "half_open"])
async def test_a_stalled_commit_is_cut_at_the_deadline_and_written_once_after(
    pg_schema: PgSchema, fault: str
) -> None:
    async with proxied(pg_schema) as proxy:
        store = store_behind(pg_schema, proxy)
        log = await store.open("s1", created_at=5)
        log.append(events(0, 2))
        await log.flush()
        log.append(events(2, 3))
        getattr(proxy, fault)()
        began = time.monotonic()
        with pytest.raises(StoreError, match="did not answer within 1 s"):
            await bounded(log.flush())
        noticed = store.cuts[0] - began
        proxy.heal()  # a freeze ends; a half-open link stays dead: a new one is made
        await bounded(log.flush())
        assert stored_seqs(pg_schema, "s1") == [0, 1, 2, 3, 4]
        assert log.lost is None
        await log.close()
        await store.close()
    FIGURES[f"{fault}_noticed_s"] = round(noticed, 2)
    # The cut comes from the deadline, never sooner: the statement was sent
    # after the fault began.
    assert noticed >= ROUND_TRIP_S


async def test_a_reset_after_the_server_committed_writes_the_batch_once(
    pg_schema: PgSchema,
) -> None:
    # The commit reached the server and ran; its reply is lost to a reset.
    # The store cannot know whether it committed: the next round finds the
    # stored length inside its batch, under its own lease, and writes the rest.
    async with proxied(pg_schema) as proxy:
        store = store_behind(pg_schema, proxy)
        log = await store.open("s1", created_at=5)
        log.append(events(0, 2))
        await log.flush()
        log.append(events(2, 3))
        proxy.reset(before_reply=True)
        with pytest.raises(StoreError, match="flush failed"):
            await bounded(log.flush())
        assert stored_seqs(pg_schema, "s1") == [0, 1, 2, 3, 4]  # it had committed
        log.append(events(5, 1))
        await bounded(log.flush())
        assert stored_seqs(pg_schema, "s1") == [0, 1, 2, 3, 4, 5]  # each seq once
        assert log.lost is None
        await log.close()
        await store.close()


@pytest.mark.parametrize("fault", ["drop", "reset", "delay"])
async def test_a_closed_reset_or_slow_link_costs_at_most_one_failed_flush(
    pg_schema: PgSchema, fault: str
) -> None:
    async with proxied(pg_schema) as proxy:
        store = store_behind(pg_schema, proxy, pool_size=1)
        log = await store.open("s1", created_at=5)
        log.append(events(0, 2))
        await log.flush()
        if fault == "delay":
            proxy.delay(50)  # well inside the deadline: nothing fails
        else:
            getattr(proxy, fault)()
        log.append(events(2, 2))
        failures = 0
        while True:
            try:
                await bounded(log.flush())
                break
            except StoreError:
                failures += 1
                assert failures <= 1, "the pool did not replace the broken connection"
        assert failures == (0 if fault == "delay" else 1)
        assert stored_seqs(pg_schema, "s1") == [0, 1, 2, 3]
        proxy.heal()
        await log.close()
        await store.close()


async def test_a_worker_notices_a_half_open_connection_and_serves_again(
    pg_schema: PgSchema,
) -> None:
    pg = pg_schema
    recorder = Recorder()
    seeder = pg.store()
    async with proxied(pg) as proxy:
        store = store_behind(pg, proxy, lease_s=3.0)
        worker = Worker(store, recorder.target("w", timeout=0.5), poll_s=0.2)
        async with running(worker):
            await seed(seeder, {"before": [{"prompt": "p", "after_seconds": 1}]})
            await recorder.wait_for(1)  # its connections are in use: warm
            proxy.half_open()  # every one of them goes silent for good
            began = time.monotonic()
            await seed(seeder, {"after": [{"prompt": "p", "after_seconds": 1}]})
            await recorder.wait_for(2, HANG_GUARD_S)
            served = time.monotonic() - began
    await seeder.close()
    # Noticed by the deadline (a cut), not by a socket the proxy closed:
    # it closes none of them.
    assert len(getattr(store, "cuts", [])) >= 1
    noticed = store.cuts[0] - began
    FIGURES["half_open_worker_noticed_s"] = round(noticed, 2)
    FIGURES["half_open_worker_served_s"] = round(served, 2)
    print(f"half-open: noticed after {noticed:.2f} s, delivering again after {served:.2f} s")
    assert [c.session for c in recorder.calls] == ["before", "after"]


# -- the fleet -----------------------------------------------------------------

SESSIONS = int(os.environ.get("TICKLER_FAULT_SESSIONS", "240"))
WORKERS = 3
LEASE_S = 4.5
FLEET_ROUND_TRIP_S = 1.5  # shorter than the default floor (5 s): more cuts in a short run
DELIVER_TIMEOUT_S = 1.0
SPREAD_S = 15  # reminders fall due 2 .. 2 + SPREAD_S s after their creation
FAULTS = (
    "delay",
    "freeze",
    "long_freeze",  # one worker's link, past the lease: the others take its sessions over
    "outage",  # every worker's link, past the lease: nobody can take anything over
    "drop",
    "half_open",
    "reset",
    "reset_before_reply",
)


class Faults:
    """Injects the faults on a seeded schedule: every kind in turn (a
    shuffled cycle), on a random proxy (an outage: on all of them), until
    stopped."""

    def __init__(self, proxies: list[FaultProxy], seed_value: int) -> None:
        self.proxies = proxies
        self.rng = random.Random(seed_value)
        self.injected: collections.Counter[str] = collections.Counter()

    async def run(self, stop: asyncio.Event) -> None:
        cycle: list[str] = []
        while not stop.is_set():
            await asyncio.sleep(self.rng.uniform(0.1, 0.5))
            if not cycle:
                cycle = list(FAULTS)
                self.rng.shuffle(cycle)
            fault = cycle.pop()
            proxy = self.proxies[self.rng.randrange(len(self.proxies))]
            hold = self._inject(proxy, fault)
            self.injected[fault] += 1
            await asyncio.sleep(hold)
            for each in self.proxies:
                each.heal()

    def _inject(self, proxy: FaultProxy, fault: str) -> float:
        """Start ``fault``; how long it lasts before ``heal``."""
        if fault == "outage":  # the database unreachable for longer than the lease
            for each in self.proxies:
                each.freeze()
            return LEASE_S + 1.5
        if fault == "delay":
            proxy.delay(self.rng.choice([20, 100, 400]))
            return self.rng.uniform(0.5, 2.0)
        if fault in ("freeze", "long_freeze"):
            proxy.freeze()
            # a long one outlasts the lease: the others take its sessions over
            return self.rng.uniform(0.3, 2.0) if fault == "freeze" else LEASE_S + 1.5
        if fault == "drop":
            proxy.drop()
        elif fault == "half_open":
            proxy.half_open()
        else:
            proxy.reset(before_reply=fault == "reset_before_reply")
        return 0.0


async def test_a_fleet_under_network_faults_loses_nothing_and_writes_nothing_late(
    pg_schema: PgSchema, caplog: pytest.LogCaptureFixture
) -> None:
    pg = pg_schema
    caplog.set_level(logging.INFO, "tickler.postgres")
    began = time.monotonic()
    install_lease_audit(pg)
    rng = random.Random(int(os.environ.get("TICKLER_FAULT_SEED", "30")))
    recorder = Recorder()
    think_rng = random.Random(rng.randrange(1 << 30))

    async def think(message: FollowUp, session: str) -> None:
        # A target that takes a moment: workers hold sessions while faults come.
        await asyncio.sleep(think_rng.uniform(0.05, 0.3))

    proxies = [await FaultProxy.for_dsn(pg.dsn).start() for _ in range(WORKERS)]
    workers = [
        Worker(
            CutNotingStore(
                proxy.dsn(pg.dsn),
                schema=pg.schema,
                lease_s=LEASE_S,
                round_trip_s=FLEET_ROUND_TRIP_S,
            ),
            recorder.target(f"w{n}", before=think, timeout=DELIVER_TIMEOUT_S),
            concurrency=8,
            poll_s=0.3,
        )
        for n, proxy in enumerate(proxies)
    ]
    plan = {
        f"f{i:04d}": [{"prompt": f"fault {i}", "after_seconds": 2 + rng.randrange(SPREAD_S)}]
        for i in range(SESSIONS)
    }
    seeder = pg.store()  # straight to the database: the faults are the workers'
    faults = Faults(proxies, rng.randrange(1 << 30))
    stop_faults = asyncio.Event()
    try:
        async with running(workers[0]), running(workers[1]), running(workers[2]):
            injecting = asyncio.ensure_future(faults.run(stop_faults))
            await seed(seeder, plan)

            def done() -> bool:
                return (
                    len(faults.injected) == len(FAULTS)  # every kind at least once
                    and len({(c.session, c.key) for c in recorder.calls}) >= SESSIONS
                    and len(delivered_keys(pg)) >= SESSIONS
                )

            await wait_until(done, 240, "every reminder delivered", step_s=0.2)
            stop_faults.set()
            await injecting
            for proxy in proxies:
                proxy.heal()
            await wait_until(
                lambda: not pg.query("SELECT 1 FROM {s}.sessions WHERE next_due_at IS NOT NULL"),
                HANG_GUARD_S,
                "an empty wake index",
                step_s=0.2,
            )
    finally:
        stop_faults.set()
        await seeder.close()
        for proxy in proxies:
            await proxy.close()

    logged = followup_keys(pg)
    per_occurrence = collections.Counter(logged)
    delivered = collections.Counter((c.session, c.key) for c in recorder.calls)
    late = writes_after_expiry(pg)
    cuts = sum(len(getattr(w.store, "cuts", [])) for w in workers)
    figures = {
        "sessions": SESSIONS,
        "faults": sum(faults.injected.values()),
        "handed_over": len(recorder.calls),
        "repeats": len(recorder.calls) - len(delivered),
        "connections_cut": cuts,
        "takeovers": sum("taken over: the lease of" in r.getMessage() for r in caplog.records),
        "holder_writes_audited": audited_writes(pg),
        "writes_after_expiry": len(late),
        "seconds": round(time.monotonic() - began, 1),
    }
    FIGURES.update({f"faults_{k}": v for k, v in figures.items()})
    print(f"network faults: {figures} {dict(faults.injected)}")

    assert set(faults.injected) == set(FAULTS)  # every kind was injected
    assert {s for s, _ in logged} == set(plan)  # every reminder fell due and was dispatched
    assert len(logged) == SESSIONS  # one follow-up each: no occurrence under two keys
    assert max(per_occurrence.values()) == 1
    assert set(delivered) == set(per_occurrence)  # none lost, none invented
    assert sorted(delivered_keys(pg)) == sorted(logged)  # each marked delivered once
    assert late == [], f"written after the lease expired: {late[:5]}"
