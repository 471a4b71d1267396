"""``tickler chat``: an interactive terminal chat with durable reminders.

With ``TICKLER_MODEL`` set (e.g. ``openai:gpt-4o-mini`` and the provider's
key) the agent is a real PydanticAI agent with the four tools; without
it, the offline rule-based model answers. Reminders arrive as turns while
you chat, and survive quitting: they are in the session's log. Times are
shown in UTC and in this machine's zone.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from zoneinfo import ZoneInfo

from tickler.adapters._times import local_zone
from tickler.adapters.cli._session import live_session, open_store
from tickler.adapters.offline._model import OfflineModel
from tickler.core import DEFAULT_PROFILE, Profile
from tickler.shell import Model, SessionTools, TurnInput

EXIT_WORDS = {"exit", "quit", ":q"}


def default_store() -> str:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return str(Path(base) / "tickler")


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _model_for(model_name: str | None, zone: ZoneInfo) -> Callable[[SessionTools], Model]:
    def build(tools: SessionTools) -> Model:
        inner: Callable[[TurnInput], Awaitable[str]]
        if model_name:
            from tickler.adapters.pydantic_ai import chat_model

            instructions = (
                f"The user's time zone is {zone.key}. The schedule tools give times in UTC: "
                f"say them in {zone.key} as well."
            )
            inner = chat_model(model_name, tools, instructions=instructions)
        else:
            inner = OfflineModel(tools.call_tool, _now_ms, zone=zone)

        async def model(turn: TurnInput) -> str:
            if turn.source == "reminder":
                print("\n[reminder arrived as a turn]", flush=True)
            reply = await inner(turn)
            print(f"assistant> {reply}\nyou> ", end="", flush=True)
            return reply

        return model

    return build


async def chat(
    store_dir: str,
    session_id: str,
    model_name: str | None,
    zone: ZoneInfo | None = None,
    *,
    profile: Profile = DEFAULT_PROFILE,
) -> None:
    """Chat until stdin ends or an exit word; times in UTC and in ``zone``
    (default: this machine's zone); the tools of ``profile``."""
    zone = local_zone() if zone is None else zone
    store = open_store(store_dir)
    kind = (
        f"model {model_name}" if model_name else "the offline model (set TICKLER_MODEL for an LLM)"
    )
    print(f"tickler chat: session {session_id!r} in {store_dir}, {kind}.")
    print(f"Times are shown in UTC and in {zone.key} (this machine's zone; set TZ to change it).")
    print('Try "remind me in 10 seconds to stretch". Type exit to leave.')
    async with live_session(
        store, session_id, _model_for(model_name, zone), profile=profile
    ) as live:
        print("you> ", end="", flush=True)
        while True:
            line = await asyncio.to_thread(sys.stdin.readline)
            if not line or line.strip().lower() in EXIT_WORDS:
                break
            if line.strip():
                await live.host.send(line.strip())
            else:
                print("you> ", end="", flush=True)
    await store.close()
    print("\nbye: your reminders are kept in the session log.")
