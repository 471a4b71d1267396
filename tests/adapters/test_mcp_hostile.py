"""Every request the MCP server reads gets an answer (issue 14, item 2).

The SDK's stdio reader dropped a line its JSON reader refused, so a request
whose arguments held a lone surrogate escape, nesting deeper than about 200
levels or an integer of more than 4,300 digits was never answered: the
client waited for its own timeout. JavaScript's ``JSON.parse`` (the
reference's reader) takes all three, so these calls now get the answer the
reference gives; a line that is not a JSON-RPC message gets a JSON-RPC error.

The official client drives the real server over stdio. Its serialiser
cannot write these arguments itself (pydantic refuses a lone surrogate and
deep nesting), so the transport below is the official stdio client with one
change: in a request's JSON text, a placeholder string is replaced by raw
JSON text before the line is written. Everything else (ids, the reader,
matching answers to requests) is the official client's.

Each call is awaited under a generous deadline that only stops a hang (the
failure before the fix); nothing asserts how long an answer took.
"""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Final

import anyio
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.message import SessionMessage
from mcp.types import PARSE_ERROR, CallToolResult, JSONRPCMessage, JSONRPCRequest, TextContent

from tickler.adapters.mcp._stdio import MAX_LINE_BYTES, TooLong, decode_line, read_line

DEADLINE_S: Final = 60.0  # a hang guard only
CREATE: Final = "schedule_create"
AFTER_SECONDS: Final = (
    '{"code":"invalid_rule","message":"after_seconds must be a positive safe integer."}'
)
SELECTOR: Final = (
    '{"code":"invalid_selector","message":"schedule_create accepts exactly one of '
    'after_seconds, at, or every_seconds."}'
)
ZONE: Final = (
    '{"code":"invalid_time_zone","message":"time_zone must be UTC or a valid IANA '
    'Area/Location name."}'
)
AT_KIND: Final = (
    '{"code":"invalid_rule","message":"at must be an explicit-offset string or local '
    'calendar object."}'
)
PROMPT: Final = '{"code":"invalid_prompt","message":"prompt must be non-empty after trimming."}'
LIST_LOSSY: Final = (
    '{"code":"invalid_rule","message":"schedule_list arguments must be JSON: -0, NaN and '
    'infinities are not JSON numbers."}'
)
BIG = "9" * 5_000  # an integer past Python's 4,300-digit int() limit


def nested(depth: int, inner: str = '"x"') -> str:
    return "[" * depth + inner + "]" * depth


def raw(name: str) -> str:
    """The placeholder the transport replaces by ``RAW[name]``."""
    return f"@@raw:{name}@@"


RAW: Final = {
    "surrogate": '"\\udc00"',
    "deep-300": nested(300),
    "deep-10000": nested(10_000),
    "big": BIG,
    "not-json": "{nope",
}


# -- the transport -------------------------------------------------------------


class _RawText:
    """A message whose JSON text has each placeholder replaced by raw text
    (the official stdio client writes ``message.model_dump_json(...)``)."""

    def __init__(self, message: JSONRPCMessage) -> None:
        self.message = message

    def model_dump_json(self, **options: Any) -> str:
        text = self.message.model_dump_json(**options)
        for name, value in RAW.items():
            text = text.replace(json.dumps(raw(name)), value)
        return text


class _RawWriter:
    """The write stream of the official stdio client, with placeholders
    replaced in every message it is given."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def send(self, item: SessionMessage, /) -> None:
        await self.inner.send(SessionMessage(_RawText(item.message), item.metadata))  # type: ignore[arg-type]

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> _RawWriter:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()


def server_params(store: Path, profile: str = "reference") -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "tickler", "mcp", "--profile", profile, "--store", str(store),
              "--session", "s",
              "--deliver-cmd", "true"],
        env={"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else None,
    )  # fmt: skip


@asynccontextmanager
async def raw_transport(
    store: Path, errlog: Path, profile: str = "reference"
) -> AsyncIterator[tuple[Any, Any]]:
    with errlog.open("a") as err:
        async with stdio_client(server_params(store, profile), errlog=err) as (read, write):
            yield read, _RawWriter(write)


async def answer(client: Client, name: str, arguments: Mapping[str, Any]) -> CallToolResult:
    with anyio.fail_after(DEADLINE_S):
        return await client.call_tool(name, dict(arguments))


def text_of(result: CallToolResult) -> str:
    [block] = result.content
    assert isinstance(block, TextContent)
    return block.text


# -- through the official client ---------------------------------------------


def test_arguments_the_sdk_cannot_read_get_the_references_answers(tmp_path: Path) -> None:
    async def scenario() -> None:
        transport = raw_transport(tmp_path / "store", tmp_path / "server.log")
        async with Client(transport) as client:
            # A lone surrogate is a string like any other: read, and judged.
            # (An answer that echoes one, a reminder whose prompt holds it,
            # carries it in structuredContent too, which this client cannot
            # read: test_mcp_wire.py reads that answer off the wire.)
            local = {"date": "2099-01-01", "time": "09:00:00", "time_zone": raw("surrogate")}
            refused = await answer(client, CREATE, {"prompt": "x", "at": local})
            assert (text_of(refused), refused.is_error) == (ZONE, True)
            refused = await answer(client, CREATE, {"prompt": "x", raw("surrogate"): 1})
            assert (text_of(refused), refused.is_error) == (SELECTOR, True)
            created = await answer(client, CREATE, {"prompt": "x", "at": "2099-01-01T00:00:00Z"})
            assert created.is_error is False

            # Nesting at any depth: the value is read, and refused for its type.
            for deep in ("deep-300", "deep-10000"):
                refused = await answer(client, CREATE, {"prompt": "x", "at": raw(deep)})
                assert (text_of(refused), refused.is_error) == (AT_KIND, True), deep
                refused = await answer(client, CREATE, {"prompt": raw(deep), "after_seconds": 60})
                assert (text_of(refused), refused.is_error) == (PROMPT, True), deep

            # An integer of 5,000 digits is a number, not a safe integer.
            refused = await answer(client, CREATE, {"prompt": "x", "after_seconds": raw("big")})
            assert (text_of(refused), refused.is_error) == (AFTER_SECONDS, True)
            refused = await answer(client, "schedule_list", {"limit": raw("big")})
            assert (text_of(refused), refused.is_error) == (LIST_LOSSY, True)

            # A line that is not JSON: a parse error, to this request's id.
            with anyio.fail_after(DEADLINE_S), pytest.raises(MCPError) as raised:
                await client.call_tool(CREATE, {"prompt": raw("not-json")})
            assert raised.value.error.code == PARSE_ERROR

            # The session is intact and still served.
            listed = await answer(client, "schedule_list", {})
            assert json.loads(text_of(listed))[0]["id"] == "schedule-1"

    anyio.run(scenario)


def test_a_cron_number_of_thousands_of_digits_gets_a_tool_answer(tmp_path: Path) -> None:
    """Issue 25, item 3: Python's int() refused the number, the tool call
    raised, and the client got a JSON-RPC error (the server a traceback);
    now it is an ``invalid_rule`` answer naming the field, and the server
    goes on."""

    async def scenario() -> None:
        errlog = tmp_path / "server.log"
        transport = raw_transport(tmp_path / "store", errlog, profile="extended")
        async with Client(transport) as client:
            for cron, field in ((f"{BIG} * * * *", "minute"), (f"0 */{BIG} * * *", "hour")):
                calendar = {"cron": cron, "time_zone": "UTC"}
                refused = await answer(client, CREATE, {"prompt": "x", "calendar": calendar})
                assert refused.is_error is True
                assert json.loads(text_of(refused))["code"] == "invalid_rule"
                message = json.loads(text_of(refused))["message"]
                assert message.startswith(f"calendar cron {field} "), message
                assert "(5,00" in message  # the value is shown cut short, with its length
            calendar = {"cron": "0 9 * * *", "time_zone": "UTC"}
            created = await answer(client, CREATE, {"prompt": "x", "calendar": calendar})
            assert created.is_error is False
        assert "Traceback" not in errlog.read_text()

    anyio.run(scenario)


def test_a_line_over_the_limit_is_refused_to_its_request_and_skipped(tmp_path: Path) -> None:
    async def scenario() -> None:
        transport = raw_transport(tmp_path / "store", tmp_path / "server.log")
        async with Client(transport) as client:
            huge = {"prompt": "p" * (MAX_LINE_BYTES + 1), "after_seconds": 60}
            with anyio.fail_after(DEADLINE_S), pytest.raises(MCPError) as raised:
                await client.call_tool(CREATE, huge)
            assert raised.value.error.code == -32600
            assert str(MAX_LINE_BYTES) in raised.value.error.message
            created = await answer(client, CREATE, {"prompt": "after", "after_seconds": 60})
            assert json.loads(text_of(created))["id"] == "schedule-1"

    anyio.run(scenario)


# -- raw bytes on stdin ----------------------------------------------------------


INITIALIZE: Final = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}


def test_garbage_and_blank_lines_are_answered_and_the_server_goes_on(tmp_path: Path) -> None:
    """Bytes no client would send, written straight to the server's stdin:
    each line that is not a message gets its error (id ``null`` when none
    can be read), a blank one nothing, and the requests after them their
    answers, in a server that is still running."""
    lines = [
        json.dumps(INITIALIZE).encode(),
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
        b"\x00\xff\xfe garbage \x80\x81",
        b"",
        b"   ",
        b'{"jsonrpc":"2.0","id":"g-1","method":"tools/call","params":{"name":"schedule_list",',
        b"[1,2,3]",
        b'{"jsonrpc":"2.0","id":7}',
        b'{"jsonrpc":"2.0","id":1,"result":5}',  # a malformed response: not answered
        b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"schedule_list",'
        b'"arguments":{"note":"\xff"}}}',
        b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"schedule_\\udc00"}}',
        b'{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"schedule_list"}}',
    ]
    answers = anyio.run(_exchange, tmp_path, b"".join(line + b"\n" for line in lines), 8)
    by_id = {message.get("id"): message for message in answers}
    assert by_id[0]["result"]["serverInfo"]["name"] == "tickler"
    nulls = [message["error"]["code"] for message in answers if message["id"] is None]
    assert sorted(nulls) == [-32700, -32600]  # the garbage; the array
    assert by_id["g-1"]["error"]["code"] == -32700  # cut short after its id
    assert by_id[7]["error"]["code"] == -32600
    assert 1 not in by_id  # the malformed response
    assert by_id[2]["result"]["content"][0]["text"] == "[]"  # invalid UTF-8 reads as U+FFFD
    assert by_id[3]["error"]["message"] == "Unknown tool: schedule_\udc00"  # as sent
    assert by_id[4]["result"]["content"][0]["text"] == "[]"


async def _exchange(tmp_path: Path, data: bytes, count: int) -> list[dict[str, Any]]:
    """Write ``data`` to a fresh server's stdin, read ``count`` answers,
    then close stdin; the answers (no more come before the server exits)."""
    store = tmp_path / "store"
    command = [sys.executable, "-m", "tickler", "mcp", "--profile", "reference",
               "--store", str(store),
               "--session", "s", "--deliver-cmd", "true"]  # fmt: skip
    with (tmp_path / "server.log").open("ab") as err:
        async with await anyio.open_process(command, stderr=err) as server:
            assert server.stdin is not None
            assert server.stdout is not None
            await server.stdin.send(data)
            received = b""
            with anyio.fail_after(DEADLINE_S):
                while received.count(b"\n") < count:
                    received += await server.stdout.receive()
                await server.stdin.aclose()
                async for rest in server.stdout:
                    received += rest
                assert await server.wait() == 0
    return [json.loads(line) for line in received.splitlines()]


# -- one line at a time ----------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "code", "request_id"),
    [
        (b"not json", -32700, None),
        (b'{"jsonrpc":"2.0","id":5,"method":"x","params":', -32700, 5),
        (b'{"id":"a","jsonrpc":"2.0","method":"x","params":{"p":[1,2', -32700, "a"),
        (b'{"jsonrpc":"2.0","id":true,"method":"x","params":', -32700, None),
        (b'{"jsonrpc":"2.0","id":5,"method":"x","params":[]}', -32600, 5),
        (b'{"jsonrpc":"1.0","id":"q","method":"x"}', -32600, "q"),
        (b'{"jsonrpc":"2.0","method":7}', -32600, None),
        (b"[]", -32600, None),
        (b'{"jsonrpc":"2.0","id":5,"method":"x","params":{"n":nul}}', -32700, 5),
    ],
)
def test_a_line_that_holds_no_message_is_answered(
    line: bytes, code: int, request_id: int | str | None
) -> None:
    decoded = decode_line(line)
    assert decoded is not None
    assert not isinstance(decoded, SessionMessage)
    assert (decoded.error.code, decoded.id) == (code, request_id)


@pytest.mark.parametrize(
    "line",
    [
        b"",
        b" \t\r",
        b'{"jsonrpc":"2.0","id":1,"result":5}',
        b'{"jsonrpc":"2.0","id":1,"error":{}}',
        b'{"jsonrpc":"2.0","id":1,"result":{"x":',
    ],
)
def test_a_blank_line_or_a_malformed_response_is_not_answered(line: bytes) -> None:
    assert decode_line(line) is None


def test_arguments_are_read_as_javascript_reads_them() -> None:
    line = (
        '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"n","arguments":'
        f'{{"s":"\\udc00\\ud83d\\ude00","deep":{nested(5_000, "1")},"big":{BIG},"neg":-{BIG}}}}}}}'
    ).encode()
    decoded = decode_line(line)
    assert isinstance(decoded, SessionMessage)
    request = decoded.message
    assert isinstance(request, JSONRPCRequest)
    assert request.id == 1
    assert request.params is not None
    arguments = request.params["arguments"]
    assert arguments["s"] == "\udc00\U0001f600"
    assert (arguments["big"], arguments["neg"]) == (float("inf"), float("-inf"))
    depth, value = 0, arguments["deep"]
    while isinstance(value, list):
        depth, value = depth + 1, value[0]
    assert (depth, value) == (5_000, 1)


def _read_all(data: bytes) -> list[bytes | tuple[int, bytes]]:
    """``read_line`` over ``data``: each line, or (length, head) for one too long."""
    source = io.BufferedReader(io.BytesIO(data))
    found: list[bytes | tuple[int, bytes]] = []
    while (line := read_line(source)) is not None:
        found.append((line.length, line.head[:3]) if isinstance(line, TooLong) else bytes(line))
    return found


def test_lines_are_read_whole_up_to_the_limit_and_skipped_past_it() -> None:
    limit = b"x" * MAX_LINE_BYTES
    longer = b"y" * (3 * MAX_LINE_BYTES + 12_345)
    assert _read_all(b"") == []
    assert _read_all(b"a\n\nb") == [b"a\n", b"\n", b"b"]  # the last line may lack its newline
    assert _read_all(limit + b"\nz\n") == [limit + b"\n", b"z\n"]
    assert _read_all(limit) == [limit]
    assert _read_all(limit + b"x\nz\n") == [(MAX_LINE_BYTES + 1, b"xxx"), b"z\n"]
    assert _read_all(limit + b"x") == [(MAX_LINE_BYTES + 1, b"xxx")]
    assert _read_all(longer + b"\nok\n") == [(len(longer), b"yyy"), b"ok\n"]
