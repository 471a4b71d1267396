"""An MCP server (official ``mcp`` SDK, stdio) for one tickler session.

It lists the three tools with the catalog's names, descriptions and input
schemas, a title and behaviour hints each, and an output schema; it answers
each call with exactly the text the runtime renders (one text block), the
same value as ``structuredContent``, and ``isError: true`` when the value is
one of the ten closed error codes (the model reads it and can fix its call).
:mod:`tickler.adapters.mcp_conventions` has the details. The arguments reach
the runtime as the client sent them: nothing here validates or re-renders,
except that a ``schedule_create`` prompt over ``MAX_PROMPT_LENGTH``
characters is refused before it (``prompt_too_long``).

The transport is tickler's own (:mod:`tickler.adapters.mcp_stdio`), not the
SDK's: every line read gets an answer, arguments are read as the
reference's ``JSON.parse`` reads them, and one call's size is capped (a
line at ``MAX_LINE_BYTES``, a prompt at ``MAX_PROMPT_LENGTH`` characters).

The server also runs the session's :class:`ScheduleRuntime`. MCP clients do
not start a model turn from a server notification, so due reminders go to a
delivery target (:mod:`tickler.adapters.delivery`): a command fed the
follow-up JSON on stdin, or a URL it is POSTed to.

Run it as ``tickler mcp`` or, the same command with the same options, as::

    python -m tickler.adapters.mcp_server --store DIR --session ID \\
        (--deliver-cmd CMD | --deliver-url URL) [--deliver-timeout S] [--log-level L]

stdout is the protocol; logs go to stderr. When the client closes stdin the
server stops: a delivery in flight is cut (it stays in the session's outbox
and is handed over again at the next start).
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol, runtime_checkable

from tickler import __version__
from tickler.adapters.delivery import (
    DEFAULT_COMMAND_TIMEOUT_S,
    DEFAULT_URL_TIMEOUT_S,
    DeliverCommand,
    DeliverUrl,
)
from tickler.adapters.mcp_conventions import (
    TOOL_HINTS,
    output_schema,
    prompt_too_long,
    structured_answer,
)
from tickler.adapters.stores.files import CorruptStore
from tickler.adapters.tools import (
    CorruptSessionTools,
    ToolCaller,
    missing_extra,
    schedule_tools,
)
from tickler.shell.clock import Clock, SystemClock
from tickler.shell.host import AgentHost
from tickler.shell.ports import SessionLog, SessionStore, StoreError, validate_session_id
from tickler.shell.runtime import ScheduleRuntime
from tickler.shell.timers import TimerHeap

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

logger = logging.getLogger("tickler.mcp")

SERVER_NAME: Final = "tickler"
LOG_LEVELS: Final = ("DEBUG", "INFO", "WARNING", "ERROR")

HostFactory = Callable[[str], AgentHost]
"""Makes the session's delivery target, given the session id."""


@runtime_checkable
class _Closable(Protocol):
    """A host that owns work to stop at shutdown (the delivery targets)."""

    async def aclose(self) -> None: ...


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
    tools = []
    for tool in table.values():
        hints = TOOL_HINTS[tool.name]
        tools.append(
            types.Tool(
                name=tool.name,
                # Both titles: annotations.title is what clients before
                # protocol 2025-06-18 show.
                title=hints.title,
                description=tool.description,
                input_schema=tool.input_schema,
                output_schema=output_schema(tool.output_schema),
                annotations=types.ToolAnnotations(
                    title=hints.title,
                    read_only_hint=hints.read_only,
                    destructive_hint=hints.destructive,
                    idempotent_hint=hints.idempotent,
                    open_world_hint=hints.open_world,
                ),
            )
        )

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
        text = prompt_too_long(tool.name, params.arguments)
        if text is None:
            text = await tool.handler(params.arguments)
        structured, is_error = structured_answer(text)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text)],
            structured_content=structured,
            is_error=is_error,
        )

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
    caller's. At the end the runtime is disposed and the host closed, so a
    delivery in flight (a hung command, a slow URL) is cut rather than
    waited for: it stays in the outbox for the next start.
    """
    _require_mcp()
    clock = clock if clock is not None else SystemClock()
    host = deliver(session_id)
    try:
        opening = await _open(store, session_id, clock)
        if isinstance(opening, CorruptStore):
            await serve_corrupt(session_id, opening)
            return
        log = opening
        try:
            from tickler.adapters.mcp_stdio import stdio_transport

            timers = TimerHeap(clock)
            runtime = ScheduleRuntime(log, host, clock, timers=timers)
            try:
                await runtime.start()
                server = create_server(runtime)
                logger.info("serving session %s", session_id)
                async with stdio_transport() as (read_stream, write_stream):
                    await server.run(
                        read_stream, write_stream, server.create_initialization_options()
                    )
            finally:
                # dispose() cancels a hung hand-over; closing the host then
                # kills whatever target it left running.
                await runtime.dispose()
                await _close_host(host)
                await timers.close()
                await runtime.save_snapshot()
        finally:
            await log.close()
    finally:
        await _close_host(host)
    logger.info("session %s closed", session_id)


async def _open(store: SessionStore, session_id: str, clock: Clock) -> SessionLog | CorruptStore:
    try:
        return await store.open(session_id, created_at=clock.now_ms())
    except CorruptStore as exc:
        return exc


async def serve_corrupt(session_id: str, exc: CorruptStore) -> None:
    """Serve a session the store refused as corrupt until the client closes
    stdin: the tools answer ``corrupt_schedule_log``, nothing is delivered,
    and no file is touched; the reason (file, line) goes to the log once."""
    from tickler.adapters.mcp_stdio import stdio_transport

    logger.error("session %s is corrupt, deliveries stopped: %s", session_id, exc)
    server = create_server(CorruptSessionTools(str(exc)))
    async with stdio_transport() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def _close_host(host: AgentHost) -> None:
    if isinstance(host, _Closable):
        await host.aclose()


def delivery_target(
    deliver_cmd: str | None, deliver_url: str | None, *, timeout: float | None = None
) -> HostFactory:
    """The host factory for exactly one of a command or a URL (raises
    ``ValueError`` otherwise, or for an empty or missing command, or a
    non-http URL: both are checked now, not at the first delivery)."""
    if (deliver_cmd is None) == (deliver_url is None):
        raise ValueError("give exactly one delivery target: --deliver-cmd or --deliver-url")
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
        try:
            store = JsonlStore(store_dir)
        except CorruptStore as exc:  # a damaged journal: every session is suspect
            await serve_corrupt(session_id, exc)
            return
        try:
            await serve_stdio(store, session_id, deliver)
        finally:
            await store.close()

    asyncio.run(serve())


def serve_command(
    store_dir: str,
    session_id: str,
    deliver_cmd: str | None,
    deliver_url: str | None,
    *,
    deliver_timeout: float | None = None,
    log_level: str = "INFO",
) -> int:
    """What ``tickler mcp`` does: check the options, then serve until the
    client disconnects. Returns the exit status: 0 after the client
    disconnected, 1 when the server could not run (the session is locked,
    the ``mcp`` extra is missing). Raises ``ValueError`` for usage errors
    (a bad session id, not exactly one target, a delivery program that is
    not there, a bad URL or timeout) before anything is created."""
    from tickler.adapters.cli.options import configure_logging

    validate_session_id(session_id)
    try:
        delivery_target(deliver_cmd, deliver_url, timeout=deliver_timeout)
        configure_logging(log_level)
        run_mcp(store_dir, session_id, deliver_cmd, deliver_url, deliver_timeout=deliver_timeout)
    except (ImportError, StoreError) as exc:
        logger.error("%s", exc)
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tickler.adapters.mcp_server ARGS``: exactly ``tickler mcp
    ARGS`` (the same options, errors and exit statuses: 2 for usage errors,
    one line on stderr)."""
    from tickler.adapters.cli.app import cli
    from tickler.adapters.cli.errors import run

    return run(cli, ["mcp", *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
