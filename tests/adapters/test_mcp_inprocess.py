"""The MCP server's tools, in process (the official client's in-memory
connection, a memory store, a virtual clock): for any arguments, a tool
call answers exactly what ``ScheduleRuntime.call_tool`` answers for the same
arguments on a twin session, so nothing in between validates or re-renders;
beside it, the same value as structured content (valid against the listed
output schema) and ``isError`` exactly for the closed error codes.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import jsonschema  # type: ignore[import-untyped]
from mcp import Client
from mcp.types import TextContent

from tickler.adapters.delivery._hosts import DeliverCommand
from tickler.adapters.mcp._server import create_server
from tickler.adapters.stores._memory import MemoryStore
from tickler.core import ERROR_CODES
from tickler.shell._clock import VirtualClock
from tickler.shell._runtime import ScheduleRuntime
from tickler.shell._timers import TimerHeap

NOW = 1_785_931_200_000  # 2026-08-05T12:00:00Z
LOCAL = {"date": "2026-08-06", "time": "09:00:00"}

CALLS: list[tuple[str, dict[str, Any] | None]] = [
    ("schedule_create", {"prompt": "a", "after_seconds": 90}),
    ("schedule_create", {"prompt": "b", "after_seconds": 90.0}),
    ("schedule_create", {"prompt": "c", "after_seconds": 9007199254740992}),
    ("schedule_create", {"prompt": "d", "after_seconds": True}),
    ("schedule_create", {"prompt": "e", "after_seconds": None}),
    ("schedule_create", {"prompt": "f", "after_seconds": [1]}),
    ("schedule_create", {"prompt": "g", "every_seconds": 300}),
    ("schedule_create", {"prompt": "h", "at": "2026-08-05T14:00:00+02:00"}),
    ("schedule_create", {"prompt": "i", "at": "2026-08-05T11:00:00Z"}),
    ("schedule_create", {"prompt": "j", "at": {"date": "2026-08-06", "time": "09:00:00"}}),
    ("schedule_create", {"prompt": "k", "at": {**LOCAL, "time_zone": "Mars/Base"}}),
    ("schedule_create", {"prompt": "l", "at": {**LOCAL, "time_zone": "asia/TOKYO"}}),
    ("schedule_create", {"prompt": 7, "after_seconds": 60}),
    ("schedule_create", {"prompt": "\u3000\t", "after_seconds": 60}),
    ("schedule_create", {"prompt": "caf\u00e9 \U0001f375 </script>", "after_seconds": 60}),
    ("schedule_create", {"after_seconds": 60}),
    ("schedule_create", {}),
    ("schedule_create", None),
    ("schedule_list", {"anything": [1, 2]}),
    ("schedule_delete", {"id": " schedule-1"}),
    ("schedule_delete", {"id": "schedule-1"}),
    ("schedule_delete", {"id": "schedule-1"}),
    ("schedule_delete", {"id": None}),
    ("schedule_delete", {}),
    ("schedule_list", None),
]  # fmt: skip


@asynccontextmanager
async def session(clock: VirtualClock) -> AsyncIterator[ScheduleRuntime]:
    log = await MemoryStore().open("s", created_at=NOW)
    timers = TimerHeap(clock)
    runtime = ScheduleRuntime(log, DeliverCommand(["true"], session="s"), clock, timers=timers)
    await runtime.start()
    try:
        yield runtime
    finally:
        await runtime.dispose()
        await timers.close()


def test_every_answer_is_the_runtime_text() -> None:
    async def scenario() -> None:
        clock = VirtualClock(NOW)
        async with (
            session(clock) as served,
            session(clock) as twin,
            Client(create_server(served)) as client,
        ):
            schemas = {t.name: t.output_schema for t in (await client.list_tools()).tools}
            errors = 0
            for name, arguments in CALLS:
                result = await client.call_tool(name, arguments)
                expected = await twin.call_tool(name, arguments)
                assert result.content == [TextContent(type="text", text=expected)], arguments
                value = json.loads(expected)
                rejected = isinstance(value, dict) and value.get("code") in ERROR_CODES
                errors += rejected
                assert result.is_error is rejected, arguments
                wrapped = {"reminders": value} if isinstance(value, list) else value
                assert result.structured_content == wrapped, arguments
                jsonschema.validate(result.structured_content, schemas[name] or {})
            assert served.state == twin.state
            assert 0 < errors < len(CALLS)

    asyncio.run(scenario())
