"""Rescheduling in place (``schedule_update`` with a new selector, extended
profile): concrete cases, each through ``handle``/``decide``, the log's one
update event, and the fold of the encoded log."""

from __future__ import annotations

import json
from typing import Any

import pytest
from returns.pipeline import is_successful

from tickler.core import (
    EMPTY_STATE,
    SCHEDULE_CHANGE,
    DeliverDue,
    Delivery,
    ScheduleChange,
    State,
    Wait,
    check_log,
    decide,
    encode_change,
    evolve,
    handle,
    parse_instant,
)
from tickler.core._model import UpdateChange
from tickler.core.wire._session import event

T0 = parse_instant("2026-12-07T08:00:00.000Z")  # a Monday
MINUTE = 60_000
HOUR = 60 * MINUTE


class Session:
    """A log and its state, kept with ``evolve``; the fold must agree."""

    def __init__(self) -> None:
        self.state: State = EMPTY_STATE
        self.log: list[ScheduleChange] = []

    def call(self, tool: str, args: dict[str, Any], now: int) -> dict[str, Any]:
        changes, text = handle(self.state, tool, args, now)
        self._apply(changes)
        answer: dict[str, Any] = json.loads(text)
        return answer

    def deliver(self, now: int) -> Delivery | Wait:
        changes, result = decide(self.state, DeliverDue(), now)
        self._apply(changes)
        outcome = result.unwrap()
        assert isinstance(outcome, Delivery | Wait)
        return outcome

    def _apply(self, changes: tuple[ScheduleChange, ...]) -> None:
        for change in changes:
            self.state = evolve(self.state, change)
            self.log.append(change)

    def replayed(self) -> State:
        events = [event(SCHEDULE_CHANGE, n, 0, encode_change(c)) for n, c in enumerate(self.log)]
        checked = check_log(events)
        assert is_successful(checked)
        return checked.unwrap()


def _iso(ms: int) -> str:
    from tickler.core import format_instant

    return format_instant(ms)


def test_nine_oclock_moved_to_half_past_nine_is_one_event_and_fires_then() -> None:
    s = Session()
    created = s.call(
        "schedule_create",
        {"prompt": "stand-up", "calendar": {"cron": "0 9 * * 1-5", "time_zone": "UTC"}},
        T0,
    )
    assert created["scheduledAt"] == "2026-12-07T09:00:00.000Z"
    moved = s.call(
        "schedule_update",
        {"id": "schedule-1", "calendar": {"cron": "30 9 * * 1-5", "time_zone": "UTC"}},
        T0 + MINUTE,
    )
    assert (moved["id"], moved["prompt"], moved["scheduledAt"]) == (
        "schedule-1",
        "stand-up",
        "2026-12-07T09:30:00.000Z",
    )
    assert moved["calendar"]["cron"] == "30 9 * * 1-5"
    assert len(s.log) == 2
    assert encode_change(s.log[1]) == (
        b'{"version":2,"operation":"update","id":"schedule-1","schedule":{"id":"schedule-1",'
        b'"kind":"calendar","prompt":"stand-up","cron":"30 9 * * 1-5","timeZone":"UTC",'
        b'"dstGap":"shift","dstOverlap":"first","scheduledAt":"2026-12-07T09:30:00.000Z"}}'
    )
    assert s.deliver(parse_instant("2026-12-07T09:00:00.000Z")) == Wait(
        parse_instant("2026-12-07T09:30:00.000Z")
    )
    delivered = s.deliver(parse_instant("2026-12-07T09:30:00.000Z"))
    assert isinstance(delivered, Delivery)
    assert delivered.occurrences[0].occurrence_at == "2026-12-07T09:30:00.000Z"
    assert s.state.get("schedule-1").scheduled_at == "2026-12-08T09:30:00.000Z"  # type: ignore[union-attr]
    assert s.replayed() == s.state


def test_hourly_made_every_two_hours_restarts_its_lattice_at_the_change() -> None:
    s = Session()
    s.call("schedule_create", {"prompt": "water", "every_seconds": 3600}, T0)
    s.deliver(T0 + HOUR)  # 09:00 delivered; next 10:00
    changed = s.call(
        "schedule_update", {"id": "schedule-1", "every_seconds": 7200}, T0 + 90 * MINUTE
    )
    assert (changed["everySeconds"], changed["scheduledAt"]) == (7200, _iso(T0 + 210 * MINUTE))
    assert [p["utc"] for p in changed["nextOccurrences"]] == [
        _iso(T0 + 210 * MINUTE),
        _iso(T0 + 330 * MINUTE),
        _iso(T0 + 450 * MINUTE),
    ]
    assert s.deliver(T0 + 2 * HOUR) == Wait(T0 + 210 * MINUTE)  # the old 10:00 is gone
    late = s.deliver(T0 + 12 * HOUR)  # five points passed: one catch-up delivery
    assert isinstance(late, Delivery)
    assert late.skipped == (4,)  # 11:30, 13:30, 15:30 and 17:30 folded into 19:30
    assert late.occurrences[0].occurrence_at == _iso(T0 + 690 * MINUTE)
    assert s.replayed() == s.state


def test_a_one_shot_moved_and_made_recurring() -> None:
    s = Session()
    s.call("schedule_create", {"prompt": "tea", "after_seconds": 300}, T0)
    moved = s.call(
        "schedule_update", {"id": "schedule-1", "at": "2026-12-07T10:00:00+01:00"}, T0 + MINUTE
    )
    assert (moved["kind"], moved["scheduledAt"]) == ("at", "2026-12-07T09:00:00.000Z")
    assert s.deliver(T0 + 5 * MINUTE) == Wait(T0 + HOUR)
    every = s.call("schedule_update", {"id": "schedule-1", "every_seconds": 600}, T0 + 2 * MINUTE)
    assert (every["kind"], every["scheduledAt"]) == ("every", _iso(T0 + 12 * MINUTE))
    assert s.replayed() == s.state
    assert s.replayed().everies.first() == (T0 + 12 * MINUTE, 0, "schedule-1")
    assert s.replayed().one_shots.first() is None


def test_a_snoozed_series_rescheduled_forgets_where_the_old_one_continued() -> None:
    s = Session()
    s.call("schedule_create", {"prompt": "water", "every_seconds": 3600}, T0)
    s.call("schedule_update", {"id": "schedule-1", "snooze_seconds": 600}, T0 + MINUTE)
    assert s.state.lattice("schedule-1") is not None
    s.call("schedule_update", {"id": "schedule-1", "every_seconds": 3600}, T0 + 2 * MINUTE)
    assert s.state.lattice("schedule-1") is None
    assert s.state.entries["schedule-1"].target == T0 + 62 * MINUTE
    assert s.replayed() == s.state


def test_a_paused_reminder_rescheduled_stays_paused_unless_resumed() -> None:
    s = Session()
    s.call("schedule_create", {"prompt": "water", "every_seconds": 3600}, T0)
    s.call("schedule_update", {"id": "schedule-1", "paused": True}, T0)
    paused = s.call("schedule_update", {"id": "schedule-1", "after_seconds": 60}, T0 + MINUTE)
    assert (paused["kind"], paused["state"]) == ("after", "paused")
    assert s.deliver(T0 + HOUR) == Wait(None)
    resumed = s.call(
        "schedule_update", {"id": "schedule-1", "paused": False, "every_seconds": 900}, T0 + HOUR
    )
    assert (resumed["kind"], resumed["state"], resumed["scheduledAt"]) == (
        "every",
        "scheduled",
        _iso(T0 + 75 * MINUTE),
    )
    assert s.replayed() == s.state


def test_a_done_reminder_cannot_be_moved() -> None:
    s = Session()
    s.call("schedule_create", {"prompt": "tea", "after_seconds": 60}, T0)
    s.deliver(T0 + MINUTE)
    answer = s.call("schedule_update", {"id": "schedule-1", "after_seconds": 60}, T0 + 2 * MINUTE)
    assert answer == {"id": "schedule-1", "updated": False, "code": "schedule_not_found"}
    assert len(s.log) == 2


CREATE_AND_MOVE = [
    {"every_seconds": 299},
    {"every_seconds": 300.5},
    {"every_seconds": "600"},
    {"after_seconds": 0},
    {"after_seconds": -1},
    {"after_seconds": 251616369600},
    {"at": "2026-12-07T07:00:00Z"},
    {"at": "2026-12-07 09:00"},
    {"at": "2026-02-30T09:00:00Z"},
    {"at": {"date": "2026-03-29", "time": "02:30", "time_zone": "Europe/Berlin"}},
    {"at": {"date": "2026-12-08", "time": "09:00", "time_zone": "Mars/Olympus"}},
    {"at": 5},
    {"calendar": {"cron": "0 9 * *", "time_zone": "UTC"}},
    {"calendar": {"cron": "0 9 * * *", "time_zone": "Nowhere/Else"}},
    {"calendar": {"cron": "0 9 * * *", "time_zone": "UTC", "dst_gap": "maybe"}},
    {"calendar": "0 9 * * *"},
]


@pytest.mark.parametrize("selector", CREATE_AND_MOVE, ids=json.dumps)
def test_a_new_selector_is_refused_with_creates_error(selector: dict[str, Any]) -> None:
    s = Session()
    s.call("schedule_create", {"prompt": "tea", "after_seconds": 60}, T0)
    created = s.call("schedule_create", {"prompt": "tea", **selector}, T0)
    moved = s.call("schedule_update", {"id": "schedule-1", **selector}, T0)
    assert "code" in created
    assert moved == created
    assert len(s.log) == 1


def test_two_selectors_or_a_selector_and_a_snooze_are_a_shape_error() -> None:
    s = Session()
    s.call("schedule_create", {"prompt": "tea", "after_seconds": 60}, T0)
    for args in (
        {"after_seconds": 60, "every_seconds": 600},
        {"after_seconds": 60, "snooze_seconds": 60},
    ):
        answer = s.call("schedule_update", {"id": "schedule-1", **args}, T0)
        assert answer["code"] == "invalid_selector"
    assert len(s.log) == 1


def test_the_reference_profile_has_no_update() -> None:
    changes, text = handle(
        EMPTY_STATE, "schedule_update", {"id": "schedule-1", "after_seconds": 5}, T0,
        profile="reference",
    )  # fmt: skip
    assert (changes, json.loads(text)["code"]) == ((), "internal_error")


def test_an_update_event_names_exactly_what_changed() -> None:
    s = Session()
    s.call("schedule_create", {"prompt": "tea", "at": "2026-12-07T09:00:00Z"}, T0)
    same = s.call("schedule_update", {"id": "schedule-1", "at": "2026-12-07T10:00:00+01:00"}, T0)
    assert same["scheduledAt"] == "2026-12-07T09:00:00.000Z"
    assert len(s.log) == 1  # nothing differs: nothing logged
    s.call("schedule_update", {"id": "schedule-1", "prompt": "chai", "after_seconds": 60}, T0)
    update = s.log[-1]
    assert isinstance(update, UpdateChange)
    assert isinstance(update.prompt, type(update.paused))  # both unset: the record holds it
    assert update.schedule.prompt == "chai"  # type: ignore[union-attr]
