"""The typed API's extended operations: ``schedule(calendar=...)`` with its
next occurrences, ``update`` (prompt, pause and resume, snooze) and
``request_id``, through the same pipeline and events as the tools."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

import tickler
from tickler.adapters.stores._memory import MemoryStore
from tickler.core import Profile
from tickler.shell._clock import VirtualClock
from tickler.shell._host import FollowUp, IdleClaim
from tickler.shell._reminders import Calendar, ScheduleError
from tickler.shell._session import Session, open_session
from tickler.shell._timers import TimerHeap

from .support import T0, async_test

NOW = datetime(2026, 8, 5, 12, 0, tzinfo=UTC)  # T0, a Wednesday
BERLIN = ZoneInfo("Europe/Berlin")
WEEKDAYS_AT_NINE = Calendar("0 9 * * 1-5", "Europe/Berlin")


class Quiet:
    def claim_idle(self) -> IdleClaim | None:
        return None

    async def when_idle(self) -> None:
        await asyncio.Event().wait()

    async def followup(self, message: FollowUp) -> None:
        raise AssertionError(f"never idle, yet {message.key} came")


@asynccontextmanager
async def running(store: MemoryStore, profile: Profile = "extended") -> AsyncIterator[Session]:
    clock = VirtualClock(T0)
    timers = TimerHeap(clock)
    try:
        async with open_session(
            store, "s1", host=lambda _s: Quiet(), clock=clock, timers=timers, profile=profile
        ) as session:
            yield session
    finally:
        await timers.close()


def test_calendar_is_public() -> None:
    assert tickler.Calendar is Calendar


@async_test
async def test_a_calendar_reminder_with_its_next_occurrences() -> None:
    store = MemoryStore()
    async with running(store) as session:
        reminder = await session.schedule("stand-up", calendar=WEEKDAYS_AT_NINE)
        assert reminder.kind == "calendar"
        assert reminder.calendar == Calendar("0 9 * * 1-5", "Europe/Berlin", "shift", "first")
        thursday = datetime(2026, 8, 6, 9, 0, tzinfo=BERLIN)
        assert reminder.due == thursday
        assert reminder.next_occurrences == (
            thursday,
            datetime(2026, 8, 7, 9, 0, tzinfo=BERLIN),
            datetime(2026, 8, 10, 9, 0, tzinfo=BERLIN),  # Monday: the weekend skipped
        )
        assert await session.reminders() == (reminder,)
    await store.close()


@async_test
async def test_update_pauses_resumes_snoozes_and_renames_in_place() -> None:
    store = MemoryStore()
    async with running(store) as session:
        made = await session.schedule("tea", after=timedelta(minutes=10))
        paused = await session.update(made.id, paused=True)
        assert paused is not None
        assert paused.paused
        assert paused.id == made.id
        snoozed = await session.update(made.id, paused=False, snooze=timedelta(hours=1))
        assert snoozed is not None
        assert not snoozed.paused
        assert snoozed.due == NOW + timedelta(hours=1)
        renamed = await session.update(made.id, prompt="green tea")
        assert renamed is not None
        assert renamed.prompt == "green tea"
        assert await session.update("schedule-9", paused=True) is None
        with pytest.raises(ScheduleError) as refused:
            await session.update(made.id, snooze=timedelta(seconds=0))
        assert refused.value.code == "invalid_rule"
    await store.close()


@async_test
async def test_a_fixed_rate_reminder_shows_its_next_occurrences_and_snoozes_on_its_interval() -> (
    None
):
    store = MemoryStore()
    async with running(store) as session:
        every = await session.schedule("stretch", every=timedelta(hours=1))
        hour = timedelta(hours=1)
        assert every.next_occurrences == (NOW + hour, NOW + 2 * hour, NOW + 3 * hour)
        snoozed = await session.update(every.id, snooze=timedelta(minutes=90))
        assert snoozed is not None
        assert snoozed.due == NOW + timedelta(minutes=90)
        # Later occurrences stay on the interval counted from its creation.
        assert snoozed.next_occurrences == (
            NOW + timedelta(minutes=90),
            NOW + 2 * hour,
            NOW + 3 * hour,
        )
        assert await session.reminders() == (snoozed,)
    await store.close()


@async_test
async def test_a_request_id_returns_the_first_reminder_again() -> None:
    store = MemoryStore()
    async with running(store) as session:
        first = await session.schedule("tea", after=timedelta(minutes=10), request_id="r-1")
        again = await session.schedule("tea", after=timedelta(minutes=10), request_id="r-1")
        assert again == first
        assert len(await session.reminders()) == 1
        with pytest.raises(ScheduleError) as other:
            await session.schedule("coffee", after=timedelta(minutes=10), request_id="r-1")
        assert other.value.code == "invalid_rule"
    await store.close()


@async_test
async def test_the_reference_profile_refuses_the_extended_operations() -> None:
    store = MemoryStore()
    async with running(store, profile="reference") as session:
        assert [t["name"] for t in session.tools.catalog] == [
            "schedule_create",
            "schedule_list",
            "schedule_delete",
        ]
        with pytest.raises(ScheduleError) as calendar:
            await session.schedule("stand-up", calendar=WEEKDAYS_AT_NINE)
        assert calendar.value.code == "invalid_selector"
        with pytest.raises(ScheduleError) as update:
            await session.update("schedule-1", paused=True)
        assert update.value.code == "internal_error"
    await store.close()
