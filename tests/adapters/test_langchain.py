"""The LangChain adapter, invoked through LangChain's real tool machinery
(``StructuredTool.ainvoke`` with a ``ToolCall``): every answer is the
runtime's exact text in a ``ToolMessage``, and a reminder created through
the tool comes back as exactly one follow-up turn."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import ToolCall, ToolMessage
from langchain_core.tools import StructuredTool

from tickler.adapters.langchain import langchain_tools
from tickler.core import tool_catalog
from tickler.shell._reference_host import ReferenceHost

from .framework_support import (
    INVALID_SELECTOR,
    SECOND,
    STRETCH_CREATED,
    STRETCH_REMINDER,
    Live,
    async_test,
    live_session,
    plain_host,
)

DELETED = '{"id":"schedule-1","deleted":true}'
NOT_FOUND = '{"id":"schedule-9","deleted":false,"code":"schedule_not_found"}'
DELETE_ID = (
    '{"code":"invalid_rule","message":'
    '"schedule_delete id must be non-empty without surrounding whitespace."}'
)
FREQUENCY = '{"code":"frequency_too_high","message":"every_seconds must be at least 300."}'
PROMPT = '{"code":"invalid_prompt","message":"prompt must be non-empty after trimming."}'


def tools_of(s: Live[ReferenceHost]) -> dict[str, StructuredTool]:
    return {tool.name: tool for tool in langchain_tools(s.tools)}


async def invoke(tool: StructuredTool, args: dict[str, Any], call_id: str = "call-1") -> str:
    message = await tool.ainvoke(ToolCall(name=tool.name, args=args, id=call_id, type="tool_call"))
    assert isinstance(message, ToolMessage)
    assert (message.tool_call_id, message.name, message.status) == (call_id, tool.name, "success")
    assert isinstance(message.content, str)
    return message.content


def test_tools_carry_the_catalog_names_descriptions_and_schemas() -> None:
    tools = langchain_tools(_NoRuntime())
    assert [(t.name, t.description, t.args_schema) for t in tools] == [
        (spec["name"], spec["description"], spec["input_schema"]) for spec in tool_catalog()
    ]
    assert all(t.coroutine is not None and t.func is None for t in tools)


@async_test
async def test_answers_are_the_runtime_text_for_success_and_errors() -> None:
    async with live_session(plain_host) as s:
        tools = tools_of(s)
        create, listing, delete = (
            tools[n] for n in ("schedule_create", "schedule_list", "schedule_delete")
        )
        assert await invoke(create, {"prompt": "stretch", "after_seconds": 10}) == STRETCH_CREATED
        assert await invoke(listing, {}) == f"[{STRETCH_CREATED}]"
        both = {"prompt": "x", "after_seconds": 10, "every_seconds": 600}
        assert await invoke(create, both) == INVALID_SELECTOR
        assert (
            await invoke(create, {"prompt": "x", "after_seconds": 5, "bogus": 1})
            == INVALID_SELECTOR
        )
        assert await invoke(create, {"prompt": "x", "every_seconds": 5}) == FREQUENCY
        assert await invoke(create, {"prompt": "  ", "after_seconds": 5}) == PROMPT
        assert await invoke(delete, {}) == DELETE_ID
        assert await invoke(delete, {"id": "schedule-9"}) == NOT_FOUND
        assert await invoke(delete, {"id": "schedule-1"}) == DELETED
        # Without a ToolCall the content comes back bare.
        assert await listing.ainvoke({}) == "[]"


@async_test
async def test_a_reminder_created_through_the_tool_arrives_once() -> None:
    async with live_session(plain_host) as s:
        create = tools_of(s)["schedule_create"]
        assert await invoke(create, {"prompt": "stretch", "after_seconds": 10}) == STRETCH_CREATED
        await s.advance(9 * SECOND)
        assert s.replies == []
        await s.advance(2 * SECOND)
        await s.turns(1)
        await s.advance(30 * SECOND)
        await s.turns(1)
        assert [(turn.text, reply) for turn, reply in s.replies] == [(STRETCH_REMINDER, "turn 0")]
        assert [(t.text, t.key) for t in s.reminder_inputs()] == [
            (STRETCH_REMINDER, "schedule-1@2026-08-05T12:00:10.000Z")
        ]
        assert await tools_of(s)["schedule_list"].ainvoke({}) == "[]"


def test_the_tools_are_async_only() -> None:
    [create, *_] = langchain_tools(_NoRuntime())
    with pytest.raises(NotImplementedError, match="does not support sync invocation"):
        create.invoke({"prompt": "x", "after_seconds": 1})


class _NoRuntime:
    async def call_tool(self, name: str, args: object) -> str:
        raise AssertionError(f"unexpected call {name}({args!r})")
