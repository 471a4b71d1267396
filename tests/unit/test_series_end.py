"""Series that end (extended profile): ``until`` and ``count`` on a
fixed-rate or calendar reminder, at its create or changed in place;
concrete cases through ``handle``/``decide``, each log replayed and checked."""

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
    format_instant,
    handle,
    parse_instant,
)
from tickler.core._snapshot import SnapshotError, decode_state, encode_state
from tickler.core.wire._session import event

T0 = parse_instant("2026-12-07T08:00:00.000Z")  # a Monday
MINUTE = 60_000
HOUR = 60 * MINUTE
DAY = 24 * HOUR


class Session:
    """A log and its state, kept with ``evolve``; the fold must agree."""

    def __init__(self) -> None:
        self.state: State = EMPTY_STATE
        self.log: list[ScheduleChange] = []

    def call(self, tool: str, args: dict[str, Any], now: int, **kw: Any) -> Any:
        changes, text = handle(self.state, tool, args, now, **kw)
        self._apply(changes)
        return json.loads(text)

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
        events = [event(SCHEDULE_CHANGE, n, 0, encode_change(c)) for n, c in enumerate(self.log)]
        checked = check_log(events)
        assert is_successful(checked)
        assert checked.unwrap() == self.state
        assert decode_state(encode_state(self.state)) == self.state


def _utc(answer: dict[str, Any]) -> list[str]:
    return [o["utc"] for o in answer["nextOccurrences"]]


def test_every_day_at_eight_for_the_next_three_days_then_it_ends() -> None:
    s = Session()
    created = s.call("schedule_create", {"prompt": "pill", "every_seconds": 86_400, "count": 3}, T0)
    assert created["remaining"] == 3
    assert _utc(created) == [format_instant(T0 + n * DAY) for n in (1, 2, 3)]
    assert encode_change(s.log[0]).endswith(b',"count":3}')
    for n in (1, 2):
        assert isinstance(s.deliver(T0 + n * DAY), Delivery)
        [listed] = s.call("schedule_list", {}, T0 + n * DAY)
        assert listed["remaining"] == 3 - n
        assert len(listed["nextOccurrences"]) == 3 - n  # previews show what remains
    last = s.deliver(T0 + 3 * DAY)
    assert isinstance(last, Delivery)
    assert s.state.get("schedule-1") is None  # done: ended
    assert s.call("schedule_list", {}, T0 + 3 * DAY) == []
    assert s.deliver(T0 + 9 * DAY) == Wait(None)


def test_a_catch_up_batch_counts_every_occurrence_it_stands_for() -> None:
    s = Session()
    s.call("schedule_create", {"prompt": "water", "every_seconds": 3600, "count": 5}, T0)
    first = s.deliver(T0 + 3 * HOUR)  # 09:00, 10:00 and 11:00 in one delivery
    assert isinstance(first, Delivery)
    assert (first.occurrences[0].occurrence_at, first.skipped) == (
        format_instant(T0 + 3 * HOUR),
        (2,),
    )
    [listed] = s.call("schedule_list", {}, T0 + 3 * HOUR)
    assert listed["remaining"] == 2
    # down for a day: the batch stands for the last two, delivered at the fifth
    last = s.deliver(T0 + 30 * HOUR)
    assert isinstance(last, Delivery)
    assert (last.occurrences[0].occurrence_at, last.skipped) == (
        format_instant(T0 + 5 * HOUR),
        (1,),
    )
    assert s.state.get("schedule-1") is None


def test_until_an_instant_ends_after_the_last_occurrence_before_it() -> None:
    s = Session()
    rule = {"cron": "0 9 * * *", "time_zone": "UTC"}
    until = "2026-12-09T12:00:00+01:00"  # 11:00 UTC on Wednesday
    created = s.call(
        "schedule_create", {"prompt": "stand-up", "calendar": rule, "until": until}, T0
    )
    assert created["until"] == "2026-12-09T11:00:00.000Z"
    assert _utc(created) == [
        "2026-12-07T09:00:00.000Z",
        "2026-12-08T09:00:00.000Z",
        "2026-12-09T09:00:00.000Z",
    ]
    # down until Friday: catch-up delivers the last occurrence before until
    late = s.deliver(parse_instant("2026-12-11T09:00:00Z"))
    assert isinstance(late, Delivery)
    assert (late.occurrences[0].occurrence_at, late.skipped) == ("2026-12-09T09:00:00.000Z", (2,))
    assert s.state.get("schedule-1") is None


def test_a_local_until_on_the_dst_day_is_read_in_the_rules_zone() -> None:
    """Europe/Berlin springs forward on 2026-03-29: 07:00 local that day is
    05:00 UTC (CEST), an hour earlier than on the day before (CET). A daily
    07:30 rule with until 07:00 local on the 29th fires on the 28th (06:30
    UTC) and not on the 29th (05:30 UTC, after until); read with the day
    before's offset, until would be 06:00 UTC and let the 29th fire."""
    s = Session()
    now = parse_instant("2026-03-27T12:00:00Z")
    rule = {"cron": "30 7 * * *", "time_zone": "Europe/Berlin"}
    until = {"date": "2026-03-29", "time": "07:00"}  # no zone: the rule's
    created = s.call("schedule_create", {"prompt": "run", "calendar": rule, "until": until}, now)
    assert created["until"] == "2026-03-29T05:00:00.000Z"
    assert _utc(created) == ["2026-03-28T06:30:00.000Z"]
    delivered = s.deliver(parse_instant("2026-03-28T06:30:00Z"))
    assert isinstance(delivered, Delivery)
    assert s.state.get("schedule-1") is None
    # the same until named with its zone, and as an instant with the offset
    for same in (
        {**until, "time_zone": "Europe/Berlin"},
        "2026-03-29T07:00:00+02:00",
    ):
        again = s.call("schedule_create", {"prompt": "run", "calendar": rule, "until": same}, now)
        assert again["until"] == "2026-03-29T05:00:00.000Z"
    gap = {"date": "2026-03-29", "time": "02:30"}  # does not exist in Berlin
    refused = s.call("schedule_create", {"prompt": "run", "calendar": rule, "until": gap}, now)
    assert refused == {
        "code": "invalid_rule",
        "message": "until: The local at time does not exist in the selected time zone.",
    }


def test_an_end_changed_and_removed_in_place() -> None:
    s = Session()
    s.call("schedule_create", {"prompt": "water", "every_seconds": 3600}, T0)
    counted = s.call("schedule_update", {"id": "schedule-1", "count": 2}, T0)
    assert (counted["remaining"], len(counted["nextOccurrences"])) == (2, 2)
    until = s.call("schedule_update", {"id": "schedule-1", "until": "2026-12-07T12:00:00Z"}, T0)
    assert (until["until"], until["remaining"]) == ("2026-12-07T12:00:00.000Z", 2)
    no_count = s.call("schedule_update", {"id": "schedule-1", "count": "none"}, T0)
    assert "remaining" not in no_count
    assert len(no_count["nextOccurrences"]) == 3  # 09:00, 10:00, 11:00: before 12:00
    assert (
        encode_change(s.log[-1])
        == b'{"version":2,"operation":"update","id":"schedule-1","count":null}'
    )
    forever = s.call("schedule_update", {"id": "schedule-1", "until": "none"}, T0)
    assert "until" not in forever
    assert s.state.end("schedule-1") is None
    before = s.call("schedule_update", {"id": "schedule-1", "until": "2026-12-07T08:30:00Z"}, T0)
    assert before["code"] == "invalid_rule"  # nothing would remain
    # a new selector keeps the end, judged with the new series
    s.call("schedule_update", {"id": "schedule-1", "count": 4}, T0)
    moved = s.call("schedule_update", {"id": "schedule-1", "every_seconds": 7200}, T0 + HOUR)
    assert (moved["everySeconds"], moved["remaining"]) == (7200, 4)
    one_shot = s.call("schedule_update", {"id": "schedule-1", "after_seconds": 60}, T0 + HOUR)
    assert (one_shot["kind"], "remaining" in one_shot) == ("after", False)
    assert s.state.end("schedule-1") is None


@pytest.mark.parametrize(
    ("args", "code"),
    [
        ({"after_seconds": 60, "count": 2}, "invalid_rule"),
        ({"at": "2026-12-08T09:00:00Z", "until": "2026-12-09T09:00:00Z"}, "invalid_rule"),
        ({"every_seconds": 600, "count": 0}, "invalid_rule"),
        ({"every_seconds": 600, "count": 2.5}, "invalid_rule"),
        ({"every_seconds": 600, "count": "3"}, "invalid_rule"),
        ({"every_seconds": 600, "until": "2026-12-07T07:00:00Z"}, "not_future"),
        ({"every_seconds": 600, "until": "2026-12-07T08:05:00Z"}, "invalid_rule"),
        ({"every_seconds": 600, "until": "tomorrow"}, "invalid_rule"),
        ({"every_seconds": 600, "until": {"date": "2026-12-08", "time": "09:00"}}, "invalid_rule"),
    ],
)
def test_an_end_that_cannot_be_is_refused(args: dict[str, Any], code: str) -> None:
    s = Session()
    answer = s.call("schedule_create", {"prompt": "p", **args}, T0)
    assert answer["code"] == code
    assert s.log == []


def test_the_reference_profile_has_no_ends() -> None:
    s = Session()
    args = {"prompt": "p", "every_seconds": 600, "count": 2}
    answer = s.call("schedule_create", args, T0, profile="reference")
    assert answer["code"] == "invalid_selector"
    assert s.log == []


def test_a_retry_with_the_same_end_gets_the_first_answer_and_another_end_is_refused() -> None:
    s = Session()
    args = {"prompt": "p", "every_seconds": 600, "count": 2, "request_id": "r1"}
    first = s.call("schedule_create", args, T0)
    assert s.call("schedule_create", args, T0 + MINUTE) == first
    other = s.call("schedule_create", {**args, "count": 3}, T0 + MINUTE)
    assert other["code"] == "invalid_rule"
    assert len(s.log) == 1


def test_a_retry_that_writes_the_same_end_otherwise_gets_the_first_answer() -> None:
    """The request id's digest takes the end as judged: ``count`` 2.0 is 2,
    and an ``until`` written with an offset or milliseconds names the same
    instant; another instant is other arguments."""
    s = Session()
    until = "2026-12-07T10:30:00Z"
    args = {"prompt": "p", "every_seconds": 600, "count": 2, "until": until, "request_id": "r1"}
    first = s.call("schedule_create", args, T0)
    assert "code" not in first
    for same in ({"count": 2.0}, {"until": "2026-12-07T11:30:00.000+01:00"}):
        assert s.call("schedule_create", {**args, **same}, T0 + MINUTE) == first
    other = s.call("schedule_create", {**args, "until": "2026-12-07T10:31:00Z"}, T0 + MINUTE)
    assert other["code"] == "invalid_rule"
    assert len(s.log) == 1


def test_a_snooze_past_until_moves_the_last_occurrence_there() -> None:
    s = Session()
    args = {"prompt": "p", "every_seconds": 3600, "until": "2026-12-07T10:30:00Z"}
    s.call("schedule_create", args, T0)
    s.deliver(T0 + HOUR)  # 09:00; 10:00 is the last
    s.call("schedule_update", {"id": "schedule-1", "snooze_seconds": 3 * 3600}, T0 + HOUR)
    assert s.deliver(T0 + 3 * HOUR) == Wait(T0 + 4 * HOUR)
    last = s.deliver(T0 + 4 * HOUR)
    assert isinstance(last, Delivery)
    assert s.state.get("schedule-1") is None


def test_the_folds_fast_path_keeps_an_end_logged_chunks_before() -> None:
    """The fold decodes a chunk of version-1 changes on its fast path; a
    series whose end was logged in an earlier chunk must still end."""
    s = Session()
    s.call("schedule_create", {"prompt": "p", "every_seconds": 3600, "count": 2}, T0)
    log = list(s.log)
    state = s.state
    for n in range(2, 2 + 2100):  # 4200 version-1 changes: the next chunk
        changes, _ = handle(state, "schedule_create", {"prompt": "x", "after_seconds": 60}, T0)
        changes += handle(
            evolve(state, changes[0]), "schedule_delete", {"id": f"schedule-{n}"}, T0
        )[0]
        for change in changes:
            state = evolve(state, change)
            log.append(change)
    for hour in (1, 2):
        changes, _ = decide(state, DeliverDue(), T0 + hour * HOUR)
        for change in changes:
            state = evolve(state, change)
            log.append(change)
    assert state.get("schedule-1") is None  # its two occurrences delivered: done
    events = [event(SCHEDULE_CHANGE, n, 0, encode_change(c)) for n, c in enumerate(log)]
    checked = check_log(events)
    assert is_successful(checked)
    assert checked.unwrap() == state


def test_a_snapshot_keeps_ends_and_refuses_one_no_log_could_leave() -> None:
    s = Session()
    s.call("schedule_create", {"prompt": "p", "every_seconds": 3600, "count": 4}, T0)
    s.call("schedule_create", {"prompt": "q", "after_seconds": 60}, T0)
    image = json.loads(encode_state(s.state))
    assert (image["version"], image["ends"]) == (4, {"schedule-1": [None, 4]})
    assert decode_state(encode_state(s.state)).end("schedule-1") == (None, 4)
    for ends in (
        {"schedule-2": [None, 4]},
        {"schedule-1": [None, 0]},
        {"schedule-1": [None, None]},
    ):
        with pytest.raises(SnapshotError):
            decode_state(json.dumps({**image, "ends": ends}).encode())


def test_a_resume_after_until_passed_while_paused_is_refused_and_delivers_nothing() -> None:
    """A series whose until passed while it was paused has ended: resuming
    it would bring back an occurrence after until, so the resume is
    refused with a closed error that says what to send, nothing is logged,
    and a resume with a later until is accepted."""
    s = Session()
    s.call(
        "schedule_create",
        {"prompt": "p", "every_seconds": 3600, "until": "2026-12-07T11:00:00Z"},
        T0,
    )
    s.call("schedule_update", {"id": "schedule-1", "paused": True}, T0 + MINUTE)
    logged = len(s.log)
    refused = s.call("schedule_update", {"id": "schedule-1", "paused": False}, T0 + 10 * HOUR)
    assert refused["code"] == "invalid_rule"
    assert "ended" in refused["message"]
    assert "until" in refused["message"]
    assert len(s.log) == logged
    assert s.deliver(T0 + 11 * HOUR) == Wait(None)  # still paused: nothing after until
    # before until a resume still works, and so does one that moves until on
    later = {"id": "schedule-1", "paused": False, "until": "2026-12-08T08:00:00Z"}
    resumed = s.call("schedule_update", later, T0 + 10 * HOUR)
    assert resumed["scheduledAt"] == "2026-12-07T19:00:00.000Z"


def test_an_occurrence_at_until_itself_is_delivered_then_the_series_ends() -> None:
    """``until`` is inclusive: an occurrence that falls on it is the last one
    delivered, in step and in a catch-up alike."""
    until = format_instant(T0 + 3 * HOUR)
    for catch_up in (False, True):
        s = Session()
        args = {"prompt": "p", "every_seconds": 3600, "until": until}
        created = s.call("schedule_create", args, T0)
        assert _utc(created) == [format_instant(T0 + n * HOUR) for n in (1, 2, 3)]
        if not catch_up:
            for n in (1, 2):
                assert isinstance(s.deliver(T0 + n * HOUR), Delivery)
        last = s.deliver(T0 + 3 * HOUR)
        assert isinstance(last, Delivery)
        assert last.occurrences[0].occurrence_at == until
        assert s.state.get("schedule-1") is None
        assert s.deliver(T0 + 9 * HOUR) == Wait(None)
