"""tickler's edges: the schedule tools for any framework, delivery targets,
the PostgreSQL worker, the MCP server, the read model over every
store (:func:`open_read_model`), and the stores
(:mod:`tickler.adapters.stores`). The framework adapters are modules of
their own, each behind its extra: :mod:`tickler.adapters.pydantic_ai`,
:mod:`tickler.adapters.openai_agents`, :mod:`tickler.adapters.langchain`.
Names that need an extra are imported on first use."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from tickler._lazy import lazy_exports
from tickler.adapters._delivery import DeliverCommand, DeliverUrl, DeliveryFailed, DeliveryHost
from tickler.adapters._delivery_callable import DeliverCallable
from tickler.adapters._delivery_target import delivery_target
from tickler.adapters._read_model import (
    DeliveryView,
    ReadModel,
    ReminderView,
    SourceError,
    open_read_model,
)
from tickler.adapters._tools import ScheduleTool, ToolCaller, decode_arguments, schedule_tools

if TYPE_CHECKING:
    from tickler.adapters._mcp_server import create_server, serve_stdio
    from tickler.adapters._worker import Worker, WorkerStats, run_worker

_LAZY: Final = {
    "Worker": "tickler.adapters._worker",
    "WorkerStats": "tickler.adapters._worker",
    "run_worker": "tickler.adapters._worker",
    "create_server": "tickler.adapters._mcp_server",
    "serve_stdio": "tickler.adapters._mcp_server",
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
