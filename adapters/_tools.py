"""The one tool table every agent-framework adapter translates.

Per entry of :func:`tickler.core.tool_catalog`: the name, description and
JSON Schemas, and an async handler that asks the session's tools. The
handler's text is exactly what the model must see, closed error codes
included: errors are values, never exceptions. Adapters neither
re-validate the arguments nor re-render the answer.

This module imports no agent framework; each framework file imports its own
lazily, behind an extra.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from tickler.core import DEFAULT_PROFILE, Profile, tool_catalog
from tickler.core._catalog import JsonSchema

__all__ = [
    "ScheduleTool",
    "ToolCaller",
    "decode_arguments",
    "schedule_tools",
]


class ToolCaller(Protocol):
    """What the tools call: a session's tools (``session.tools``, a
    :class:`~tickler.shell._session.SessionTools`)."""

    async def call_tool(self, name: str, args: object) -> str:
        """The exact tool output text; never raises for any ``args``."""
        ...


Handler = Callable[[object], Awaitable[str]]


@dataclass(frozen=True, slots=True)
class ScheduleTool:
    """One tool, ready to hand to a framework."""

    name: str
    description: str
    input_schema: JsonSchema
    output_schema: JsonSchema
    handler: Handler
    """``await handler(args)`` is the exact text the model sees."""


@runtime_checkable
class _Profiled(Protocol):
    @property
    def profile(self) -> Profile: ...


def schedule_tools(tools: ToolCaller) -> tuple[ScheduleTool, ...]:
    """The schedule tools answering through ``tools``, in catalog order: the
    catalog of the profile ``tools`` answers in (a session's, a runtime's),
    else of the default profile."""
    profile = tools.profile if isinstance(tools, _Profiled) else DEFAULT_PROFILE
    return tuple(_entry(tools, spec) for spec in tool_catalog(profile=profile))


def _entry(tools: ToolCaller, spec: dict[str, Any]) -> ScheduleTool:
    name: str = spec["name"]

    async def handler(args: object) -> str:
        return await tools.call_tool(name, args)

    return ScheduleTool(
        name=name,
        description=spec["description"],
        input_schema=spec["input_schema"],
        output_schema=spec["output_schema"],
        handler=handler,
    )


def decode_arguments(text: str) -> object:
    """Tool arguments a framework hands over as JSON text.

    Empty text means no arguments. Text that is not JSON is passed on as it
    is, so the tool answers its closed error code instead of the adapter
    inventing one.
    """
    if not text.strip():
        return None
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text
