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

The conversation is kept in the session's own log: each run's new messages
(PydanticAI's own ``ModelMessagesTypeAdapter`` JSON) are a
``pydantic-ai/messages`` event ``{"input": n, "messages": [...]}`` in the
batch of the turn's ``tickler/turn`` record, and a host built when the
session opens - in this process, a new one, or a worker's - continues from
them (``message_history``), after a restart or a ``kill -9`` too. A run
is given the newest whole turns, at most ``window`` messages.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Final

import msgspec

from tickler.adapters._extras import missing_extra
from tickler.adapters.frameworks._conversation import DEFAULT_WINDOW, Window, check_window
from tickler.adapters.frameworks._tools import ScheduleTool, ToolCaller, schedule_tools
from tickler.core import Profile, SessionEvent
from tickler.shell import (
    TURN_TIMEOUT_S,
    Clock,
    Model,
    ReferenceHost,
    Session,
    SessionLog,
    TurnInput,
    TurnReply,
)

try:
    from pydantic_ai import Agent, Tool
    from pydantic_ai.messages import (
        ModelMessage,
        ModelMessagesTypeAdapter,
        ModelRequest,
        RetryPromptPart,
        SystemPromptPart,
        ToolReturnPart,
        UserPromptPart,
    )
    from pydantic_ai.toolsets import FunctionToolset
except ImportError as exc:
    raise missing_extra("PydanticAI", "pydantic-ai") from exc

__all__ = [
    "DEFAULT_WINDOW",
    "MESSAGES",
    "PydanticAIHost",
    "PydanticAITurns",
    "chat_model",
    "logged_messages",
    "pydantic_ai_host",
    "schedule_toolset",
]

MESSAGES: Final = "pydantic-ai/messages"
"""The event holding one turn's new messages: ``{"input": n, "messages":
[...]}``, the messages as ``ModelMessagesTypeAdapter`` writes them."""


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


def _starts_turn(message: ModelMessage) -> bool:
    """A run's first request: a user prompt, not a tool's return."""
    return (
        isinstance(message, ModelRequest)
        and any(isinstance(part, UserPromptPart) for part in message.parts)
        and not any(isinstance(part, ToolReturnPart | RetryPromptPart) for part in message.parts)
    )


class _History:
    """The messages a run continues: the window of the conversation, whose
    first request carries the conversation's system prompt when the window
    has cut the first turn off (PydanticAI sends ``system_prompt`` parts only
    with the first request of a conversation)."""

    def __init__(self, window: int | None, messages: Sequence[ModelMessage] = ()) -> None:
        self._window: Window[ModelMessage] = Window(window, _starts_turn)
        self._first: ModelMessage | None = None
        self._system: list[SystemPromptPart] = []
        self.extend(messages)

    @property
    def messages(self) -> list[ModelMessage]:
        kept = self._window.items
        if kept and self._system and kept[0] is not self._first:
            head = kept[0]
            assert isinstance(head, ModelRequest)  # a turn starts with one
            kept[0] = dataclasses.replace(head, parts=[*self._system, *head.parts])
        return kept

    @property
    def empty(self) -> bool:
        return self._first is None

    def extend(self, messages: Sequence[ModelMessage]) -> None:
        if self._first is None and messages:
            self._first = first = messages[0]
            if isinstance(first, ModelRequest):
                self._system = [p for p in first.parts if isinstance(p, SystemPromptPart)]
        self._window.extend(messages)


class _Logged(msgspec.Struct):
    messages: msgspec.Raw


_LOGGED: Final = msgspec.json.Decoder(_Logged)


def logged_messages(log: SessionLog, *, window: int | None = DEFAULT_WINDOW) -> list[ModelMessage]:
    """The conversation a session's log holds (its ``pydantic-ai/messages``
    events), as a run's ``message_history``: the newest whole turns, at
    most ``window`` messages (None: all), as the host that wrote them had
    it. Reads the log once."""
    history = _History(check_window(window))
    # The first turn names the conversation's system prompt; of the others,
    # the newest `window` suffice (each holds at least one message).
    newest: deque[SessionEvent] = deque(maxlen=window)
    for event in log.events(log.header.owned_from):
        if event.type != MESSAGES:
            continue
        if history.empty:
            history.extend(_messages_of(event))
        else:
            newest.append(event)
    for event in newest:
        history.extend(_messages_of(event))
    return history.messages


def _messages_of(event: SessionEvent) -> list[ModelMessage]:
    try:
        return ModelMessagesTypeAdapter.validate_json(bytes(_LOGGED.decode(event.data).messages))
    except (msgspec.DecodeError, ValueError) as exc:  # pydantic's ValidationError is one
        raise ValueError(
            f"session log event {event.seq}: malformed {MESSAGES} record: {exc}"
        ) from None


class PydanticAITurns:
    """A reference host's ``Model``: each turn is one ``agent.run`` with the
    schedule tools of ``tools`` (``session.tools``), continuing one message
    history: ``history`` to start from, then every run's messages, of
    which a run is given the newest whole turns, at most ``window``
    messages (None: all).

    Called, it keeps the history in this process. :meth:`turn` answers a
    :class:`~tickler.shell.TurnReply` that also carries the run's new
    messages as a ``pydantic-ai/messages`` event, for the host to record
    with the turn: :class:`PydanticAIHost` keeps the conversation so."""

    def __init__(
        self,
        agent: Agent[None, str],
        tools: ToolCaller,
        *,
        history: Sequence[ModelMessage] = (),
        window: int | None = DEFAULT_WINDOW,
    ) -> None:
        self._agent = agent
        self._toolset = schedule_toolset(tools)
        self._history = _History(check_window(window), history)

    @property
    def messages(self) -> list[ModelMessage]:
        """The history the next run continues."""
        return self._history.messages

    async def __call__(self, turn: TurnInput) -> str:
        reply = await self.turn(turn)
        assert reply.on_recorded is not None
        reply.on_recorded()
        return reply.text

    async def turn(self, turn: TurnInput) -> TurnReply:
        """Run the agent on ``turn``; its messages join the history when the
        reply's ``on_recorded`` is called (the host does, once the turn's
        batch is appended), so a failed or unrecorded turn leaves none."""
        result = await self._agent.run(
            turn.text, message_history=self._history.messages, toolsets=[self._toolset]
        )
        new = result.new_messages()
        data = b'{"input":%d,"messages":%s}' % (turn.n, ModelMessagesTypeAdapter.dump_json(new))
        return TurnReply(result.output, [(MESSAGES, data)], lambda: self._history.extend(new))


def chat_model(
    model: str, tools: ToolCaller, *, instructions: str | None = None
) -> PydanticAITurns:
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
    in the session log. :func:`pydantic_ai_host` builds one for a session.

    With ``keep_conversation`` (the default) each run's new messages are
    recorded in the batch of its turn's record (a ``pydantic-ai/messages``
    event), and the history starts from what the log holds
    (:func:`logged_messages`): the conversation goes on across restarts. A
    run is given the newest whole turns, at most ``window`` messages (None:
    all). ``history`` given replaces what the log holds (the runs' messages
    are still recorded). Without ``keep_conversation`` nothing is read or
    written and the history lives in this process only.
    """

    def __init__(
        self,
        log: SessionLog,
        agent: Agent[None, str],
        tools: ToolCaller,
        clock: Clock | None = None,
        *,
        history: Sequence[ModelMessage] | None = None,
        keep_conversation: bool = True,
        window: int | None = DEFAULT_WINDOW,
        on_reply: Callable[[TurnInput, str], None] | None = None,
        turn_timeout_s: float | None = TURN_TIMEOUT_S,
    ) -> None:
        if history is None:
            history = logged_messages(log, window=window) if keep_conversation else ()
        self._turns = PydanticAITurns(agent, tools, history=history, window=window)
        model: Model = self._turns.turn if keep_conversation else self._turns
        super().__init__(log, model, clock, on_reply=on_reply, turn_timeout_s=turn_timeout_s)

    @property
    def messages(self) -> list[ModelMessage]:
        """The history the next run continues."""
        return self._turns.messages


def pydantic_ai_host(
    session: Session,
    agent: Agent[None, str],
    *,
    history: Sequence[ModelMessage] | None = None,
    keep_conversation: bool = True,
    window: int | None = DEFAULT_WINDOW,
    on_reply: Callable[[TurnInput, str], None] | None = None,
    turn_timeout_s: float | None = TURN_TIMEOUT_S,
) -> PydanticAIHost:
    """The host of ``session`` running ``agent`` for each turn, with the
    session's tools: ``open_session(store, id, host=lambda session:
    pydantic_ai_host(session, agent))``. The conversation is kept in the
    session's log (see :class:`PydanticAIHost`)."""
    return PydanticAIHost(
        session.log,
        agent,
        session.tools,
        session.clock,
        history=history,
        keep_conversation=keep_conversation,
        window=window,
        on_reply=on_reply,
        turn_timeout_s=turn_timeout_s,
    )
