"""Wall-clock jumps: never early, noticed fast, latest occurrence only.

The timer heap never sleeps more than one second of monotonic time before
re-reading the wall clock, so a forward jump is noticed within about a
second; a rollback only re-arms. ``VirtualClock.set_wall`` jumps the wall
clock alone, as an NTP step or a suspend does.
"""

from __future__ import annotations

from tickler.core import format_instant, parse_instant
from tickler.shell._clock import settle

from .support import DAY, HOUR, MINUTE, SECOND, T0, async_test, batch_items, rig

TEN_YEARS = 3652 * DAY + 6 * HOUR


@async_test
async def test_forward_jump_past_the_target_is_noticed_within_a_second() -> None:
    async with rig() as r:
        await r.create(after_seconds=3600)
        await r.advance(30 * SECOND, step_ms=SECOND)
        r.jump(2 * HOUR)
        await settle()
        assert r.host.offered == []  # no monotonic time passed yet
        jumped_at = r.clock.monotonic_ms
        await r.advance(2 * SECOND, step_ms=100)
        assert r.host.keys == ["schedule-1@2026-08-05T13:00:00.000Z"]
        (taken_mono,) = r.host.taken_mono
        assert taken_mono - jumped_at <= SECOND
        await r.advance(10 * MINUTE, step_ms=SECOND)
        assert len(r.host.offered) == 1


@async_test
async def test_rollback_before_the_target_never_delivers_early() -> None:
    async with rig() as r:
        await r.create(after_seconds=10)
        target = T0 + 10 * SECOND
        await r.advance(5 * SECOND, step_ms=SECOND)
        r.jump(-10 * MINUTE)  # the wall clock now reads 11:50:05
        await r.advance(10 * MINUTE, step_ms=SECOND)  # 12:00:05 again
        assert r.host.offered == []
        await r.advance(6 * SECOND, step_ms=100)
        (taken_at,) = r.host.taken_wall
        assert target <= taken_at <= target + SECOND


@async_test
async def test_a_jump_forward_and_back_before_the_wake_delivers_nothing() -> None:
    async with rig() as r:
        await r.create(after_seconds=60)
        target = T0 + MINUTE
        r.jump(2 * HOUR)
        r.jump(-2 * HOUR)
        await r.advance(50 * SECOND, step_ms=SECOND)
        assert r.host.offered == []
        await r.advance(20 * SECOND, step_ms=SECOND)
        (taken_at,) = r.host.taken_wall
        assert target <= taken_at <= target + SECOND


@async_test
async def test_rollback_after_a_fixed_rate_delivery_does_not_repeat_it() -> None:
    async with rig() as r:
        await r.create(prompt="rate", every_seconds=300)
        await r.advance(5 * MINUTE)
        assert r.host.keys == ["schedule-1@2026-08-05T12:05:00.000Z"]
        r.jump(-3 * MINUTE)  # 12:02:00: before the occurrence just delivered
        await r.advance(5 * MINUTE, step_ms=SECOND)  # 12:07:00
        assert len(r.host.offered) == 1
        await r.advance(4 * MINUTE, step_ms=SECOND)  # past 12:10:00
        assert r.host.keys == [
            "schedule-1@2026-08-05T12:05:00.000Z",
            "schedule-1@2026-08-05T12:10:00.000Z",
        ]
        for message, taken_at in zip(r.host.taken, r.host.taken_wall, strict=True):
            (occurrence,) = message.occurrences
            assert parse_instant(occurrence.occurrence_at) <= taken_at


@async_test
async def test_ten_year_jump_delivers_each_fixed_rate_record_once() -> None:
    intervals = [300, 301, 3600, 86_400, 604_800]
    async with rig() as r:
        for n, seconds in enumerate(intervals, start=1):
            await r.create(prompt=f"every {n}", every_seconds=seconds)
        r.jump(TEN_YEARS + 12_345)
        jumped_wall = r.clock.now_ms()
        await r.advance(2 * SECOND, step_ms=100)
        # One batch, one shared acceptedAt, one latest occurrence per record;
        # the roughly two million missed occurrences are never enumerated.
        assert r.log.labels() == ["create"] * 5 + ["dispatch"] * 5 + ["followup", "delivered"]
        (message,) = r.host.offered
        dispatches = [c for c in r.log.changes() if c["operation"] == "dispatch"]
        (accepted_at,) = {d["acceptedAt"] for d in dispatches}
        decision = parse_instant(accepted_at)
        assert jumped_wall <= decision <= jumped_wall + SECOND
        expected = []
        for n, seconds in enumerate(intervals, start=1):
            step = seconds * SECOND
            first = T0 + step
            expected.append(
                {
                    "schedule_id": f"schedule-{n}",
                    "occurrence_at": format_instant(first + (decision - first) // step * step),
                    "reminder_prompt": f"every {n}",
                }
            )
        assert batch_items(message) == expected
        await r.advance(10 * SECOND, step_ms=SECOND)
        assert len(r.host.offered) == 1
        listed = await r.views()
        assert all(parse_instant(v["scheduledAt"]) > decision for v in listed)
        assert [v["state"] for v in listed] == ["scheduled"] * 5
