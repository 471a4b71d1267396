"""tickler's edges: the schedule tools for any framework, delivery targets,
the PostgreSQL worker, the MCP server, the read model over every
store (:func:`open_read_model`), and the stores
(:mod:`tickler.adapters.stores`). The framework adapters are modules of
their own, each behind its extra: :mod:`tickler.adapters.pydantic_ai`,
:mod:`tickler.adapters.openai_agents`, :mod:`tickler.adapters.langchain`.
Names that need an extra are imported on first use.

The modules live in rooms by job, each a subpackage: ``stores`` (the
session stores), ``read`` (the read model), ``dashboard`` (``tickler ui``),
``delivery`` (delivery targets), ``mcp`` (the MCP server), ``worker``
(``tickler worker``), ``frameworks`` (what the framework adapters share),
``operate`` (operator actions), ``offline`` (the offline model) and ``cli``
(the command line). A few helpers several rooms share stay beside them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from tickler._lazy import lazy_exports
from tickler.adapters.delivery._callable import DeliverCallable
from tickler.adapters.delivery._hosts import (
    DeliverCommand,
    DeliverUrl,
    DeliveryFailed,
    DeliveryHost,
)
from tickler.adapters.delivery._target import delivery_target
from tickler.adapters.frameworks._tools import (
    ScheduleTool,
    ToolCaller,
    decode_arguments,
    schedule_tools,
)
from tickler.adapters.read._model import (
    DeliveryView,
    ReadModel,
    ReminderView,
    SourceError,
    open_read_model,
)

if TYPE_CHECKING:
    from tickler.adapters.mcp._server import create_server, serve_stdio
    from tickler.adapters.worker._worker import Worker, WorkerStats, run_worker

_LAZY: Final = {
    "Worker": "tickler.adapters.worker._worker",
    "WorkerStats": "tickler.adapters.worker._worker",
    "run_worker": "tickler.adapters.worker._worker",
    "create_server": "tickler.adapters.mcp._server",
    "serve_stdio": "tickler.adapters.mcp._server",
}

__all__ = [
    "DeliverCallable",
    "DeliverCommand",
    "DeliverUrl",
    "DeliveryFailed",
    "DeliveryHost",
    "DeliveryView",
    "ReadModel",
    "ReminderView",
    "ScheduleTool",
    "SourceError",
    "ToolCaller",
    "Worker",
    "WorkerStats",
    "create_server",
    "decode_arguments",
    "delivery_target",
    "open_read_model",
    "run_worker",
    "schedule_tools",
    "serve_stdio",
]

if not TYPE_CHECKING:
    __getattr__, __dir__ = lazy_exports(globals(), _LAZY)
