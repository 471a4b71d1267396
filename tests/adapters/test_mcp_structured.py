"""The MCP answer shapes, as pure functions (no SDK): every closed error
value any tool can answer validates against that tool's MCP output schema
and is flagged as an error; the schemas have object roots; a lone surrogate
reaches the structured copy as the same string, and a message holding one
is written with its escape (test_mcp_wire.py reads it off the wire)."""

from __future__ import annotations

import json

import jsonschema  # type: ignore[import-untyped]
import pytest
from returns.result import Failure

from tickler.adapters.mcp_conventions import message_json, output_schema, structured_answer
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
