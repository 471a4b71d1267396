"""PydanticAI adapter: the schedule tools as a toolset, and a host whose
turns are runs of a PydanticAI ``Agent``.

Needs the extra: ``pip install 'tickler-agents[pydantic-ai]'``.

Running one session::

    def host(session: Session) -> PydanticAIHost:
        return pydantic_ai_host(session, agent)  # every run gets the session's tools

    async with open_session(store, "user-42", host=host) as session:
        await session.host.send("remind me to stretch in ten minutes")

A due reminder arrives as the next user message of the same conversation
(its exact ``[SCHEDULE REMINDER]`` framing), and the run's output is the
turn's reply.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tickler.adapters._extras import missing_extra
from tickler.adapters._tools import ScheduleTool, ToolCaller, schedule_tools
from tickler.core import Profile
from tickler.shell._clock import Clock
from tickler.shell._ports import SessionLog
from tickler.shell._reference_host import TURN_TIMEOUT_S, Model, ReferenceHost, TurnInput
from tickler.shell._session import Session

try:
    from pydantic_ai import Agent, Tool
    from pydantic_ai.messages import ModelMessage
    from pydantic_ai.toolsets import FunctionToolset
except ImportError as exc:
    raise missing_extra("PydanticAI", "pydantic-ai") from exc

__all__ = [
    "PydanticAIHost",
    "PydanticAITurns",
    "chat_model",
    "pydantic_ai_host",
    "schedule_toolset",
]


def schedule_toolset(tools: ToolCaller, *, profile: Profile | None = None) -> FunctionToolset[Any]:
    """The schedule tools with the catalog's JSON Schemas, answering
    through ``tools`` (``session.tools``): the three v1 tools, plus
    ``schedule_update`` in the ``extended`` profile (default: the session's
    own profile). Pass it as ``Agent(..., toolsets=[...])`` or per run.

    PydanticAI skips schema validation for these tools (``Tool.from_schema``),
    so every call reaches the session, and the model sees the session's
    text verbatim: a closed error code is a tool return, not a retry.
    """
    return FunctionToolset([_tool(entry) for entry in schedule_tools(tools, profile=profile)])


def _tool(entry: ScheduleTool) -> Tool[Any]:
    async def call(**arguments: Any) -> str:
        return await entry.handler(arguments)

    return Tool.from_schema(
        call,
        name=entry.name,
        description=entry.description,
        json_schema=entry.input_schema,
    )


class PydanticAITurns:
    """A reference host's ``Model``: each turn is one ``agent.run`` with the
    schedule tools of ``tools`` (``session.tools``), continuing one message
    history (kept in this process; pass ``history`` to continue an earlier
    conversation)."""

    def __init__(
        self,
        agent: Agent[None, str],
        tools: ToolCaller,
        *,
        history: Sequence[ModelMessage] = (),
    ) -> None:
        self._agent = agent
        self._toolset = schedule_toolset(tools)
        self._history: list[ModelMessage] = list(history)

    @property
    def messages(self) -> list[ModelMessage]:
        """The conversation so far, every run's messages in order."""
        return list(self._history)

    async def __call__(self, turn: TurnInput) -> str:
        result = await self._agent.run(
            turn.text, message_history=self._history, toolsets=[self._toolset]
        )
        self._history = result.all_messages()
        return result.output


def chat_model(model: str, tools: ToolCaller, *, instructions: str | None = None) -> Model:
    """A reference host's ``Model`` for a PydanticAI model name
    (``"openai:gpt-4.1-mini"``: its provider installed, its key set), as
    :class:`PydanticAITurns` of a fresh agent with ``tools``. Build it once
    per session: it holds the conversation."""
    return PydanticAITurns(Agent(model, instructions=instructions), tools)


class PydanticAIHost(ReferenceHost):
    """A :class:`ReferenceHost` whose every turn (a user message or a due
    reminder) is one ``agent.run`` with the schedule tools of ``tools``,
    continuing the same message history, as :class:`PydanticAITurns`. Turns
    themselves are durable: the reference host records each input and reply
    in the session log. :func:`pydantic_ai_host` builds one for a session."""

    def __init__(
        self,
        log: SessionLog,
        agent: Agent[None, str],
        tools: ToolCaller,
        clock: Clock | None = None,
        *,
        history: Sequence[ModelMessage] = (),
        on_reply: Callable[[TurnInput, str], None] | None = None,
        turn_timeout_s: float | None = TURN_TIMEOUT_S,
    ) -> None:
        self._turns = PydanticAITurns(agent, tools, history=history)
        super().__init__(log, self._turns, clock, on_reply=on_reply, turn_timeout_s=turn_timeout_s)

    @property
    def messages(self) -> list[ModelMessage]:
        """The conversation so far, every run's messages in order."""
        return self._turns.messages


def pydantic_ai_host(
    session: Session,
    agent: Agent[None, str],
    *,
    history: Sequence[ModelMessage] = (),
    on_reply: Callable[[TurnInput, str], None] | None = None,
    turn_timeout_s: float | None = TURN_TIMEOUT_S,
) -> PydanticAIHost:
    """The host of ``session`` running ``agent`` for each turn, with the
    session's tools: ``open_session(store, id, host=lambda session:
    pydantic_ai_host(session, agent))``."""
    return PydanticAIHost(
        session.log,
        agent,
        session.tools,
        session.clock,
        history=history,
        on_reply=on_reply,
        turn_timeout_s=turn_timeout_s,
    )
