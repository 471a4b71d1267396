"""A child process for the conversation tests (run as a script, not collected).

conversation_child.py FRAMEWORK DIR tell     the user says their name and asks for a
                                             reminder in 10 minutes; print "ready" once
                                             that turn is durable, then wait to be killed
conversation_child.py FRAMEWORK DIR torn     the same, but kill -9 itself after the turn's
                                             batch is appended, before it is flushed
conversation_child.py FRAMEWORK DIR remind   an hour later: the reminder is overdue; print
                                             one JSON line, what the model saw on each call
                                             and the replies, once the reminder's turn ends

FRAMEWORK is ``pydantic-ai``, ``openai-agents`` or ``langchain``: the host
is that framework's (``pydantic_ai_host``, ``openai_agents_host``,
``langchain_host``) on a JSONL store in DIR, its model that framework's own
kind of test model, answering from what it is shown: it creates the
reminder when asked, and on the reminder's turn greets the user by the name
it finds in the conversation, if any. Time is a virtual clock (nothing here
waits on the wall clock): ``tell`` at T0, ``remind`` at T0 + 1 h.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final

from tickler.adapters.stores._jsonl import JsonlStore
from tickler.core import SessionEvent, SessionHeader
from tickler.shell._clock import VirtualClock
from tickler.shell._ports import NewEvent, SessionLog, Snapshot
from tickler.shell._reference_host import ReferenceHost, TurnInput
from tickler.shell._session import Session, open_log_session

SESSION: Final = "conversation"
T0: Final = 1_785_931_200_000  # 2026-08-05T12:00:00.000Z
HOUR: Final = 3_600_000
TELL: Final = "My name is Ada. Remind me to stretch in 10 minutes."
CREATE: Final = {"prompt": "stretch", "after_seconds": 600}
NAME: Final = re.compile(r"My name is (\w+)")
TURN_EVENTS: Final = ("pydantic-ai/messages", "openai-agents/items", "langchain/messages")

Seen = dict[str, Any]  # what the model was shown on one call
OnReply = Callable[[TurnInput, str], None]


def greeting(users: Sequence[str]) -> str:
    """The reminder turn's answer: it uses the name only if the conversation
    the model was given holds it."""
    names = [m.group(1) for text in users if (m := NAME.search(text))]
    return f"Time to stretch, {names[-1]}!" if names else "Time to stretch, whoever you are!"


def decide(users: Sequence[str], last: str) -> str | None:
    """What the model does: ``None`` to call ``schedule_create``, else its text.
    ``last`` is the kind of the newest input: ``user`` or ``tool``."""
    if last == "tool":
        return "Reminder set."
    if "[SCHEDULE REMINDER]" in users[-1]:
        return greeting(users)
    return None


# -- PydanticAI: FunctionModel ------------------------------------------------


def pydantic_ai_host(seen: list[Seen]) -> Callable[[Session, OnReply], ReferenceHost]:
    from pydantic_ai import Agent
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from tickler.adapters.pydantic_ai import pydantic_ai_host

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        users = [
            str(part.content)
            for message in messages
            if isinstance(message, ModelRequest)
            for part in message.parts
            if isinstance(part, UserPromptPart)
        ]
        seen.append({"users": users, "size": len(messages)})
        last = messages[-1].parts[-1]
        text = decide(users, "tool" if isinstance(last, ToolReturnPart) else "user")
        if text is None:
            return ModelResponse([ToolCallPart("schedule_create", CREATE, tool_call_id="c1")])
        return ModelResponse([TextPart(text)])

    agent = Agent(FunctionModel(model))
    return lambda session, on_reply: pydantic_ai_host(session, agent, on_reply=on_reply)


# -- OpenAI Agents SDK: a Model of the SDK's own interface ---------------------


def openai_agents_host(seen: list[Seen]) -> Callable[[Session, OnReply], ReferenceHost]:
    from agents import Agent, RunConfig, Usage
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.testing import assistant_message, function_call

    from tickler.adapters.openai_agents import openai_agents_host

    class Reader(Model):
        async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
            given = kwargs.get("input", args[1] if len(args) > 1 else None)
            items = [{"role": "user", "content": given}] if isinstance(given, str) else given
            assert isinstance(items, list)
            users = [str(i["content"]) for i in items if i.get("role") == "user"]
            seen.append({"users": users, "size": len(items)})
            last = "tool" if items[-1].get("type") == "function_call_output" else "user"
            text = decide(users, last)
            output = (
                function_call("schedule_create", CREATE, call_id="c1")
                if text is None
                else assistant_message(text)
            )
            return ModelResponse(output=[output], usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:
            raise NotImplementedError("not streamed")

    agent: Agent[Any] = Agent(name="assistant", model=Reader())
    config = RunConfig(tracing_disabled=True)
    return lambda session, on_reply: openai_agents_host(
        session, agent, run_config=config, on_reply=on_reply
    )


# -- LangChain: a fake chat model ----------------------------------------------


def langchain_host(seen: list[Seen]) -> Callable[[Session, OnReply], ReferenceHost]:
    from langchain_core.callbacks import CallbackManagerForLLMRun
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    from tickler.adapters.langchain import langchain_host

    class Reader(GenericFakeChatModel):
        """LangChain's fake chat model, answering from its input."""

        def _generate(
            self,
            messages: list[BaseMessage],
            stop: list[str] | None = None,
            run_manager: CallbackManagerForLLMRun | None = None,
            **kwargs: Any,
        ) -> ChatResult:
            users = [str(m.content) for m in messages if isinstance(m, HumanMessage)]
            seen.append({"users": users, "size": len(messages)})
            last = "tool" if isinstance(messages[-1], ToolMessage) else "user"
            text = decide(users, last)
            if text is None:
                call = {"name": "schedule_create", "args": CREATE, "id": "c1"}
                answer = AIMessage("", tool_calls=[call])
            else:
                answer = AIMessage(text)
            return ChatResult(generations=[ChatGeneration(message=answer)])

    model = Reader(messages=iter(()))
    return lambda session, on_reply: langchain_host(session, model, on_reply=on_reply)


HOSTS: Final = {
    "pydantic-ai": pydantic_ai_host,
    "openai-agents": openai_agents_host,
    "langchain": langchain_host,
}


class DieBeforeFlush:
    """Delegates to the store's log; kill -9 at the flush that would make a
    turn's batch (its messages and record) durable."""

    def __init__(self, inner: SessionLog) -> None:
        self._inner = inner
        self._armed = False

    @property
    def header(self) -> SessionHeader:
        return self._inner.header

    @property
    def length(self) -> int:
        return self._inner.length

    def events(self, start: int = 0) -> Iterator[SessionEvent]:
        return self._inner.events(start)

    def append(self, batch: Sequence[NewEvent]) -> tuple[SessionEvent, ...]:
        added = self._inner.append(batch)
        self._armed = self._armed or any(e.type in TURN_EVENTS for e in batch)
        return added

    async def flush(self) -> None:
        if self._armed:
            sys.stdout.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        await self._inner.flush()

    def load_snapshot(self) -> Snapshot | None:
        return self._inner.load_snapshot()

    async def save_snapshot(self, snapshot: Snapshot) -> None:
        await self._inner.save_snapshot(snapshot)

    async def close(self) -> None:
        await self._inner.close()


async def main(framework: str, directory: str, phase: str) -> None:
    seen: list[Seen] = []
    replies: list[tuple[str, str]] = []
    make_host = HOSTS[framework](seen)
    clock = VirtualClock(T0 + (HOUR if phase == "remind" else 0))
    turned = asyncio.Event()

    def on_reply(turn: TurnInput, reply: str) -> None:  # the turn is durable
        replies.append((turn.source, reply))
        if turn.source == ("reminder" if phase == "remind" else "user"):
            turned.set()

    store = JsonlStore(directory)
    log: SessionLog = await store.open(SESSION, created_at=clock.now_ms())
    if phase == "torn":
        log = DieBeforeFlush(log)
    try:
        async with open_log_session(
            log, host=lambda session: make_host(session, on_reply), clock=clock
        ) as session:
            if phase != "remind":
                await session.host.send(TELL)
            await asyncio.wait_for(turned.wait(), timeout=60)  # a hang guard only
            if phase != "remind":
                print("ready", flush=True)
                await asyncio.Event().wait()  # until killed
            print(json.dumps({"seen": seen, "replies": replies}), flush=True)
    finally:
        await store.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3]))
