"""``tickler inspect --why ID`` on real logs: a JSONL session run through
``open_session`` with a virtual clock and the bundled reference host
(deliveries become agent turns), then read back as a story."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from tickler.adapters.cli._why import Story, duration_text, reminder_story
from tickler.adapters.stores._jsonl import JsonlStore
from tickler.core import format_instant, parse_instant, parse_session_jsonl
from tickler.shell._clock import VirtualClock
from tickler.shell._reference_host import TURN, ReferenceHost, TurnInput
from tickler.shell._session import Session, open_session
from tickler.shell._timers import TimerHeap

T0 = 1_785_931_200_000  # 2026-08-05T12:00:00.000Z
MINUTE = 60_000
HOUR = 60 * MINUTE
Script = Callable[[Session[ReferenceHost]], Awaitable[None]]


def _host(session: Session[ReferenceHost]) -> ReferenceHost:
    async def model(turn: TurnInput) -> str:
        return f"turn {turn.n}"

    return ReferenceHost(session.log, model, session.clock)


async def _run(store_dir: Path, clock: VirtualClock, script: Script) -> None:
    store = JsonlStore(store_dir)
    timers = TimerHeap(clock, max_wait_s=86_400.0)  # one virtual sleep per wake
    try:
        async with open_session(store, "s1", host=_host, clock=clock, timers=timers) as session:
            await script(session)
    finally:
        await timers.close()
        await store.close()


async def _answered(session: Session[ReferenceHost], turns: int) -> None:
    """Wait (real time, the virtual clock standing still) until the agent
    has answered ``turns`` turns: the store writes from threads, so virtual
    time must not run ahead of them."""
    for _ in range(2000):
        if sum(event.type == TURN for event in session.log.events()) >= turns:
            return
        await asyncio.sleep(0.005)
    raise AssertionError(f"the agent never answered {turns} turns")


async def _make_log(store_dir: Path) -> VirtualClock:
    """schedule-1 every hour, schedule-2 once after 10 minutes, schedule-3
    deleted; the session is down from 1:30 to 5:30 (catch-up), then
    schedule-1 is deleted."""
    clock = VirtualClock(T0)

    async def first(session: Session[ReferenceHost]) -> None:
        call = session.tools.call_tool
        await call("schedule_create", {"prompt": "water", "every_seconds": 3600})
        await call("schedule_create", {"prompt": "stretch", "after_seconds": 600})
        await call("schedule_create", {"prompt": "never", "after_seconds": 60})
        await clock.advance(30_000)
        await call("schedule_delete", {"id": "schedule-3"})
        await clock.advance(10 * MINUTE - 30_000)
        await _answered(session, 1)
        await clock.advance(50 * MINUTE)
        await _answered(session, 2)
        await clock.advance(30 * MINUTE)

    await _run(store_dir, clock, first)
    clock.set_wall(T0 + 5 * HOUR + 30 * MINUTE)  # down for four hours

    async def second(session: Session[ReferenceHost]) -> None:
        await _answered(session, 3)
        await clock.advance(MINUTE)
        await session.tools.call_tool("schedule_delete", {"id": "schedule-1"})

    await _run(store_dir, clock, second)
    return clock


def _story_of(store_dir: Path, schedule_id: str, now_ms: int) -> Story:
    parsed = parse_session_jsonl((store_dir / "s1.jsonl").read_bytes())
    return reminder_story(parsed, schedule_id, now_ms)


def test_a_fixed_rate_reminders_story_shows_catch_up_and_lateness(tmp_path: Path) -> None:
    clock = asyncio.run(_make_log(tmp_path))
    story = _story_of(tmp_path, "schedule-1", clock.now_ms())
    steps = story.steps
    events = [(s.event, s.occurrence_at, s.skipped) for s in steps]
    first_due = format_instant(T0 + HOUR)
    caught = format_instant(T0 + 5 * HOUR)
    assert events == [
        ("created", None, None),
        ("due", first_due, 0),
        ("delivered", first_due, None),
        ("answered", None, None),
        ("due", caught, 3),  # 2:00, 3:00 and 4:00 fell into the 5:00 delivery
        ("delivered", caught, None),
        ("answered", None, None),
        ("deleted", None, None),
    ]
    assert steps[0].text == ("fixed-rate, every 3600 s; first due 2026-08-05T13:00:00.000Z")
    assert steps[4].text == (
        "occurrence 2026-08-05T17:00:00.000Z; queued for delivery 30 min 0 s after it fell due; "
        "3 earlier occurrences skipped by catch-up (one delivery for all)"
    )
    assert steps[4].late_ms == 30 * MINUTE  # the session came back at 5:30
    assert steps[5].late_ms == 30 * MINUTE
    assert (story.state, story.status) == ("ended", f"ended: deleted at {steps[7].at}")


def test_a_one_shots_story_ends_when_it_is_delivered(tmp_path: Path) -> None:
    clock = asyncio.run(_make_log(tmp_path))
    story = _story_of(tmp_path, "schedule-2", clock.now_ms())
    steps = story.steps
    assert [s.event for s in steps] == ["created", "due", "delivered", "answered"]
    assert steps[0].text == ("one-shot, 600 s after creation; first due 2026-08-05T12:10:00.000Z")
    due = T0 + 10 * MINUTE
    assert steps[1].occurrence_at == format_instant(due)
    assert steps[1].late_ms == 0
    assert steps[2].late_ms == 0
    assert steps[2].text == "as the agent's turn #0, 0.000 s after it fell due"
    assert story.status == "ended: its last occurrence was dispatched"
    assert (story.state, story.next_due) == ("ended", None)
    deleted = _story_of(tmp_path, "schedule-3", clock.now_ms())
    assert [s.event for s in deleted.steps] == ["created", "deleted"]
    assert not _story_of(tmp_path, "schedule-9", clock.now_ms()).found


def test_inspect_why_on_the_command_line(tmp_path: Path) -> None:
    asyncio.run(_make_log(tmp_path))
    command = [sys.executable, "-m", "tickler", "inspect", str(tmp_path / "s1.jsonl")]
    text = subprocess.run(
        [*command, "--why", "schedule-1", "--tz", "Europe/Berlin"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert text.splitlines()[0].startswith("reminder schedule-1 in session s1 (now ")
    assert (
        "  2026-08-05T17:30:00.000Z (2026-08-05 19:30:00 CEST)  due             "
        "occurrence 2026-08-05T17:00:00.000Z; queued for delivery 30 min 0 s after it fell due; "
        "3 earlier occurrences skipped by catch-up (one delivery for all)"
    ) in text.splitlines()
    as_json = subprocess.run(
        [*command, "--why", "schedule-2", "--json"], capture_output=True, text=True, check=True
    ).stdout
    [story] = json.loads(as_json)["stories"]
    assert story["id"] == "schedule-2"
    missing = subprocess.run(
        [*command, "--why", "schedule-9"], capture_output=True, text=True, check=False
    )
    assert missing.returncode == 2
    assert missing.stderr.strip().endswith("ever created a reminder 'schedule-9'")
    assert "Traceback" not in missing.stderr


def test_durations_read_like_people_say_them() -> None:
    assert duration_text(250) == "0.250 s"
    assert duration_text(42_000) == "42 s"
    assert duration_text(200_000) == "3 min 20 s"
    assert duration_text(2 * HOUR + 5 * MINUTE) == "2 h 5 min"
    assert duration_text(76 * HOUR) == "3 d 4 h"


async def _calendar_log(store_dir: Path) -> VirtualClock:
    """Every day at 9:00 in Berlin: delivered on the 6th, then the session
    is down from the 6th to the 9th at 10:00 (one delivery for three)."""
    clock = VirtualClock(T0)  # 2026-08-05 14:00 CEST

    async def first(session: Session[ReferenceHost]) -> None:
        calendar = {"cron": "0 9 * * *", "time_zone": "Europe/Berlin"}
        await session.tools.call_tool("schedule_create", {"prompt": "plan", "calendar": calendar})
        await clock.advance(19 * HOUR)  # 2026-08-06 09:00 CEST
        await _answered(session, 1)

    await _run(store_dir, clock, first)
    clock.set_wall(parse_instant("2026-08-09T08:00:00.000Z"))

    async def second(session: Session[ReferenceHost]) -> None:
        await _answered(session, 2)

    await _run(store_dir, clock, second)
    return clock


def test_a_calendar_reminders_story_counts_what_catch_up_skipped(tmp_path: Path) -> None:
    clock = asyncio.run(_calendar_log(tmp_path))
    story = _story_of(tmp_path, "schedule-1", clock.now_ms())
    assert [(s.event, s.occurrence_at, s.skipped) for s in story.steps] == [
        ("created", None, None),
        ("due", "2026-08-06T07:00:00.000Z", 0),
        ("delivered", "2026-08-06T07:00:00.000Z", None),
        ("answered", None, None),
        ("due", "2026-08-09T07:00:00.000Z", 2),  # the 7th and the 8th
        ("delivered", "2026-08-09T07:00:00.000Z", None),
        ("answered", None, None),
    ]
    assert story.steps[0].text == (
        "calendar '0 9 * * *' in Europe/Berlin (dst_gap shift, dst_overlap first); "
        "first due 2026-08-06T07:00:00.000Z"
    )
    assert story.steps[4].late_ms == HOUR
    assert story.status == "scheduled: next due 2026-08-10T07:00:00.000Z"
    assert (story.state, story.next_due) == ("scheduled", "2026-08-10T07:00:00.000Z")


async def _changed_log(store_dir: Path) -> VirtualClock:
    """Every hour on the hour (a calendar rule): paused at 12:10, resumed at
    15:00 (13:00, 14:00 and 15:00 fell due meanwhile and are not replayed),
    snoozed at 15:10 for ten minutes (16:00 moves to 15:20), its prompt
    changed, then delivered at 15:20."""
    clock = VirtualClock(T0)

    async def script(session: Session[ReferenceHost]) -> None:
        call = session.tools.call_tool
        hourly = {"cron": "0 * * * *", "time_zone": "UTC"}
        await call("schedule_create", {"prompt": "water", "calendar": hourly})
        await clock.advance(10 * MINUTE)
        await call("schedule_update", {"id": "schedule-1", "paused": True})
        await clock.advance(170 * MINUTE)
        await call("schedule_update", {"id": "schedule-1", "paused": False})
        await clock.advance(10 * MINUTE)
        await call("schedule_update", {"id": "schedule-1", "snooze_seconds": 600})
        await call("schedule_update", {"id": "schedule-1", "prompt": "water the ferns"})
        await clock.advance(10 * MINUTE)
        await _answered(session, 1)

    await _run(store_dir, clock, script)
    return clock


def test_a_changed_reminders_story_shows_each_change(tmp_path: Path) -> None:
    clock = asyncio.run(_changed_log(tmp_path))
    story = _story_of(tmp_path, "schedule-1", clock.now_ms())
    assert [(s.event, s.at[11:16]) for s in story.steps] == [
        ("created", "12:00"),
        ("paused", "12:10"),
        ("resumed", "15:00"),
        ("snoozed", "15:10"),
        ("updated", "15:10"),
        ("due", "15:20"),
        ("delivered", "15:20"),
        ("answered", "15:20"),
    ]
    texts = [s.text for s in story.steps]
    assert texts[1] == "paused: it delivers nothing until it is resumed"
    assert texts[2].startswith("resumed (what fell due while paused is not replayed)")
    assert texts[3] == "snoozed: next due 2026-08-05T15:20:00.000Z"
    assert texts[4] == "prompt changed to 'water the ferns'"
    assert story.steps[5].occurrence_at == "2026-08-05T15:20:00.000Z"
    assert story.steps[5].skipped == 0
    # Back on the rule: 16:00 was the occurrence moved to 15:20, so 17:00.
    assert story.status == "scheduled: next due 2026-08-05T17:00:00.000Z"
    assert (story.state, story.next_due) == ("scheduled", "2026-08-05T17:00:00.000Z")


def test_a_moved_reminders_story_says_from_what_to_what(tmp_path: Path) -> None:
    """A daily 9:00 reminder moved to 9:30 at 12:10, in place: one step
    names the old rule and target, the new ones, and when."""

    async def make() -> VirtualClock:
        clock = VirtualClock(T0)

        async def script(session: Session[ReferenceHost]) -> None:
            call = session.tools.call_tool
            daily = {"cron": "0 9 * * *", "time_zone": "UTC"}
            await call("schedule_create", {"prompt": "stand-up", "calendar": daily})
            await clock.advance(10 * MINUTE)
            later = {"cron": "30 9 * * *", "time_zone": "UTC"}
            await call("schedule_update", {"id": "schedule-1", "calendar": later})

        await _run(tmp_path, clock, script)
        return clock

    clock = asyncio.run(make())
    story = _story_of(tmp_path, "schedule-1", clock.now_ms())
    assert [(s.event, s.at[11:16]) for s in story.steps] == [
        ("created", "12:00"),
        ("moved", "12:10"),
    ]
    assert story.steps[1].text == (
        "moved from calendar '0 9 * * *' in UTC (dst_gap shift, dst_overlap first) "
        "(next due 2026-08-06T09:00:00.000Z) to calendar '30 9 * * *' in UTC "
        "(dst_gap shift, dst_overlap first) (next due 2026-08-06T09:30:00.000Z) "
        "at 2026-08-05T12:10:00.000Z"
    )
    assert story.status == "scheduled: next due 2026-08-06T09:30:00.000Z"


def test_a_series_that_ends_says_how_and_is_ended(tmp_path: Path) -> None:
    """Every hour, at most two occurrences: 13:00 and 14:00, then ended;
    its count was raised to two from one at 12:10."""

    async def make() -> VirtualClock:
        clock = VirtualClock(T0)

        async def script(session: Session[ReferenceHost]) -> None:
            call = session.tools.call_tool
            await call("schedule_create", {"prompt": "water", "every_seconds": 3600, "count": 1})
            await clock.advance(10 * MINUTE)
            await call("schedule_update", {"id": "schedule-1", "count": 2})
            await clock.advance(50 * MINUTE)
            await _answered(session, 1)
            await clock.advance(HOUR)
            await _answered(session, 2)
            await clock.advance(HOUR)

        await _run(tmp_path, clock, script)
        return clock

    clock = asyncio.run(make())
    story = _story_of(tmp_path, "schedule-1", clock.now_ms())
    assert story.steps[0].text == (
        "fixed-rate, every 3600 s; first due 2026-08-05T13:00:00.000Z; at most 1 occurrence"
    )
    assert (story.steps[1].event, story.steps[1].text) == (
        "end",
        "end changed: occurrences 2 from now on",
    )
    assert [s.occurrence_at for s in story.steps if s.event == "due"] == [
        "2026-08-05T13:00:00.000Z",
        "2026-08-05T14:00:00.000Z",
    ]
    assert story.state == "ended"
    assert story.status == "ended: its last occurrence was dispatched"


def test_a_paused_reminder_says_so(tmp_path: Path) -> None:
    async def make() -> VirtualClock:
        clock = VirtualClock(T0)

        async def script(session: Session[ReferenceHost]) -> None:
            call = session.tools.call_tool
            await call("schedule_create", {"prompt": "water", "every_seconds": 3600})
            await call("schedule_update", {"id": "schedule-1", "paused": True})
            await clock.advance(2 * HOUR)

        await _run(tmp_path, clock, script)
        return clock

    clock = asyncio.run(make())
    story = _story_of(tmp_path, "schedule-1", clock.now_ms())
    assert [s.event for s in story.steps] == ["created", "paused"]
    assert story.status == "paused: nothing is delivered until it is resumed"


async def _snoozed_then_down(
    store_dir: Path, selector: dict[str, object], snooze_at_min: int, snooze_s: int
) -> VirtualClock:
    """An hourly reminder created at 12:00 (due 13:00), snoozed
    ``snooze_at_min`` minutes later, then the session down until 15:30 and
    back for one delivery."""
    clock = VirtualClock(T0)

    async def before(session: Session[ReferenceHost]) -> None:
        call = session.tools.call_tool
        await call("schedule_create", {"prompt": "water", **selector})
        await clock.advance(snooze_at_min * MINUTE)
        await call("schedule_update", {"id": "schedule-1", "snooze_seconds": snooze_s})

    await _run(store_dir, clock, before)
    clock.set_wall(T0 + 3 * HOUR + 30 * MINUTE)

    async def after(session: Session[ReferenceHost]) -> None:
        await _answered(session, 1)

    await _run(store_dir, clock, after)
    return clock


def _assert_one_catch_up_for_15(story: Story, snoozed_to: str) -> None:
    """One delivery, for 15:00, standing for the snoozed one and 14:00 too;
    then back on the hour."""
    assert [(s.event, s.occurrence_at, s.skipped) for s in story.steps] == [
        ("created", None, None),
        ("snoozed", None, None),
        ("due", "2026-08-05T15:00:00.000Z", 2),
        ("delivered", "2026-08-05T15:00:00.000Z", None),
        ("answered", None, None),
    ]
    assert story.steps[1].text == f"snoozed: next due 2026-08-05T{snoozed_to}:00.000Z"
    assert story.status == "scheduled: next due 2026-08-05T16:00:00.000Z"
    assert (story.state, story.next_due) == ("scheduled", "2026-08-05T16:00:00.000Z")


def test_a_snoozed_fixed_rate_reminders_story_counts_the_snoozed_one(tmp_path: Path) -> None:
    """Hourly from 12:00 (due 13:00), snoozed at 12:55 for 30 minutes (13:25),
    the session down until 15:30: one delivery, for 15:00, standing for
    13:25 and 14:00 too; then back on the hour."""
    clock = asyncio.run(_snoozed_then_down(tmp_path, {"every_seconds": 3600}, 55, 1800))
    _assert_one_catch_up_for_15(_story_of(tmp_path, "schedule-1", clock.now_ms()), "13:25")


@pytest.mark.parametrize(
    ("snooze_at", "snooze_s", "snoozed_to"),
    [
        (5, 600, "12:15"),  # before 13:00: 13:00 moves there
        (55, 1800, "13:25"),  # past 13:00: 14:00 stays
    ],
)
def test_a_snoozed_calendar_reminders_story_counts_the_snoozed_one(
    tmp_path: Path, snooze_at: int, snooze_s: int, snoozed_to: str
) -> None:
    """Every hour on the hour from 12:00 (due 13:00), snoozed, the session
    down until 15:30: one delivery, for 15:00, standing for the snoozed one
    and 14:00 too (13:00 was moved, not repeated); then back on the hour."""
    hourly: dict[str, object] = {"calendar": {"cron": "0 * * * *", "time_zone": "UTC"}}
    clock = asyncio.run(_snoozed_then_down(tmp_path, hourly, snooze_at, snooze_s))
    _assert_one_catch_up_for_15(_story_of(tmp_path, "schedule-1", clock.now_ms()), snoozed_to)
