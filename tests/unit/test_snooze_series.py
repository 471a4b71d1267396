"""A snooze moves one occurrence and leaves the later ones where they were,
for a fixed-rate and a calendar reminder alike: snoozed to before its next
occurrence, a reminder is not delivered at the snoozed time *and* at the
occurrence it moved. Every path agrees (decide, evolve, fold, a snapshot),
and a series that ends in year 9999 is resumed without an internal error."""

from __future__ import annotations

import json
from typing import Any, Final

from tickler.core import (
    EMPTY_STATE,
    SCHEDULE_CHANGE,
    DeliverDue,
    Delivery,
    ScheduleChange,
    State,
    Wait,
    decide,
    encode_change,
    evolve,
    fold,
    handle,
    parse_instant,
)
from tickler.core._snapshot import decode_state, encode_state
from tickler.core.wire._session import event

HOUR: Final = 3_600_000
MINUTE: Final = 60_000
T9: Final = parse_instant("2026-12-07T09:00:00.000Z")  # a Monday; Berlin is UTC+1


class _Session:
    """A state and the log that made it, so every path can be compared."""

    def __init__(self) -> None:
        self.state: State = EMPTY_STATE
        self.log: list[ScheduleChange] = []

    def call(self, tool: str, args: dict[str, Any], now: int) -> Any:
        changes, answer = handle(self.state, tool, args, now)
        self._apply(changes)
        return json.loads(answer)

    def deliver(self, now: int) -> Delivery | Wait:
        changes, result = decide(self.state, DeliverDue(), now)
        self._apply(changes)
        outcome = result.unwrap()
        assert isinstance(outcome, Delivery | Wait)
        return outcome

    def _apply(self, changes: tuple[ScheduleChange, ...]) -> None:
        for change in changes:
            self.state = evolve(self.state, change)
        self.log.extend(changes)

    def assert_paths_agree(self) -> None:
        events = [event(SCHEDULE_CHANGE, n, 0, encode_change(c)) for n, c in enumerate(self.log)]
        assert fold(events) == self.state
        assert decode_state(encode_state(self.state)) == self.state


def _utc(answer: dict[str, Any]) -> list[str]:
    return [o["utc"] for o in answer["nextOccurrences"]]


def test_a_fixed_rate_reminder_snoozed_before_its_next_occurrence_is_not_delivered_twice() -> None:
    session = _Session()
    session.call("schedule_create", {"prompt": "stretch", "every_seconds": 3600}, T9)
    # Due 10:00; at 09:30 snoozed 10 minutes: 10:00 moves to 09:40.
    snoozed = session.call(
        "schedule_update", {"id": "schedule-1", "snooze_seconds": 600}, T9 + 30 * MINUTE
    )
    assert _utc(snoozed) == [
        "2026-12-07T09:40:00.000Z",
        "2026-12-07T11:00:00.000Z",
        "2026-12-07T12:00:00.000Z",
    ]
    session.assert_paths_agree()
    first = session.deliver(T9 + 40 * MINUTE)
    assert isinstance(first, Delivery)
    assert [o.occurrence_at for o in first.occurrences] == ["2026-12-07T09:40:00.000Z"]
    waited = session.deliver(T9 + HOUR)  # 10:00 was moved: nothing is due
    assert waited == Wait(T9 + 2 * HOUR)
    session.assert_paths_agree()


def test_a_second_earlier_snooze_keeps_what_the_first_passed_over() -> None:
    session = _Session()
    session.call("schedule_create", {"prompt": "stretch", "every_seconds": 3600}, T9)
    # 10:00 snoozed to 13:30 (11:00, 12:00, 13:00 passed over), then back to 10:00.
    session.call("schedule_update", {"id": "schedule-1", "snooze_seconds": 4 * 3600 + 1800}, T9)
    again = session.call(
        "schedule_update", {"id": "schedule-1", "snooze_seconds": 3600 - 60}, T9 + MINUTE
    )
    assert _utc(again) == [
        "2026-12-07T10:00:00.000Z",
        "2026-12-07T14:00:00.000Z",
        "2026-12-07T15:00:00.000Z",
    ]
    session.assert_paths_agree()
    late = session.deliver(T9 + 5 * HOUR + 30 * MINUTE)  # down until 14:30
    assert isinstance(late, Delivery)
    assert [o.occurrence_at for o in late.occurrences] == ["2026-12-07T14:00:00.000Z"]
    assert late.skipped == (1,)  # 10:00
    session.assert_paths_agree()


def test_a_calendar_reminder_snoozed_before_its_next_occurrence_is_not_delivered_twice() -> None:
    session = _Session()
    created = session.call(
        "schedule_create",
        {"prompt": "stand-up", "calendar": {"cron": "0 9 * * *", "time_zone": "Europe/Berlin"}},
        T9 - 2 * HOUR,  # 07:00Z = 08:00 Berlin; due 09:00 Berlin = 08:00Z
    )
    assert created["scheduledAt"] == "2026-12-07T08:00:00.000Z"
    # At 07:30Z snoozed 10 minutes: today's 09:00 Berlin moves to 08:40 Berlin.
    snoozed = session.call(
        "schedule_update", {"id": "schedule-1", "snooze_seconds": 600}, T9 - 90 * MINUTE
    )
    assert _utc(snoozed) == [
        "2026-12-07T07:40:00.000Z",
        "2026-12-08T08:00:00.000Z",
        "2026-12-09T08:00:00.000Z",
    ]
    session.assert_paths_agree()
    first = session.deliver(T9 - 80 * MINUTE)
    assert isinstance(first, Delivery)
    assert [o.occurrence_at for o in first.occurrences] == ["2026-12-07T07:40:00.000Z"]
    assert session.deliver(T9 - HOUR) == Wait(T9 - HOUR + 24 * HOUR)
    session.assert_paths_agree()
    # Down for two days: the latest occurrence, the one before it skipped.
    late = session.deliver(T9 + 48 * HOUR)
    assert isinstance(late, Delivery)
    assert [o.occurrence_at for o in late.occurrences] == ["2026-12-09T08:00:00.000Z"]
    assert late.skipped == (1,)


def test_a_calendar_snooze_past_occurrences_passes_over_them_then_counts_them_late() -> None:
    session = _Session()
    session.call(
        "schedule_create",
        {"prompt": "tick", "calendar": {"cron": "0 * * * *", "time_zone": "UTC"}},
        T9,
    )
    # 10:00 snoozed to 09:30 (before it); down until 12:30: 09:30, 11:00, 12:00 due.
    session.call("schedule_update", {"id": "schedule-1", "snooze_seconds": 1800}, T9)
    session.assert_paths_agree()
    late = session.deliver(T9 + 3 * HOUR + 30 * MINUTE)
    assert isinstance(late, Delivery)
    assert [o.occurrence_at for o in late.occurrences] == ["2026-12-07T12:00:00.000Z"]
    assert late.skipped == (2,)
    assert session.state.get("schedule-1").scheduled_at == "2026-12-07T13:00:00.000Z"  # type: ignore[union-attr]
    session.assert_paths_agree()


def test_a_series_that_ends_in_year_9999_is_resumed_without_an_internal_error() -> None:
    yearly = 365 * 86_400
    created_at = parse_instant("9998-12-01T00:00:00.000Z")
    session = _Session()
    created = session.call(
        "schedule_create", {"prompt": "yearly", "every_seconds": yearly}, created_at
    )
    assert created["scheduledAt"] == "9999-12-01T00:00:00.000Z"
    # Snoozed to the next day: the 9999 occurrence moves there and none follows.
    snoozed = session.call(
        "schedule_update", {"id": "schedule-1", "snooze_seconds": 86_400}, created_at
    )
    assert _utc(snoozed) == ["9998-12-02T00:00:00.000Z"]
    session.call("schedule_update", {"id": "schedule-1", "paused": True}, created_at + 1)
    resumed = session.call(
        "schedule_update", {"id": "schedule-1", "paused": False}, created_at + 3 * 86_400_000
    )
    assert resumed["state"] == "overdue", resumed  # its last occurrence is still owed
    session.assert_paths_agree()
    last = session.deliver(created_at + 3 * 86_400_000)
    assert isinstance(last, Delivery)
    assert session.state.get("schedule-1") is None  # the series ended


def test_the_reviewed_year_9999_resume_answers_with_the_reminder() -> None:
    """The repro: yearly from 9998-06-01; paused and snoozed in 9999-07,
    resumed an hour later."""
    yearly = 365 * 86_400
    session = _Session()
    session.call(
        "schedule_create",
        {"prompt": "yearly", "every_seconds": yearly},
        parse_instant("9998-06-01T00:00:00.000Z"),
    )
    july = parse_instant("9999-07-01T00:00:00.000Z")
    session.call("schedule_update", {"id": "schedule-1", "paused": True}, july)
    session.call("schedule_update", {"id": "schedule-1", "snooze_seconds": 60}, july)
    resumed = session.call("schedule_update", {"id": "schedule-1", "paused": False}, july + HOUR)
    assert resumed["id"] == "schedule-1", resumed
    assert "code" not in resumed
    session.assert_paths_agree()


def test_a_snoozed_series_resumed_after_its_last_point_keeps_its_target() -> None:
    """Hourly from 20:00 on the last day of year 9999 (21:00, 22:00, 23:00),
    21:00 snoozed to 20:40, paused, resumed at 23:59:59: no point follows, so
    the target stays and one catch-up stands for 20:40 and 22:00 too."""
    session = _Session()
    start = parse_instant("9999-12-31T20:00:00.000Z")
    session.call("schedule_create", {"prompt": "last", "every_seconds": 3600}, start)
    session.call(
        "schedule_update", {"id": "schedule-1", "snooze_seconds": 600}, start + 30 * MINUTE
    )
    session.call("schedule_update", {"id": "schedule-1", "paused": True}, start + 31 * MINUTE)
    resumed = session.call(
        "schedule_update", {"id": "schedule-1", "paused": False}, start + 4 * HOUR - 1000
    )
    assert resumed["scheduledAt"] == "9999-12-31T20:40:00.000Z"
    last = session.deliver(start + 4 * HOUR - 1000)
    assert isinstance(last, Delivery)
    assert [o.occurrence_at for o in last.occurrences] == ["9999-12-31T23:00:00.000Z"]
    assert last.skipped == (2,)
    session.assert_paths_agree()
