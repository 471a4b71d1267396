"""The tool catalog carries the reference's exact names, descriptions and
input shape (reference section (f))."""

from __future__ import annotations

from typing import Any

import pytest

from tickler.core import tool_catalog

CREATE = (
    "Create one reminder in the current session. Supply a non-empty prompt and exactly one "
    "selector: a positive safe-integer after_seconds delay, at as a strict offset date-time or "
    "local date/time object, or safe-integer every_seconds of at least 300. Fixed-rate reminders "
    "stay creation-aligned, skip missed occurrences, and batch one latest occurrence per overdue "
    "rule. Delivery is session-local: the reminder runs on time only while this session is live "
    "and otherwise becomes overdue until the session is resumed."
)
LIST = (
    "List every active reminder in the current session in creation order, including its exact "
    "id, UTC target, scheduled or overdue state, and session-local delivery mode."
)
DELETE = (
    "Delete one active reminder in the current session by the exact id returned by "
    "schedule_create or schedule_list. Unknown or already-finished ids return deleted false."
)


def _tools() -> dict[str, dict[str, Any]]:
    return {tool["name"]: tool for tool in tool_catalog(profile="reference")}


def test_registration_order() -> None:
    assert [tool["name"] for tool in tool_catalog(profile="reference")] == [
        "schedule_create",
        "schedule_list",
        "schedule_delete",
    ]


@pytest.mark.parametrize(
    ("name", "description"),
    [("schedule_create", CREATE), ("schedule_list", LIST), ("schedule_delete", DELETE)],
)
def test_exact_descriptions(name: str, description: str) -> None:
    assert _tools()[name]["description"] == description


def test_create_input_schema() -> None:
    schema = _tools()["schedule_create"]["input_schema"]
    assert schema["type"] == "object"
    assert schema["required"] == ["prompt"]
    assert schema.get("additionalProperties", True) is True  # open root
    props = schema["properties"]
    assert list(props) == ["prompt", "after_seconds", "every_seconds", "at"]
    assert props["prompt"] == {
        "type": "string",
        "description": "Reminder content to present when the target becomes due.",
    }
    assert props["after_seconds"] == {
        "type": "number",
        "description": "Positive safe-integer delay in seconds.",
    }
    assert props["every_seconds"] == {
        "type": "number",
        "description": "Fixed-rate safe-integer interval in seconds, at least 300.",
    }
    at = props["at"]
    assert at["description"] == (
        "Absolute target as strict offset RFC 3339 or local date/time with an explicit IANA zone."
    )
    string_form, local_form = at["oneOf"]
    assert string_form == {"type": "string"}
    assert local_form["type"] == "object"
    assert local_form["additionalProperties"] is False
    assert sorted(local_form["required"]) == ["date", "time", "time_zone"]
    assert {k: v["type"] for k, v in local_form["properties"].items()} == {
        "date": "string",
        "time": "string",
        "time_zone": "string",
    }


def test_list_and_delete_input_schemas() -> None:
    tools = _tools()
    assert tools["schedule_list"]["input_schema"]["properties"] == {}
    delete = tools["schedule_delete"]["input_schema"]
    assert delete["required"] == ["id"]
    assert delete["properties"] == {
        "id": {"type": "string", "description": "Exact session-local schedule id."}
    }


def test_persistence_error_operations() -> None:
    for tool in tool_catalog(profile="reference"):
        shapes = tool["output_schema"]["oneOf"]
        persistence = [
            s
            for s in shapes
            if s.get("properties", {}).get("code", {}).get("const") == "persistence_uncertain"
        ]
        assert len(persistence) == 1
        assert persistence[0]["properties"]["operation"]["enum"] == ["create", "list", "delete"]
        assert persistence[0]["additionalProperties"] is False
