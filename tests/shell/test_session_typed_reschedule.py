"""The typed API's reschedule in place: ``session.update(id, at=...,
after=..., every=..., calendar=...)`` keeps the reminder's id, prompt and
request id, and its next occurrence follows the new selector; refused as
``schedule()`` refuses the same selector."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import pytest

from tickler.adapters.stores._memory import MemoryStore
from tickler.shell._clock import VirtualClock
from tickler.shell._host import FollowUp, IdleClaim
from tickler.shell._reminders import Calendar, LocalTime, ScheduleError
from tickler.shell._session import Session, open_session
from tickler.shell._timers import TimerHeap

from .support import MINUTE, T0, async_test

NOW = datetime(2026, 8, 5, 12, 0, tzinfo=UTC)  # T0, a Wednesday
BERLIN = ZoneInfo("Europe/Berlin")


class Quiet:
    def claim_idle(self) -> IdleClaim | None:
        return None

    async def when_idle(self) -> None:
        await asyncio.Event().wait()

    async def followup(self, message: FollowUp) -> None:
        raise AssertionError(f"never idle, yet {message.key} came")


@asynccontextmanager
async def running(clock: VirtualClock) -> AsyncIterator[Session]:
    store = MemoryStore()
    timers = TimerHeap(clock)
    try:
        async with open_session(
            store, "s1", host=lambda _s: Quiet(), clock=clock, timers=timers, profile="extended"
        ) as session:
            yield session
    finally:
        await timers.close()
        await store.close()


@async_test
async def test_a_stand_up_moved_from_nine_to_half_past_keeps_its_id_and_prompt() -> None:
    clock = VirtualClock(T0)
    async with running(clock) as session:
        first = await session.schedule(
            "stand-up", calendar=Calendar("0 9 * * 1-5", "Europe/Berlin")
        )
        moved = await session.update(first.id, calendar=Calendar("30 9 * * 1-5", "Europe/Berlin"))
        assert moved is not None
        assert (moved.id, moved.prompt, moved.kind) == (first.id, "stand-up", "calendar")
        assert moved.due == datetime(2026, 8, 6, 9, 30, tzinfo=BERLIN)
        assert moved.next_occurrences[:2] == (
            datetime(2026, 8, 6, 9, 30, tzinfo=BERLIN),
            datetime(2026, 8, 7, 9, 30, tzinfo=BERLIN),
        )
        assert await session.reminders() == (moved,)


@async_test
async def test_every_hour_made_every_two_hours_counts_from_the_change() -> None:
    clock = VirtualClock(T0)
    async with running(clock) as session:
        hourly = await session.schedule("water", every=timedelta(hours=1), request_id="r1")
        await clock.advance(10 * MINUTE)
        two_hourly = await session.update(hourly.id, every=timedelta(hours=2))
        assert two_hourly is not None
        assert (two_hourly.id, two_hourly.every) == (hourly.id, timedelta(hours=2))
        # the lattice restarts at the change (12:10), not at creation (12:00)
        assert two_hourly.due == NOW + timedelta(minutes=10, hours=2)
        assert two_hourly.next_occurrences[1] == NOW + timedelta(minutes=10, hours=4)
        # the request id still names this reminder: a retry makes no second one
        await session.schedule("water", every=timedelta(hours=1), request_id="r1")
        assert [r.id for r in await session.reminders()] == [hourly.id]


@async_test
async def test_a_one_shot_moved_to_an_instant_and_to_a_local_time() -> None:
    clock = VirtualClock(T0)
    async with running(clock) as session:
        tea = await session.schedule("tea", after=timedelta(minutes=5))
        later = await session.update(tea.id, at=NOW + timedelta(hours=3), prompt="green tea")
        assert later is not None
        assert (later.kind, later.due, later.prompt) == (
            "at",
            NOW + timedelta(hours=3),
            "green tea",
        )
        local = await session.update(
            tea.id, at=LocalTime(date(2026, 8, 6), time(8, 0), "Europe/Berlin")
        )
        assert local is not None
        assert local.due == datetime(2026, 8, 6, 6, 0, tzinfo=UTC)
        after = await session.update(tea.id, after=timedelta(minutes=1))
        assert after is not None
        assert (after.kind, after.after, after.due) == (
            "after",
            timedelta(minutes=1),
            NOW + timedelta(minutes=1),
        )


@async_test
async def test_a_refused_new_selector_raises_as_schedule_does_and_changes_nothing() -> None:
    clock = VirtualClock(T0)
    async with running(clock) as session:
        tea = await session.schedule("tea", after=timedelta(minutes=5))
        for bad in (
            {"every": timedelta(seconds=299)},
            {"after": timedelta(0)},
            {"at": NOW - timedelta(minutes=1)},
            {"calendar": Calendar("0 9 * *", "Europe/Berlin")},
        ):
            with pytest.raises(ScheduleError) as moved:
                await session.update(tea.id, **bad)
            with pytest.raises(ScheduleError) as created:
                await session.schedule("tea", **bad)
            assert (moved.value.code, moved.value.message) == (
                created.value.code,
                created.value.message,
            )
        with pytest.raises(ScheduleError) as both:
            await session.update(tea.id, every=timedelta(hours=1), after=timedelta(minutes=1))
        assert both.value.code == "invalid_selector"
        with pytest.raises(ScheduleError) as snoozed:
            await session.update(tea.id, every=timedelta(hours=1), snooze=timedelta(minutes=1))
        assert snoozed.value.code == "invalid_selector"
        assert [(r.id, r.kind) for r in await session.reminders()] == [(tea.id, "after")]


@async_test
async def test_a_reminder_that_is_done_cannot_be_moved() -> None:
    clock = VirtualClock(T0)
    async with running(clock) as session:
        tea = await session.schedule("tea", after=timedelta(minutes=5))
        assert await session.cancel(tea.id)
        assert await session.update(tea.id, every=timedelta(hours=1)) is None
        assert await session.reminders() == ()


@async_test
async def test_a_series_that_ends_by_count_and_until_and_an_end_removed() -> None:
    clock = VirtualClock(T0)
    async with running(clock) as session:
        five = await session.schedule("stretch", every=timedelta(hours=1), count=5)
        assert (five.remaining, five.until) == (5, None)
        berlin_evening = LocalTime(date(2026, 8, 7), time(9, 30), "Europe/Berlin")
        daily = await session.schedule(
            "stand-up", calendar=Calendar("0 9 * * *", "Europe/Berlin"), until=berlin_evening
        )
        assert daily.until == datetime(2026, 8, 7, 7, 30, tzinfo=UTC)
        assert daily.next_occurrences == (
            datetime(2026, 8, 6, 9, 0, tzinfo=BERLIN),
            datetime(2026, 8, 7, 9, 0, tzinfo=BERLIN),
        )
        two = await session.update(five.id, count=2)
        assert two is not None
        assert (two.remaining, len(two.next_occurrences)) == (2, 2)
        endless = await session.update(daily.id, until="none")
        assert endless is not None
        assert (endless.until, len(endless.next_occurrences)) == (None, 3)
        with pytest.raises(ScheduleError) as one_shot:
            await session.schedule("tea", after=timedelta(minutes=5), count=2)
        assert one_shot.value.code == "invalid_rule"
