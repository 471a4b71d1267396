"""The MCP server of an extended session lists schedule_create with its
schedule as ``when`` (one selector, chosen in the schema) and
schedule_update with the same ``when``, nullable; a call in that form
answers exactly as the flat call does on a twin session, and a malformed
``when`` is a closed error (``isError``)."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Final

from mcp import Client
from mcp.types import TextContent

from tickler.adapters.mcp._server import create_server
from tickler.core import tool_catalog
from tickler.core._errors import Msg
from tickler.shell._clock import VirtualClock

from .test_mcp_inprocess import NOW, session

CALENDAR: Final = {"cron": "0 9 * * 1-5", "time_zone": "Europe/Berlin"}
SELECTORS: Final = ["after_seconds", "at", "every_seconds", "calendar"]


def _choices(member: dict[str, Any]) -> list[list[str]]:
    """Each choice's selector (a series' end stands beside a recurring one)."""
    ends = {"until", "count"}
    return [
        [k for k in choice.get("properties", {}) if k not in ends] for choice in member["anyOf"]
    ]


def test_the_extended_server_lists_when_and_answers_it_as_the_flat_form() -> None:
    catalog = {tool["name"]: tool for tool in tool_catalog(profile="extended")}

    async def scenario() -> None:
        clock = VirtualClock(NOW)
        async with (
            session(clock) as served,
            session(clock) as twin,
            Client(create_server(served)) as client,
        ):
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            create = listed["schedule_create"].input_schema
            assert create == catalog["schedule_create"]["input_schema"]
            assert list(create["properties"]) == ["prompt", "when", "request_id"]
            assert _choices(create["properties"]["when"]) == [[s] for s in SELECTORS]
            update = listed["schedule_update"].input_schema
            assert update == catalog["schedule_update"]["input_schema"]
            assert _choices(update["properties"]["when"]) == [*([s] for s in SELECTORS), []]

            for selector, value in [("after_seconds", 600), ("calendar", CALENDAR)]:
                union = {"prompt": "tea", "when": {selector: value}, "request_id": None}
                result = await client.call_tool("schedule_create", union)
                flat = await twin.call_tool("schedule_create", {"prompt": "tea", selector: value})
                assert result.content == [TextContent(type="text", text=flat)]
                assert result.is_error is False
            assert served.state == twin.state

            mixed = {"prompt": "tea", "when": {"after_seconds": 600, "every_seconds": 900}}
            refused = await client.call_tool("schedule_create", mixed)
            assert refused.is_error is True
            [block] = refused.content
            assert isinstance(block, TextContent)
            assert json.loads(block.text) == {"code": "invalid_selector", "message": Msg.WHEN}

    asyncio.run(scenario())
