"""OpenAI Agents SDK adapter: the schedule tools as ``FunctionTool``s, and a
host whose turns are ``Runner.run``s of an ``Agent``.

Needs the extra: ``pip install 'tickler-agents[openai-agents]'``.

Running one session::

    def host(session: Session) -> OpenAIAgentsHost:
        return openai_agents_host(session, agent)  # every run gets the session's tools

    async with open_session(store, "user-42", host=host) as session:
        await session.host.send("remind me to stretch in ten minutes")

Strict mode, per tool: the SDK's strict mode makes every property required
and closes every object. ``schedule_list`` (no arguments) and
``schedule_delete`` (``id`` required) keep their meaning under it, so they
are strict. ``schedule_create`` is not: its selectors are optional and
mutually exclusive, which strict mode cannot say, so it keeps the catalog's
schema unchanged with strict mode off.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tickler.adapters._extras import missing_extra
from tickler.adapters._tools import (
    ScheduleTool,
    ToolCaller,
    decode_arguments,
    schedule_tools,
)
from tickler.core import Profile
from tickler.core._catalog import JsonSchema
from tickler.shell._clock import Clock
from tickler.shell._ports import SessionLog
from tickler.shell._reference_host import TURN_TIMEOUT_S, ReferenceHost, TurnInput
from tickler.shell._session import Session

try:
    from agents import Agent, FunctionTool, RunConfig, Runner, TResponseInputItem
    from agents import Session as SdkSession
    from agents.run_config import DEFAULT_MAX_TURNS
    from agents.tool_context import ToolContext
except ImportError as exc:
    raise missing_extra("OpenAI Agents SDK", "openai-agents") from exc

__all__ = ["OpenAIAgentsHost", "openai_agents_host", "openai_agents_tools"]


def openai_agents_tools(tools: ToolCaller, *, profile: Profile | None = None) -> list[FunctionTool]:
    """The schedule tools answering through ``tools`` (``session.tools``):
    the three v1 tools, plus ``schedule_update`` in the ``extended``
    profile (default: the session's own profile); each returns the
    session's text verbatim, closed error codes included."""
    return [_tool(entry) for entry in schedule_tools(tools, profile=profile)]


def _tool(entry: ScheduleTool) -> FunctionTool:
    async def invoke(_context: ToolContext[Any], arguments: str) -> str:
        return await entry.handler(decode_arguments(arguments))

    return FunctionTool(
        name=entry.name,
        description=entry.description,
        params_json_schema=entry.input_schema,
        on_invoke_tool=invoke,
        strict_json_schema=_strict_keeps_meaning(entry.input_schema),
    )


def _strict_keeps_meaning(schema: JsonSchema) -> bool:
    """Strict mode requires every property; only a schema that already does
    keeps its meaning (closing the open root changes nothing: the tools
    ignore keys they do not know, or answer ``invalid_selector``)."""
    return set(schema.get("required", ())) == set(schema.get("properties", {}))


class OpenAIAgentsHost(ReferenceHost):
    """A :class:`ReferenceHost` whose every turn (a user message or a due
    reminder) is one ``Runner.run`` of a copy of ``agent`` that also has the
    schedule tools of ``tools``, continuing the same conversation.
    :func:`openai_agents_host` builds one for a session.

    With ``sdk_session`` the SDK session keeps the conversation (an
    ``SQLiteSession`` survives restarts); without it, this host keeps the
    items in memory, starting from ``history``.
    """

    def __init__(
        self,
        log: SessionLog,
        agent: Agent[Any],
        tools: ToolCaller,
        clock: Clock | None = None,
        *,
        sdk_session: SdkSession | None = None,
        history: Sequence[TResponseInputItem] = (),
        run_config: RunConfig | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
        on_reply: Callable[[TurnInput, str], None] | None = None,
        turn_timeout_s: float | None = TURN_TIMEOUT_S,
    ) -> None:
        super().__init__(
            log, self._run_turn, clock, on_reply=on_reply, turn_timeout_s=turn_timeout_s
        )
        self._agent = agent.clone(tools=[*agent.tools, *openai_agents_tools(tools)])
        self._sdk_session = sdk_session
        self._items: list[TResponseInputItem] = list(history)
        self._run_config = run_config
        self._max_turns = max_turns

    @property
    def items(self) -> list[TResponseInputItem]:
        """The conversation so far as input items (empty with an ``sdk_session``)."""
        return list(self._items)

    async def _run_turn(self, turn: TurnInput) -> str:
        if self._sdk_session is not None:
            result = await Runner.run(
                self._agent,
                turn.text,
                session=self._sdk_session,
                run_config=self._run_config,
                max_turns=self._max_turns,
            )
        else:
            message: TResponseInputItem = {"role": "user", "content": turn.text}
            result = await Runner.run(
                self._agent,
                [*self._items, message],
                run_config=self._run_config,
                max_turns=self._max_turns,
            )
            self._items = result.to_input_list()
        return str(result.final_output)


def openai_agents_host(
    session: Session,
    agent: Agent[Any],
    *,
    sdk_session: SdkSession | None = None,
    history: Sequence[TResponseInputItem] = (),
    run_config: RunConfig | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    on_reply: Callable[[TurnInput, str], None] | None = None,
    turn_timeout_s: float | None = TURN_TIMEOUT_S,
) -> OpenAIAgentsHost:
    """The host of ``session`` running ``agent`` for each turn, with the
    session's tools: ``open_session(store, id, host=lambda session:
    openai_agents_host(session, agent))``."""
    return OpenAIAgentsHost(
        session.log,
        agent,
        session.tools,
        session.clock,
        sdk_session=sdk_session,
        history=history,
        run_config=run_config,
        max_turns=max_turns,
        on_reply=on_reply,
        turn_timeout_s=turn_timeout_s,
    )
