"""The PydanticAI adapter, driven by a real ``Agent`` run on PydanticAI's
own ``FunctionModel`` (scripted responses, no network): the toolset hands
the model the session's exact text, and a due reminder arrives later as the
next user message of the same conversation, exactly once."""

from __future__ import annotations

import json

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tickler.adapters.pydantic_ai import (
    MESSAGES,
    PydanticAIHost,
    PydanticAITurns,
    chat_model,
    logged_messages,
    pydantic_ai_host,
    schedule_toolset,
)
from tickler.adapters.stores._memory import MemoryLog, MemoryStore
from tickler.core import SessionHeader, tool_catalog
from tickler.shell._ports import NewEvent
from tickler.shell._reference_host import TurnInput
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

ASK = "Remind me to stretch in 10 seconds."


class Script:
    """A ``FunctionModel`` function: answers each model call with the next
    response and records what the model was shown."""

    def __init__(self, *responses: ModelResponse) -> None:
        self._responses = list(responses)
        self.calls: list[tuple[list[ModelMessage], AgentInfo]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.calls.append((list(messages), info))
        return self._responses.pop(0)

    @property
    def done(self) -> bool:
        return not self._responses


def call(tool: str, args: dict[str, object], call_id: str) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart(tool, args, tool_call_id=call_id)])


def say(text: str) -> ModelResponse:
    return ModelResponse(parts=[TextPart(text)])


def user_prompt(message: ModelMessage) -> object:
    """The content of a request that is exactly one user prompt."""
    assert isinstance(message, ModelRequest)
    [part] = message.parts
    assert isinstance(part, UserPromptPart)
    return part.content


def user_prompts(messages: list[ModelMessage]) -> list[object]:
    """Every user prompt of a conversation, in order."""
    return [
        part.content
        for message in messages
        if isinstance(message, ModelRequest)
        for part in message.parts
        if isinstance(part, UserPromptPart)
    ]


def tool_returns(message: ModelMessage) -> list[tuple[str, str | None, object]]:
    assert isinstance(message, ModelRequest)
    return [
        (part.tool_name, part.tool_call_id, part.content)
        for part in message.parts
        if isinstance(part, ToolReturnPart)
    ]


def host(script: Script) -> MakeHost[PydanticAIHost]:
    def make(session: Session, on_reply: OnReply) -> PydanticAIHost:
        return pydantic_ai_host(session, Agent(FunctionModel(script)), on_reply=on_reply)

    return make


@async_test
async def test_the_model_is_offered_the_catalog_tools_unchanged() -> None:
    script = Script(say("Hello."))
    agent = Agent(FunctionModel(script))
    toolset = schedule_toolset(_NoRuntime())
    result = await agent.run("hi", toolsets=[toolset])
    assert result.output == "Hello."
    offered = script.calls[0][1].function_tools
    assert [(t.name, t.description, t.parameters_json_schema) for t in offered] == [
        (spec["name"], spec["description"], spec["input_schema"]) for spec in tool_catalog()
    ]


@async_test
async def test_a_reminder_arrives_once_as_the_next_user_message_of_the_conversation() -> None:
    script = Script(
        call("schedule_create", {"prompt": "stretch", "after_seconds": 10}, "call-1"),
        say("Reminder set."),
        say("Time to stretch!"),
    )
    async with live_session(host(script)) as s:
        await s.host.send(ASK)
        await s.turns(1)
        # The tool ran in the agent's run; the model saw the runtime's exact text.
        assert tool_returns(script.calls[1][0][-1]) == [
            ("schedule_create", "call-1", STRETCH_CREATED)
        ]
        assert [reply for _, reply in s.replies] == ["Reminder set."]

        await s.advance(9 * SECOND)  # not due yet
        await s.turns(1)
        assert len(script.calls) == 2

        await s.advance(2 * SECOND)
        await s.turns(2)
        messages = script.calls[2][0]
        assert user_prompt(messages[-1]) == STRETCH_REMINDER
        # The same conversation: the first exchange comes before it.
        assert user_prompt(messages[0]) == ASK
        assert len(messages) == 5
        assert [reply for _, reply in s.replies] == ["Reminder set.", "Time to stretch!"]

        await s.advance(30 * SECOND)  # nothing more is due
        await s.turns(2)
        assert script.done
        assert len(script.calls) == 3
        assert [(t.text, t.key) for t in s.reminder_inputs()] == [
            (STRETCH_REMINDER, "schedule-1@2026-08-05T12:00:10.000Z")
        ]
        assert s.runtime.state.active == ()
        assert user_prompts(s.host.messages) == [ASK, STRETCH_REMINDER]


@async_test
async def test_closed_errors_reach_the_model_as_tool_returns_not_retries() -> None:
    script = Script(
        ModelResponse(
            parts=[
                ToolCallPart(
                    "schedule_create",
                    {"prompt": "x", "after_seconds": 10, "every_seconds": 600},
                    tool_call_id="call-1",
                ),
                ToolCallPart(
                    "schedule_create", {"prompt": "x", "after_seconds": 5, "bogus": 1}, "call-2"
                ),
                ToolCallPart("schedule_delete", {"id": "schedule-9"}, tool_call_id="call-3"),
                ToolCallPart("schedule_list", {}, tool_call_id="call-4"),
            ]
        ),
        say("Nothing scheduled."),
    )
    async with live_session(host(script)) as s:
        await s.host.send("try things")
        await s.turns(1)
        assert tool_returns(script.calls[1][0][-1]) == [
            ("schedule_create", "call-1", INVALID_SELECTOR),
            ("schedule_create", "call-2", INVALID_SELECTOR),
            (
                "schedule_delete",
                "call-3",
                '{"id":"schedule-9","deleted":false,"code":"schedule_not_found"}',
            ),
            ("schedule_list", "call-4", "[]"),
        ]
        assert s.replies[0][1] == "Nothing scheduled."
        assert script.done


@async_test
async def test_chat_model_runs_a_named_model_with_the_tools_and_keeps_the_conversation() -> None:
    # "test" names PydanticAI's own TestModel: it calls every tool once with
    # arguments generated from the schemas, then answers their returns as JSON.
    async with live_session(plain_host) as s:
        turns = chat_model("test", s.tools)
        assert isinstance(turns, PydanticAITurns)
        reply = await turns(TurnInput(0, "user", "hi"))
        assert json.loads(reply) == {
            "schedule_create": INVALID_SELECTOR,
            "schedule_list": "[]",
            "schedule_delete": '{"id":"a","deleted":false,"code":"schedule_not_found"}',
        }
        await turns(TurnInput(1, "reminder", STRETCH_REMINDER))
        assert user_prompts(turns.messages) == ["hi", STRETCH_REMINDER]


class _NoRuntime:
    async def call_tool(self, name: str, args: object) -> str:
        raise AssertionError(f"unexpected call {name}({args!r})")


@async_test
async def test_test_model_builds_calls_from_the_extended_schemas() -> None:
    async with live_session(plain_host, profile="extended") as s:
        reply = await chat_model("test", s.tools)(TurnInput(0, "user", "hi"))
        answers = json.loads(reply)
        # PydanticAI's TestModel builds one call per tool from the schemas
        # alone (the first try sent only a prompt): each gets an
        # answer, a success or a closed error, never an exception.
        assert set(answers) == {spec["name"] for spec in tool_catalog(profile="extended")}
        for text in answers.values():
            value = json.loads(text)
            assert isinstance(value, (dict, list)), text


# -- the conversation in the session log ---------------------------------------


def log_types(s: Live[PydanticAIHost]) -> list[str]:
    return [event.type for event in s.log.events()]


@async_test
async def test_the_conversation_is_kept_in_the_log_and_goes_on_after_a_reopen() -> None:
    store = MemoryStore()
    first = Script(say("Nice to meet you, Ada."))
    async with live_session(host(first), store=store) as s:
        await s.host.send("My name is Ada.")
        await s.turns(1)
        types = log_types(s)
        # The run's messages, in the batch of the turn's record (stamped together).
        at = types.index(MESSAGES)
        assert types[at + 1] == "tickler/turn"
        events = list(s.log.events())
        assert events[at].time == events[at + 1].time
        logged = json.loads(bytes(events[at].data))
        assert logged["input"] == 0
        assert ModelMessagesTypeAdapter.validate_python(logged["messages"]) == s.host.messages
    again = Script(say("You are Ada."))
    async with live_session(host(again), store=store) as s:
        assert user_prompts(s.host.messages) == ["My name is Ada."]  # before any turn
        await s.host.send("What is my name?")
        await s.turns(1)
        shown = again.calls[0][0]
        assert user_prompts(shown) == ["My name is Ada.", "What is my name?"]
        assert isinstance(shown[1], ModelResponse)
        assert shown[1].parts == [TextPart("Nice to meet you, Ada.")]
    await store.close()


def turns_script() -> Script:
    """Turn "one" with a tool call (4 messages), then "two", "three", "four"."""
    return Script(
        call("schedule_list", {}, "call-1"),
        say("Nothing yet."),
        say("Two."),
        say("Three."),
        say("Four."),
    )


def windowed(script: Script, window: int | None) -> MakeHost[PydanticAIHost]:
    def make(session: Session, on_reply: OnReply) -> PydanticAIHost:
        agent = Agent(FunctionModel(script), system_prompt="Be brief.")
        return pydantic_ai_host(session, agent, on_reply=on_reply, window=window)

    return make


@async_test
async def test_the_window_cuts_at_a_turn_start_and_keeps_the_system_prompt() -> None:
    store = MemoryStore()
    script = turns_script()
    async with live_session(windowed(script, 5), store=store) as s:
        for n, text in enumerate(("one", "two", "three"), 1):
            await s.host.send(text)
            await s.turns(n)
        # Turn "one" (4 messages) and "two" (2) do not fit in 5: "three" is
        # given "two" only, never a tool return without its call.
        shown = script.calls[3][0]
        assert user_prompts(shown) == ["two", "three"]
        head = shown[0]
        assert isinstance(head, ModelRequest)
        assert [type(p) for p in head.parts] == [SystemPromptPart, UserPromptPart]
        assert [p.content for p in head.parts] == ["Be brief.", "two"]  # type: ignore[union-attr]
        assert not any(isinstance(p, ToolReturnPart) for m in shown for p in m.parts)
        live = ModelMessagesTypeAdapter.dump_json(s.host.messages)
        assert user_prompts(s.host.messages) == ["two", "three"]
    async with live_session(windowed(Script(), 5), store=store) as s:
        assert ModelMessagesTypeAdapter.dump_json(s.host.messages) == live  # read back the same
    async with live_session(windowed(Script(), None), store=store) as s:
        assert user_prompts(s.host.messages) == ["one", "two", "three"]
        assert len(s.host.messages) == 8
    async with live_session(windowed(Script(), 1), store=store) as s:
        assert s.host.messages == []  # no whole turn fits
    await store.close()


@async_test
async def test_history_given_wins_over_the_log() -> None:
    store = MemoryStore()
    async with live_session(host(Script(say("Hello, Ada."))), store=store) as s:
        await s.host.send("My name is Ada.")
        await s.turns(1)
    bob: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart("I am Bob.")]), say("Hi, Bob.")]
    script = Script(say("You are Bob."))

    def make(session: Session, on_reply: OnReply) -> PydanticAIHost:
        agent = Agent(FunctionModel(script))
        return pydantic_ai_host(session, agent, history=bob, on_reply=on_reply)

    async with live_session(make, store=store) as s:
        await s.host.send("What is my name?")
        await s.turns(1)
        assert user_prompts(script.calls[0][0]) == ["I am Bob.", "What is my name?"]
        assert log_types(s).count(MESSAGES) == 2  # its run is recorded still
    await store.close()


@async_test
async def test_without_keep_conversation_nothing_is_logged_or_restored() -> None:
    store = MemoryStore()
    script = Script(say("Hello, Ada."), say("You are Ada."))

    def make(session: Session, on_reply: OnReply) -> PydanticAIHost:
        agent = Agent(FunctionModel(script))
        return pydantic_ai_host(session, agent, keep_conversation=False, on_reply=on_reply)

    async with live_session(make, store=store) as s:
        await s.host.send("My name is Ada.")
        await s.host.send("What is my name?")
        await s.turns(2)
        # In this process the conversation goes on, as before.
        assert user_prompts(script.calls[1][0]) == ["My name is Ada.", "What is my name?"]
        assert MESSAGES not in log_types(s)
    async with live_session(make, store=store) as s:
        assert s.host.messages == []
    await store.close()


def test_a_malformed_messages_record_names_its_event() -> None:
    log = MemoryLog(SessionHeader(id="s1", created_at=1))
    log.append([NewEvent(MESSAGES, b'{"input":0,"messages":[{"kind":"nonsense"}]}', 1)])
    with pytest.raises(ValueError, match="session log event 0: malformed pydantic-ai/messages"):
        logged_messages(log)
