"""The extended profile's tool schemas: accepted unchanged by OpenAI's
strict mode (the Agents SDK's own check), one selector stated, integers
for seconds, an example in every field's description."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from agents.strict_schema import ensure_strict_json_schema

from tickler.core import tool_catalog

EXTENDED = {tool["name"]: tool for tool in tool_catalog(profile="extended")}


def _subschemas(schema: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield schema
    for branch in schema.get("anyOf", ()):
        yield from _subschemas(branch)
    for member in schema.get("properties", {}).values():
        yield from _subschemas(member)


def test_the_extended_profile_has_four_tools_and_the_reference_three() -> None:
    assert list(EXTENDED) == [
        "schedule_create",
        "schedule_list",
        "schedule_delete",
        "schedule_update",
    ]
    assert [t["name"] for t in tool_catalog(profile="reference")] == list(EXTENDED)[:3]


@pytest.mark.parametrize("name", list(EXTENDED))
def test_openai_strict_mode_accepts_the_input_schema_unchanged(name: str) -> None:
    schema = EXTENDED[name]["input_schema"]
    assert ensure_strict_json_schema(copy.deepcopy(schema)) == schema
    for sub in _subschemas(schema):
        assert "oneOf" not in sub
        assert not isinstance(sub.get("type"), list)  # nullable as anyOf: frameworks read it
        if sub.get("type") == "object":
            assert sub["additionalProperties"] is False
            assert sub["required"] == list(sub["properties"])


@pytest.mark.parametrize("name", list(EXTENDED))
def test_every_field_describes_itself_with_an_example(name: str) -> None:
    for field, member in EXTENDED[name]["input_schema"]["properties"].items():
        assert "e.g." in member["description"].lower(), (name, field)


def test_create_states_the_one_selector_rule_and_integer_seconds() -> None:
    create = EXTENDED["schedule_create"]
    assert "exactly one selector" in create["description"]
    props = create["input_schema"]["properties"]
    assert props["after_seconds"]["anyOf"][0] == {"type": "integer", "minimum": 1}
    assert props["every_seconds"]["anyOf"][0] == {"type": "integer", "minimum": 300}
    local_at = props["at"]["anyOf"][1]["properties"]
    assert local_at["time"]["pattern"] == r"^[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,3})?)?$"
