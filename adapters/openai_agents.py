"""OpenAI Agents SDK adapter: the schedule tools as ``FunctionTool``s, and a
host whose turns are ``Runner.run``s of an ``Agent``.

Needs the extra: ``pip install 'tickler-agents[openai-agents]'``.

Running one session::

    def host(session: Session) -> OpenAIAgentsHost:
        return openai_agents_host(session, agent)  # every run gets the session's tools

    async with open_session(store, "user-42", host=host) as session:
        await session.host.send("remind me to stretch in ten minutes")

The conversation is kept in the session's own log by :class:`LogSession`,
an implementation of the SDK's ``Session`` protocol: the items a run adds
are an ``openai-agents/items`` event ``{"items": [...]}`` in the batch of
the turn's ``tickler/turn`` record, and a host built when the session
opens - in this process, a new one, or a worker's - continues from them,
after a restart or a ``kill -9`` too. ``LogSession`` also works on its
own: ``Runner.run(agent, text, session=LogSession(log))``.

Strict mode, per tool: the SDK's strict mode makes every property required
and closes every object. The extended profile's schemas are written for it
(a create's one selector is a choice of ``when``), so all its tools are
strict. In the reference profile ``schedule_list`` (no arguments) and
``schedule_delete`` (``id`` required) keep their meaning under it, so they
are strict; ``schedule_create`` is not: its v1 selectors are optional and
mutually exclusive at the top level, which strict mode cannot say, so it
keeps the catalog's schema unchanged with strict mode off.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Final, cast

from tickler.adapters._extras import missing_extra
from tickler.adapters.frameworks._conversation import DEFAULT_WINDOW, LogList, Window, check_window
from tickler.adapters.frameworks._tools import (
    ScheduleTool,
    ToolCaller,
    decode_arguments,
    schedule_tools,
)
from tickler.core import JsonSchema, Profile
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
    from agents import Agent, FunctionTool, RunConfig, Runner, RunResult, TResponseInputItem
    from agents import Session as SdkSession
    from agents.memory import SessionSettings
    from agents.run_config import DEFAULT_MAX_TURNS
    from agents.tool_context import ToolContext
except ImportError as exc:
    raise missing_extra("OpenAI Agents SDK", "openai-agents") from exc

__all__ = [
    "CLEAR",
    "DEFAULT_WINDOW",
    "ITEMS",
    "POP",
    "LogSession",
    "OpenAIAgentsHost",
    "openai_agents_host",
    "openai_agents_tools",
]

ITEMS: Final = "openai-agents/items"
"""Items added to the conversation: ``{"items": [...]}``, as the SDK gives them."""
POP: Final = "openai-agents/pop"
"""The newest item was removed (``pop_item``): ``{}``."""
CLEAR: Final = "openai-agents/clear"
"""Every item was removed (``clear_session``): ``{}``."""


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


def _starts_turn(item: object) -> bool:
    """A user message (a turn's input), not a tool call or its output."""
    return isinstance(item, dict) and item.get("role") == "user"


class LogSession:
    """The SDK's ``Session`` protocol over a tickler session log: usable on
    its own, ``Runner.run(agent, text, session=LogSession(session.log))``,
    and the conversation of every :class:`OpenAIAgentsHost` by default.

    ``add_items`` appends an ``openai-agents/items`` event, ``pop_item`` an
    ``openai-agents/pop`` event and ``clear_session`` an
    ``openai-agents/clear`` event, each flushed before it returns: the log
    is never rewritten. What the log holds is read once, when this is
    built; the conversation is then kept in memory. ``get_items()`` gives
    the newest whole turns (a turn starts at a user message), at most
    ``window`` items (None: all); ``get_items(limit)`` the newest ``limit``
    of those, as the SDK's sessions do (``session_settings.limit`` when
    ``limit`` is None). Memory holds at most twice ``window`` items, so a
    ``pop_item`` after older items were let go does not bring them back
    (the same when read back: the log's events are replayed alike).

    In a host's turn the changes are not written at once: they go into the
    batch of the turn's record, so they are durable with it or not at all.
    """

    session_settings: SessionSettings | None

    def __init__(
        self,
        log: SessionLog,
        *,
        session_id: str | None = None,
        window: int | None = DEFAULT_WINDOW,
        session_settings: SessionSettings | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.session_id = log.header.id if session_id is None else session_id
        self.session_settings = session_settings
        self._items = LogList(
            log,
            added=ITEMS,
            popped=POP,
            cleared=CLEAR,
            key="items",
            window=check_window(window),
            starts_turn=_starts_turn,
            clock=clock,
        )

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        if limit is None and self.session_settings is not None:
            limit = self.session_settings.limit
        items = cast("list[TResponseInputItem]", self._items.items)
        if limit is None or limit < 0:
            return items
        return items[-limit:] if limit else []

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        self._items.add(items)
        await self._items.flush()

    async def pop_item(self) -> TResponseInputItem | None:
        item = self._items.pop()
        await self._items.flush()
        return cast("TResponseInputItem | None", item)

    async def clear_session(self) -> None:
        self._items.clear()
        await self._items.flush()


class OpenAIAgentsHost(ReferenceHost):
    """A :class:`ReferenceHost` whose every turn (a user message or a due
    reminder) is one ``Runner.run`` of a copy of ``agent`` that also has the
    schedule tools of ``tools``, continuing the same conversation.
    :func:`openai_agents_host` builds one for a session.

    The conversation is a :class:`LogSession` over the session's log
    (``keep_conversation``, the default): a run's items are recorded in the
    batch of its turn's record, and the conversation goes on from what the
    log holds, across restarts; a run is given the newest whole turns, at
    most ``window`` items (None: all). ``history`` given replaces what the
    log holds (the runs' items are still recorded). With ``sdk_session``
    that SDK session keeps the conversation instead (an ``SQLiteSession``
    of your own); without ``keep_conversation`` this host keeps the items
    in memory only, starting from ``history``.
    """

    def __init__(
        self,
        log: SessionLog,
        agent: Agent[Any],
        tools: ToolCaller,
        clock: Clock | None = None,
        *,
        sdk_session: SdkSession | None = None,
        history: Sequence[TResponseInputItem] | None = None,
        keep_conversation: bool = True,
        window: int | None = DEFAULT_WINDOW,
        run_config: RunConfig | None = None,
        max_turns: int = DEFAULT_MAX_TURNS,
        on_reply: Callable[[TurnInput, str], None] | None = None,
        turn_timeout_s: float | None = TURN_TIMEOUT_S,
    ) -> None:
        self._agent = agent.clone(tools=[*agent.tools, *openai_agents_tools(tools)])
        self._sdk_session = sdk_session
        self._log_session: LogSession | None = None
        if sdk_session is None and keep_conversation:
            self._log_session = LogSession(log, window=window, clock=clock)
            if history is not None:
                self._log_session._items.seed(list(history))
        self._memory: Window[TResponseInputItem] = Window(window, _starts_turn, history or ())
        self._window = window
        self._run_config = run_config
        self._max_turns = max_turns
        super().__init__(
            log, self._run_turn, clock, on_reply=on_reply, turn_timeout_s=turn_timeout_s
        )

    @property
    def sdk_session(self) -> SdkSession | None:
        """The SDK session the runs use: ``sdk_session``, or the
        :class:`LogSession` over the log (None without ``keep_conversation``)."""
        return self._sdk_session if self._sdk_session is not None else self._log_session

    @property
    def items(self) -> list[TResponseInputItem]:
        """The conversation the next run continues, as input items (empty
        with an ``sdk_session`` of your own)."""
        if self._log_session is not None:
            return cast("list[TResponseInputItem]", self._log_session._items.items)
        return [] if self._sdk_session is not None else self._memory.items

    async def _run_turn(self, turn: TurnInput) -> TurnReply:
        if self._log_session is not None:
            staged = self._log_session._items
            staged.begin()
            try:
                result = await self._run(turn.text, self._log_session)
            except BaseException:
                staged.rollback()
                raise
            events, commit = staged.take()
            return TurnReply(str(result.final_output), events, commit)
        if self._sdk_session is not None:
            return TurnReply(str((await self._run(turn.text, self._sdk_session)).final_output))
        message: TResponseInputItem = {"role": "user", "content": turn.text}
        result = await self._run([*self._memory.items, message], None)
        ran = result.to_input_list()

        def keep() -> None:
            self._memory = Window(self._window, _starts_turn, ran)

        return TurnReply(str(result.final_output), (), keep)

    async def _run(
        self, text: str | list[TResponseInputItem], session: SdkSession | None
    ) -> RunResult:
        return await Runner.run(
            self._agent,
            text,
            session=session,
            run_config=self._run_config,
            max_turns=self._max_turns,
        )


def openai_agents_host(
    session: Session,
    agent: Agent[Any],
    *,
    sdk_session: SdkSession | None = None,
    history: Sequence[TResponseInputItem] | None = None,
    keep_conversation: bool = True,
    window: int | None = DEFAULT_WINDOW,
    run_config: RunConfig | None = None,
    max_turns: int = DEFAULT_MAX_TURNS,
    on_reply: Callable[[TurnInput, str], None] | None = None,
    turn_timeout_s: float | None = TURN_TIMEOUT_S,
) -> OpenAIAgentsHost:
    """The host of ``session`` running ``agent`` for each turn, with the
    session's tools: ``open_session(store, id, host=lambda session:
    openai_agents_host(session, agent))``. The conversation is kept in the
    session's log (see :class:`OpenAIAgentsHost`)."""
    return OpenAIAgentsHost(
        session.log,
        agent,
        session.tools,
        session.clock,
        sdk_session=sdk_session,
        history=history,
        keep_conversation=keep_conversation,
        window=window,
        run_config=run_config,
        max_turns=max_turns,
        on_reply=on_reply,
        turn_timeout_s=turn_timeout_s,
    )
