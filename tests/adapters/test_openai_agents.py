"""The OpenAI Agents SDK adapter, driven by the real ``Runner`` on a
scripted ``Model`` (no network, tracing off): the tools hand the model the
runtime's exact text, and a due reminder arrives later as the next user
message of the same conversation, exactly once."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any, Final

from agents import Agent, RunConfig, Runner, SQLiteSession, Usage
from agents import Session as SdkSession
from agents.agent_output import AgentOutputSchemaBase
from agents.handoffs import Handoff
from agents.items import (
    ModelResponse,
    TResponseInputItem,
    TResponseOutputItem,
    TResponseStreamEvent,
)
from agents.memory import SessionSettings
from agents.model_settings import ModelSettings
from agents.models.interface import Model, ModelTracing
from agents.testing import assistant_message, function_call
from agents.tool import Tool
from openai.types.responses.response_prompt_param import ResponsePromptParam

from tickler.adapters.openai_agents import (
    CLEAR,
    ITEMS,
    POP,
    LogSession,
    OpenAIAgentsHost,
    openai_agents_host,
    openai_agents_tools,
)
from tickler.adapters.stores._memory import MemoryLog, MemoryStore
from tickler.core import SessionHeader, tool_catalog
from tickler.shell._session import Session

from .framework_support import (
    INVALID_SELECTOR,
    SECOND,
    STRETCH_CREATED,
    STRETCH_REMINDER,
    T0,
    MakeHost,
    OnReply,
    async_test,
    live_session,
)

ASK = "Remind me to stretch in 10 seconds."
NO_TRACING = RunConfig(tracing_disabled=True)


class ScriptedModel(Model):
    """Answers each call with the next scripted output and records the input
    and the tools the model was offered."""

    def __init__(self, *outputs: list[TResponseOutputItem]) -> None:
        self._outputs = list(outputs)
        self.inputs: list[list[TResponseInputItem]] = []
        self.tools: list[list[Tool]] = []

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: ModelSettings,
        tools: list[Tool],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff],
        tracing: ModelTracing,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: ResponsePromptParam | None,
    ) -> ModelResponse:
        self.inputs.append(
            [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        )
        self.tools.append(list(tools))
        return ModelResponse(output=self._outputs.pop(0), usage=Usage(), response_id=None)

    def stream_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],
        model_settings: ModelSettings,
        tools: list[Tool],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff],
        tracing: ModelTracing,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: ResponsePromptParam | None,
    ) -> AsyncIterator[TResponseStreamEvent]:
        raise NotImplementedError("these tests do not stream")

    @property
    def done(self) -> bool:
        return not self._outputs


def call(tool: str, args: dict[str, Any] | str, call_id: str) -> TResponseOutputItem:
    return function_call(tool, args, call_id=call_id)


def outputs_of(items: list[TResponseInputItem]) -> list[tuple[Any, Any]]:
    return [
        (item.get("call_id"), item.get("output"))
        for item in items
        if item.get("type") == "function_call_output"
    ]


def host(model: ScriptedModel, **options: Any) -> MakeHost[OpenAIAgentsHost]:
    def make(session: Session, on_reply: OnReply) -> OpenAIAgentsHost:
        agent: Agent[Any] = Agent(name="assistant", model=model)
        return openai_agents_host(
            session, agent, run_config=NO_TRACING, on_reply=on_reply, **options
        )

    return make


def test_tools_carry_the_catalog_schemas_strict_where_that_keeps_their_meaning() -> None:
    tools = openai_agents_tools(_NoRuntime(), profile="reference")
    catalog = {spec["name"]: spec for spec in tool_catalog(profile="reference")}
    assert [(t.name, t.description) for t in tools] == [
        (name, spec["description"]) for name, spec in catalog.items()
    ]
    create, listing, delete = tools
    assert not create.strict_json_schema
    assert create.params_json_schema == catalog["schedule_create"]["input_schema"]
    assert listing.strict_json_schema
    assert listing.params_json_schema == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
        "required": [],
    }
    assert delete.strict_json_schema
    assert delete.params_json_schema == {
        "type": "object",
        "properties": {"id": {"type": "string", "description": "Exact session-local schedule id."}},
        "required": ["id"],
        "additionalProperties": False,
    }


def test_the_extended_tools_are_all_strict_with_the_catalog_schemas_unchanged() -> None:
    """The extended schemas are written for strict mode (every property
    required, nullable when optional; closed objects): each tool keeps its
    catalog schema and is strict."""
    tools = openai_agents_tools(_NoRuntime())  # the default profile: extended
    catalog = tool_catalog(profile="extended")
    assert [(t.name, t.description, t.params_json_schema) for t in tools] == [
        (spec["name"], spec["description"], spec["input_schema"]) for spec in catalog
    ]
    assert all(t.strict_json_schema for t in tools)


@async_test
async def test_a_reminder_arrives_once_as_the_next_user_message_of_the_conversation() -> None:
    model = ScriptedModel(
        [call("schedule_create", {"prompt": "stretch", "after_seconds": 10}, "call-1")],
        [assistant_message("Reminder set.")],
        [assistant_message("Time to stretch!")],
    )
    async with live_session(host(model)) as s:
        await s.host.send(ASK)
        await s.turns(1)
        assert [t.name for t in model.tools[0]] == [
            spec["name"] for spec in tool_catalog(profile="reference")
        ]
        assert outputs_of(model.inputs[1]) == [("call-1", STRETCH_CREATED)]
        assert [reply for _, reply in s.replies] == ["Reminder set."]

        await s.advance(9 * SECOND)  # not due yet
        await s.turns(1)
        assert len(model.inputs) == 2

        await s.advance(2 * SECOND)
        await s.turns(2)
        conversation = model.inputs[2]
        assert conversation[-1] == {"role": "user", "content": STRETCH_REMINDER}
        assert conversation[0] == {"role": "user", "content": ASK}
        assert outputs_of(conversation) == [("call-1", STRETCH_CREATED)]
        assert len(conversation) == 5
        assert [reply for _, reply in s.replies] == ["Reminder set.", "Time to stretch!"]

        await s.advance(30 * SECOND)  # nothing more is due
        await s.turns(2)
        assert model.done
        assert len(model.inputs) == 3
        assert [(t.text, t.key) for t in s.reminder_inputs()] == [
            (STRETCH_REMINDER, "schedule-1@2026-08-05T12:00:10.000Z")
        ]
        assert s.runtime.state.active == ()
        assert [i for i in s.host.items if i.get("role") == "user"] == [
            {"role": "user", "content": ASK},
            {"role": "user", "content": STRETCH_REMINDER},
        ]


@async_test
async def test_an_sdk_session_carries_the_conversation_instead() -> None:
    model = ScriptedModel(
        [call("schedule_create", {"prompt": "stretch", "after_seconds": 10}, "call-1")],
        [assistant_message("Reminder set.")],
        [assistant_message("Time to stretch!")],
    )
    session = SQLiteSession("s1")  # in memory
    try:
        async with live_session(host(model, sdk_session=session)) as s:
            await s.host.send(ASK)
            await s.turns(1)
            await s.advance(11 * SECOND)
            await s.turns(2)
            conversation = model.inputs[2]
            assert conversation[0] == {"role": "user", "content": ASK}
            assert conversation[-1] == {"role": "user", "content": STRETCH_REMINDER}
            assert outputs_of(conversation) == [("call-1", STRETCH_CREATED)]
            assert s.host.items == []
            stored = await session.get_items()
            assert stored[-2] == {"role": "user", "content": STRETCH_REMINDER}
    finally:
        session.close()


@async_test
async def test_closed_errors_and_unparsable_arguments_reach_the_model_as_tool_output() -> None:
    model = ScriptedModel(
        [
            call(
                "schedule_create",
                {"prompt": "x", "after_seconds": 10, "every_seconds": 600},
                "call-1",
            ),
            call("schedule_create", "not json", "call-2"),
            call("schedule_delete", {"id": "schedule-9"}, "call-3"),
            call("schedule_list", "", "call-4"),
        ],
        [assistant_message("Nothing scheduled.")],
    )
    async with live_session(host(model)) as s:
        await s.host.send("try things")
        await s.turns(1)
        assert outputs_of(model.inputs[1]) == [
            ("call-1", INVALID_SELECTOR),
            ("call-2", INVALID_SELECTOR),
            ("call-3", '{"id":"schedule-9","deleted":false,"code":"schedule_not_found"}'),
            ("call-4", "[]"),
        ]
        assert s.replies[0][1] == "Nothing scheduled."
        assert model.done


class _NoRuntime:
    async def call_tool(self, name: str, args: object) -> str:
        raise AssertionError(f"unexpected call {name}({args!r})")


# -- the conversation in the session log ---------------------------------------


def new_log() -> MemoryLog:
    return MemoryLog(SessionHeader(id="s1", created_at=T0))


class FlushCounter:
    """Counts the flushes of a log, and what was appended before each."""

    def __init__(self, log: MemoryLog) -> None:
        self.log = log
        self.flushed: list[int] = []
        original = log.flush

        async def flush() -> None:
            await original()
            self.flushed.append(log.length)

        log.flush = flush  # type: ignore[method-assign]


def logged(log: MemoryLog) -> list[tuple[str, object]]:
    return [(e.type, json.loads(bytes(e.data))) for e in log.events()]


USER_A: Final[TResponseInputItem] = {"role": "user", "content": "My name is Ada."}
REPLY_A: Final[TResponseInputItem] = {"role": "assistant", "content": "Hello, Ada."}
USER_B: Final[TResponseInputItem] = {"role": "user", "content": "What is my name?"}


@async_test
async def test_log_session_is_an_sdk_session_whose_changes_are_flushed_events() -> None:
    log = new_log()
    flushes = FlushCounter(log)
    session = LogSession(log)
    assert isinstance(session, SdkSession)
    assert session.session_id == "s1"
    await session.add_items([USER_A, REPLY_A])
    await session.add_items([USER_B])
    assert flushes.flushed == [1, 2]  # each change durable before it returns
    assert await session.get_items() == [USER_A, REPLY_A, USER_B]
    assert await session.get_items(limit=2) == [REPLY_A, USER_B]
    assert await session.get_items(limit=0) == []
    assert await session.pop_item() == USER_B
    assert await session.get_items() == [USER_A, REPLY_A]
    before = logged(log)
    assert before == [
        (ITEMS, {"items": [USER_A, REPLY_A]}),
        (ITEMS, {"items": [USER_B]}),
        (POP, {}),
    ]
    assert await LogSession(log).get_items() == [USER_A, REPLY_A]  # read back the same
    await session.clear_session()
    assert await session.get_items() == []
    assert await session.pop_item() is None
    assert logged(log) == [*before, (CLEAR, {})]  # appended; nothing rewritten
    assert flushes.flushed[-1] == 4
    assert await LogSession(log).get_items() == []
    limited = LogSession(log, session_settings=SessionSettings(limit=1))
    await limited.add_items([USER_A, REPLY_A])
    assert await limited.get_items() == [REPLY_A]


@async_test
async def test_runner_run_on_a_log_session_goes_on_in_a_new_one() -> None:
    model = ScriptedModel([assistant_message("Hello, Ada.")], [assistant_message("Ada.")])
    agent: Agent[Any] = Agent(name="assistant", model=model)
    log = new_log()
    await Runner.run(agent, "My name is Ada.", session=LogSession(log), run_config=NO_TRACING)
    await Runner.run(agent, "What is my name?", session=LogSession(log), run_config=NO_TRACING)
    assert [i.get("content") for i in model.inputs[1] if i.get("role") == "user"] == [
        "My name is Ada.",
        "What is my name?",
    ]


@async_test
async def test_the_host_keeps_the_conversation_in_the_log_across_a_reopen() -> None:
    store = MemoryStore()
    first = ScriptedModel([call("schedule_list", {}, "call-1")], [assistant_message("Hello, Ada.")])
    async with live_session(host(first), store=store) as s:
        await s.host.send("My name is Ada.")
        await s.turns(1)
        types = [e.type for e in s.log.events()]
        assert types.count(ITEMS) == 1  # one event for the turn, in its batch
        assert types[types.index(ITEMS) + 1] == "tickler/turn"
        assert isinstance(s.host.sdk_session, LogSession)
    again = ScriptedModel([assistant_message("You are Ada.")])
    async with live_session(host(again), store=store) as s:
        await s.host.send("What is my name?")
        await s.turns(1)
        shown = again.inputs[0]
        assert [i.get("content") for i in shown if i.get("role") == "user"] == [
            "My name is Ada.",
            "What is my name?",
        ]
        assert outputs_of(shown) == [("call-1", "[]")]
    await store.close()


class FailingOnce(ScriptedModel):
    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        if not self.inputs:
            self.inputs.append([])
            raise RuntimeError("the provider is down")
        return await super().get_response(*args, **kwargs)


@async_test
async def test_a_failed_run_leaves_no_items_behind() -> None:
    # The SDK adds a run's input to its session before calling the model:
    # a failed attempt's must not be seen by the next, nor logged.
    model = FailingOnce([assistant_message("Hello, Ada.")])
    async with live_session(host(model)) as s:
        await s.host.send("My name is Ada.")
        await s.advance(5 * SECOND)  # past the retry pause
        await s.turns(1)
        assert model.inputs[1] == [{"role": "user", "content": "My name is Ada."}]
        items = [json.loads(bytes(e.data)) for e in s.log.events() if e.type == ITEMS]
        assert [i.get("role") for i in items[0]["items"]] == ["user", "assistant"]
        assert len(items) == 1


@async_test
async def test_history_given_wins_and_keep_conversation_can_be_turned_off() -> None:
    store = MemoryStore()
    async with live_session(host(ScriptedModel([assistant_message("Hi.")])), store=store) as s:
        await s.host.send("My name is Ada.")
        await s.turns(1)
    bob = ScriptedModel([assistant_message("Bob.")])
    async with live_session(
        host(bob, history=[{"role": "user", "content": "I am Bob."}]), store=store
    ) as s:
        await s.host.send("What is my name?")
        await s.turns(1)
        assert [i.get("content") for i in bob.inputs[0] if i.get("role") == "user"] == [
            "I am Bob.",
            "What is my name?",
        ]
    off = ScriptedModel([assistant_message("?")], [assistant_message("!")])
    async with live_session(host(off, keep_conversation=False), store=store) as s:
        assert s.host.sdk_session is None
        logged_before = [e.type for e in s.log.events()].count(ITEMS)
        await s.host.send("Who am I?")
        await s.host.send("And now?")
        await s.turns(2)
        assert off.inputs[0] == [{"role": "user", "content": "Who am I?"}]  # nothing restored
        assert [i.get("content") for i in off.inputs[1] if i.get("role") == "user"] == [
            "Who am I?",
            "And now?",
        ]  # in this process it goes on
        assert [e.type for e in s.log.events()].count(ITEMS) == logged_before
    await store.close()
