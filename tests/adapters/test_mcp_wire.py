"""What ``tickler mcp`` writes on stdout, read as raw JSON lines: an answer's
``structuredContent`` is the same JSON value as its text, even when a prompt
holds a lone surrogate (a JavaScript string may, and a session written
through the Python API or by the reference harness can hold one). Before,
the structured copy held U+FFFD where the text held the surrogate's escape.

The client here is a plain JSON reader (as ``JSON.parse`` reads): the SDK's
own client refuses a lone surrogate's escape, so it is not used.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from mcp.types import LATEST_PROTOCOL_VERSION

from tickler import JsonlStore, ReferenceHost, ScheduleRuntime
from tickler.shell._clock import VirtualClock
from tickler.shell._reference_host import TurnInput

SESSION = "s"
T0 = 1_785_931_200_000  # 2026-08-05T12:00:00.000Z
PROMPTS = ("a\udc00b", "pair \U0001f375 and lone \ud800", "plain")
DEADLINE_S = 20.0


async def write_session(store: Path) -> None:
    """A session whose reminders have prompts with lone surrogates, created
    through the Python API."""

    async def turn(item: TurnInput) -> str:
        return "ok"

    jsonl = JsonlStore(store)
    log = await jsonl.open(SESSION, created_at=T0)
    runtime = ScheduleRuntime(log, ReferenceHost(log, turn), VirtualClock(T0))
    await runtime.start()
    try:
        for prompt in PROMPTS:
            text = await runtime.call_tool(
                "schedule_create", {"prompt": prompt, "at": "2099-01-01T00:00:00Z"}
            )
            assert json.loads(text)["prompt"] == prompt
    finally:
        await runtime.dispose()
        await jsonl.close()


async def exchange(store: Path, errlog: Path, requests: list[dict[str, Any]]) -> list[Any]:
    """Send each request to a fresh server and read its answer (raw JSON);
    notifications get none."""
    env = {"PYTHONPATH": os.environ["PYTHONPATH"]} if "PYTHONPATH" in os.environ else {}
    args = ["-m", "tickler", "mcp", "--store", str(store), "--session", SESSION]
    with errlog.open("ab") as err:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            *args,
            "--deliver-cmd",
            "true",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=err,
            env=env,
        )
    assert process.stdin is not None
    assert process.stdout is not None
    answers: list[Any] = []
    try:
        for request in requests:
            process.stdin.write(json.dumps(request).encode() + b"\n")
            await process.stdin.drain()
            if "id" not in request:
                continue
            line = await asyncio.wait_for(process.stdout.readline(), DEADLINE_S)
            assert line, "the server ended without an answer (see server.log)"
            line.decode("utf-8")  # valid UTF-8, whatever the strings hold
            answer = json.loads(line)
            assert answer.get("id") == request["id"], answer
            answers.append(answer["result"])
    finally:
        process.stdin.close()
        await asyncio.wait_for(process.wait(), DEADLINE_S)
    return answers


def test_structured_content_is_the_texts_json_value_with_lone_surrogates(tmp_path: Path) -> None:
    store = tmp_path / "store"
    asyncio.run(write_session(store))
    initialize = {
        "protocolVersion": LATEST_PROTOCOL_VERSION,
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    }
    requests: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "schedule_list", "arguments": {}}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "schedule_delete", "arguments": {"id": "schedule-1"}}},
    ]  # fmt: skip
    _, listed, deleted = asyncio.run(exchange(store, tmp_path / "server.log", requests))
    [block] = listed["content"]
    reminders = json.loads(block["text"])
    assert [r["prompt"] for r in reminders] == list(PROMPTS)
    assert "\\udc00" in block["text"]  # the text as JSON.stringify writes it
    assert listed["structuredContent"] == {"reminders": reminders}
    assert listed["isError"] is False
    [block] = deleted["content"]
    assert deleted["structuredContent"] == json.loads(block["text"])
