"""MCP conventions, end to end: the official client talks to ``python -m
tickler mcp`` over stdio.

Each tool is listed with a title, annotations and an object-rooted output
schema; each call answers the runtime's exact text beside structured content
that validates against that schema; a closed-code rejection is flagged
``isError: true`` with the same byte-exact text.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult, TextContent, Tool

from tickler.core import tool_catalog

ANNOTATIONS = {
    "schedule_create": ("Create reminder", False, False, False),
    "schedule_list": ("List reminders", True, None, None),
    "schedule_delete": ("Delete reminder", False, True, True),
    "schedule_update": ("Change reminder", False, False, False),
}  # title, readOnlyHint, destructiveHint, idempotentHint

LATER = (
    '{"id":"schedule-1","kind":"at","prompt":"later ☕","scheduledAt":"2099-01-01T00:00:00.000Z",'
    '"state":"scheduled","deliveryMode":"session-local"}'
)
SELECTOR = (
    '{"code":"invalid_selector","message":"schedule_create accepts exactly one of '
    'after_seconds, at, or every_seconds."}'
)
NOT_FUTURE = '{"code":"not_future","message":"The scheduled time must be strictly in the future."}'
BAD_ID = (
    '{"code":"invalid_rule","message":"schedule_delete id must be non-empty without '
    'surrounding whitespace."}'
)
NOT_FOUND = '{"id":"schedule-9","deleted":false,"code":"schedule_not_found"}'

# name, arguments, exact text, isError, structuredContent
CALLS: list[tuple[str, dict[str, Any] | None, str, bool, dict[str, Any]]] = [
    ("schedule_list", None, "[]", False, {"reminders": []}),
    (
        "schedule_create",
        {"prompt": "later ☕", "at": "2099-01-01T00:00:00Z"},
        LATER,
        False,
        json.loads(LATER),
    ),
    ("schedule_list", {}, f"[{LATER}]", False, {"reminders": [json.loads(LATER)]}),
    ("schedule_create", {"prompt": "x", "after_seconds": 5, "note": 1}, SELECTOR, True,
     json.loads(SELECTOR)),
    ("schedule_create", {"prompt": "x", "at": "2000-01-01T00:00:00Z"}, NOT_FUTURE, True,
     json.loads(NOT_FUTURE)),
    ("schedule_delete", {"id": " schedule-1"}, BAD_ID, True, json.loads(BAD_ID)),
    # Not found is a value of delete, as in the reference: not an error.
    ("schedule_delete", {"id": "schedule-9"}, NOT_FOUND, False, json.loads(NOT_FOUND)),
    (
        "schedule_delete",
        {"id": "schedule-1"},
        '{"id":"schedule-1","deleted":true}',
        False,
        {"id": "schedule-1", "deleted": True},
    ),
]  # fmt: skip


def import_path() -> dict[str, str]:
    """The client passes the server only a few variables: keep this
    interpreter's import path."""
    return {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}


def text_of(result: CallToolResult) -> str:
    [block] = result.content
    assert isinstance(block, TextContent)
    return block.text


def check_tool(tool: Tool, spec: dict[str, Any]) -> None:
    title, read_only, destructive, idempotent = ANNOTATIONS[tool.name]
    assert tool.title == title
    assert tool.annotations is not None
    assert tool.annotations.title == title
    assert tool.annotations.read_only_hint is read_only
    assert tool.annotations.destructive_hint is destructive
    assert tool.annotations.idempotent_hint is idempotent
    assert tool.annotations.open_world_hint is False
    assert tool.description == spec["description"]
    assert tool.input_schema == spec["input_schema"]
    schema = tool.output_schema
    assert schema is not None
    assert schema["type"] == "object"  # MCP before 2026-07-28 requires an object root
    jsonschema.Draft202012Validator.check_schema(schema)


def test_tools_carry_titles_annotations_and_output_schemas_and_rejections_are_errors(
    tmp_path: Path,
) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "tickler",
            "mcp",
            "--profile",
            "reference",  # the v1 contract, byte for byte
            "--store",
            str(tmp_path / "store"),
            "--session",
            "s",
            "--deliver-cmd",
            "true",
        ],
        env=import_path(),
    )

    async def scenario() -> None:
        with (tmp_path / "server.log").open("a") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                listed = (await client.list_tools()).tools
                assert [t.name for t in listed] == [
                    spec["name"] for spec in tool_catalog(profile="reference")
                ]
                for tool, spec in zip(listed, tool_catalog(profile="reference"), strict=True):
                    check_tool(tool, spec)
                schemas = {tool.name: tool.output_schema for tool in listed}
                for name, arguments, text, is_error, structured in CALLS:
                    # The client itself validates structured content of
                    # non-error results against the listed schema.
                    result = await client.call_tool(name, arguments)
                    assert text_of(result) == text, (name, arguments)
                    assert result.is_error is is_error, (name, arguments)
                    assert result.structured_content == structured, (name, arguments)
                    jsonschema.validate(result.structured_content, schemas[name] or {})

    asyncio.run(scenario())
