"""Calendar reminders in the runtime: delivered on time across a DST
change, latest-only after a long outage, on a fake clock."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from tickler.core import parse_instant
from tickler.shell._clock import VirtualClock
from tickler.shell._timers import TimerHeap

from .support import DAY, HOUR, SECOND, Rig, async_test, rig

# Friday 2026-03-27 12:00 UTC; Europe/Berlin springs forward on Sunday the 29th.
BEFORE_SPRING = parse_instant("2026-03-27T12:00:00.000Z")
DAILY_NINE = {"cron": "0 9 * * *", "time_zone": "Europe/Berlin"}


@asynccontextmanager
async def days_rig() -> AsyncIterator[Rig]:
    """A rig whose timer heap re-reads the wall clock hourly, not every
    second: days pass in a few hundred steps (no wall jumps here)."""
    clock = VirtualClock(BEFORE_SPRING)
    heap = TimerHeap(clock, max_wait_s=3600.0)
    try:
        async with rig(clock=clock, timers=heap) as r:
            yield r
    finally:
        await heap.close()


@async_test
async def test_a_daily_reminder_fires_at_nine_local_on_both_sides_of_the_change() -> None:
    async with days_rig() as r:
        created = await r.create(prompt="stand-up", calendar=DAILY_NINE)
        assert created["kind"] == "calendar"
        assert [o["local"] for o in created["nextOccurrences"]] == [
            "2026-03-28T09:00:00+01:00",
            "2026-03-29T09:00:00+02:00",
            "2026-03-30T09:00:00+02:00",
        ]
        await r.advance(3 * DAY + HOUR, step_ms=HOUR)
        expected = [
            "2026-03-28T08:00:00.000Z",  # 09:00 CET
            "2026-03-29T07:00:00.000Z",  # 09:00 CEST: an hour earlier in UTC
            "2026-03-30T07:00:00.000Z",
        ]
        assert r.host.keys == [f"schedule-1@{at}" for at in expected]
        for at, taken in zip(expected, r.host.taken_wall, strict=True):
            assert parse_instant(at) <= taken <= parse_instant(at) + SECOND
        (listed,) = await r.views()
        assert listed["scheduledAt"] == "2026-03-31T07:00:00.000Z"
        assert listed["state"] == "scheduled"


@async_test
async def test_a_gap_minute_shifts_to_the_end_of_the_gap() -> None:
    async with days_rig() as r:
        # 02:30 does not exist in Berlin on 2026-03-29: it fires at 03:00 CEST.
        await r.create(prompt="p", calendar={"cron": "30 2 * * *", "time_zone": "Europe/Berlin"})
        await r.advance(2 * DAY, step_ms=HOUR)
        assert r.host.keys == [
            "schedule-1@2026-03-28T01:30:00.000Z",
            "schedule-1@2026-03-29T01:00:00.000Z",
        ]


@async_test
async def test_a_long_outage_delivers_the_latest_occurrence_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="tickler")
    async with rig(wall=BEFORE_SPRING) as r:
        await r.create(prompt="p", calendar=DAILY_NINE)
        r.jump(400 * DAY)  # 2027-05-01T12:00Z
        await r.advance(2 * SECOND, step_ms=100)
        assert r.host.keys == ["schedule-1@2027-05-01T07:00:00.000Z"]
        (listed,) = await r.views()
        assert listed["scheduledAt"] == "2027-05-02T07:00:00.000Z"
        # 2026-03-28 .. 2027-04-30: 399 occurrences stood for by one
        assert "schedule-1@2027-05-01T07:00:00.000Z stands for 399" in caplog.text
        await r.advance(HOUR)
        assert len(r.host.offered) == 1


@async_test
async def test_the_reference_profile_refuses_a_calendar_and_writes_nothing() -> None:
    async with rig(wall=BEFORE_SPRING, profile="reference") as r:
        refused = await r.create(calendar=DAILY_NINE)
        assert refused["code"] == "invalid_selector"
        assert refused["message"] == (
            "schedule_create accepts exactly one of after_seconds, at, or every_seconds."
        )
        assert r.log.labels() == []
