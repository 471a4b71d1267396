"""Operator actions in the core: the operator named in the change
(``by``), "deliver now" decided as an update that moves the next
occurrence to now, and the reference profile, whose version-1 delete
cannot name anyone."""

from __future__ import annotations

from typing import Final

import pytest
from returns.pipeline import is_successful

from tickler.core import (
    EMPTY_STATE,
    SCHEDULE_CHANGE,
    Command,
    CorruptScheduleLog,
    DeleteChange,
    DeleteChangeV2,
    DeleteSchedule,
    DeliverDue,
    Delivery,
    State,
    UpdateChange,
    UpdateSchedule,
    check_log,
    decide,
    decode_change,
    encode_change,
    evolve,
    fold,
    handle,
    parse_instant,
    parse_tool_call,
)
from tickler.core.wire._session import event

T0: Final = parse_instant("2026-06-01T12:00:00.000Z")
MINUTE: Final = 60_000


def _with(*calls: tuple[str, dict[str, object]]) -> State:
    state = EMPTY_STATE
    for name, args in calls:
        changes, _ = handle(state, name, args, T0)
        for change in changes:
            state = evolve(state, change)
    return state


def _two() -> State:
    return _with(
        ("schedule_create", {"prompt": "one", "after_seconds": 3600}),
        ("schedule_create", {"prompt": "two", "every_seconds": 600}),
    )


def test_a_pause_by_an_operator_names_them_in_the_event() -> None:
    changes, result = decide(_two(), UpdateSchedule(id="schedule-1", paused=True, by="ana"), T0)
    assert is_successful(result)
    assert changes == (UpdateChange(id="schedule-1", paused=True, by="ana"),)
    assert encode_change(changes[0]) == (
        b'{"version":2,"operation":"update","id":"schedule-1","paused":true,"by":"ana"}'
    )


def test_a_change_by_an_operator_round_trips_through_the_codec() -> None:
    for change in (
        UpdateChange(
            id="schedule-1", paused=False, scheduled_at="2026-06-01T13:00:00.000Z", by="b"
        ),
        DeleteChangeV2(id="schedule-2", by="ops team"),
    ):
        assert decode_change(encode_change(change)) == change


@pytest.mark.parametrize(
    "raw",
    [
        b'{"version":2,"operation":"update","id":"schedule-1","by":"ana"}',  # no change at all
        b'{"version":2,"operation":"update","id":"schedule-1","paused":true,"by":""}',
        b'{"version":2,"operation":"update","id":"schedule-1","paused":true,"by":" ana"}',
        b'{"version":2,"operation":"update","id":"schedule-1","paused":true,"by":7}',
        b'{"version":2,"operation":"delete","id":"schedule-1"}',  # the wrong version, as before
        b'{"version":2,"operation":"delete","id":"schedule-1","by":"a","x":1}',
        b'{"version":1,"operation":"delete","id":"schedule-1","by":"ana"}',  # v1 stays exact
    ],
)
def test_a_malformed_operator_change_is_a_corrupt_log(raw: bytes) -> None:
    with pytest.raises(CorruptScheduleLog):
        decode_change(raw)


def test_an_operator_name_too_long_is_refused_by_decide_and_by_the_log() -> None:
    long = "x" * 201
    _, result = decide(_two(), UpdateSchedule(id="schedule-1", paused=True, by=long), T0)
    assert not is_successful(result)
    assert result.failure().code == "invalid_rule"
    with pytest.raises(CorruptScheduleLog):
        evolve(_two(), DeleteChangeV2(id="schedule-1", by=long))


def test_a_cancel_by_an_operator_is_a_version_2_delete_in_the_extended_profile() -> None:
    changes, result = decide(_two(), DeleteSchedule("schedule-2", by="ana"), T0)
    assert is_successful(result)
    assert changes == (DeleteChangeV2(id="schedule-2", by="ana"),)
    assert encode_change(changes[0]) == (
        b'{"version":2,"operation":"delete","id":"schedule-2","by":"ana"}'
    )
    assert evolve(_two(), changes[0]).get("schedule-2") is None


def test_the_reference_profile_logs_the_plain_v1_delete() -> None:
    changes, _ = decide(_two(), DeleteSchedule("schedule-2", by="ana"), T0, profile="reference")
    assert changes == (DeleteChange(version=1, id="schedule-2"),)
    assert encode_change(changes[0]) == b'{"version":1,"operation":"delete","id":"schedule-2"}'
    _, result = decide(
        _two(), UpdateSchedule(id="schedule-1", paused=True, by="a"), T0, profile="reference"
    )
    assert not is_successful(result)


def test_deliver_now_moves_the_next_occurrence_to_now_and_it_is_delivered() -> None:
    state = _two()
    now = T0 + 5 * MINUTE
    changes, result = decide(state, UpdateSchedule(id="schedule-1", due_now=True, by="ana"), now)
    assert is_successful(result)
    assert changes == (
        UpdateChange(id="schedule-1", scheduled_at="2026-06-01T12:05:00.000Z", by="ana"),
    )
    state = evolve(state, changes[0])
    _, delivered = decide(state, DeliverDue(), now)
    outcome = delivered.unwrap()
    assert isinstance(outcome, Delivery)
    assert [o.id for o in outcome.occurrences] == ["schedule-1"]


def test_deliver_now_of_a_series_keeps_its_later_occurrences() -> None:
    state = _two()
    now = T0 + 2 * MINUTE
    changes, _ = decide(state, UpdateSchedule(id="schedule-2", due_now=True), now)
    state = evolve(state, changes[0])
    dispatched, _ = decide(state, DeliverDue(), now)
    for change in dispatched:
        state = evolve(state, change)
    # the occurrence of 12:10 was delivered at 12:02; the series goes on at 12:20
    assert state.entries["schedule-2"].target == T0 + 20 * MINUTE


def test_deliver_now_refuses_a_paused_reminder_and_leaves_a_due_one_as_it_is() -> None:
    paused = _with(
        ("schedule_create", {"prompt": "one", "after_seconds": 3600}),
        ("schedule_update", {"id": "schedule-1", "paused": True}),
    )
    changes, result = decide(paused, UpdateSchedule(id="schedule-1", due_now=True), T0)
    assert changes == ()
    assert result.failure().code == "invalid_rule"
    overdue = T0 + 2 * 3_600_000
    changes, result = decide(_two(), UpdateSchedule(id="schedule-1", due_now=True), overdue)
    assert changes == ()
    assert is_successful(result)


def test_a_model_cannot_send_by_or_deliver_now() -> None:
    for extra in ({"by": "ana"}, {"due_now": True}):
        parsed = parse_tool_call(
            "schedule_update", {"id": "schedule-1", "paused": True, **extra}, profile="extended"
        )
        assert not is_successful(parsed)
    parsed = parse_tool_call("schedule_delete", {"id": "schedule-1", "by": "ana"})
    assert parsed.unwrap() == DeleteSchedule("schedule-1")


def test_a_log_of_operator_actions_replays_and_checks() -> None:
    state, log = EMPTY_STATE, []
    for command, now in (
        (parse_tool_call("schedule_create", {"prompt": "one", "after_seconds": 3600}), T0),
        (parse_tool_call("schedule_create", {"prompt": "two", "every_seconds": 600}), T0),
        (UpdateSchedule(id="schedule-1", paused=True, by="ana"), T0 + MINUTE),
        (UpdateSchedule(id="schedule-1", paused=False, by="ana"), T0 + 2 * MINUTE),
        (UpdateSchedule(id="schedule-2", snooze_seconds=60, by="bo"), T0 + 3 * MINUTE),
        (UpdateSchedule(id="schedule-1", due_now=True, by="bo"), T0 + 4 * MINUTE),
        (DeliverDue(), T0 + 4 * MINUTE),
        (DeleteSchedule("schedule-2", by="ana"), T0 + 5 * MINUTE),
    ):
        judged = command if isinstance(command, Command) else command.unwrap()
        changes, result = decide(state, judged, now)
        assert is_successful(result)
        for change in changes:
            state = evolve(state, change)
            log.append(change)
    assert [type(c).__name__ for c in log].count("DeleteChangeV2") == 1
    events = [event(SCHEDULE_CHANGE, seq, 0, encode_change(c)) for seq, c in enumerate(log)]
    assert fold(events) == state
    assert check_log(events).unwrap() == state
    assert state.get("schedule-2") is None
