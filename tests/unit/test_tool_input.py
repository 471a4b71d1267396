"""Malformed tool calls answer one of the ten closed codes, never an exception.

Where the reference's argument schema would answer first with a registry
``INVALID_ARGS`` failure (``at`` as a number, a non-string prompt, ...),
tickler answers the domain's code and message instead: the model always sees
a value of the published output schema.
"""

from __future__ import annotations

import json
import math
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest
from returns.pipeline import is_successful

from tickler.core import (
    EMPTY_STATE,
    ERROR_CODES,
    AfterSchedule,
    CreateAt,
    fold_changes,
    handle,
    parse_tool_call,
    tool_catalog,
)
from tickler.core._model import create

NOW = 1_785_931_200_000  # 2026-08-05T12:00:00.000Z
TEN_CODES = (
    "invalid_prompt",
    "invalid_selector",
    "invalid_rule",
    "invalid_time_zone",
    "not_future",
    "time_out_of_range",
    "frequency_too_high",
    "corrupt_schedule_log",
    "persistence_uncertain",
    "internal_error",
)
OUTPUT_SCHEMAS = {tool["name"]: tool["output_schema"] for tool in tool_catalog(profile="reference")}
CREATE_ONE = create(
    AfterSchedule(
        id="schedule-1",
        prompt="check logs",
        after_seconds=30,
        scheduled_at="2026-08-05T12:00:30.000Z",
    )
)
AT_KIND = {
    "code": "invalid_rule",
    "message": "at must be an explicit-offset string or local calendar object.",
}


def test_the_closed_set_is_the_reference_ten() -> None:
    assert tuple(ERROR_CODES) == TEN_CODES


def _local(zone: object, date: object = "2026-08-06", time: object = "09:00:00") -> object:
    return {"date": date, "time": time, "time_zone": zone}


MALFORMED: list[tuple[str, Any, str]] = [
    ("schedule_create", None, "invalid_selector"),
    ("schedule_create", {}, "invalid_selector"),
    ("schedule_create", [], "invalid_selector"),
    ("schedule_create", ["prompt", "after_seconds"], "invalid_selector"),
    ("schedule_create", "remind me in 5 minutes", "invalid_selector"),
    ("schedule_create", 42, "invalid_selector"),
    ("schedule_create", {"prompt": "x", "after_seconds": 1, "at": "x"}, "invalid_selector"),
    ("schedule_create", {"prompt": "x", "after_seconds": 1, "tz": "UTC"}, "invalid_selector"),
    ("schedule_create", {"prompt": "x", "at": None, "after_seconds": None}, "invalid_selector"),
    ("schedule_create", {"after_seconds": 1}, "invalid_prompt"),
    ("schedule_create", {"prompt": ["x"], "after_seconds": 1}, "invalid_prompt"),
    ("schedule_create", {"prompt": {"text": "x"}, "after_seconds": 1}, "invalid_prompt"),
    ("schedule_create", {"prompt": False, "every_seconds": 300}, "invalid_prompt"),
    ("schedule_create", {"prompt": "x", "after_seconds": {"value": 1}}, "invalid_rule"),
    ("schedule_create", {"prompt": "x", "every_seconds": [300]}, "invalid_rule"),
    ("schedule_create", {"prompt": "x", "every_seconds": 60}, "frequency_too_high"),
    ("schedule_create", {"prompt": "x", "at": 1_785_978_000_000}, "invalid_rule"),
    ("schedule_create", {"prompt": "x", "at": 1.5}, "invalid_rule"),
    ("schedule_create", {"prompt": "x", "at": True}, "invalid_rule"),
    ("schedule_create", {"prompt": "x", "at": {"date": "2026-08-06"}}, "invalid_rule"),
    ("schedule_create", {"prompt": "x", "at": _local(None, None, None)}, "invalid_rule"),
    ("schedule_create", {"prompt": "x", "at": _local(["UTC"])}, "invalid_time_zone"),
    ("schedule_create", {"prompt": "x", "at": _local("Mars/Olympus")}, "invalid_time_zone"),
    ("schedule_create", {"prompt": "x", "at": "2020-01-01T00:00:00Z"}, "not_future"),
    ("schedule_create", {"prompt": "x", "at": "9999-12-31T23:59:59.9-01:00"}, "time_out_of_range"),
    ("schedule_delete", None, "invalid_rule"),
    ("schedule_delete", {}, "invalid_rule"),
    ("schedule_delete", [], "invalid_rule"),
    ("schedule_delete", "schedule-1", "invalid_rule"),
    ("schedule_delete", {"id": None}, "invalid_rule"),
    ("schedule_delete", {"id": ["schedule-1"]}, "invalid_rule"),
    ("schedule_delete", {"id": 1}, "invalid_rule"),
    ("schedule_delete", {"id": True}, "invalid_rule"),
    ("schedule_delete", {"schedule_id": "schedule-1"}, "invalid_rule"),
]  # fmt: skip


@pytest.mark.parametrize(("tool", "args", "code"), MALFORMED, ids=repr)
def test_malformed_call_answers_a_closed_code(tool: str, args: Any, code: str) -> None:
    changes, output = handle(EMPTY_STATE, tool, args, NOW, profile="reference")
    assert changes == ()
    value = json.loads(output)
    assert value["code"] == code
    assert list(value) == ["code", "message"]
    jsonschema.validate(value, OUTPUT_SCHEMAS[tool])


@pytest.mark.parametrize("args", [None, {}, {"anything": [1, 2]}], ids=repr)
def test_list_ignores_the_keys_of_its_arguments(args: Any) -> None:
    """None is "no arguments" (an MCP client that sends none, or null: the
    SDK cannot tell them apart); the keys of an object are ignored."""
    assert handle(EMPTY_STATE, "schedule_list", args, NOW, profile="reference") == ((), "[]")


@pytest.mark.parametrize("args", [[], [{}], "x", "", 1, 0, 1.5, True, False], ids=repr)
def test_list_refuses_arguments_that_are_not_an_object(args: Any) -> None:
    """The reference's registry refuses a call whose arguments are not an
    object (its parameter root is one); tickler answers a closed code."""
    changes, output = handle(
        fold_changes([CREATE_ONE]), "schedule_list", args, NOW, profile="reference"
    )
    assert changes == ()
    value = json.loads(output)
    assert value == {
        "code": "invalid_rule",
        "message": "schedule_list arguments must be a JSON object; send {}.",
    }
    jsonschema.validate(value, OUTPUT_SCHEMAS["schedule_list"])


@pytest.mark.parametrize("name", ["schedule_update", "", "SCHEDULE_CREATE", "schedule_create "])
def test_unknown_tool_name_is_an_internal_error(name: str) -> None:
    assert handle(
        EMPTY_STATE, name, {"prompt": "x", "after_seconds": 1}, NOW, profile="reference"
    ) == (
        (),
        '{"code":"internal_error","message":"The schedule operation failed."}',
    )


@pytest.mark.parametrize(
    "at",
    [42, 1.5, None, True, [], ["2026-08-06T01:00:00Z"], {"date": 1, "time": 2, "time_zone": 3}],
    ids=repr,
)
def test_at_content_is_not_checked_before_the_queue(at: object) -> None:
    parsed = parse_tool_call("schedule_create", {"prompt": "x", "at": at}, profile="reference")
    assert is_successful(parsed)
    assert parsed.unwrap() == CreateAt("x", at)


@pytest.mark.parametrize("at", [42, -1, 0.5, None, True, False, [], [1, 2]], ids=repr)
def test_at_of_the_wrong_type_answers_the_domain_message(at: object) -> None:
    changes, output = handle(
        EMPTY_STATE, "schedule_create", {"prompt": "x", "at": at}, NOW, profile="reference"
    )
    assert changes == ()
    assert json.loads(output) == AT_KIND


@pytest.mark.parametrize(
    ("at", "expected"),
    [
        (
            {"date": "2026-08-06", "time": "09:00:00"},
            ("invalid_rule", "Local at must contain exactly date, time, and time_zone."),
        ),
        (
            {"date": "2026-08-06", "time": "09:00:00", "time_zone": "UTC", "dst": "earlier"},
            ("invalid_rule", "Local at must contain exactly date, time, and time_zone."),
        ),
        (
            {"date": "2026-08-06", "time": 900, "time_zone": "UTC"},
            ("invalid_rule", "Local at date and time must be strings."),
        ),
        (
            {"date": "2026-08-06", "time": "09:00:00", "time_zone": None},
            ("invalid_time_zone", "time_zone must be a string."),
        ),
    ],
    ids=repr,
)
def test_local_at_the_registry_would_refuse_answers_the_domain_message(
    at: object, expected: tuple[str, str]
) -> None:
    changes, output = handle(
        EMPTY_STATE, "schedule_create", {"prompt": "x", "at": at}, NOW, profile="reference"
    )
    assert changes == ()
    assert (json.loads(output)["code"], json.loads(output)["message"]) == expected


def _deep(depth: int) -> object:
    value: object = "x"
    for _ in range(depth):
        value = {"date": value, "time": [value], "time_zone": value}
    return value


@pytest.mark.parametrize(
    "args",
    [
        {"prompt": "x", "at": _deep(3)},
        {"prompt": "x" * 100_000, "at": "x" * 100_000},
        {
            "prompt": "\ud800",
            "at": {"date": "\udfff", "time": "\x00", "time_zone": "\ud800/\udc00"},
        },
        {"prompt": "x", "at": {"date": "٢٠٢٦-٠٨-٠٦", "time": "٠٩:٠٠:٠٠", "time_zone": "UTC"}},
        {
            "prompt": "x",
            "at": {"date": "2026-08-06", "time": "09:00:00", "time_zone": "İstanbul/X"},
        },
    ],
    ids=["nested", "huge", "surrogates", "arabic-indic-digits", "non-ascii-zone"],
)
def test_strange_at_values_answer_a_closed_code(args: dict[str, object]) -> None:
    changes, output = handle(EMPTY_STATE, "schedule_create", args, NOW, profile="reference")
    assert changes == ()
    value = json.loads(output)
    assert value["code"] in TEN_CODES
    assert value["code"] not in ("internal_error", "persistence_uncertain", "corrupt_schedule_log")
    jsonschema.validate(value, OUTPUT_SCHEMAS["schedule_create"])


# Arguments holding a number JSON cannot carry (-0.0, an infinity, NaN)
# anywhere are refused by the reference's registry without any change.
DELETE_ID = {
    "code": "invalid_rule",
    "message": "schedule_delete id must be non-empty without surrounding whitespace.",
}
LIST_LOSSY = {
    "code": "invalid_rule",
    "message": "schedule_list arguments must be JSON: -0, NaN and infinities are not JSON numbers.",
}
SELECTOR = {
    "code": "invalid_selector",
    "message": "schedule_create accepts exactly one of after_seconds, at, or every_seconds.",
}
AFTER_RULE = {"code": "invalid_rule", "message": "after_seconds must be a positive safe integer."}
EVERY_RULE = {"code": "invalid_rule", "message": "every_seconds must be a safe integer."}
LOCAL_STRINGS = {"code": "invalid_rule", "message": "Local at date and time must be strings."}
ZONE_STRING = {"code": "invalid_time_zone", "message": "time_zone must be a string."}
LOSSY_TEXTS = ["-0.0", "-0e0", "-0E+3", "1e400", "-1e400", "NaN", "Infinity", "-Infinity"]


def _deep_list(depth: int, leaf: object) -> object:
    value: object = leaf
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("text", LOSSY_TEXTS)
@pytest.mark.parametrize(
    ("tool", "template", "expected"),
    [
        ("schedule_delete", '{"id":"schedule-1","extra":%s}', DELETE_ID),
        ("schedule_delete", '{"id":"schedule-1","extra":{"a":[1,{"b":%s}]}}', DELETE_ID),
        ("schedule_list", '{"x":%s}', LIST_LOSSY),
        ("schedule_list", '[[%s]]', LIST_LOSSY),
        ("schedule_list", "%s", LIST_LOSSY),
        ("schedule_create", '{"prompt":"x","after_seconds":%s}', AFTER_RULE),
        ("schedule_create", '{"prompt":"x","every_seconds":%s}', EVERY_RULE),
        ("schedule_create", '{"prompt":"x","after_seconds":30,"x":%s}', SELECTOR),
        ("schedule_create", '{"prompt":"x","at":{"date":"2026-08-06","time":%s,"time_zone":"UTC"}}',
         LOCAL_STRINGS),
        ("schedule_create",
         '{"prompt":"x","at":{"date":"2026-08-06","time":"09:00:00","time_zone":[%s]}}',
         ZONE_STRING),
        ("schedule_create", '{"prompt":"x","at":[%s]}', AT_KIND),
    ],
    ids=repr,
)  # fmt: skip
def test_numbers_json_cannot_carry_are_refused_without_change(
    tool: str, template: str, expected: dict[str, str], text: str
) -> None:
    args = json.loads(template % text)  # what Python's (and the MCP SDK's) JSON reader gives
    state = fold_changes([CREATE_ONE])
    changes, output = handle(state, tool, args, NOW, profile="reference")
    assert changes == ()
    assert json.loads(output) == expected


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_a_deeply_nested_lossy_number_is_found(depth: int) -> None:
    state = fold_changes([CREATE_ONE])
    args = {"id": "schedule-1", "extra": _deep_list(depth, -0.0)}
    assert handle(state, "schedule_delete", args, NOW, profile="reference") == (
        (),
        json.dumps(DELETE_ID, separators=(",", ":")),
    )
    assert handle(state, "schedule_list", _deep_list(depth, math.nan), NOW, profile="reference")[
        1
    ] == json.dumps(LIST_LOSSY, separators=(",", ":"))


# JavaScript reads an integer past the largest double (rounded to nearest, as
# Python's float() rounds) as an infinity: a number JSON cannot carry.
LARGEST_DOUBLE_INT = 2**1024 - 2**971
INFINITE_INTEGERS = [LARGEST_DOUBLE_INT + 2**970, -(LARGEST_DOUBLE_INT + 2**970), 10**400]


@pytest.mark.parametrize("number", INFINITE_INTEGERS, ids=["rounds-up", "negative", "1e400"])
def test_an_integer_beyond_every_double_is_refused_like_1e400(number: int) -> None:
    state = fold_changes([CREATE_ONE])
    args = json.loads(f'{{"id":"schedule-1","extra":[{number}]}}')
    assert isinstance(args["extra"][0], int)
    assert handle(state, "schedule_delete", args, NOW, profile="reference") == (
        (),
        json.dumps(DELETE_ID, separators=(",", ":")),
    )
    listed = handle(state, "schedule_list", args, NOW, profile="reference")
    assert json.loads(listed[1]) == LIST_LOSSY
    created = handle(
        state, "schedule_create", {"prompt": "x", "after_seconds": number}, NOW, profile="reference"
    )
    assert json.loads(created[1]) == AFTER_RULE


def test_the_largest_integer_a_double_holds_is_an_ordinary_number() -> None:
    state = fold_changes([CREATE_ONE])
    changes, output = handle(
        state,
        "schedule_delete",
        {"id": "schedule-1", "n": LARGEST_DOUBLE_INT + 2**970 - 1},
        NOW,
        profile="reference",
    )
    assert len(changes) == 1
    assert json.loads(output)["deleted"] is True


def test_lossless_numbers_beside_a_delete_still_delete() -> None:
    state = fold_changes([CREATE_ONE])
    args = {"id": "schedule-1", "extra": [0, 0.0, -1.5, 1e300]}
    changes, output = handle(state, "schedule_delete", args, NOW, profile="reference")
    assert len(changes) == 1
    assert json.loads(output)["deleted"] is True


def test_integer_minus_zero_reads_as_zero_and_cannot_be_told_apart() -> None:
    """JSON ``-0`` written without a fraction or exponent parses to the int 0
    in Python's readers (json, pydantic, so the MCP SDK too): it is lost
    before tickler sees it, so it is read as 0, not refused."""
    args = json.loads('{"id":"schedule-1","extra":-0}')
    assert args["extra"] == 0
    assert type(args["extra"]) is int
    changes, _ = handle(
        fold_changes([CREATE_ONE]), "schedule_delete", args, NOW, profile="reference"
    )
    assert len(changes) == 1
