"""Logs holding the framework hosts' conversation events (PydanticAI's
messages, the OpenAI Agents SDK session's items, pops and clears,
LangChain's messages and clears), large and non-ASCII ones included, are
written by every file store, read back whole, and still checked,
inspected and read as before: ``tickler check`` calls them valid, ``tickler
inspect`` and the read model see the reminders and deliveries around them."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, RunConfig, Usage
from agents.items import ModelResponse as SdkResponse
from agents.models.interface import Model
from agents.testing import assistant_message, function_call
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tickler.adapters.langchain import LangChainHost, langchain_host
from tickler.adapters.openai_agents import LogSession, OpenAIAgentsHost, openai_agents_host
from tickler.adapters.pydantic_ai import PydanticAIHost, pydantic_ai_host
from tickler.adapters.read._model import open_read_model
from tickler.adapters.stores._jsonl import JsonlStore
from tickler.adapters.stores._sqlite import SqliteStore
from tickler.shell._clock import VirtualClock
from tickler.shell._ports import SessionStore
from tickler.shell._reference_host import ReferenceHost, TurnInput
from tickler.shell._session import Session, open_session
from tickler.shell._timers import TimerHeap

TICKLER = [sys.executable, "-m", "tickler.adapters.cli"]
T0 = 1_785_931_200_000  # 2026-08-05T12:00:00.000Z
BIG = 'Grüße, 日本語 \U0001f600 "quoted" \\ and\nlines ' * 20_000  # ~0.9 MB of text
ASK = "Remind me to stretch in 10 seconds, and to drink water in an hour. " + BIG
SOON = {"prompt": "stretch", "after_seconds": 10}
LATER = {"prompt": "drink water", "after_seconds": 3600}
EVENTS = {
    "pydantic-ai": {"pydantic-ai/messages"},
    "openai-agents": {"openai-agents/items", "openai-agents/pop", "openai-agents/clear"},
    "langchain": {"langchain/messages", "langchain/clear"},
}


def pydantic_ai(session: Session, on_reply: Callable[[TurnInput, str], None]) -> PydanticAIHost:
    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            calls = [
                ToolCallPart("schedule_create", SOON, "c1"),
                ToolCallPart("schedule_create", LATER, "c2"),
            ]
            return ModelResponse(calls)
        return ModelResponse([TextPart("Done. " + BIG)])

    return pydantic_ai_host(session, PydanticAgent(FunctionModel(model)), on_reply=on_reply)


class _Scripted(Model):
    def __init__(self) -> None:
        self.calls = 0

    async def get_response(self, *args: Any, **kwargs: Any) -> SdkResponse:
        self.calls += 1
        if self.calls == 1:
            output = [
                function_call("schedule_create", SOON, call_id="c1"),
                function_call("schedule_create", LATER, call_id="c2"),
            ]
        else:
            output = [assistant_message("Done. " + BIG)]
        return SdkResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


def openai_agents(session: Session, on_reply: Callable[[TurnInput, str], None]) -> OpenAIAgentsHost:
    agent: Agent[Any] = Agent(name="assistant", model=_Scripted())
    config = RunConfig(tracing_disabled=True)
    return openai_agents_host(session, agent, run_config=config, on_reply=on_reply)


def langchain(session: Session, on_reply: Callable[[TurnInput, str], None]) -> LangChainHost:
    calls = [
        {"name": "schedule_create", "args": SOON, "id": "c1"},
        {"name": "schedule_create", "args": LATER, "id": "c2"},
    ]
    script = [AIMessage("", tool_calls=calls)] + [AIMessage("Done. " + BIG)] * 3
    return langchain_host(session, GenericFakeChatModel(messages=iter(script)), on_reply=on_reply)


MakeHost = Callable[[Session, Callable[[TurnInput, str], None]], ReferenceHost]
HOSTS: dict[str, MakeHost] = {
    "pydantic-ai": pydantic_ai,
    "openai-agents": openai_agents,
    "langchain": langchain,
}


async def converse(store: SessionStore) -> None:
    """Per framework, a session: a turn with a large message that sets two
    reminders, the first one's delivery, then a pop and a clear where the
    framework has them, and a last turn after."""
    clock = VirtualClock(T0)
    timers = TimerHeap(clock)
    try:
        for name, make in HOSTS.items():
            await one_session(store, name, make, clock, timers)
    finally:
        await timers.close()


async def one_session(
    store: SessionStore, name: str, make: MakeHost, clock: VirtualClock, timers: TimerHeap
) -> None:
    replies: list[str] = []

    def record(turn: TurnInput, reply: str) -> None:
        replies.append(reply)

    async def turns(count: int) -> None:
        for _ in range(600):  # virtual steps: a bound on progress, never a timing
            if len(replies) >= count:
                return
            await clock.advance(100)
        raise AssertionError(f"{name}: {len(replies)} turns of {count}")

    async with open_session(
        store, name, host=lambda s: make(s, record), clock=clock, timers=timers
    ) as session:
        host: ReferenceHost = session.host
        await host.send(ASK)
        await turns(1)
        await clock.advance(11_000)
        await turns(2)
        if isinstance(host, OpenAIAgentsHost):
            assert isinstance(host.sdk_session, LogSession)
            assert await host.sdk_session.pop_item() is not None
            await host.sdk_session.clear_session()
        elif isinstance(host, LangChainHost):
            assert host.chat_history is not None
            await host.chat_history.aclear()
        await host.send("And now? " + BIG)
        await turns(3)


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TICKLER, *args], capture_output=True, text=True, timeout=120, check=False
    )


@pytest.mark.parametrize("kind", ["jsonl", "sqlite"])
def test_check_inspect_and_the_read_model_read_conversation_logs(kind: str, tmp_path: Path) -> None:
    source = tmp_path / ("store" if kind == "jsonl" else "store.db")

    async def write() -> None:
        store: SessionStore = JsonlStore(source) if kind == "jsonl" else SqliteStore(source)
        try:
            await converse(store)
        finally:
            await store.close()

    asyncio.run(write())

    checked = run("check", str(source))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("valid") == 3, checked.stdout

    inspected = run("inspect", str(source), "--json", "--tz", "UTC")
    assert inspected.returncode == 0, inspected.stderr
    reports = {s["report"]["session"]: s for s in json.loads(inspected.stdout)["sessions"]}
    assert sorted(reports) == sorted(HOSTS)
    for report in reports.values():
        assert report["status"] == "valid"
        assert [r["prompt"] for r in report["report"]["active"]] == ["drink water"]
        [delivery] = report["report"]["deliveries"]
        assert delivery["delivered"]
        assert delivery["turn_done"]

    async def read() -> list[tuple[str, str, str]]:
        async with open_read_model(str(source)) as model:
            views = await model.reminders(now_ms=T0, sort="session")
            deliveries = await model.deliveries()
        assert {(d.session_id, d.status) for d in deliveries} == {(n, "delivered") for n in HOSTS}
        return [(v.session_id, v.prompt, v.outbox) for v in views]

    assert asyncio.run(read()) == [(name, "drink water", "idle") for name in sorted(HOSTS)]

    async def types() -> dict[str, set[str]]:
        store: SessionStore = JsonlStore(source) if kind == "jsonl" else SqliteStore(source)
        try:
            found = {}
            for name in HOSTS:
                log = await store.open(name, created_at=T0)
                found[name] = {e.type for e in log.events()}
                await log.close()
            return found
        finally:
            await store.close()

    for name, seen in asyncio.run(types()).items():
        assert EVENTS[name] <= seen, (name, seen)
