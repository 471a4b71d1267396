"""stdin end-of-file stops the MCP server even while a delivery hangs, and
tool calls meanwhile do not wait for it.

The official client drives ``python -m tickler mcp`` over
stdio with a delivery command that never ends. Once the command runs, a
tool call still answers; then the client closes stdin; the server must exit
by itself (its closing log line is written only on a clean exit), kill the
command, and keep the follow-up in the outbox, so the next start hands it
over.

The client normally kills a server that has not exited 2 s after stdin
closed; here it waits up to ``BOUND_S``, so only a clean exit passes,
however busy the machine.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path

import mcp.client.stdio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tickler.core import parse_session_jsonl

RECORDER = Path(__file__).parent / "mcp_support" / "record_delivery.py"
BOUND_S = 60.0  # a regression fails after this instead of hanging
SESSION = "s"


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie counts as dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")


async def eventually(done: Callable[[], bool], what: str, log: Path) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + BOUND_S
    while not done():
        if loop.time() > deadline:
            text = await asyncio.to_thread(log.read_text)
            raise AssertionError(f"gave up waiting for {what}; server log:\n{text}")
        await asyncio.sleep(0.05)


def params(store: Path, command: str) -> StdioServerParameters:
    env = {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}
    return StdioServerParameters(
        command=sys.executable,
        args=[
            "-m",
            "tickler",
            "mcp",
            "--store",
            str(store),
            "--session",
            SESSION,
            "--deliver-cmd",
            command,
            "--deliver-timeout",
            "100000",
        ],
        env=env,
    )


def records(store: Path) -> list[str]:
    parsed = parse_session_jsonl((store / f"{SESSION}.jsonl").read_bytes())
    return [e.type for e in parsed.events if e.type.startswith("tickler/")]


def test_end_of_stdin_stops_the_server_while_a_delivery_hangs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mcp.client.stdio, "PROCESS_TERMINATION_TIMEOUT", BOUND_S)
    store, pid_file, log = tmp_path / "store", tmp_path / "pid", tmp_path / "server.log"
    hang = shlex.join(
        [
            "sh",
            "-c",
            'echo $$ > "$1.tmp" && mv "$1.tmp" "$1" && exec sleep 1000',
            "sh",
            str(pid_file),
        ]
    )
    pids: list[int] = []

    async def first_run() -> None:
        with log.open("a") as errlog:
            async with Client(stdio_client(params(store, hang), errlog=errlog)) as client:
                created = await client.call_tool(
                    "schedule_create", {"prompt": "ping", "after_seconds": 1}
                )
                assert created.is_error is False
                await eventually(pid_file.exists, "the delivery command to start", log)
                pids.append(int(pid_file.read_text()))
                assert alive(pids[0])
                # Tool calls do not wait for the hung delivery (bounded, so a
                # regression fails instead of hanging).
                listed = await asyncio.wait_for(client.call_tool("schedule_list"), BOUND_S)
                assert listed.structured_content == {"reminders": []}
                assert alive(pids[0])
            # Leaving the block closed stdin and waited for the server's exit.

    try:
        asyncio.run(first_run())
        text = log.read_text()
        assert f"session {SESSION} closed" in text, text
        assert not alive(pids[0])
        assert records(store) == ["tickler/followup"]  # kept in the outbox
    finally:
        for pid in pids:
            if alive(pid):
                os.kill(pid, 9)

    out = tmp_path / "out.jsonl"
    deliver = shlex.join([sys.executable, str(RECORDER), str(out)])

    async def second_run() -> None:
        with log.open("a") as errlog:
            async with Client(stdio_client(params(store, deliver), errlog=errlog)):
                await eventually(out.exists, "the hand-over after the restart", log)

    asyncio.run(second_run())
    [payload] = [json.loads(line) for line in out.read_text().splitlines()]
    assert payload["occurrences"][0]["prompt"] == "ping"
