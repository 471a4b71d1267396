"""An MCP server (official ``mcp`` SDK, stdio) for one tickler session.

It lists the profile's tools (four in the extended profile, the three v1
tools in the reference profile) with the catalog's names, descriptions and input
schemas, a title and behaviour hints each, and an output schema; it answers
each call with exactly the text the runtime renders (one text block), the
same value as ``structuredContent``, and ``isError: true`` when the value is
one of the ten closed error codes (the model reads it and can fix its call).
:mod:`tickler.adapters.mcp._conventions` has the details. The arguments reach
the runtime as the client sent them: nothing here validates or re-renders,
except that a ``schedule_create`` prompt over ``MAX_PROMPT_LENGTH``
characters is refused before it (``prompt_too_long``).

The transport is tickler's own (:mod:`tickler.adapters.mcp._stdio`), not the
SDK's: every line read gets an answer, arguments are read as the
reference's ``JSON.parse`` reads them, and one call's size is capped (a
line at ``MAX_LINE_BYTES``, a prompt at ``MAX_PROMPT_LENGTH`` characters).

The server also runs the session (``open_session``). MCP clients do
not start a model turn from a server notification, so due reminders go to a
delivery target (:mod:`tickler.adapters.delivery._hosts`): a command fed the
follow-up JSON on stdin, or a URL it is POSTed to.

Run it as ``tickler mcp`` or, the same command with the same options, as::

    python -m tickler mcp --store DIR --session ID \\
        (--deliver-cmd CMD | --deliver-url URL) [--deliver-timeout S] [--log-level L]

stdout is the protocol; logs go to stderr. When the client closes stdin the
server stops: a delivery in flight is cut (it stays in the session's outbox
and is handed over again at the next start).
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from tickler._version import __version__
from tickler.adapters._extras import missing_extra
from tickler.adapters.frameworks._tools import ToolCaller, schedule_tools, tools_profile
from tickler.adapters.mcp._conventions import (
    TOOL_HINTS,
    output_schema,
    prompt_too_long,
    structured_answer,
)
from tickler.adapters.stores._files import CorruptStore
from tickler.core import DEFAULT_PROFILE, Profile
from tickler.shell import (
    AgentHost,
    Clock,
    Session,
    SessionStore,
    corrupt_session_tools,
    open_session,
)

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

logger = logging.getLogger("tickler.mcp")

SERVER_NAME: Final = "tickler"

HostFactory = Callable[[Session], AgentHost]
"""Makes the session's delivery target (see
:func:`~tickler.adapters.delivery._target.delivery_target`)."""


def require_mcp() -> None:
    """Fail early and clearly without the extra (a cheap check: importing
    ``mcp`` itself takes a while, so it waits until the session is open)."""
    if importlib.util.find_spec("mcp") is None:
        raise missing_extra("MCP server", "mcp")


def create_server(
    tools: ToolCaller, *, name: str = SERVER_NAME, profile: Profile | None = None
) -> Server[Any]:
    """A low-level MCP ``Server`` whose tools are a session's tools
    (``tools`` is ``session.tools`` of an open session): the three v1 tools
    in the ``reference`` profile, plus ``schedule_update`` in ``extended``
    (default: the session's own profile).

    The low-level server is used (not ``MCPServer``) because it lists the
    catalog's JSON Schemas as they are and hands the raw ``arguments`` to the
    handler; ``MCPServer`` would derive a schema from a Python signature and
    validate the arguments with pydantic first. Serve it over any transport.
    """
    require_mcp()
    from mcp import types
    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    chosen = tools_profile(tools, profile)
    table = {tool.name: tool for tool in schedule_tools(tools, profile=chosen)}
    listed = []
    for tool in table.values():
        hints = TOOL_HINTS[tool.name]
        listed.append(
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
        return types.ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tool = table.get(params.name)
        if tool is None:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        text = prompt_too_long(tool.name, params.arguments, chosen)
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
    profile: Profile = DEFAULT_PROFILE,
) -> None:
    """Serve the session ``session_id`` of ``store`` over stdin/stdout until
    the client closes stdin, delivering due reminders to the target
    ``deliver(session)`` builds, with the tools of ``profile``.

    The session is opened for writing (a store raises ``SessionLocked`` when
    another process serves it) and closed on return; the store is the
    caller's. A session the store refuses as corrupt is served by
    :func:`serve_corrupt`. At the end the session stops its runtime and
    closes the target, so a delivery in flight (a hung command, a slow URL)
    is cut after a short grace rather than waited for: it stays in the
    outbox for the next start.
    """
    require_mcp()
    opened = False
    try:
        async with open_session(
            store, session_id, host=deliver, clock=clock, profile=profile
        ) as session:
            opened = True
            logger.info("serving session %s", session_id)
            await _serve(session.tools)
    except CorruptStore as exc:
        if opened:
            raise
        await serve_corrupt(session_id, exc, profile=profile)
        return
    logger.info("session %s closed", session_id)


async def _serve(tools: ToolCaller) -> None:
    from tickler.adapters.mcp._stdio import stdio_transport

    server = create_server(tools)
    async with stdio_transport() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


async def serve_corrupt(
    session_id: str, exc: CorruptStore, *, profile: Profile = DEFAULT_PROFILE
) -> None:
    """Serve a session the store refused as corrupt until the client closes
    stdin: the tools answer ``corrupt_schedule_log``, nothing is delivered,
    and no file is touched; the reason (file, line) goes to the log once."""
    logger.error("session %s is corrupt, deliveries stopped: %s", session_id, exc)
    await _serve(corrupt_session_tools(profile=profile))
