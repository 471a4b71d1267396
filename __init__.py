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

import importlib
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any, Final

DISTRIBUTION: Final = "tickler-agents"

try:
    __version__ = version(DISTRIBUTION)
except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
    __version__ = "0.0.0"

if TYPE_CHECKING:
    from tickler.adapters.delivery import DeliverCommand, DeliverUrl
    from tickler.adapters.delivery_callable import DeliverCallable
    from tickler.adapters.langchain import langchain_tools
    from tickler.adapters.openai_agents import openai_agents_host, openai_agents_tools
    from tickler.adapters.pydantic_ai import pydantic_ai_host, schedule_toolset
    from tickler.adapters.stores.jsonl import JsonlStore
    from tickler.adapters.stores.memory import MemoryStore
    from tickler.adapters.stores.postgres import PostgresStore
    from tickler.adapters.stores.sqlite import SqliteStore
    from tickler.adapters.tools import schedule_tools
    from tickler.shell.clock import SystemClock, VirtualClock
    from tickler.shell.host import FollowUp
    from tickler.shell.ports import SessionLocked, StoreError
    from tickler.shell.reference_host import ReferenceHost, TurnInput
    from tickler.shell.runtime import ScheduleRuntime

# Each public name and the module that defines it, imported on first access
# (PEP 562): a framework adapter needs its extra only when it is used.
_HOMES: Final = {
    "ScheduleRuntime": "tickler.shell.runtime",
    "ReferenceHost": "tickler.shell.reference_host",
    "TurnInput": "tickler.shell.reference_host",
    "SystemClock": "tickler.shell.clock",
    "VirtualClock": "tickler.shell.clock",
    "SessionLocked": "tickler.shell.ports",
    "StoreError": "tickler.shell.ports",
    "JsonlStore": "tickler.adapters.stores.jsonl",
    "SqliteStore": "tickler.adapters.stores.sqlite",
    "MemoryStore": "tickler.adapters.stores.memory",
    "PostgresStore": "tickler.adapters.stores.postgres",
    "FollowUp": "tickler.shell.host",
    "schedule_tools": "tickler.adapters.tools",
    "pydantic_ai_host": "tickler.adapters.pydantic_ai",
    "schedule_toolset": "tickler.adapters.pydantic_ai",
    "openai_agents_host": "tickler.adapters.openai_agents",
    "openai_agents_tools": "tickler.adapters.openai_agents",
    "langchain_tools": "tickler.adapters.langchain",
    "DeliverCommand": "tickler.adapters.delivery",
    "DeliverUrl": "tickler.adapters.delivery",
    "DeliverCallable": "tickler.adapters.delivery_callable",
}

__all__ = [
    "DeliverCallable",
    "DeliverCommand",
    "DeliverUrl",
    "FollowUp",
    "JsonlStore",
    "MemoryStore",
    "PostgresStore",
    "ReferenceHost",
    "ScheduleRuntime",
    "SessionLocked",
    "SqliteStore",
    "StoreError",
    "SystemClock",
    "TurnInput",
    "VirtualClock",
    "__version__",
    "langchain_tools",
    "openai_agents_host",
    "openai_agents_tools",
    "pydantic_ai_host",
    "schedule_tools",
    "schedule_toolset",
]


if not TYPE_CHECKING:  # type checkers see the imports above, and no catch-all

    def __getattr__(name: str) -> Any:
        home = _HOMES.get(name)
        if home is None:
            raise AttributeError(f"module 'tickler' has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        globals()[name] = value  # later lookups skip this function
        return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
