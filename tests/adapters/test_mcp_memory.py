"""A large prompt cannot make the MCP server use more than about three times
its size (issue 14, item 9).

Before, a ``schedule_create`` with a 100 MB prompt cost the server about
1.1 GB (some eleven copies: the SDK's reader and writer, our runtime's
text, the structured copy). Now a line over ``MAX_LINE_BYTES`` is refused
with a JSON-RPC error without being held in memory, a prompt over
``MAX_PROMPT_LENGTH`` characters with the closed ``invalid_prompt``, and
what is under both is bounded by them.

The server runs under a real memory limit: once it is warmed up (imports
done, its threads started), its address-space limit (RLIMIT_AS, set on the
child with ``prlimit``) is its current size plus three times the prompt
plus a fixed allowance for allocator and thread-stack reservations. Each
large call must then be answered as stated, and the server must go on
answering. ``bench/mcp_memory.py`` prints the figures.
"""

from __future__ import annotations

import json
import resource
import sys
from pathlib import Path
from typing import Any, Final

import anyio
import pytest
from anyio.abc import Process

from tickler.adapters.mcp._conventions import MAX_PROMPT_LENGTH, PROMPT_TOO_LONG
from tickler.adapters.mcp._stdio import MAX_LINE_BYTES

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/status").exists() or not hasattr(resource, "prlimit"),
    reason="needs Linux (/proc, prlimit)",
)

DEADLINE_S: Final = 120.0  # a hang guard only
MB: Final = 1_000_000
ALLOWANCE: Final = 64 * 1024 * 1024  # address space reserved, not used: arenas, stacks
HUGE: Final = 40 * MB  # over MAX_LINE_BYTES: refused unread
LARGE: Final = 3 * MB  # under MAX_LINE_BYTES, over MAX_PROMPT_LENGTH: invalid_prompt
HANDLED: Final = MAX_PROMPT_LENGTH  # the longest prompt taken


def vm_size(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmSize:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmSize")


class Server:
    """A server process spoken to in raw JSON-RPC lines."""

    def __init__(self, process: Process) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        self.process = process
        self.stdin = process.stdin
        self.stdout = process.stdout
        self.buffer = b""

    async def send(self, data: bytes) -> None:
        await self.stdin.send(data)

    async def answer(self, request_id: int) -> dict[str, Any]:
        while True:
            while b"\n" not in self.buffer:
                self.buffer += await self.stdout.receive()
            line, self.buffer = self.buffer.split(b"\n", 1)
            message: dict[str, Any] = json.loads(line)
            if message.get("id") == request_id:
                return message

    async def call(self, request_id: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        params = {"name": name, "arguments": arguments}
        message = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
        await self.send(json.dumps(message).encode() + b"\n")
        return await self.answer(request_id)

    async def create(self, request_id: int, prompt_size: int) -> dict[str, Any]:
        """A ``schedule_create`` whose prompt is ``prompt_size`` ASCII
        letters, written without a second copy of it in this process."""
        head = f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call","params":'
        head += '{"name":"schedule_create","arguments":{"after_seconds":600,"prompt":"'
        await self.send(head.encode())
        chunk = b"p" * MB
        for _ in range(prompt_size // MB):
            await self.send(chunk)
        await self.send(b"p" * (prompt_size % MB) + b'"}}}\n')
        return await self.answer(request_id)

    def limit_memory(self, prompt_size: int) -> None:
        """From now on: the current size, three prompts, the allowance."""
        limit = vm_size(self.process.pid) + 3 * prompt_size + ALLOWANCE
        resource.prlimit(self.process.pid, resource.RLIMIT_AS, (limit, limit))


def text(answer: dict[str, Any]) -> str:
    [block] = answer["result"]["content"]
    value: str = block["text"]
    return value


def test_large_prompts_are_refused_or_handled_within_three_times_their_size(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        command = [sys.executable, "-m", "tickler", "mcp", "--store",
                   str(tmp_path / "store"), "--session", "s", "--deliver-cmd", "true"]  # fmt: skip
        with (tmp_path / "server.log").open("ab") as err, anyio.fail_after(DEADLINE_S):
            async with await anyio.open_process(command, stderr=err) as process:
                server = Server(process)
                initialize = {
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "memory", "version": "0"},
                    },
                }
                await server.send(json.dumps(initialize).encode() + b"\n")
                assert "result" in await server.answer(0)
                await server.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
                warm = await server.call(
                    1, "schedule_create", {"prompt": "w", "after_seconds": 600}
                )
                assert json.loads(text(warm))["id"] == "schedule-1"

                server.limit_memory(HUGE)
                refused = await server.create(2, HUGE)
                assert refused["error"]["code"] == -32600, refused
                assert str(MAX_LINE_BYTES) in refused["error"]["message"]

                server.limit_memory(LARGE)
                refused = await server.create(3, LARGE)
                assert refused["result"]["isError"] is True
                assert json.loads(text(refused)) == {
                    "code": "invalid_prompt",
                    "message": PROMPT_TOO_LONG,
                }

                server.limit_memory(HANDLED)
                created = await server.create(4, HANDLED)
                view = json.loads(text(created))
                assert (view["id"], len(view["prompt"])) == ("schedule-2", HANDLED)

                listed = await server.call(5, "schedule_list", {})
                assert [v["id"] for v in json.loads(text(listed))] == ["schedule-1", "schedule-2"]
                await server.stdin.aclose()
                assert await process.wait() == 0

    anyio.run(scenario)
