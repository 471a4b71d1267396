"""The closed error values as tools render them (reference section (f)).

Every value is ``{code, message}``; ``persistence_uncertain`` adds
``operation`` and, when the id is known, ``id`` -- in that key order.
"""

from __future__ import annotations

import json

import jsonschema  # type: ignore[import-untyped]
import pytest
from returns.result import Failure

from tickler.core import (
    ERROR_CODES,
    ErrorCode,
    Operation,
    ScheduleError,
    persistence_uncertain,
    render,
    tool_catalog,
)
from tickler.core._errors import CORRUPT_LOG, INTERNAL_ERROR

PERSISTENCE = (
    "Schedule persistence is uncertain; retry with schedule_list before relying on this result."
)
OUTPUT_SCHEMAS = {tool["name"]: tool["output_schema"] for tool in tool_catalog(profile="reference")}


def test_create_barrier_failure_names_the_operation_and_the_allocated_id() -> None:
    assert render(Failure(persistence_uncertain("create", "schedule-1"))) == (
        '{"code":"persistence_uncertain","message":"Schedule persistence is uncertain; retry with '
        'schedule_list before relying on this result.","operation":"create","id":"schedule-1"}'
    )


def test_create_preflight_failure_has_no_id() -> None:
    assert render(Failure(persistence_uncertain("create"))) == (
        f'{{"code":"persistence_uncertain","message":"{PERSISTENCE}","operation":"create"}}'
    )


def test_list_failure_names_the_operation_only() -> None:
    assert render(Failure(persistence_uncertain("list"))) == (
        f'{{"code":"persistence_uncertain","message":"{PERSISTENCE}","operation":"list"}}'
    )


def test_delete_failure_names_the_requested_id() -> None:
    assert render(Failure(persistence_uncertain("delete", 'my "id" 日程'))) == (
        f'{{"code":"persistence_uncertain","message":"{PERSISTENCE}",'
        '"operation":"delete","id":"my \\"id\\" 日程"}'
    )


@pytest.mark.parametrize(
    ("operation", "schedule_id", "tool"),
    [
        ("create", None, "schedule_create"),
        ("create", "schedule-1", "schedule_create"),
        ("list", None, "schedule_list"),
        ("delete", "schedule-1", "schedule_delete"),
    ],
)
def test_persistence_values_match_the_published_output_schema(
    operation: Operation, schedule_id: str | None, tool: str
) -> None:
    value = json.loads(render(Failure(persistence_uncertain(operation, schedule_id))))
    jsonschema.validate(value, OUTPUT_SCHEMAS[tool])
    assert value["operation"] == operation
    assert value.get("id") == schedule_id


def test_corrupt_log_never_leaks_the_reason() -> None:
    assert render(Failure(CORRUPT_LOG)) == (
        '{"code":"corrupt_schedule_log","message":"The session schedule log is corrupt."}'
    )


def test_internal_error() -> None:
    assert render(Failure(INTERNAL_ERROR)) == (
        '{"code":"internal_error","message":"The schedule operation failed."}'
    )


# The reference's table of error values (section (f)), one message per code
# where the code has a single text.
TABLE: dict[ErrorCode, str] = {
    "invalid_prompt": "prompt must be non-empty after trimming.",
    "invalid_selector": (
        "schedule_create accepts exactly one of after_seconds, at, or every_seconds."
    ),
    "not_future": "The scheduled time must be strictly in the future.",
    "time_out_of_range": (
        "The scheduled time must be representable as a four-digit-year RFC 3339 UTC instant."
    ),
    "frequency_too_high": "every_seconds must be at least 300.",
    "corrupt_schedule_log": "The session schedule log is corrupt.",
    "internal_error": "The schedule operation failed.",
}


@pytest.mark.parametrize(("code", "message"), TABLE.items())
def test_basic_error_value_text(code: ErrorCode, message: str) -> None:
    assert code in ERROR_CODES
    text = render(Failure(ScheduleError(code=code, message=message)))
    assert text == f'{{"code":"{code}","message":"{message}"}}'
    for schema in OUTPUT_SCHEMAS.values():
        jsonschema.validate(json.loads(text), schema)
