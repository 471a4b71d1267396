"""LangChain adapter: the schedule tools as ``StructuredTool``s.

Needs the extra: ``pip install 'tickler-agents[langchain]'`` (``langchain-core``
only; LangGraph's ``ToolNode`` and chat models' ``bind_tools`` take these
tools as they are).

The tools are async (``await tool.ainvoke(...)``): they answer through the
session (``langchain_tools(session.tools)``). Their ``args_schema`` is the
catalog's JSON Schema, which LangChain does not validate against, so every
call reaches the session and the content is its text verbatim, closed error
codes included (a ``ToolMessage`` with ``status="success"``: the error is
the tool's answer, not a failure of the call).
"""

from __future__ import annotations

from typing import Any

from tickler.adapters._extras import missing_extra
from tickler.adapters._tools import ScheduleTool, ToolCaller, schedule_tools
from tickler.core import Profile

try:
    from langchain_core.tools import StructuredTool
except ImportError as exc:
    raise missing_extra("LangChain", "langchain") from exc

__all__ = ["langchain_tools"]


def langchain_tools(tools: ToolCaller, *, profile: Profile | None = None) -> list[StructuredTool]:
    """The schedule tools answering through ``tools`` (``session.tools``):
    the three v1 tools, plus ``schedule_update`` in the ``extended``
    profile (default: the session's own profile)."""
    return [_tool(entry) for entry in schedule_tools(tools, profile=profile)]


def _tool(entry: ScheduleTool) -> StructuredTool:
    async def call(**arguments: Any) -> str:
        return await entry.handler(arguments)

    return StructuredTool.from_function(
        coroutine=call,
        name=entry.name,
        description=entry.description,
        args_schema=entry.input_schema,
        response_format="content",
    )
