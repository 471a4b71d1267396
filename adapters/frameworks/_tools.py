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
from typing import Any, Protocol

from tickler.core import DEFAULT_PROFILE, PROFILES, JsonSchema, Profile, tool_catalog

__all__ = [
    "ScheduleTool",
    "ToolCaller",
    "decode_arguments",
    "schedule_tools",
    "tools_profile",
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


def tools_profile(tools: ToolCaller, profile: Profile | str | None = None) -> Profile:
    """The profile a tool surface over ``tools`` shows: ``profile`` when
    given, else the one the session's tools speak (``tools.profile``), else
    the default (``extended``). Raises ``ValueError`` for a name that is no
    profile, or one the session does not speak: the catalog a model sees
    and the rules its calls meet are one contract."""
    own = getattr(tools, "profile", None)
    if profile is None:
        return own if own in PROFILES else DEFAULT_PROFILE
    if profile not in PROFILES:
        raise ValueError(f"profile must be 'reference' or 'extended', not {profile!r}")
    if own in PROFILES and own != profile:
        raise ValueError(
            f"these tools speak the {own!r} profile, not {profile!r}: "
            f"open the session with profile={profile!r}"
        )
    return profile


def schedule_tools(
    tools: ToolCaller, *, profile: Profile | None = None
) -> tuple[ScheduleTool, ...]:
    """The schedule tools answering through ``tools``, in catalog order:
    the three v1 tools in the ``reference`` profile; ``extended`` adds what
    its catalog adds (``schedule_update``). ``profile`` defaults to the
    session's own (see :func:`tools_profile`)."""
    catalog = tool_catalog(profile=tools_profile(tools, profile))
    return tuple(_entry(tools, spec) for spec in catalog)


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
