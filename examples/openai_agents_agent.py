"""An OpenAI Agents SDK agent with durable reminders, kept in a JSONL
session log.

Runs offline: the SDK's ``ScriptedModel`` stands in for the LLM. With
``OPENAI_API_KEY`` set it uses a real model (``TICKLER_MODEL``, default
``gpt-4.1-mini``); ``TICKLER_DIR`` keeps the session files.

    python examples/openai_agents_agent.py
"""

# An example prints its conversation.

from __future__ import annotations

import asyncio
import os
import tempfile

from agents import Agent, Model, RunConfig
from agents.testing import ScriptedModel, assistant_message, function_call

from tickler import JsonlStore, Session, TurnInput, open_session, openai_agents_host
from tickler.adapters.openai_agents import OpenAIAgentsHost

REAL = bool(os.environ.get("OPENAI_API_KEY"))
OFFLINE = ScriptedModel(
    [
        [function_call("schedule_create", {"prompt": "stretch", "after_seconds": 2}, call_id="c1")],
        [assistant_message("Reminder set for 2 seconds from now.")],
        [assistant_message("Reminder: stretch")],
    ]
)


async def main(directory: str) -> None:
    model: str | Model = os.environ.get("TICKLER_MODEL", "gpt-4.1-mini") if REAL else OFFLINE
    agent = Agent(name="assistant", instructions="Use the schedule tools.", model=model)
    reminded = asyncio.Event()

    def show(turn: TurnInput, reply: str) -> None:
        print(f"[{turn.source} turn]\n{turn.text}\n--> {reply}\n")
        if turn.source == "reminder":
            reminded.set()

    run_config = RunConfig(tracing_disabled=not REAL)

    def host(session: Session) -> OpenAIAgentsHost:  # each turn is a Runner.run with the tools
        return openai_agents_host(session, agent, run_config=run_config, on_reply=show)

    store = JsonlStore(directory)
    try:
        async with open_session(store, "openai-agents-demo", host=host) as session:
            await session.host.send("Remind me to stretch in 2 seconds.")
            await asyncio.wait_for(reminded.wait(), timeout=30)
            events = session.log.length
    finally:
        await store.close()
    print(f"{events} events in the session log in {directory}")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as scratch:
        asyncio.run(main(os.environ.get("TICKLER_DIR", scratch)))
