"""PydanticAI adapter: the schedule tools as a toolset, and a host whose
turns are runs of a PydanticAI ``Agent``.

Needs the extra: ``pip install 'tickler-agents[pydantic-ai]'``.

Wiring one session::

    host = pydantic_ai_host(log, agent, clock)
    runtime = ScheduleRuntime(log, host, clock)
    host.bind(runtime)  # every run now gets the schedule tools
    await runtime.start()
    host.start()
    await host.send("remind me to stretch in ten minutes")

A due reminder arrives as the next user message of the same conversation
(its exact ``[SCHEDULE REMINDER]`` framing), and the run's output is the
turn's reply.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from tickler.adapters._extras import missing_extra
from tickler.adapters._tools import ScheduleTool, ToolCaller, schedule_tools
from tickler.shell._clock import Clock
from tickler.shell._ports import SessionLog
from tickler.shell._reference_host import TURN_TIMEOUT_S, Model, ReferenceHost, TurnInput

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


def schedule_toolset(runtime: ToolCaller) -> FunctionToolset[Any]:
    """The three schedule tools with the catalog's JSON Schemas, answering
    through ``runtime``. Pass it as ``Agent(..., toolsets=[...])`` or per run.

    PydanticAI skips schema validation for these tools (``Tool.from_schema``),
    so every call reaches the runtime, and the model sees the runtime's text
    verbatim: a closed error code is a tool return, not a retry.
    """
    return FunctionToolset([_tool(entry) for entry in schedule_tools(runtime)])


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
    schedule tools of ``runtime``, continuing one message history (kept in
    this process; pass ``history`` to continue an earlier conversation)."""

    def __init__(
        self,
        agent: Agent[None, str],
        runtime: ToolCaller,
        *,
        history: Sequence[ModelMessage] = (),
    ) -> None:
        self._agent = agent
        self._toolset = schedule_toolset(runtime)
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


def chat_model(model: str, runtime: ToolCaller, *, instructions: str | None = None) -> Model:
    """A reference host's ``Model`` for a PydanticAI model name
    (``"openai:gpt-4.1-mini"``: its provider installed, its key set), as
    :class:`PydanticAITurns` of a fresh agent. Build it once per session:
    it holds the conversation."""
    return PydanticAITurns(Agent(model, instructions=instructions), runtime)


class PydanticAIHost(ReferenceHost):
    """A :class:`ReferenceHost` whose every turn (a user message or a due
    reminder) is one ``agent.run`` continuing the same message history, as
    :class:`PydanticAITurns`. Turns themselves are durable: the reference
    host records each input and reply in the session log."""

    def __init__(
        self,
        log: SessionLog,
        agent: Agent[None, str],
        clock: Clock | None = None,
        *,
        history: Sequence[ModelMessage] = (),
        on_reply: Callable[[TurnInput, str], None] | None = None,
        turn_timeout_s: float | None = TURN_TIMEOUT_S,
    ) -> None:
        super().__init__(
            log, self._run_turn, clock, on_reply=on_reply, turn_timeout_s=turn_timeout_s
        )
        self._agent = agent
        self._history = tuple(history)
        self._turns: PydanticAITurns | None = None

    def bind(self, runtime: ToolCaller) -> None:
        """Give every later run the schedule tools of ``runtime`` (the
        runtime is built with this host, so it comes second)."""
        self._turns = PydanticAITurns(self._agent, runtime, history=self._history)

    @property
    def messages(self) -> list[ModelMessage]:
        """The conversation so far, every run's messages in order."""
        return list(self._history) if self._turns is None else self._turns.messages

    async def _run_turn(self, turn: TurnInput) -> str:
        if self._turns is None:
            raise RuntimeError("PydanticAIHost.bind(runtime) must come before the first turn")
        return await self._turns(turn)


def pydantic_ai_host(
    log: SessionLog,
    agent: Agent[None, str],
    clock: Clock | None = None,
    *,
    history: Sequence[ModelMessage] = (),
    on_reply: Callable[[TurnInput, str], None] | None = None,
    turn_timeout_s: float | None = TURN_TIMEOUT_S,
) -> PydanticAIHost:
    """A reference host running ``agent`` for each turn; ``bind`` it to the
    session's runtime before starting it."""
    return PydanticAIHost(
        log, agent, clock, history=history, on_reply=on_reply, turn_timeout_s=turn_timeout_s
    )
