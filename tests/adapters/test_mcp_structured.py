"""The MCP answer shapes, as pure functions (no SDK): every closed error
value any tool can answer validates against that tool's MCP output schema
and is flagged as an error; the schemas have object roots; a lone surrogate
reaches the structured copy as the same string, and a message holding one
is written with its escape (test_mcp_wire.py reads it off the wire); a
prompt over the MCP server's limit is refused with ``invalid_prompt`` after
the checks the reference makes first."""

from __future__ import annotations

import json

import jsonschema  # type: ignore[import-untyped]
import pytest
from returns.result import Failure

from tickler.adapters.mcp._conventions import (
    MAX_PROMPT_LENGTH,
    PROMPT_TOO_LONG,
    message_json,
    output_schema,
    prompt_too_long,
    structured_answer,
)
from tickler.core import ERROR_CODES, ScheduleError, render, tool_catalog


def closed_errors() -> list[ScheduleError]:
    plain = [ScheduleError(code, "m") for code in ERROR_CODES if code != "persistence_uncertain"]
    uncertain = [
        ScheduleError("persistence_uncertain", "m", operation="create"),
        ScheduleError("persistence_uncertain", "m", operation="delete", id="schedule-1"),
    ]
    return plain + uncertain


@pytest.mark.parametrize("spec", tool_catalog(), ids=lambda spec: spec["name"])
def test_every_closed_error_is_flagged_and_valid_for_every_tool(spec: dict[str, object]) -> None:
    schema = output_schema(spec["output_schema"])  # type: ignore[arg-type]
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object"
    for error in closed_errors():
        text = render(Failure(error))
        structured, is_error = structured_answer(text)
        assert is_error is True, text
        assert structured == json.loads(text)
        jsonschema.validate(structured, schema)


def test_an_array_is_wrapped_and_a_not_found_delete_is_no_error() -> None:
    assert structured_answer("[]") == ({"reminders": []}, False)
    not_found = '{"id":"x","deleted":false,"code":"schedule_not_found"}'
    assert structured_answer(not_found) == (json.loads(not_found), False)


def test_a_lone_surrogate_is_kept_and_written_with_its_escape() -> None:
    # JSON.stringify escapes a lone surrogate; the structured copy holds the
    # same string, and message_json writes it with the same escape, as UTF-8.
    text = '[{"id":"schedule-1","prompt":"a\\ud800b \U0001f375 \u00e9"}]'  # as render writes it
    structured, is_error = structured_answer(text)
    assert structured == {"reminders": json.loads(text)}
    assert structured["reminders"][0]["prompt"] == "a\ud800b \U0001f375 \u00e9"
    assert is_error is False
    wire = message_json({"structuredContent": structured})
    assert wire == '{"structuredContent":{"reminders":' + text + "}}"
    assert json.loads(wire.encode("utf-8")) == {"structuredContent": structured}


def test_a_scalar_answer_is_refused() -> None:
    with pytest.raises(ValueError, match="JSON int"):
        structured_answer("5")


TOO_LONG = "x" * (MAX_PROMPT_LENGTH + 1)


@pytest.mark.parametrize(
    "arguments",
    [
        {"prompt": TOO_LONG, "after_seconds": 60},
        {"prompt": " " + TOO_LONG, "at": "2099-01-01T00:00:00Z"},
        {"prompt": TOO_LONG, "after_seconds": "60"},  # the prompt is checked first
        {"prompt": TOO_LONG, "every_seconds": 1},
    ],
    ids=["after", "at", "bad-after", "bad-every"],
)
def test_a_prompt_over_the_limit_is_refused(arguments: dict[str, object]) -> None:
    answer = prompt_too_long("schedule_create", arguments)
    assert answer is not None
    assert json.loads(answer) == {"code": "invalid_prompt", "message": PROMPT_TOO_LONG}
    assert PROMPT_TOO_LONG == "prompt must be at most 100000 characters."
    assert structured_answer(answer)[1] is True


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("schedule_create", {"prompt": "x" * MAX_PROMPT_LENGTH, "after_seconds": 60}),
        ("schedule_create", {"prompt": "\U0001f375" * MAX_PROMPT_LENGTH, "after_seconds": 60}),
        # The reference's own checks answer first (the runtime gives them):
        ("schedule_create", {"prompt": TOO_LONG, "after_seconds": 60, "at": "x"}),
        ("schedule_create", {"prompt": TOO_LONG}),
        ("schedule_create", {"prompt": " " * (MAX_PROMPT_LENGTH + 1), "after_seconds": 60}),
        ("schedule_create", {"prompt": [TOO_LONG], "after_seconds": 60}),
        ("schedule_create", [TOO_LONG]),
        # Other tools take no prompt (the reference's list ignores its arguments).
        ("schedule_list", {"prompt": TOO_LONG}),
        ("schedule_delete", {"id": "schedule-1", "prompt": TOO_LONG}),
    ],
    ids=["at-limit", "astral-at-limit", "two-selectors", "no-selector", "blank", "not-a-string",
         "not-an-object", "list", "delete"],
)  # fmt: skip
def test_other_calls_are_left_to_the_runtime(name: str, arguments: object) -> None:
    assert prompt_too_long(name, arguments) is None
