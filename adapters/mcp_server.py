"""An MCP server (official ``mcp`` SDK, stdio) for one tickler session.

It lists the three tools with the catalog's names, descriptions and input
schemas, and answers each call with exactly the text the runtime renders
(one text block; error codes are ordinary results the model reads, as in
the reference). The arguments reach the runtime as the client sent them:
nothing here validates or re-renders.

The server also runs the session's :class:`ScheduleRuntime`. MCP clients do
not start a model turn from a server notification, so due reminders go to a
delivery target (:mod:`tickler.adapters.delivery`): a command fed the
follow-up JSON on stdin, or a URL it is POSTed to.

Run it as::

    python -m tickler.adapters.mcp_server --store DIR --session ID \\
        (--deliver-cmd CMD | --deliver-url URL)

stdout is the protocol; logs go to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import logging
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final

from tickler import __version__
from tickler.adapters.delivery import (
    DEFAULT_COMMAND_TIMEOUT_S,
    DEFAULT_URL_TIMEOUT_S,
    DeliverCommand,
    DeliverUrl,
)
from tickler.adapters.tools import ToolCaller, missing_extra, schedule_tools
from tickler.shell.clock import Clock, SystemClock
from tickler.shell.host import AgentHost
from tickler.shell.ports import SessionStore, StoreError, validate_session_id
from tickler.shell.runtime import ScheduleRuntime
from tickler.shell.timers import TimerHeap

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

logger = logging.getLogger("tickler.mcp")

SERVER_NAME: Final = "tickler"

HostFactory = Callable[[str], AgentHost]
"""Makes the session's delivery target, given the session id."""


def _require_mcp() -> None:
    """Fail early and clearly without the extra (a cheap check: importing
    ``mcp`` itself takes a while, so it waits until the session is open)."""
    if importlib.util.find_spec("mcp") is None:
        raise missing_extra("MCP server", "mcp")


def create_server(runtime: ToolCaller, *, name: str = SERVER_NAME) -> Server[Any]:
    """A low-level MCP ``Server`` whose tools are the runtime's three tools
    (``runtime`` is a :class:`ScheduleRuntime`, started).

    The low-level server is used (not ``MCPServer``) because it lists the
    catalog's JSON Schemas as they are and hands the raw ``arguments`` to the
    handler; ``MCPServer`` would derive a schema from a Python signature and
    validate the arguments with pydantic first. Serve it over any transport.
    """
    _require_mcp()
    from mcp import types
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    table = {tool.name: tool for tool in schedule_tools(runtime)}
    tools = [
        types.Tool(name=tool.name, description=tool.description, input_schema=tool.input_schema)
        for tool in table.values()
    ]

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tool = table.get(params.name)
        if tool is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        text = await tool.handler(params.arguments)
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    return Server(name, version=__version__, on_list_tools=list_tools, on_call_tool=call_tool)


async def serve_stdio(
    store: SessionStore,
    session_id: str,
    deliver: HostFactory,
    *,
    clock: Clock | None = None,
) -> None:
    """Serve the session ``session_id`` of ``store`` over stdin/stdout until
    the client closes stdin, delivering due reminders to ``deliver(session_id)``.

    The session is opened for writing (a store raises ``SessionLocked`` when
    another process serves it) and closed on return; the store is the
    caller's.
    """
    _require_mcp()
    clock = clock if clock is not None else SystemClock()
    host = deliver(session_id)
    log = await store.open(session_id, created_at=clock.now_ms())
    try:
        from mcp.server.stdio import stdio_server

        timers = TimerHeap(clock)
        runtime = ScheduleRuntime(log, host, clock, timers=timers)
        try:
            await runtime.start()
            server = create_server(runtime)
            logger.info("serving session %s", session_id)
            async with stdio_server() as (read_stream, write_stream):
                await server.run(read_stream, write_stream, server.create_initialization_options())
        finally:
            await runtime.dispose()
            await timers.close()
            await runtime.save_snapshot()
    finally:
        await log.close()
    logger.info("session %s closed", session_id)


def delivery_target(
    deliver_cmd: str | None, deliver_url: str | None, *, timeout: float | None = None
) -> HostFactory:
    """The host factory for exactly one of a command or a URL (raises
    ``ValueError`` otherwise, or for an empty command or a non-http URL)."""
    if (deliver_cmd is None) == (deliver_url is None):
        raise ValueError("give exactly one delivery target: a command or a URL")
    if deliver_cmd is not None:
        command_timeout = DEFAULT_COMMAND_TIMEOUT_S if timeout is None else timeout
        DeliverCommand(deliver_cmd, session="-", timeout=command_timeout)  # checks them now
        return lambda session: DeliverCommand(deliver_cmd, session=session, timeout=command_timeout)
    assert deliver_url is not None
    url_timeout = DEFAULT_URL_TIMEOUT_S if timeout is None else timeout
    DeliverUrl(deliver_url, session="-", timeout=url_timeout)
    return lambda session: DeliverUrl(deliver_url, session=session, timeout=url_timeout)


def run_mcp(
    store_dir: str,
    session_id: str,
    deliver_cmd: str | None,
    deliver_url: str | None,
    *,
    deliver_timeout: float | None = None,
) -> None:
    """Serve one session of the JSONL store in ``store_dir`` over stdio until
    the client disconnects. Raises ``ValueError`` for bad arguments,
    ``StoreError`` (``SessionLocked``, ``InvalidSessionId``) from the store,
    ``ImportError`` without the ``mcp`` extra."""
    _require_mcp()
    deliver = delivery_target(deliver_cmd, deliver_url, timeout=deliver_timeout)
    from tickler.adapters.stores.jsonl import JsonlStore

    async def serve() -> None:
        store = JsonlStore(store_dir)
        try:
            await serve_stdio(store, session_id, deliver)
        finally:
            await store.close()

    asyncio.run(serve())


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m tickler.adapters.mcp_server",
        description="Serve one tickler session to an MCP client over stdio. Due reminders "
        "go to the delivery target as JSON: "
        '{"key","text","occurrences":[{"id","occurrenceAt","prompt"}],"session"}.',
    )
    parser.add_argument("--store", required=True, metavar="DIR", help="JSONL store directory")
    parser.add_argument("--session", required=True, metavar="ID", help="session id")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument(
        "--deliver-cmd",
        metavar="CMD",
        help="command run (no shell) with the follow-up JSON on stdin; exit 0 = delivered",
    )
    target.add_argument(
        "--deliver-url", metavar="URL", help="URL the follow-up JSON is POSTed to; 2xx = delivered"
    )
    parser.add_argument(
        "--deliver-timeout",
        type=float,
        metavar="SECONDS",
        help="give up on one delivery attempt after this long (command 30, URL 10)",
    )
    parser.add_argument(
        "--log-level",
        default="INFO",
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="stderr log level (default INFO)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; returns the exit status: 0 after the client
    disconnected, 1 when the server could not run (the session is locked,
    the ``mcp`` extra is missing), 2 for usage errors."""
    parser = _parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        stream=sys.stderr,
        level=args.log_level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    try:
        validate_session_id(args.session)
        delivery_target(args.deliver_cmd, args.deliver_url, timeout=args.deliver_timeout)
    except ValueError as exc:
        parser.error(str(exc))
    except ImportError as exc:
        logger.error("%s", exc)
        return 1
    try:
        run_mcp(
            args.store,
            args.session,
            args.deliver_cmd,
            args.deliver_url,
            deliver_timeout=args.deliver_timeout,
        )
    except (ImportError, StoreError) as exc:
        logger.error("%s", exc)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
