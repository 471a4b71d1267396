"""Numbers follow JSON as JavaScript reads it, not Python.

``30.0`` is the integer 30, ``True`` is never a number, and an integer beyond
2**53 - 1 is not "safe". Values a JSON parser cannot produce (NaN, infinity,
``bool``) still answer a closed code, never an exception.
"""

from __future__ import annotations

import json

import pytest

from tickler.core import EMPTY_STATE, CorruptScheduleLog, change_json, decode_change, handle

NOW = 1_785_931_200_000  # 2026-08-05T12:00:00.000Z
MAX_SAFE = 2**53 - 1

AFTER_RULE = '{"code":"invalid_rule","message":"after_seconds must be a positive safe integer."}'
EVERY_RULE = '{"code":"invalid_rule","message":"every_seconds must be a safe integer."}'
EVERY_FLOOR = '{"code":"frequency_too_high","message":"every_seconds must be at least 300."}'
OUT_OF_RANGE = (
    '{"code":"time_out_of_range","message":"The scheduled time must be representable as a '
    'four-digit-year RFC 3339 UTC instant."}'
)


def _create(selector: str, value: object) -> tuple[int, str]:
    changes, output = handle(
        EMPTY_STATE, "schedule_create", {"prompt": "x", selector: value}, NOW, profile="reference"
    )
    return len(changes), output


@pytest.mark.parametrize(
    ("value", "seconds"),
    [(30, 30), (30.0, 30), (1e2, 100), (MAX_SAFE // 10**6, MAX_SAFE // 10**6)],
    ids=repr,
)
def test_integral_after_seconds_are_integers(value: object, seconds: int) -> None:
    count, output = _create("after_seconds", value)
    assert count == 1
    assert f'"afterSeconds":{seconds},' in output


@pytest.mark.parametrize(
    "value",
    [
        True,
        False,
        0,
        0.0,
        -0.0,
        -1,
        1.5,
        0.1,
        2**53,
        2**53 + 1,
        10**30,
        1e300,
        float("nan"),
        float("inf"),
        float("-inf"),
        "30",
        None,
        [30],
        {"seconds": 30},
    ],
    ids=repr,
)
def test_after_seconds_that_are_not_positive_safe_integers(value: object) -> None:
    assert _create("after_seconds", value) == (0, AFTER_RULE)


def test_largest_safe_after_seconds_is_out_of_range_not_invalid() -> None:
    assert _create("after_seconds", MAX_SAFE) == (0, OUT_OF_RANGE)
    assert _create("after_seconds", float(MAX_SAFE)) == (0, OUT_OF_RANGE)


@pytest.mark.parametrize(("value", "seconds"), [(300, 300), (300.0, 300), (3e2 + 1, 301)], ids=repr)
def test_integral_every_seconds_are_integers(value: object, seconds: int) -> None:
    count, output = _create("every_seconds", value)
    assert count == 1
    assert f'"everySeconds":{seconds},' in output


@pytest.mark.parametrize(
    "value",
    [True, False, 300.5, 2**53, -(2**53), 10**30, float("nan"), float("inf"), -0.0, "300", None],
    ids=repr,
)
def test_every_seconds_that_are_not_safe_integers(value: object) -> None:
    assert _create("every_seconds", value) == (0, EVERY_RULE)


@pytest.mark.parametrize("value", [299, 299.0, 0, -300, -MAX_SAFE], ids=repr)
def test_safe_every_seconds_below_the_floor(value: object) -> None:
    assert _create("every_seconds", value) == (0, EVERY_FLOOR)


def _after_payload(seconds_json: str) -> bytes:
    return (
        '{"version":1,"operation":"create","schedule":{"id":"schedule-1","kind":"after",'
        f'"prompt":"x","afterSeconds":{seconds_json},"scheduledAt":"2026-08-05T12:00:30.000Z"}}}}'
    ).encode()


@pytest.mark.parametrize(
    ("seconds_json", "seconds"),
    [
        ("30", 30),
        ("30.0", 30),
        ("3e1", 30),
        ("3E+1", 30),
        ("300e-1", 30),
        ("9007199254740991", MAX_SAFE),
    ],
)
def test_durable_integral_numbers(seconds_json: str, seconds: int) -> None:
    record = json.loads(change_json(decode_change(_after_payload(seconds_json))))["schedule"]
    assert record["afterSeconds"] == seconds
    assert type(record["afterSeconds"]) is int


@pytest.mark.parametrize(
    "seconds_json", ["true", "30.5", "-0", "0.0", "9007199254740992", "1e16", '"30"', "null"]
)
def test_durable_numbers_that_are_not_positive_safe_integers(seconds_json: str) -> None:
    with pytest.raises(CorruptScheduleLog) as caught:
        decode_change(_after_payload(seconds_json))
    assert caught.value.reason == "afterSeconds must be a positive safe integer"
