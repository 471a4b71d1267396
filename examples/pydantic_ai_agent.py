"""A PydanticAI agent with durable reminders, kept in a JSONL session log.

Runs offline: PydanticAI's ``FunctionModel`` stands in for the LLM. Set
``TICKLER_MODEL`` to a PydanticAI model name (e.g. ``openai:gpt-4.1-mini``,
with that provider installed and its API key set) to use a real one, and
``TICKLER_DIR`` to keep the session files somewhere other than a temp dir.

    python examples/pydantic_ai_agent.py
"""

# An example prints its conversation.

from __future__ import annotations

import asyncio
import json
import os
import tempfile

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tickler import JsonlStore, TurnInput, open_session, pydantic_ai_host


def offline(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Stands in for an LLM: sets the reminder, then reports what comes back."""
    latest = messages[-1].parts[-1]
    text = str(getattr(latest, "content", ""))
    if latest.part_kind == "tool-return":
        return ModelResponse([TextPart(f"Reminder set: {text}")])
    if text.startswith("[SCHEDULE REMINDER]"):
        prompt = json.loads(text.rpartition("reminder_prompt_json: ")[2])
        return ModelResponse([TextPart(f"Reminder: {prompt}")])
    create = {"prompt": "stretch", "after_seconds": 2}
    return ModelResponse([ToolCallPart("schedule_create", create)])


async def main(directory: str) -> None:
    agent = Agent(os.environ.get("TICKLER_MODEL") or FunctionModel(offline))
    reminded = asyncio.Event()

    def show(turn: TurnInput, reply: str) -> None:
        print(f"[{turn.source} turn]\n{turn.text}\n--> {reply}\n")
        if turn.source == "reminder":
            reminded.set()

    store = JsonlStore(directory)  # one append-only JSONL file per session
    try:
        async with open_session(
            store, "pydantic-ai-demo", host=lambda s: pydantic_ai_host(s, agent, on_reply=show)
        ) as session:
            await session.host.send("Remind me to stretch in 2 seconds.")
            await asyncio.wait_for(reminded.wait(), timeout=30)
            events = session.log.length
    finally:
        await store.close()
    print(f"{events} events in the session log in {directory}")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as scratch:
        asyncio.run(main(os.environ.get("TICKLER_DIR", scratch)))
