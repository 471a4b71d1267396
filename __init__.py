"""tickler: durable, exactly-once reminders for LLM agents.

The main entry points import from here (``from tickler import JsonlStore,
ScheduleRuntime, pydantic_ai_host``); each loads its module on first use, so
``import tickler`` needs none of the framework extras. The pure rules live
in :mod:`tickler.core`; the asyncio runtime in :mod:`tickler.shell`; stores,
agent frameworks and the CLI in :mod:`tickler.adapters`.

The distribution is ``tickler-agents`` (``pip install tickler-agents``):
``tickler`` on the package index is an unrelated project.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from tickler._lazy import lazy_exports
from tickler._version import __version__

DISTRIBUTION: Final = "tickler-agents"

if TYPE_CHECKING:
    from tickler.adapters import (
        DeliverCallable,
        DeliverCommand,
        DeliverUrl,
        delivery_target,
        schedule_tools,
    )
    from tickler.adapters.langchain import langchain_host, langchain_tools
    from tickler.adapters.openai_agents import openai_agents_host, openai_agents_tools
    from tickler.adapters.pydantic_ai import pydantic_ai_host, schedule_toolset
    from tickler.adapters.stores import JsonlStore, MemoryStore, PostgresStore, SqliteStore
    from tickler.shell import (
        Calendar,
        FollowUp,
        LocalTime,
        Phase,
        ReferenceHost,
        Reminder,
        ScheduleError,
        ScheduleRuntime,
        Session,
        SessionClosed,
        SessionLocked,
        StoreError,
        SystemClock,
        TurnInput,
        TurnReply,
        VirtualClock,
        open_session,
    )

# Each public name and the public module that defines it, imported on first
# access (PEP 562): a framework adapter needs its extra only when it is used.
_HOMES: Final = {
    **dict.fromkeys(
        (
            "Calendar",
            "FollowUp",
            "LocalTime",
            "Phase",
            "ReferenceHost",
            "Reminder",
            "ScheduleError",
            "ScheduleRuntime",
            "Session",
            "SessionClosed",
            "SessionLocked",
            "StoreError",
            "SystemClock",
            "TurnInput",
            "TurnReply",
            "VirtualClock",
            "open_session",
        ),
        "tickler.shell",
    ),
    **dict.fromkeys(
        ("JsonlStore", "MemoryStore", "PostgresStore", "SqliteStore"), "tickler.adapters.stores"
    ),
    **dict.fromkeys(
        ("DeliverCallable", "DeliverCommand", "DeliverUrl", "delivery_target", "schedule_tools"),
        "tickler.adapters",
    ),
    "pydantic_ai_host": "tickler.adapters.pydantic_ai",
    "schedule_toolset": "tickler.adapters.pydantic_ai",
    "openai_agents_host": "tickler.adapters.openai_agents",
    "openai_agents_tools": "tickler.adapters.openai_agents",
    "langchain_host": "tickler.adapters.langchain",
    "langchain_tools": "tickler.adapters.langchain",
}

__all__ = [
    "Calendar",
    "DeliverCallable",
    "DeliverCommand",
    "DeliverUrl",
    "FollowUp",
    "JsonlStore",
    "LocalTime",
    "MemoryStore",
    "Phase",
    "PostgresStore",
    "ReferenceHost",
    "Reminder",
    "ScheduleError",
    "ScheduleRuntime",
    "Session",
    "SessionClosed",
    "SessionLocked",
    "SqliteStore",
    "StoreError",
    "SystemClock",
    "TurnInput",
    "TurnReply",
    "VirtualClock",
    "__version__",
    "delivery_target",
    "langchain_host",
    "langchain_tools",
    "open_session",
    "openai_agents_host",
    "openai_agents_tools",
    "pydantic_ai_host",
    "schedule_tools",
    "schedule_toolset",
]


# Type checkers see the imports above, and no catch-all.
if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _HOMES)
