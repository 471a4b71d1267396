"""LangChain adapter: the schedule tools as ``StructuredTool``s, a chat
message history kept in the session's log, and a host whose turns are a
chat model's tool-calling loop.

Needs the extra: ``pip install 'tickler-agents[langchain]'`` (``langchain-core``
only; LangGraph's ``ToolNode`` and chat models' ``bind_tools`` take these
tools as they are).

The tools are async (``await tool.ainvoke(...)``): they answer through the
session (``langchain_tools(session.tools)``). Their ``args_schema`` is the
catalog's JSON Schema, which LangChain does not validate against, so every
call reaches the session and the content is its text verbatim, closed error
codes included (a ``ToolMessage`` with ``status="success"``: the error is
the tool's answer, not a failure of the call).

Running one session::

    def host(session: Session) -> LangChainHost:
        return langchain_host(session, chat_model)  # bound to the session's tools

    async with open_session(store, "user-42", host=host) as session:
        await session.host.send("remind me to stretch in ten minutes")

The conversation is kept in the session's own log by
:class:`LogChatMessageHistory`, a ``BaseChatMessageHistory``: the messages
of a turn are a ``langchain/messages`` event ``{"messages": [...]}`` (each
in ``message_to_dict``'s form) in the batch of the turn's ``tickler/turn``
record, and a host built when the session opens - in this process, a new
one, or a worker's - continues from them, after a restart or a ``kill -9``
too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final, cast

from tickler.adapters._extras import missing_extra
from tickler.adapters.frameworks._conversation import DEFAULT_WINDOW, LogList, Window, check_window
from tickler.adapters.frameworks._tools import ScheduleTool, ToolCaller, schedule_tools
from tickler.core import Profile
from tickler.shell import (
    TURN_TIMEOUT_S,
    Clock,
    ReferenceHost,
    Session,
    SessionLog,
    TurnInput,
    TurnReply,
)

try:
    from langchain_core.chat_history import BaseChatMessageHistory
    from langchain_core.language_models import BaseChatModel, LanguageModelInput
    from langchain_core.messages import (
        AIMessage,
        BaseMessage,
        HumanMessage,
        SystemMessage,
        ToolCall,
        ToolMessage,
        messages_from_dict,
    )
    from langchain_core.runnables import Runnable
    from langchain_core.tools import StructuredTool
except ImportError as exc:
    raise missing_extra("LangChain", "langchain") from exc

__all__ = [
    "CLEAR",
    "DEFAULT_ROUNDS",
    "DEFAULT_WINDOW",
    "MESSAGES",
    "LangChainHost",
    "LogChatMessageHistory",
    "TooManyRounds",
    "langchain_host",
    "langchain_tools",
]

MESSAGES: Final = "langchain/messages"
"""Messages added to the history: ``{"messages": [...]}``, each as
``message_to_dict`` gives it (``{"type", "data"}``), in JSON."""
CLEAR: Final = "langchain/clear"
"""The history was cleared: ``{}``."""
DEFAULT_ROUNDS: Final = 10
"""Model calls one turn may make, at most (a tool loop that never ends fails the turn)."""

ChatModel = BaseChatModel | Runnable[LanguageModelInput, BaseMessage]


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


def _starts_turn(message: object) -> bool:
    """A human message (a turn's input) in ``message_to_dict``'s form."""
    return isinstance(message, dict) and message.get("type") == "human"


def _to_dict(message: BaseMessage) -> dict[str, Any]:
    """``message_to_dict``, with the data in JSON's types (a value JSON has
    no type for, in a provider's metadata, is kept as its text)."""
    return {"type": message.type, "data": message.model_dump(mode="json", fallback=str)}


class LogChatMessageHistory(BaseChatMessageHistory):
    """A LangChain chat message history over a tickler session log, and the
    history of every :class:`LangChainHost` by default.

    ``add_messages`` appends a ``langchain/messages`` event and ``clear`` a
    ``langchain/clear`` event (the log is never rewritten): the sync
    methods append, ``flush`` (or the async ``aadd_messages``, ``aclear``)
    makes that durable. What the log holds is read once, when this is
    built; the history is then kept in memory. ``messages`` gives the
    newest whole turns (a turn starts at a human message), at most
    ``window`` messages (None: all).

    In a host's turn the messages are not written at once: they go into the
    batch of the turn's record, so they are durable with it or not at all.
    (LangChain marks ``BaseChatMessageHistory`` deprecated for its 2.0; the
    ``langchain`` extra pins ``langchain-core<2``.)
    """

    def __init__(
        self, log: SessionLog, *, window: int | None = DEFAULT_WINDOW, clock: Clock | None = None
    ) -> None:
        super().__init__()
        self._list = LogList(
            log,
            added=MESSAGES,
            popped=None,
            cleared=CLEAR,
            key="messages",
            window=check_window(window),
            starts_turn=_starts_turn,
            clock=clock,
        )
        self._built: tuple[int, list[BaseMessage]] = (-1, [])

    @property
    def messages(self) -> list[BaseMessage]:  # type: ignore[override]
        version, built = self._built
        if version != self._list.version:
            built = messages_from_dict(self._list.items)
            self._built = (self._list.version, built)
        return list(built)

    async def aget_messages(self) -> list[BaseMessage]:
        return self.messages

    def add_messages(self, messages: Sequence[BaseMessage]) -> None:
        self._list.add([_to_dict(message) for message in messages])

    async def aadd_messages(self, messages: Sequence[BaseMessage]) -> None:
        self.add_messages(messages)
        await self.flush()

    def clear(self) -> None:
        self._list.clear()

    async def aclear(self) -> None:
        self.clear()
        await self.flush()

    async def flush(self) -> None:
        """Make what was added or cleared durable (the log's barrier)."""
        await self._list.flush()


class TooManyRounds(Exception):
    """A turn's model kept calling tools past ``max_rounds`` model calls."""


def _bound(model: ChatModel, tools: list[StructuredTool]) -> Runnable[LanguageModelInput, Any]:
    """A chat model bound to ``tools``; a runnable (or a chat model that
    cannot call tools, such as LangChain's fake ones) as it is."""
    if not isinstance(model, BaseChatModel):
        return model
    try:
        return model.bind_tools(tools)
    except NotImplementedError:
        return model


class LangChainHost(ReferenceHost):
    """A :class:`ReferenceHost` whose every turn (a user message or a due
    reminder) is a tool-calling loop of a chat model bound to the schedule
    tools of ``tools``: the model is called on the conversation, its tool
    calls run, until it answers without one (at most ``max_rounds`` model
    calls). ``model`` is a chat model (bound here with ``bind_tools``) or a
    runnable already bound; ``instructions`` a system message put first in
    every call (not kept in the history). :func:`langchain_host` builds one
    for a session.

    With ``keep_conversation`` (the default) the history is a
    :class:`LogChatMessageHistory` over the session's log: a turn's
    messages are recorded in the batch of its record, and the conversation
    goes on from what the log holds, across restarts; a turn is given the
    newest whole turns, at most ``window`` messages (None: all).
    ``history`` given replaces what the log holds (the turns' messages are
    still recorded). Without ``keep_conversation`` the history lives in
    this process only, starting from ``history``.
    """

    def __init__(
        self,
        log: SessionLog,
        model: ChatModel,
        tools: ToolCaller,
        clock: Clock | None = None,
        *,
        instructions: str | None = None,
        history: Sequence[BaseMessage] | None = None,
        keep_conversation: bool = True,
        window: int | None = DEFAULT_WINDOW,
        max_rounds: int = DEFAULT_ROUNDS,
        on_reply: Callable[[TurnInput, str], None] | None = None,
        turn_timeout_s: float | None = TURN_TIMEOUT_S,
    ) -> None:
        if max_rounds < 1:
            raise ValueError("max_rounds must be at least 1")
        self._tools = {tool.name: tool for tool in langchain_tools(tools)}
        self._chat = _bound(model, list(self._tools.values()))
        self._instructions = [] if instructions is None else [SystemMessage(instructions)]
        self._max_rounds = max_rounds
        self._history: LogChatMessageHistory | None = None
        if keep_conversation:
            self._history = LogChatMessageHistory(log, window=window, clock=clock)
            if history is not None:
                self._history._list.seed([_to_dict(message) for message in history])
        self._memory: Window[BaseMessage] = Window(
            window, lambda m: isinstance(m, HumanMessage), history or ()
        )
        super().__init__(
            log, self._run_turn, clock, on_reply=on_reply, turn_timeout_s=turn_timeout_s
        )

    @property
    def chat_history(self) -> BaseChatMessageHistory | None:
        """The history over the log (None without ``keep_conversation``)."""
        return self._history

    @property
    def messages(self) -> list[BaseMessage]:
        """The conversation the next turn continues."""
        return self._memory.items if self._history is None else self._history.messages

    async def _run_turn(self, turn: TurnInput) -> TurnReply:
        new: list[BaseMessage] = [HumanMessage(turn.text)]
        prior = self.messages
        for _ in range(self._max_rounds):
            answer = await self._chat.ainvoke([*self._instructions, *prior, *new])
            if not isinstance(answer, BaseMessage):
                raise TypeError(f"the model answered {type(answer).__name__}, not a message")
            new.append(answer)
            calls = answer.tool_calls if isinstance(answer, AIMessage) else []
            if not calls:
                return self._reply(str(answer.text), new)
            for call in calls:
                new.append(await self._call(call))
        raise TooManyRounds(f"the model still called tools after {self._max_rounds} calls")

    def _reply(self, text: str, new: list[BaseMessage]) -> TurnReply:
        if self._history is None:
            return TurnReply(text, (), lambda: self._memory.extend(new))
        staged = self._history._list
        staged.begin()
        self._history.add_messages(new)
        events, commit = staged.take()
        return TurnReply(text, events, commit)

    async def _call(self, call: ToolCall) -> BaseMessage:
        tool = self._tools.get(call["name"])
        if tool is None:
            known = ", ".join(self._tools)
            return ToolMessage(
                f"no tool {call['name']!r} (the tools are {known})",
                tool_call_id=call["id"] or "",
                name=call["name"],
                status="error",
            )
        return cast("BaseMessage", await tool.ainvoke({**call, "type": "tool_call"}))


def langchain_host(
    session: Session,
    model: ChatModel,
    *,
    instructions: str | None = None,
    history: Sequence[BaseMessage] | None = None,
    keep_conversation: bool = True,
    window: int | None = DEFAULT_WINDOW,
    max_rounds: int = DEFAULT_ROUNDS,
    on_reply: Callable[[TurnInput, str], None] | None = None,
    turn_timeout_s: float | None = TURN_TIMEOUT_S,
) -> LangChainHost:
    """The host of ``session`` running ``model``'s tool loop for each turn,
    with the session's tools: ``open_session(store, id, host=lambda
    session: langchain_host(session, chat_model))``. The conversation is
    kept in the session's log (see :class:`LangChainHost`)."""
    return LangChainHost(
        session.log,
        model,
        session.tools,
        session.clock,
        instructions=instructions,
        history=history,
        keep_conversation=keep_conversation,
        window=window,
        max_rounds=max_rounds,
        on_reply=on_reply,
        turn_timeout_s=turn_timeout_s,
    )
