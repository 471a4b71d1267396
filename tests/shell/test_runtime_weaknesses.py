"""The reference's weaknesses (section (j)) that tickler must not copy."""

from __future__ import annotations

from tickler.shell._clock import settle

from .support import MINUTE, SECOND, async_test, has, rig


@async_test
async def test_no_flush_per_idle_transition() -> None:
    # (j)2/(j)3: the reference flushes on every idle transition of a session
    # that ever had a schedule event.
    async with rig() as r:
        await r.create(prompt="rate", every_seconds=3600)
        await r.create(prompt="once", after_seconds=10)
        await r.advance(11 * SECOND, step_ms=SECOND)
        assert len(r.host.taken) == 1
        mark = len(r.calls)
        for _ in range(20):
            r.host.set_busy(True)
            await settle()
            r.host.set_busy(False)
            await settle()
        await r.advance(MINUTE, step_ms=SECOND)
        assert r.since(mark) == []


@async_test
async def test_no_log_rereads_per_operation() -> None:
    # (j)1: the reference re-folds the whole log on every call and drive.
    async with rig() as r:
        for n in range(5):
            await r.create(prompt=f"n{n}", after_seconds=10 + n)
        await r.views()
        await r.delete("schedule-5")
        await r.advance(MINUTE, step_ms=SECOND)
        assert len(r.host.taken) == 4
        assert r.log.reads == [0]  # once, at start


@async_test
async def test_view_after_create_is_scheduled_even_when_the_barrier_is_slow() -> None:
    # (j)8: the reference samples the clock again after the barrier, so a
    # 1 s reminder can be reported "overdue" by its own create.
    async with rig() as r:
        r.log.hook("flush", lambda: r.jump(2 * SECOND), skip=1)  # the barrier
        created = await r.create(after_seconds=1)
        assert created["state"] == "scheduled"
        assert created["scheduledAt"] == "2026-08-05T12:00:01.000Z"
        await r.advance(SECOND, step_ms=100)
        assert r.host.keys == ["schedule-1@2026-08-05T12:00:01.000Z"]


@async_test
async def test_a_host_that_refuses_while_idle_does_not_make_the_runtime_spin() -> None:
    # (j)6: a claim refused while when_idle() resolves at once must not
    # become a busy loop of flushes and claims.
    async with rig() as r:
        await r.create(after_seconds=10)
        r.host.refuse = True
        await r.advance(10 * SECOND)
        await settle()
        await settle()
        assert r.calls.count("claim-refused") <= 2
        await r.advance(10 * SECOND, step_ms=10)
        assert r.calls.count("claim-refused") <= 20
        assert r.calls.count("flush") <= 25
        r.host.refuse = False
        await r.advance(40 * SECOND, step_ms=100)
        assert r.host.keys == ["schedule-1@2026-08-05T12:00:10.000Z"]


@async_test
async def test_a_failed_batch_append_advances_no_record() -> None:
    # (j)4b: the reference appends one dispatch per record after queueing
    # the batch message; a failure halfway leaves a partial batch. Here the
    # dispatches and the follow-up are one atomic append.
    async with rig() as r:
        for n in range(3):
            await r.create(prompt=f"rate {n}", every_seconds=300)
        r.log.fail("append", when=has("followup"))
        await r.advance(5 * MINUTE)
        assert r.log.labels() == ["create"] * 3
        assert [v["scheduledAt"] for v in await r.views()] == ["2026-08-05T12:05:00.000Z"] * 3
        await r.advance(2 * SECOND, step_ms=10)
        (message,) = r.host.offered
        assert [o.id for o in message.occurrences] == ["schedule-1", "schedule-2", "schedule-3"]
        assert r.log.labels() == ["create"] * 3 + ["dispatch"] * 3 + ["followup", "delivered"]
