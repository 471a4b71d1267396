"""Talk to tickler's MCP server with the official ``mcp`` client.

Starts ``python -m tickler mcp`` over stdio (as an MCP host
such as a desktop app would), lists the tools, sets a reminder two seconds
out and waits for the server to deliver it: the server runs the delivery
command with the follow-up JSON on stdin, here a one-liner that appends it to
a file. A real host would hand ``text`` to its model as a new user-role turn.

    pip install 'tickler-agents[mcp]'
    python examples/mcp_client.py

``TICKLER_DIR`` keeps the store somewhere other than a temp dir (run it twice
to see the reminders persist across server restarts).
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import sys
import tempfile
from pathlib import Path

from mcp import Client, StdioServerParameters
from mcp.types import TextContent

# The delivery command: append stdin (one JSON document) as a line to argv[1].
APPEND_STDIN = "import sys; open(sys.argv[1], 'ab').write(sys.stdin.buffer.read() + b'\\n')"


def received(inbox: Path) -> list[bytes]:
    return inbox.read_bytes().splitlines() if inbox.exists() else []


async def main(directory: Path) -> None:
    inbox = directory / "inbox.jsonl"
    deliver = shlex.join([sys.executable, "-c", APPEND_STDIN, str(inbox)])
    server = StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "tickler",
            "mcp",
            "--store",
            str(directory / "sessions"),
            "--session",
            "example",
            "--deliver-cmd",
            deliver,
            "--log-level",
            "WARNING",
        ],
    )
    async with Client(server) as client:
        for tool in (await client.list_tools()).tools:
            print(f"tool {tool.name} ({tool.title}): {tool.input_schema}")

        async def call(name: str, arguments: dict[str, object]) -> str:
            result = await client.call_tool(name, arguments)
            return "".join(b.text for b in result.content if isinstance(b, TextContent))

        print("before:", await call("schedule_list", {}))
        # The schedule in `when`, as the schema has it (the flat form,
        # {"prompt": ..., "after_seconds": 2}, is accepted too).
        stretch: dict[str, object] = {"prompt": "Stretch!", "when": {"after_seconds": 2}}
        print("create:", await call("schedule_create", stretch))
        tea = await client.call_tool(
            "schedule_create", {"prompt": "Tea", "when": {"every_seconds": 3600}}
        )
        # The same value as the text, as JSON (valid against the tool's outputSchema).
        print("created:", tea.structured_content)
        # A rejection is a tool result flagged isError, carrying a closed error code.
        too_often = {"prompt": "Tea", "when": {"every_seconds": 9}}
        rejected = await client.call_tool("schedule_create", too_often)
        print("rejected:", rejected.is_error, rejected.structured_content)

        seen = len(received(inbox))
        for _ in range(300):  # poll the inbox for up to 30 s
            if len(received(inbox)) > seen:
                break
            await asyncio.sleep(0.1)
        else:
            raise SystemExit("nothing was delivered within 30 s")
        delivered = json.loads(received(inbox)[-1])
        print(f"delivered {delivered['key']} for session {delivered['session']}:")
        print(delivered["text"])
        print("after:", await call("schedule_list", {}))


if __name__ == "__main__":
    chosen = os.environ.get("TICKLER_DIR")
    if chosen:
        asyncio.run(main(Path(chosen)))
    else:
        with tempfile.TemporaryDirectory() as temporary:
            asyncio.run(main(Path(temporary)))
