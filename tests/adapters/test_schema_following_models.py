"""Models that know nothing but the extended tool schemas get no error:
each framework's schema-following model creates, lists, updates and
deletes a reminder through our integration of that framework.

- PydanticAI: its own ``TestModel``, which builds every call from the tool
  schema alone (every field it allows; the first ``anyOf`` member at its
  default seed). Before ``when``, its first ``schedule_create`` got
  ``invalid_selector``: it filled all four flat selectors.
- LangChain and the OpenAI Agents SDK ship no model that builds calls from
  a schema, so a fake chat model of each, bound to the tools by the
  framework, fills the schema the framework hands it with
  :mod:`schema_filler` (``TestModel``'s rules, checked against it below)
  and copies a reminder's id from an earlier answer, as a model does.

The update uses seed 24: TestModel fills every member by its seed (the
first ``anyOf`` member at seed 0, the second at seed 1, ...), and only a
seed that leaves ``when`` (five choices), ``until`` (four) and ``count``
(three) null makes a change TestModel's strings can carry: its ``at``,
``until`` and ``cron`` are single letters, which no rule accepts, and a
new ``when`` beside its ``snooze_seconds`` (filled at every even seed, as
``until`` is null only at seeds divisible by four) is refused as two
schedules. Seed 24 is the smallest such seed: it renames and snoozes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Final

import pytest
from agents import Agent, RunConfig
from agents.testing import ModelCall, ModelStep, ScriptedModel, assistant_message, function_call
from agents.tool import FunctionTool
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolCall, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai.models.test import TestModel
from pydantic_ai.tools import ToolDefinition

from tickler.adapters.langchain import langchain_host
from tickler.adapters.openai_agents import openai_agents_host
from tickler.adapters.pydantic_ai import PydanticAITurns
from tickler.core import ERROR_CODES, tool_catalog
from tickler.shell._reference_host import ReferenceHost, TurnInput
from tickler.shell._session import Session

from .framework_support import T0, MakeHost, OnReply, async_test, live_session, plain_host
from .schema_filler import fill, with_copied_id

STEPS: Final = ("schedule_create", "schedule_list", "schedule_update", "schedule_delete")
SEEDS: Final = {"schedule_update": 24}  # when, until, count null: see the docstring
CATALOG: Final = {tool["name"]: tool for tool in tool_catalog(profile="extended")}


def _seed(tool: str) -> int:
    return SEEDS.get(tool, 0)


def _no_error(text: str) -> Any:
    value = json.loads(text)
    if isinstance(value, dict):
        assert value.get("code") not in ERROR_CODES, text
    return value


def _check_the_round(answers: Sequence[str], *, copied_ids: bool) -> None:
    """create, list, update, delete answered (in order), none an error."""
    created, listed, updated, deleted = (_no_error(text) for text in answers)
    assert created["id"] == "schedule-1"
    assert (created["kind"], created["prompt"], created["afterSeconds"]) == ("after", "a", 1)
    assert [reminder["id"] for reminder in listed] == ["schedule-1"]
    if copied_ids:
        assert (updated["id"], updated["prompt"]) == ("schedule-1", "y")  # seed 24's text
        assert deleted == {"id": "schedule-1", "deleted": True}
    else:  # TestModel's ids are its own strings: found nothing, not an error
        assert updated["code"] == deleted["code"] == "schedule_not_found"


# -- PydanticAI: its own TestModel -------------------------------------------------


@async_test
async def test_pydantic_ais_test_model_creates_lists_updates_and_deletes_without_error() -> None:
    async with live_session(plain_host, profile="extended") as s:
        answers = []
        for n, tool in enumerate(STEPS):
            model = TestModel(call_tools=[tool], seed=_seed(tool))
            reply = await PydanticAITurns(PydanticAgent(model), s.tools)(TurnInput(n, "user", tool))
            answers.append(json.loads(reply)[tool])  # TestModel answers its tools' returns
        _check_the_round(answers, copied_ids=False)


@async_test
async def test_pydantic_ais_test_model_calls_every_tool_at_once_without_error() -> None:
    async with live_session(plain_host, profile="extended") as s:
        reply = await PydanticAITurns(PydanticAgent(TestModel(seed=24)), s.tools)(
            TurnInput(0, "user", "hi")
        )
        answers = json.loads(reply)
        assert set(answers) == set(CATALOG)
        for text in answers.values():
            _no_error(text)


@pytest.mark.parametrize("tool", list(CATALOG))
@pytest.mark.parametrize("seed", range(6))
def test_the_filler_builds_what_test_model_builds(tool: str, seed: int) -> None:
    schema = CATALOG[tool]["input_schema"]
    built = TestModel(seed=seed).gen_tool_args(
        ToolDefinition(name=tool, parameters_json_schema=schema)
    )
    assert fill(schema, seed) == built


# -- LangChain: a chat model bound to the tools, filling their schemas --------------


class SchemaFillingChat(BaseChatModel):
    """Asked by a human message naming a tool, calls that tool with
    arguments filled from the schema ``bind_tools`` was given (in the
    OpenAI form LangChain sends providers); shown the tool's answer,
    replies with it."""

    schemas: dict[str, dict[str, Any]] = Field(default_factory=dict)

    @property
    def _llm_type(self) -> str:
        return "schema-filling"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[Any, AIMessage]:
        for tool in tools:
            function = convert_to_openai_tool(tool)["function"]
            self.schemas[function["name"]] = function["parameters"]
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        last = messages[-1]
        if isinstance(last, ToolMessage):
            return _chat_result(AIMessage(str(last.content)))
        assert isinstance(last, HumanMessage)
        tool = str(last.content)
        answers = [str(m.content) for m in messages if isinstance(m, ToolMessage)]
        args = with_copied_id(fill(self.schemas[tool], _seed(tool)), answers)
        return _chat_result(AIMessage("", tool_calls=[ToolCall(name=tool, args=args, id=tool)]))

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return self._generate(messages, stop)


def _chat_result(message: AIMessage) -> ChatResult:
    return ChatResult(generations=[ChatGeneration(message=message)])


async def _round_trip(make_host: MakeHost[ReferenceHost]) -> list[str]:
    """Each step one user turn; the replies are the tools' answers."""
    async with live_session(make_host, profile="extended", at=T0) as s:
        for n, tool in enumerate(STEPS, start=1):
            await s.host.send(tool)
            await s.turns(n)
        return [reply for _, reply in s.replies]


@async_test
async def test_a_langchain_model_filling_the_schemas_gets_no_error() -> None:
    model = SchemaFillingChat()

    def make(session: Session, on_reply: OnReply) -> ReferenceHost:
        return langchain_host(session, model, on_reply=on_reply)

    answers = await _round_trip(make)
    assert set(model.schemas) == set(CATALOG)
    _check_the_round(answers, copied_ids=True)


# -- the OpenAI Agents SDK: its ScriptedModel, answering from the tools offered ----


def _agents_step(call: ModelCall) -> Any:
    """Asked by a user message naming a tool, calls it with arguments
    filled from the schema the SDK offers (after its strict mode); shown
    the tool's output, replies with it."""
    items = call.input if isinstance(call.input, list) else [call.input]
    last = items[-1]
    if isinstance(last, dict) and last.get("type") == "function_call_output":
        return [assistant_message(str(last["output"]))]
    tool = str(last["content"] if isinstance(last, dict) else last)
    [offered] = [t for t in call.tools if isinstance(t, FunctionTool) and t.name == tool]
    assert offered.strict_json_schema
    answers = [
        str(item["output"])
        for item in items
        if isinstance(item, dict) and item.get("type") == "function_call_output"
    ]
    args = with_copied_id(fill(offered.params_json_schema, _seed(tool)), answers)
    return [function_call(tool, args, call_id=f"{tool}-{len(items)}")]


@async_test
async def test_an_openai_agents_model_filling_the_schemas_gets_no_error() -> None:
    model = ScriptedModel([ModelStep.respond(_agents_step) for _ in range(2 * len(STEPS))])

    def make(session: Session, on_reply: OnReply) -> ReferenceHost:
        agent: Agent[Any] = Agent(name="assistant", model=model)
        return openai_agents_host(
            session, agent, run_config=RunConfig(tracing_disabled=True), on_reply=on_reply
        )

    answers = await _round_trip(make)
    assert model.remaining_steps == 0
    _check_the_round(answers, copied_ids=True)
