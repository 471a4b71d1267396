"""The one tool table every agent-framework adapter translates.

Per entry of :func:`tickler.core.tool_catalog`: the name, description and
JSON Schemas, and an async handler that asks the runtime. The handler's text
is exactly what the model must see, closed error codes included: errors are
values, never exceptions. Adapters neither re-validate the arguments nor
re-render the answer.

This module imports no agent framework; each framework file imports its own
lazily, behind an extra.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from tickler.core import tool_catalog
from tickler.core._catalog import JsonSchema

__all__ = [
    "CorruptSessionTools",
    "ScheduleTool",
    "ToolCaller",
    "decode_arguments",
    "schedule_tools",
]


class ToolCaller(Protocol):
    """What the tools call: :class:`tickler.shell._runtime.ScheduleRuntime`."""

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


def schedule_tools(runtime: ToolCaller) -> tuple[ScheduleTool, ...]:
    """The three schedule tools bound to ``runtime``, in catalog order."""
    return tuple(_entry(runtime, spec) for spec in tool_catalog())


def _entry(runtime: ToolCaller, spec: dict[str, Any]) -> ScheduleTool:
    name: str = spec["name"]

    async def handler(args: object) -> str:
        return await runtime.call_tool(name, args)

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


class CorruptSessionTools:
    """The tools of a session its store refused to open as corrupt: a call
    of the right shape answers ``corrupt_schedule_log`` (as the runtime does
    for a corrupt log), a malformed one its own closed code first. Nothing
    is read or written, so the damaged files stay as they are for
    ``tickler check`` and a person to look at."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    async def call_tool(self, name: str, args: object) -> str:
        from returns.pipeline import is_successful
        from returns.result import Failure

        from tickler.core import parse_tool_call, render
        from tickler.core._errors import CORRUPT_LOG

        parsed = parse_tool_call(name, args)
        if not is_successful(parsed):
            return render(Failure(parsed.failure()))
        return render(Failure(CORRUPT_LOG))
