"""A session its store refuses as corrupt is still served over MCP: every
well-formed call answers ``corrupt_schedule_log`` (``isError: true``),
a malformed one its own closed code, nothing is delivered, and the damaged
file is left exactly as it was (issue 9: corruption is reported, never
repaired by dropping confirmed data). Before, the server exited at start."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult, TextContent

CORRUPT = '{"code":"corrupt_schedule_log","message":"The session schedule log is corrupt."}'
SELECTOR = (
    '{"code":"invalid_selector","message":"schedule_create accepts exactly one of '
    'after_seconds, at, or every_seconds."}'
)


def params(store: Path) -> StdioServerParameters:
    env = {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "tickler", "mcp", "--profile", "reference", "--store", str(store),
              "--session", "s",
              "--deliver-cmd", "true"],
        env=env,
    )  # fmt: skip


def text_of(result: CallToolResult) -> str:
    [block] = result.content
    assert isinstance(block, TextContent)
    return block.text


async def create_two(store: Path, errlog: Path) -> None:
    with errlog.open("a") as err:
        async with Client(stdio_client(params(store), errlog=err)) as client:
            for prompt in ("first", "second"):
                result = await client.call_tool(
                    "schedule_create", {"prompt": prompt, "at": "2099-01-01T00:00:00Z"}
                )
                assert not result.is_error, text_of(result)


async def use_corrupt(store: Path, errlog: Path) -> None:
    with errlog.open("a") as err:
        async with Client(stdio_client(params(store), errlog=err)) as client:
            listed = await client.call_tool("schedule_list", {})
            assert text_of(listed) == CORRUPT
            assert listed.is_error is True
            later = {"prompt": "third", "at": "2099-01-01T00:00:00Z"}
            created = await client.call_tool("schedule_create", later)
            assert text_of(created) == CORRUPT
            assert created.is_error is True
            malformed = await client.call_tool("schedule_create", {"prompt": "x"})
            assert text_of(malformed) == SELECTOR


def test_a_cut_log_is_served_as_corrupt_and_left_untouched(tmp_path: Path) -> None:
    store, errlog = tmp_path / "store", tmp_path / "server.log"
    asyncio.run(create_two(store, errlog))
    session = store / "s.jsonl"
    data = session.read_bytes()
    assert data.endswith(b"\n")
    assert b'"second"' in data.splitlines()[-1]
    cut = data[:-5]  # the confirmed second reminder loses its end: a cleanly closed file
    session.write_bytes(cut)
    for snapshot in store.glob("s.snapshot*"):
        snapshot.unlink()  # the torn tail alone must be enough

    asyncio.run(use_corrupt(store, errlog))

    assert session.read_bytes() == cut  # never trimmed, never appended to
    log = errlog.read_text()
    assert "session s is corrupt" in log
    assert "torn final line" in log


def test_a_hostile_line_is_served_as_corrupt_with_its_line(tmp_path: Path) -> None:
    """Invalid UTF-8 in an event's type, or a 5,000-digit seq: the store
    refuses the line (file:line) and the session is served as corrupt, where
    the server used to exit with a usage error."""
    store, errlog = tmp_path / "store", tmp_path / "server.log"
    asyncio.run(create_two(store, errlog))
    session = store / "s.jsonl"
    for snapshot in store.glob("s.snapshot*"):
        snapshot.unlink()
    good = session.read_bytes()
    line = good.count(b"\n") + 1  # the header is line 1, event seq is line seq + 2
    for bad in (
        b'{"type":"x\xff","seq":%d,"time":1,"data":{}}\n' % (line - 2),
        b'{"type":"x","seq":%s,"time":1,"data":{}}\n' % (b"9" * 5_000),
    ):
        session.write_bytes(good + bad)
        errlog.write_text("")
        asyncio.run(use_corrupt(store, errlog))
        assert session.read_bytes() == good + bad
        assert f"s.jsonl: line {line}: invalid event" in errlog.read_text()
