"""LangChain tools for durable reminders, in a small tool-calling loop over
a JSONL session log.

Runs offline: LangChain's ``GenericFakeChatModel`` stands in for the LLM.
Set ``TICKLER_MODEL`` (e.g. ``openai:gpt-4.1-mini``, with ``langchain`` and
the provider package installed) to use a real chat model.

    python examples/langchain_tools.py
"""

# An example prints its conversation.

from __future__ import annotations

import asyncio
import importlib
import os
import tempfile
from typing import cast

from langchain_core.language_models import LanguageModelInput
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import Runnable
from langchain_core.tools import StructuredTool

from tickler import JsonlStore, ReferenceHost, Session, TurnInput, langchain_tools, open_session

CREATE = {"name": "schedule_create", "args": {"prompt": "stretch", "after_seconds": 2}, "id": "c1"}
SCRIPT = [AIMessage("", tool_calls=[CREATE]), AIMessage("Reminder set."), AIMessage("Stretch!")]


def chat_model(tools: list[StructuredTool]) -> Runnable[LanguageModelInput, AIMessage]:
    if name := os.environ.get("TICKLER_MODEL"):  # pip install langchain <provider package>
        init_chat_model = importlib.import_module("langchain.chat_models").init_chat_model
        return cast(
            "Runnable[LanguageModelInput, AIMessage]", init_chat_model(name).bind_tools(tools)
        )
    return GenericFakeChatModel(messages=iter(SCRIPT))


async def main(directory: str) -> None:
    history: list[BaseMessage] = []
    reminded = asyncio.Event()

    def agent(session: Session) -> ReferenceHost:
        """The session's agent: a chat model with the session's tools, one
        turn at a time (a reminder that falls due is a turn too)."""
        tools = {tool.name: tool for tool in langchain_tools(session.tools)}
        model = chat_model(list(tools.values()))

        async def turn(item: TurnInput) -> str:
            """One turn: call the model, run its tool calls, until it answers."""
            history.append(HumanMessage(item.text))
            while True:
                answer = await model.ainvoke(history)
                history.append(answer)
                if not answer.tool_calls:
                    reply = str(answer.text)
                    print(f"[{item.source} turn]\n{item.text}\n--> {reply}\n")
                    if item.source == "reminder":
                        reminded.set()
                    return reply
                for call in answer.tool_calls:
                    history.append(await tools[call["name"]].ainvoke(call))
                    print(f"{call['name']}({call['args']}) -> {history[-1].content}")

        return ReferenceHost(session.log, turn, session.clock)

    store = JsonlStore(directory)
    try:
        async with open_session(store, "langchain-demo", host=agent) as session:
            await session.host.send("Remind me to stretch in 2 seconds.")
            await asyncio.wait_for(reminded.wait(), timeout=30)
    finally:
        await store.close()


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as scratch:
        asyncio.run(main(os.environ.get("TICKLER_DIR", scratch)))
