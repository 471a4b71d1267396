"""The LangChain adapter, invoked through LangChain's real tool machinery
(``StructuredTool.ainvoke`` with a ``ToolCall``): every answer is the
runtime's exact text in a ``ToolMessage``, and a reminder created through
the tool comes back as exactly one follow-up turn."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    ToolCall,
    ToolMessage,
    messages_to_dict,
)
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import StructuredTool
from pydantic import Field

from tickler.adapters.langchain import (
    CLEAR,
    MESSAGES,
    LangChainHost,
    LogChatMessageHistory,
    langchain_host,
    langchain_tools,
)
from tickler.adapters.stores._memory import MemoryLog, MemoryStore
from tickler.core import SessionHeader, tool_catalog
from tickler.shell._reference_host import TURN_FAILED, ReferenceHost
from tickler.shell._session import Session

from .framework_support import (
    INVALID_SELECTOR,
    SECOND,
    STRETCH_CREATED,
    STRETCH_REMINDER,
    Live,
    MakeHost,
    OnReply,
    async_test,
    live_session,
    plain_host,
)

DELETED = '{"id":"schedule-1","deleted":true}'
NOT_FOUND = '{"id":"schedule-9","deleted":false,"code":"schedule_not_found"}'
DELETE_ID = (
    '{"code":"invalid_rule","message":'
    '"schedule_delete id must be non-empty without surrounding whitespace."}'
)
FREQUENCY = '{"code":"frequency_too_high","message":"every_seconds must be at least 300."}'
PROMPT = '{"code":"invalid_prompt","message":"prompt must be non-empty after trimming."}'
ASK = "Remind me to stretch in 10 seconds."


def tools_of(s: Live[ReferenceHost]) -> dict[str, StructuredTool]:
    return {tool.name: tool for tool in langchain_tools(s.tools)}


async def invoke(tool: StructuredTool, args: dict[str, Any], call_id: str = "call-1") -> str:
    message = await tool.ainvoke(ToolCall(name=tool.name, args=args, id=call_id, type="tool_call"))
    assert isinstance(message, ToolMessage)
    assert (message.tool_call_id, message.name, message.status) == (call_id, tool.name, "success")
    assert isinstance(message.content, str)
    return message.content


def test_tools_carry_the_catalog_names_descriptions_and_schemas() -> None:
    tools = langchain_tools(_NoRuntime())
    assert [(t.name, t.description, t.args_schema) for t in tools] == [
        (spec["name"], spec["description"], spec["input_schema"]) for spec in tool_catalog()
    ]
    assert all(t.coroutine is not None and t.func is None for t in tools)


@async_test
async def test_answers_are_the_runtime_text_for_success_and_errors() -> None:
    async with live_session(plain_host) as s:
        tools = tools_of(s)
        create, listing, delete = (
            tools[n] for n in ("schedule_create", "schedule_list", "schedule_delete")
        )
        assert await invoke(create, {"prompt": "stretch", "after_seconds": 10}) == STRETCH_CREATED
        assert await invoke(listing, {}) == f"[{STRETCH_CREATED}]"
        both = {"prompt": "x", "after_seconds": 10, "every_seconds": 600}
        assert await invoke(create, both) == INVALID_SELECTOR
        assert (
            await invoke(create, {"prompt": "x", "after_seconds": 5, "bogus": 1})
            == INVALID_SELECTOR
        )
        assert await invoke(create, {"prompt": "x", "every_seconds": 5}) == FREQUENCY
        assert await invoke(create, {"prompt": "  ", "after_seconds": 5}) == PROMPT
        assert await invoke(delete, {}) == DELETE_ID
        assert await invoke(delete, {"id": "schedule-9"}) == NOT_FOUND
        assert await invoke(delete, {"id": "schedule-1"}) == DELETED
        # Without a ToolCall the content comes back bare.
        assert await listing.ainvoke({}) == "[]"


@async_test
async def test_a_reminder_created_through_the_tool_arrives_once() -> None:
    async with live_session(plain_host) as s:
        create = tools_of(s)["schedule_create"]
        assert await invoke(create, {"prompt": "stretch", "after_seconds": 10}) == STRETCH_CREATED
        await s.advance(9 * SECOND)
        assert s.replies == []
        await s.advance(2 * SECOND)
        await s.turns(1)
        await s.advance(30 * SECOND)
        await s.turns(1)
        assert [(turn.text, reply) for turn, reply in s.replies] == [(STRETCH_REMINDER, "turn 0")]
        assert [(t.text, t.key) for t in s.reminder_inputs()] == [
            (STRETCH_REMINDER, "schedule-1@2026-08-05T12:00:10.000Z")
        ]
        assert await tools_of(s)["schedule_list"].ainvoke({}) == "[]"


def test_the_tools_are_async_only() -> None:
    [create, *_] = langchain_tools(_NoRuntime())
    with pytest.raises(NotImplementedError, match="does not support sync invocation"):
        create.invoke({"prompt": "x", "after_seconds": 1})


class _NoRuntime:
    async def call_tool(self, name: str, args: object) -> str:
        raise AssertionError(f"unexpected call {name}({args!r})")


# -- the host, and the conversation in the session log ---------------------------


class ScriptedChat(BaseChatModel):
    """A fake chat model: answers each call with the next scripted message,
    and records what it was shown and the tools it was bound to."""

    responses: list[AIMessage]
    seen: list[list[BaseMessage]] = Field(default_factory=list)
    bound: list[str] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.seen.append(list(messages))
        return ChatResult(generations=[ChatGeneration(message=self.responses.pop(0))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._generate(messages, stop)  # on the loop, not in a thread

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[Any, AIMessage]:
        self.bound.extend(tool.name for tool in tools)
        return self


def create_call(seconds: int = 10) -> AIMessage:
    args = {"prompt": "stretch", "after_seconds": seconds}
    return AIMessage("", tool_calls=[ToolCall(name="schedule_create", args=args, id="call-1")])


def chat_host(model: ScriptedChat, **options: Any) -> MakeHost[LangChainHost]:
    def make(session: Session, on_reply: OnReply) -> LangChainHost:
        return langchain_host(session, model, on_reply=on_reply, **options)

    return make


def kinds(messages: list[BaseMessage]) -> list[tuple[str, object]]:
    return [(m.type, m.content) for m in messages]


@async_test
async def test_the_host_runs_the_tool_loop_and_the_reminder_continues_the_conversation() -> None:
    model = ScriptedChat(
        responses=[create_call(), AIMessage("Reminder set."), AIMessage("Time to stretch!")]
    )
    async with live_session(chat_host(model, instructions="Be brief.")) as s:
        await s.host.send(ASK)
        await s.turns(1)
        assert model.bound == [spec["name"] for spec in tool_catalog(profile="reference")]
        assert kinds(model.seen[1])[-1] == ("tool", STRETCH_CREATED)
        await s.advance(11 * SECOND)
        await s.turns(2)
        assert kinds(model.seen[2]) == [
            ("system", "Be brief."),
            ("human", ASK),
            ("ai", ""),
            ("tool", STRETCH_CREATED),
            ("ai", "Reminder set."),
            ("human", STRETCH_REMINDER),
        ]
        assert [reply for _, reply in s.replies] == ["Reminder set.", "Time to stretch!"]
        types = [e.type for e in s.log.events()]
        assert types.count(MESSAGES) == 2
        assert all(types[i + 1] == "tickler/turn" for i, t in enumerate(types) if t == MESSAGES)


@async_test
async def test_the_conversation_goes_on_after_a_reopen() -> None:
    store = MemoryStore()
    first = ScriptedChat(responses=[create_call(), AIMessage("Hello, Ada.")])
    async with live_session(chat_host(first), store=store) as s:
        await s.host.send("My name is Ada.")
        await s.turns(1)
        live = s.host.messages
    again = ScriptedChat(responses=[AIMessage("You are Ada.")])
    async with live_session(chat_host(again), store=store) as s:
        assert s.host.messages == live
        await s.host.send("What is my name?")
        await s.turns(1)
        assert kinds(again.seen[0]) == [
            ("human", "My name is Ada."),
            ("ai", ""),
            ("tool", STRETCH_CREATED),
            ("ai", "Hello, Ada."),
            ("human", "What is my name?"),
        ]
        tool_call = again.seen[0][1]
        assert isinstance(tool_call, AIMessage)
        assert tool_call.tool_calls[0]["args"] == {"prompt": "stretch", "after_seconds": 10}
    await store.close()


@async_test
async def test_history_given_wins_and_keep_conversation_can_be_turned_off() -> None:
    store = MemoryStore()
    async with live_session(
        chat_host(ScriptedChat(responses=[AIMessage("Hi.")])), store=store
    ) as s:
        await s.host.send("My name is Ada.")
        await s.turns(1)
    bob = ScriptedChat(responses=[AIMessage("Bob.")])
    async with live_session(chat_host(bob, history=[HumanMessage("I am Bob.")]), store=store) as s:
        await s.host.send("Who am I?")
        await s.turns(1)
        assert kinds(bob.seen[0]) == [("human", "I am Bob."), ("human", "Who am I?")]
    off = ScriptedChat(responses=[AIMessage("?"), AIMessage("!")])
    async with live_session(chat_host(off, keep_conversation=False), store=store) as s:
        assert s.host.chat_history is None
        before = [e.type for e in s.log.events()].count(MESSAGES)
        await s.host.send("Who am I?")
        await s.host.send("And now?")
        await s.turns(2)
        assert kinds(off.seen[0]) == [("human", "Who am I?")]
        assert kinds(off.seen[1]) == [("human", "Who am I?"), ("ai", "?"), ("human", "And now?")]
        assert [e.type for e in s.log.events()].count(MESSAGES) == before
    await store.close()


@async_test
async def test_a_model_that_never_stops_calling_tools_fails_its_turn() -> None:
    model = ScriptedChat(responses=[create_call(), create_call()])

    def failures(s: Live[LangChainHost]) -> list[dict[str, Any]]:
        return [json.loads(bytes(e.data)) for e in s.log.events() if e.type == TURN_FAILED]

    async with live_session(chat_host(model, max_rounds=2)) as s:
        await s.host.send("loop")
        for _ in range(100):  # virtual seconds: a bound on progress, never a timing
            if failures(s):
                break
            await s.advance(SECOND)
        assert failures(s)[0]["error"] == (
            "TooManyRounds: the model still called tools after 2 calls"
        )
        assert MESSAGES not in [e.type for e in s.log.events()]


def new_log() -> MemoryLog:
    return MemoryLog(SessionHeader(id="s1", created_at=1))


@async_test
async def test_the_chat_history_appends_events_and_reads_them_back() -> None:
    log = new_log()
    flushed: list[int] = []
    original = log.flush

    async def flush() -> None:
        await original()
        flushed.append(log.length)

    log.flush = flush  # type: ignore[method-assign]
    history = LogChatMessageHistory(log)
    history.add_messages([HumanMessage("My name is Ada."), AIMessage("Hello, Ada.")])
    assert flushed == []  # the sync call appends; flushing is the caller's
    await history.aadd_messages([HumanMessage("Again."), AIMessage("Hi.")])
    assert flushed == [2]
    expected = [
        HumanMessage("My name is Ada."),
        AIMessage("Hello, Ada."),
        HumanMessage("Again."),
        AIMessage("Hi."),
    ]
    assert history.messages == expected
    assert await LogChatMessageHistory(log).aget_messages() == expected
    assert LogChatMessageHistory(log, window=3).messages == expected[2:]  # whole turns
    first = json.loads(bytes(next(iter(log.events())).data))
    assert first == {"messages": messages_to_dict(expected[:2])}  # LangChain's own form
    await history.aclear()
    assert flushed == [2, 3]
    assert history.messages == []
    assert [e.type for e in log.events()] == [MESSAGES, MESSAGES, CLEAR]
    assert LogChatMessageHistory(log).messages == []
