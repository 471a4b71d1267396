# ruff: noqa: F811 - pytest fixtures imported by name are parameters too
"""``tickler worker`` against the real PostgreSQL: cold sessions delivered
once, no double delivery beside a live process or another worker, a stalled
worker fenced off, failing and hung targets, the wake index, NOTIFY."""

from __future__ import annotations

import asyncio
import collections
import contextlib

import pytest

from tickler.adapters.stores._postgres import SessionLost
from tickler.adapters.worker._worker import Worker
from tickler.shell._host import FollowUp
from tickler.shell._ports import NewEvent
from tickler.shell._session import open_session

from .pgsupport import PgSchema, pg_schema  # noqa: F401 - the fixture
from .worker_support import (
    Recorder,
    as_bytes,
    at_text,
    change_kinds,
    delivered_keys,
    followup_keys,
    log_types,
    now_ms,
    running,
    seed,
    session_row,
    spy_store,
    wait_until,
)


async def test_cold_session_delivered_once_and_wake_index_moves_on(pg_schema: PgSchema) -> None:
    pg = pg_schema
    later = now_ms() + 3_600_000
    seeder = pg.store()
    await seed(
        seeder,
        {
            "one": [{"prompt": "only", "after_seconds": 1}],
            "two": [
                {"prompt": "soon", "after_seconds": 1},
                {"prompt": "later", "at": at_text(later)},
            ],
        },
    )
    await seeder.close()
    assert session_row(pg, "two")[0] is not None
    recorder = Recorder()
    worker = Worker(pg.store(), recorder.target("w"), concurrency=4, poll_s=0.2)
    async with running(worker):
        await recorder.wait_for(2)
        await wait_until(lambda: len(delivered_keys(pg)) == 2, 30, "the delivered marks")
        await wait_until(
            lambda: all(session_row(pg, s)[2] is None for s in ("one", "two")), 30, "the release"
        )

    assert sorted((c.session, c.key) for c in recorder.calls) == sorted(followup_keys(pg))
    assert collections.Counter(recorder.keys()) == dict.fromkeys(recorder.keys(), 1)
    for session in ("one", "two"):
        followups = followup_keys(pg, session)
        assert len(followups) == 1
        assert delivered_keys(pg, session) == followups
    assert log_types(pg, "one") == [
        "schedule/change",
        "schedule/change",
        "tickler/followup",
        "tickler/delivered",
    ]
    assert change_kinds(pg, "one") == ["create", "dispatch"]
    assert session_row(pg, "one") == (None, 0, None)  # nothing left to wake it for
    assert session_row(pg, "two") == (-(-later // 1000) * 1000, 0, None)  # the next target


async def test_live_runtime_and_worker_never_both_deliver(pg_schema: PgSchema) -> None:
    pg = pg_schema
    recorder = Recorder()
    live_store = pg.store()

    async def slow_to_take(message: FollowUp, session: str) -> None:
        await asyncio.sleep(1.0)  # the follow-up sits in the outbox, due, meanwhile

    live_host = recorder.target("live", before=slow_to_take)
    async with contextlib.AsyncExitStack() as held_open:
        live = await held_open.enter_async_context(open_session(live_store, "held", host=live_host))
        seeder = pg.store()
        await seed(seeder, {"cold": [{"prompt": "control", "after_seconds": 1}]})
        await seeder.close()
        worker_store = spy_store(pg)
        worker = Worker(worker_store, recorder.target("worker"), concurrency=4, poll_s=0.05)
        async with running(worker):
            assert '"state":"scheduled"' in await live.tools.call_tool(
                "schedule_create", {"prompt": "both want it", "after_seconds": 1}
            )
            # the worker is active meanwhile: it delivers the cold control session
            await wait_until(
                lambda: {c.session for c in recorder.calls} == {"held", "cold"},
                30,
                "both deliveries",
            )
            await wait_until(lambda: len(delivered_keys(pg, "held")) == 1, 30, "the live mark")
            await held_open.aclose()  # lets go: a session with nothing due is not taken
    await live_store.close()

    held = [c for c in recorder.calls if c.session == "held"]
    assert [c.worker for c in held] == ["live"]  # exactly one hand-over, by the live host
    assert [c.worker for c in recorder.calls if c.session == "cold"] == ["worker"]
    assert "held" not in {log.header.id for log in worker_store.claimed}
    assert len(followup_keys(pg, "held")) == 1


async def test_two_workers_race_every_occurrence_once(pg_schema: PgSchema) -> None:
    pg = pg_schema
    sessions = 300
    seeder = pg.store()
    await seed(
        seeder, {f"r{i}": [{"prompt": f"p{i}", "after_seconds": 1}] for i in range(sessions)}
    )
    await seeder.close()
    await asyncio.sleep(1.0)  # all due before either worker starts: they contend for each
    recorder = Recorder()
    a = Worker(pg.store(), recorder.target("a"), concurrency=8, poll_s=0.05)
    b = Worker(pg.store(), recorder.target("b"), concurrency=8, poll_s=0.05)
    async with running(a), running(b):
        await recorder.wait_for(sessions, bound_s=120)
        await wait_until(lambda: len(delivered_keys(pg)) >= sessions, 60, "the delivered marks")

    counts = collections.Counter(recorder.keys())
    twice = {k: n for k, n in counts.items() if n > 1}
    assert not twice, f"handed over more than once: {twice}"
    assert len(counts) == sessions
    logged = followup_keys(pg)
    assert len(logged) == sessions == len(set(logged))  # one follow-up per occurrence in the logs
    assert sorted(delivered_keys(pg)) == sorted(logged)
    by_worker = collections.Counter(c.worker for c in recorder.calls)
    print(f"race: {sessions} sessions, delivered by worker: {dict(by_worker)}")


async def test_stalled_worker_loses_the_session_and_is_fenced(pg_schema: PgSchema) -> None:
    pg = pg_schema
    seeder = pg.store()
    await seed(seeder, {"s": [{"prompt": "stall", "after_seconds": 1}]})
    await seeder.close()
    recorder = Recorder()
    in_target = asyncio.Event()
    resume = asyncio.Event()

    async def stall(message: FollowUp, session: str) -> None:
        in_target.set()
        await resume.wait()  # the whole worker stalls here, past its lease

    store_a = spy_store(pg)
    store_b = spy_store(pg)
    a = Worker(store_a, recorder.target("a", before=stall), concurrency=1, poll_s=0.05)
    b = Worker(store_b, recorder.target("b"), concurrency=1, poll_s=0.05)
    async with running(a):
        await asyncio.wait_for(in_target.wait(), 30)
        async with running(b):

            def expired_and_taken() -> bool:
                # A's lease runs out (it did not renew in time); B takes over
                pg.query(
                    "UPDATE {s}.sessions SET lease_until = now() - interval '1 second'"
                    " WHERE id = 's' AND lease_owner = %s",
                    (store_a.owner,),
                )
                return bool(getattr(store_b, "claimed", []))

            await wait_until(expired_and_taken, 30, "B to take the session over", step_s=0.05)
            await recorder.wait_for(1)
            await wait_until(lambda: len(delivered_keys(pg, "s")) == 1, 30, "B's mark")
            resume.set()  # A wakes up and finishes its hand-over
            lost_log = store_a.claimed[0]
            await wait_until(lambda: lost_log.lost is not None, 30, "A to learn it lost the lease")
            with pytest.raises(SessionLost):
                lost_log.append([NewEvent("test/late", b"{}", now_ms())])
            with pytest.raises(SessionLost):
                await lost_log.flush()
            await recorder.wait_for(2)

    assert [c.worker for c in recorder.calls] == ["b", "a"]
    (key,) = {c.key for c in recorder.calls}  # the documented repeat carries the SAME key
    assert followup_keys(pg, "s") == [("s", key)]  # one follow-up in the log
    assert delivered_keys(pg, "s") == [("s", key)]  # A's late mark was not written
    assert "test/late" not in log_types(pg, "s")
    assert session_row(pg, "s")[2] is None


async def test_lease_shorter_than_the_deadline_sends_nothing(pg_schema: PgSchema) -> None:
    pg = pg_schema
    seeder = pg.store()
    await seed(seeder, {"s": [{"prompt": "guarded", "after_seconds": 1}]})
    await seeder.close()
    recorder = Recorder()
    # a 10 s deadline under a 2 s lease: the guard refuses the attempt
    short = Worker(pg.store(lease_s=2), recorder.target("short", timeout=10), poll_s=0.05)
    async with running(short):
        await wait_until(lambda: session_row(pg, "s")[1] >= 1, 30, "a deferred attempt")
    assert recorder.calls == []
    (followup,) = followup_keys(pg, "s")  # committed, in the outbox, not sent
    assert delivered_keys(pg, "s") == []
    pg.query("UPDATE {s}.sessions SET next_due_at = 0 WHERE id = 's'")  # skip the backoff
    fine = Worker(pg.store(), recorder.target("fine"), poll_s=0.05)
    async with running(fine):
        await recorder.wait_for(1)
        await wait_until(lambda: len(delivered_keys(pg, "s")) == 1, 30, "the mark")
    assert [(c.worker, c.session, c.key) for c in recorder.calls] == [("fine", *followup)]


async def test_failing_target_backs_off_and_delivers_once_healed(pg_schema: PgSchema) -> None:
    pg = pg_schema
    seeder = pg.store()
    await seed(seeder, {"s": [{"prompt": "flaky", "after_seconds": 1}]})
    await seeder.close()
    attempts: list[str] = []

    async def down_twice(message: FollowUp, session: str) -> None:
        attempts.append(message.key)
        if len(attempts) <= 2:
            raise ConnectionError("target down")

    recorder = Recorder()
    worker = Worker(pg.store(), recorder.target("w", before=down_twice), poll_s=0.05)
    seen: list[tuple[int | None, int]] = []

    def watch(failures: int) -> bool:
        due, count, _ = session_row(pg, "s")
        if not seen or seen[-1] != (due, count):
            seen.append((due, count))
        return count >= failures

    async with running(worker):
        await wait_until(lambda: watch(1), 30, "the first failure", step_s=0.01)
        await wait_until(lambda: watch(2), 30, "the second failure", step_s=0.01)
        await recorder.wait_for(1)
        await wait_until(lambda: session_row(pg, "s") == (None, 0, None), 30, "the healed row")

    assert len(attempts) == 3
    assert len(set(attempts)) == 1  # the same follow-up each time
    assert [c.key for c in recorder.calls] == attempts[-1:]  # delivered once
    first = [due for due, count in seen if count == 1]
    second = [due for due, count in seen if count == 2]
    assert first
    assert second
    assert first[0] is not None
    assert second[0] is not None
    assert second[0] > first[0]  # the retry moved later (backoff)
    assert delivered_keys(pg, "s") == followup_keys(pg, "s")
    assert log_types(pg, "s").count("tickler/followup-failed") == 2


async def test_hung_target_is_cut_at_its_deadline(pg_schema: PgSchema) -> None:
    pg = pg_schema
    seeder = pg.store()
    await seed(seeder, {"s": [{"prompt": "hang", "after_seconds": 1}]})
    await seeder.close()

    async def hang(message: FollowUp, session: str) -> None:
        await asyncio.Event().wait()

    recorder = Recorder()
    worker = Worker(pg.store(), recorder.target("w", before=hang, timeout=0.5), poll_s=0.05)
    async with running(worker):
        await wait_until(lambda: session_row(pg, "s")[1] >= 1, 30, "the attempt to end")
    failed = pg.query("SELECT data FROM {s}.events WHERE type = 'tickler/followup-failed'")
    assert failed
    assert b"did not return within 0.5 s" in as_bytes(failed[0][0])
    assert recorder.calls == []
    assert len(followup_keys(pg, "s")) == 1  # kept, not lost
    assert delivered_keys(pg, "s") == []


async def test_notify_wakes_a_worker_before_its_poll_interval(pg_schema: PgSchema) -> None:
    pg = pg_schema
    poll_s = 60.0
    recorder = Recorder()
    store = pg.store()
    worker = Worker(store, recorder.target("w"), poll_s=poll_s)
    listen = f'LISTEN "{store.channel}"'
    async with running(worker):
        await wait_until(
            lambda: bool(pg.query("SELECT 1 FROM pg_stat_activity WHERE query = %s", (listen,))),
            30,
            "the worker to listen",
        )
        await asyncio.sleep(0.5)  # let its first rounds end: it now sleeps for the poll interval
        started = asyncio.get_running_loop().time()
        seeder = pg.store()
        await seed(seeder, {"s": [{"prompt": "nearer", "after_seconds": 1}]})
        await seeder.close()
        await recorder.wait_for(1, bound_s=poll_s / 2)  # a generous bound, well under the poll
        waited = asyncio.get_running_loop().time() - started
    assert waited < poll_s, "delivered before the poll interval elapsed"
    assert len(delivered_keys(pg, "s")) == 1
