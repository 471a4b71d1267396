"""LangChain tools for durable reminders, in a chat model's tool-calling loop
(``langchain_host``) over a JSONL session log, which also keeps the
conversation: a second run with the same ``TICKLER_DIR`` goes on from it.

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

from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from tickler import JsonlStore, Session, TurnInput, langchain_host, open_session
from tickler.adapters.langchain import LangChainHost

CREATE = {"name": "schedule_create", "args": {"prompt": "stretch", "after_seconds": 2}, "id": "c1"}
SCRIPT = [AIMessage("", tool_calls=[CREATE]), AIMessage("Reminder set."), AIMessage("Stretch!")]


def chat_model() -> BaseChatModel:
    if name := os.environ.get("TICKLER_MODEL"):  # pip install langchain <provider package>
        init_chat_model = importlib.import_module("langchain.chat_models").init_chat_model
        return cast("BaseChatModel", init_chat_model(name))
    return GenericFakeChatModel(messages=iter(SCRIPT))


async def main(directory: str) -> None:
    reminded = asyncio.Event()

    def show(turn: TurnInput, reply: str) -> None:  # once the turn is durable in the log
        print(f"[{turn.source} turn]\n{turn.text}\n--> {reply}\n")
        if turn.source == "reminder":
            reminded.set()

    def agent(session: Session) -> LangChainHost:
        """The session's agent: the chat model bound to the session's tools,
        one turn at a time (a reminder that falls due is a turn too)."""
        return langchain_host(session, chat_model(), on_reply=show)

    store = JsonlStore(directory)
    try:
        async with open_session(store, "langchain-demo", host=agent) as session:
            await session.host.send("Remind me to stretch in 2 seconds.")
            await asyncio.wait_for(reminded.wait(), timeout=30)
            kept = ", ".join(message.type for message in session.host.messages)
            print(f"the conversation, kept in the log with the turns: {kept}")
    finally:
        await store.close()


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as scratch:
        asyncio.run(main(os.environ.get("TICKLER_DIR", scratch)))
