"""A framework host's turn whose tool call reaches a stopped runtime: the
tool raises ``SessionClosed`` through the framework (PydanticAI, OpenAI
Agents SDK), so the model never reads an error text as the tool's answer
and the turn is recorded as cut, not answered; its input runs again when
the session is next opened. (``open_session`` drains the turns before it
stops the runtime; this is the runtime stopped under a turn regardless.)"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from agents import Agent
from agents.testing import assistant_message
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai.models.function import FunctionModel

from tickler.adapters.openai_agents import openai_agents_host
from tickler.adapters.pydantic_ai import pydantic_ai_host
from tickler.shell._reference_host import ReferenceHost
from tickler.shell._session import Session

from . import test_openai_agents as oa
from . import test_pydantic_ai as pa
from .framework_support import Live, OnReply, async_test, live_session

STRETCH: dict[str, object] = {"prompt": "stretch", "after_seconds": 10}


def logged(s: Live[Any]) -> list[tuple[str, Any]]:
    return [(e.type, json.loads(bytes(e.data))) for e in s.log.events()]


async def cut_under_the_turn(s: Live[Any]) -> None:
    await s.runtime.dispose()  # the runtime stops before the turn's tool call
    await s.host.send(oa.ASK)
    await asyncio.wait_for(s.host.when_idle(), 10)
    assert logged(s)[1:] == [
        ("tickler/turn-start", {"input": 0}),
        ("tickler/turn-cut", {"input": 0, "attempt": 1, "reason": "session-closed"}),
    ]
    assert s.replies == []
    assert s.host.pending_turns == 1


@async_test
async def test_a_pydantic_ai_turn_is_cut_when_its_tool_call_finds_the_session_closed() -> None:
    script = pa.Script(pa.call("schedule_create", STRETCH, "call-1"), pa.say("Reminder set."))

    def make(session: Session, on_reply: OnReply) -> ReferenceHost:
        return pydantic_ai_host(session, PydanticAgent(FunctionModel(script)), on_reply=on_reply)

    async with live_session(make) as s:
        await cut_under_the_turn(s)
        assert not script.done  # the model was not asked again with an answer


@async_test
async def test_an_openai_agents_turn_is_cut_when_its_tool_call_finds_the_session_closed() -> None:
    model = oa.ScriptedModel(
        [oa.call("schedule_create", STRETCH, "call-1")], [assistant_message("Reminder set.")]
    )

    def make(session: Session, on_reply: OnReply) -> ReferenceHost:
        agent: Agent[Any] = Agent(name="assistant", model=model)
        return openai_agents_host(session, agent, run_config=oa.NO_TRACING, on_reply=on_reply)

    async with live_session(make) as s:
        await cut_under_the_turn(s)
        assert not model.done  # the model was not asked again with an answer
