"""The extended profile's tool schemas: accepted unchanged by OpenAI's
strict mode (its rules checked here, and the Agents SDK's and PydanticAI's
own checks), the one selector a schema choice (``when``), integers for
seconds, an example in every field's description."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from agents.strict_schema import ensure_strict_json_schema
from pydantic_ai.profiles.openai import OpenAIJsonSchemaTransformer

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


def _variants(member: dict[str, Any], *, ends: bool = True) -> list[tuple[str, dict[str, Any]]]:
    """Each ``when`` choice as (its one selector, that selector's schema):
    with ``ends`` (a create's) a recurring one holds a series' end
    (``until``, ``count``, nullable) beside it, a one-shot nothing else;
    without (an update's, whose end is its own top-level member) none does."""
    out = []
    for variant in member["anyOf"]:
        if variant == {"type": "null"}:
            continue
        [name, *beside] = variant["properties"]
        recurring = ends and name in {"every_seconds", "calendar"}
        assert beside == (["until", "count"] if recurring else [])
        for end in beside:
            assert {"type": "null"} in variant["properties"][end]["anyOf"]
        assert variant["required"] == [name, *beside]
        assert variant["additionalProperties"] is False
        out.append((name, variant["properties"][name]))
    return out


def test_create_holds_its_one_selector_in_when_and_says_so() -> None:
    create = EXTENDED["schedule_create"]
    assert "when, an object holding exactly one selector" in create["description"]
    schema = create["input_schema"]
    assert list(schema["properties"]) == ["prompt", "when", "request_id"]
    when = schema["properties"]["when"]
    variants = dict(_variants(when))
    assert list(variants) == ["after_seconds", "at", "every_seconds", "calendar"]
    assert len(when["anyOf"]) == 4  # required: a create always has a schedule
    assert variants["after_seconds"]["type"] == "integer"
    assert variants["after_seconds"]["minimum"] == 1
    assert variants["every_seconds"]["minimum"] == 300
    local_at = variants["at"]["anyOf"][1]["properties"]
    assert local_at["time"]["pattern"] == r"^[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,3})?)?$"
    assert variants["calendar"]["required"] == ["cron", "time_zone", "dst_gap", "dst_overlap"]


def test_update_offers_the_same_choices_in_a_nullable_when() -> None:
    update = EXTENDED["schedule_update"]["input_schema"]["properties"]
    create = EXTENDED["schedule_create"]["input_schema"]["properties"]
    assert update["when"]["anyOf"][-1] == {"type": "null"}
    selectors = dict(_variants(update["when"], ends=False))
    assert selectors == dict(_variants(create["when"]))
    assert not {"after_seconds", "at", "every_seconds", "calendar"} & update.keys()
    # the end is changed once, at the top level (null first: unchanged)
    assert update["until"]["anyOf"][0] == update["count"]["anyOf"][0] == {"type": "null"}


# OpenAI's strict mode, as its structured-output guide states it: the root an
# object (never anyOf), every object closed with every property required,
# optional values as an anyOf with null, only the keywords it supports,
# at most 10 levels of nested objects and 5000 properties in all.
_STRICT_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "anyOf",
        "enum",
        "const",
        "description",
        "title",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "items",
        "minItems",
        "maxItems",
    }
)


def _strict_breaches(schema: dict[str, Any], depth: int = 0) -> Iterator[str]:
    if schema.keys() - _STRICT_KEYWORDS:
        yield f"unsupported keywords {sorted(schema.keys() - _STRICT_KEYWORDS)}"
    if schema.get("type") == "object":
        depth += 1
        if depth > 10:
            yield "nested deeper than 10 objects"
        if schema.get("additionalProperties") is not False:
            yield "an object without additionalProperties false"
        if schema.get("required") != list(schema.get("properties", {})):
            yield "an object whose properties are not all required"
    for branch in schema.get("anyOf", ()):
        yield from _strict_breaches(branch, depth)
    for member in schema.get("properties", {}).values():
        yield from _strict_breaches(member, depth)


@pytest.mark.parametrize("name", list(EXTENDED))
def test_every_input_schema_keeps_openai_strict_modes_rules(name: str) -> None:
    schema = EXTENDED[name]["input_schema"]
    assert schema["type"] == "object"
    assert "anyOf" not in schema
    assert list(_strict_breaches(schema)) == []
    properties = sum(len(s.get("properties", {})) for s in _subschemas(schema))
    assert properties <= 5000


@pytest.mark.parametrize("name", list(EXTENDED))
def test_pydantic_ais_openai_transformer_finds_each_schema_strict_compatible(name: str) -> None:
    """PydanticAI sends a tool strict only when its OpenAI transformer finds
    nothing to change (``maxLength``, for one, would turn strict mode off)."""
    schema = EXTENDED[name]["input_schema"]
    transformer = OpenAIJsonSchemaTransformer(copy.deepcopy(schema), strict=None)
    assert transformer.walk() == schema
    assert transformer.is_strict_compatible


def test_the_strict_rules_checker_finds_a_breach() -> None:
    """The checker above is not vacuous: the flat schema of old breaks it."""
    open_root = {"type": "object", "properties": {"a": {"type": "string"}}, "required": []}
    assert list(_strict_breaches(open_root)) == [
        "an object without additionalProperties false",
        "an object whose properties are not all required",
    ]
    assert list(_strict_breaches({"type": "string", "maxLength": 3})) == [
        "unsupported keywords ['maxLength']"
    ]
