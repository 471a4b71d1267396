"""An unusable clock sample only matters where the reference uses one.

The reference validates the prompt, the rule and the ``at`` value before the
range check of the clock sample (section (e): "range / future check" is the
last step; domain tests: an empty prompt is ``invalid_prompt`` whatever the
clock); delete never samples the clock; list samples it only to label each
view. A sample that is not a safe integer (the reference's NaN) is
``time_out_of_range`` only for a create that would otherwise succeed.
"""

from __future__ import annotations

import json

import pytest
from returns.pipeline import is_successful

from tickler.core import (
    EMPTY_STATE,
    CreateAfter,
    CreateAt,
    CreateEvery,
    CreateSchedule,
    State,
    decide,
    decode_change,
    fold_changes,
    handle,
)

UNSAFE_NOW = 2**60  # an integer, but not a safe one: like the reference's NaN clock
OUT_OF_RANGE = "time_out_of_range"


def _state() -> State:
    payload = (
        b'{"version":1,"operation":"create","schedule":{"id":"schedule-1","kind":"at",'
        b'"prompt":"p","scheduledAt":"2026-08-06T01:00:00.000Z"}}'
    )
    return fold_changes([decode_change(payload)])


@pytest.mark.parametrize(
    ("command", "code"),
    [
        (CreateAfter(" ", 30), "invalid_prompt"),
        (CreateAfter("x", 0), "invalid_rule"),
        (CreateEvery("x", 299), "frequency_too_high"),
        (CreateAt("x", "2026-08-06T01:00:00"), "invalid_rule"),
        (CreateAt("x", 42), "invalid_rule"),
        (CreateAt("x", {"date": "2026-08-06", "time": "09:00:00", "time_zone": "CST"}),
         "invalid_time_zone"),
        (CreateAt("x", {"date": "2026-03-08", "time": "02:30:00", "time_zone": "America/New_York"}),
         "invalid_rule"),
    ],
    ids=repr,
)  # fmt: skip
def test_create_input_errors_precede_the_clock_range_check(
    command: CreateSchedule, code: str
) -> None:
    changes, result = decide(EMPTY_STATE, command, UNSAFE_NOW)
    assert changes == ()
    assert not is_successful(result)
    assert result.failure().code == code


@pytest.mark.parametrize(
    "command",
    [CreateAfter("x", 30), CreateEvery("x", 300), CreateAt("x", "2026-08-06T01:00:00Z")],
    ids=repr,
)
def test_a_valid_create_with_an_unsafe_clock_is_out_of_range(command: CreateSchedule) -> None:
    changes, result = decide(EMPTY_STATE, command, UNSAFE_NOW)
    assert changes == ()
    assert not is_successful(result)
    assert result.failure().code == OUT_OF_RANGE


def test_at_shape_error_through_the_tool_with_an_unsafe_clock() -> None:
    changes, output = handle(
        EMPTY_STATE,
        "schedule_create",
        {"prompt": "x", "at": "tomorrow"},
        UNSAFE_NOW,
        profile="reference",
    )
    assert changes == ()
    assert json.loads(output)["code"] == "invalid_rule"


def test_delete_does_not_read_the_clock() -> None:
    changes, output = handle(
        _state(), "schedule_delete", {"id": "schedule-1"}, UNSAFE_NOW, profile="reference"
    )
    assert output == '{"id":"schedule-1","deleted":true}'
    assert len(changes) == 1


def test_list_labels_views_with_whatever_sample_it_has() -> None:
    changes, output = handle(_state(), "schedule_list", {}, UNSAFE_NOW, profile="reference")
    assert changes == ()
    assert output == (
        '[{"id":"schedule-1","kind":"at","prompt":"p","scheduledAt":"2026-08-06T01:00:00.000Z",'
        '"state":"overdue","deliveryMode":"session-local"}]'
    )
