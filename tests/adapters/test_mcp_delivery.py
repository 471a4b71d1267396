"""The delivery targets of the MCP server, in process: the JSON they send,
the idle claim, idempotence per key, failures that mean "not taken", and the
command line's usage errors."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from tickler.adapters.cli._app import cli
from tickler.adapters.cli._errors import run
from tickler.adapters.cli._mcp import mcp_target
from tickler.adapters.delivery._hosts import (
    DeliverCommand,
    DeliverUrl,
    DeliveryFailed,
    followup_payload,
)
from tickler.adapters.stores._memory import MemoryStore
from tickler.core import Occurrence
from tickler.shell._clock import SystemClock
from tickler.shell._host import FollowUp
from tickler.shell._session import Session

RECORDER = Path(__file__).parent / "mcp_support" / "record_delivery.py"

MESSAGE = FollowUp(
    key="schedule-1@2026-08-05T12:00:00.000Z",
    text='[SCHEDULE REMINDER]\nreminder_prompt_json: "caf\u00e9 \\ud800"',
    occurrences=(Occurrence("schedule-1", "2026-08-05T12:00:00.000Z", "caf\u00e9 \ud800"),),
)


def recorder(out: Path, *extra: str) -> list[str]:
    return [sys.executable, str(RECORDER), str(out), *extra]


def recorded(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()] if path.exists() else []


def test_the_payload_is_json_stringify_compatible_utf8() -> None:
    assert (
        followup_payload(MESSAGE, "agent-1")
        == (
            '{"key":"schedule-1@2026-08-05T12:00:00.000Z",'
            '"text":"[SCHEDULE REMINDER]\\nreminder_prompt_json: \\"caf\u00e9 \\\\ud800\\"",'
            '"occurrences":[{"id":"schedule-1","occurrenceAt":"2026-08-05T12:00:00.000Z",'
            '"prompt":"caf\u00e9 \\ud800"}],"session":"agent-1"}'
        ).encode()
    )
    assert json.loads(followup_payload(MESSAGE, "agent-1"))["occurrences"][0]["prompt"] == (
        "caf\u00e9 \ud800"
    )


def test_a_claim_is_refused_while_one_is_held_and_when_idle_waits_for_it() -> None:
    async def scenario() -> None:
        host = DeliverCommand(["true"], session="s")
        await host.when_idle()  # idle at once
        claim = host.claim_idle()
        assert claim is not None
        assert host.claim_idle() is None
        idle = asyncio.ensure_future(host.when_idle())
        await asyncio.sleep(0)
        assert not idle.done()
        claim.release()
        claim.release()  # idempotent
        await idle
        second = host.claim_idle()
        assert second is not None
        second.release()

    asyncio.run(scenario())


def test_the_command_gets_the_payload_once_per_key(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"

    async def scenario() -> None:
        host = DeliverCommand(shlex.join(recorder(out)), session="agent-1")
        await host.followup(MESSAGE)
        await host.followup(MESSAGE)  # a repeat of a taken key is dropped

    asyncio.run(scenario())
    assert out.read_bytes() == followup_payload(MESSAGE, "agent-1") + b"\n"


def test_a_failed_command_is_not_taken_and_runs_again_next_time(tmp_path: Path) -> None:
    out, attempts, refuse = tmp_path / "out.jsonl", tmp_path / "attempts.jsonl", tmp_path / "no"

    async def scenario() -> None:
        host = DeliverCommand(
            recorder(out, "--attempts", str(attempts), "--refuse-while", str(refuse)), session="s"
        )
        refuse.touch()
        with pytest.raises(DeliveryFailed, match="exited with 1"):
            await host.followup(MESSAGE)
        refuse.unlink()
        await host.followup(MESSAGE)
        await host.followup(MESSAGE)

    asyncio.run(scenario())
    assert len(recorded(attempts)) == 2
    assert len(recorded(out)) == 1


def test_a_command_that_hangs_is_killed_and_not_taken(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    script = f"echo $$ > {shlex.quote(str(pid_file))}; exec sleep 600"

    async def scenario() -> None:
        # Long enough for the command to start on a busy machine.
        host = DeliverCommand(["sh", "-c", script], session="s", timeout=3)
        with pytest.raises(DeliveryFailed, match="did not finish within 3 s"):
            await host.followup(MESSAGE)

    asyncio.run(scenario())
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # killed and reaped


def test_a_missing_command_is_refused_when_the_host_is_made(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"delivery command not found: .*no-such-command"):
        DeliverCommand([str(tmp_path / "no-such-command")], session="s")


@contextmanager
def endpoint(status: int, bodies: list[bytes]) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            bodies.append(self.rfile.read(int(self.headers.get("content-length", "0"))))
            self.send_response(status)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_the_url_gets_the_payload_once_per_key() -> None:
    bodies: list[bytes] = []

    async def scenario(url: str) -> None:
        host = DeliverUrl(url, session="agent-1")
        await host.followup(MESSAGE)
        await host.followup(MESSAGE)

    with endpoint(200, bodies) as url:
        asyncio.run(scenario(url))
    assert bodies == [followup_payload(MESSAGE, "agent-1")]


def test_a_non_2xx_answer_is_not_taken() -> None:
    bodies: list[bytes] = []

    async def scenario(url: str) -> None:
        host = DeliverUrl(url, session="s")
        for _ in range(2):
            with pytest.raises(DeliveryFailed, match="answered HTTP 500"):
                await host.followup(MESSAGE)

    with endpoint(500, bodies) as url:
        asyncio.run(scenario(url))
    assert len(bodies) == 2


def test_an_unreachable_url_is_not_taken() -> None:
    with endpoint(200, []) as url:
        pass  # the port is closed again

    async def scenario() -> None:
        with pytest.raises(DeliveryFailed, match="could not reach") as failed:
            await DeliverUrl(url, session="s", timeout=5).followup(MESSAGE)
        assert isinstance(failed.value.__cause__, httpx.ConnectError)

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("cmd", "url", "message"),
    [
        (None, None, "exactly one delivery target"),
        ("true", "http://127.0.0.1:9/", "exactly one delivery target"),
        ("  ", None, "the delivery command is empty"),
        (None, "ftp://example.org/hook", "must be an http"),
        (None, "http://", "must be an http"),
    ],
)
def test_delivery_targets_are_checked_up_front(
    cmd: str | None, url: str | None, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        mcp_target(cmd, url)


@pytest.mark.parametrize("timeout", [0.0, -1.0, float("nan")])
def test_a_delivery_timeout_must_be_positive(timeout: float) -> None:
    for cmd, url in (("true", None), (None, "http://127.0.0.1:9/hook")):
        with pytest.raises(ValueError, match="timeout must be positive"):
            mcp_target(cmd, url, timeout=timeout)


def test_the_factory_binds_the_session() -> None:
    async def sessions() -> tuple[Session, Session]:
        store = MemoryStore()
        seven = await store.open("agent-7", created_at=1)
        eight = await store.open("agent-8", created_at=1)
        return Session(seven, SystemClock()), Session(eight, SystemClock())

    seven, eight = asyncio.run(sessions())
    host = mcp_target(None, "http://127.0.0.1:9/hook", timeout=3)(seven)
    assert isinstance(host, DeliverUrl)
    assert (host.session, host.url, host.timeout) == ("agent-7", "http://127.0.0.1:9/hook", 3)
    command = mcp_target("true --to 'a b'", None)(eight)
    assert isinstance(command, DeliverCommand)
    assert (command.session, command.argv) == ("agent-8", ("true", "--to", "a b"))


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--store", "d", "--session", "../escape", "--deliver-cmd", "true"], "session id"),
        (
            [
                "--store",
                "d",
                "--session",
                "s",
                "--deliver-cmd",
                "true",
                "--deliver-url",
                "http://x/",
            ],
            "exactly one delivery target",
        ),
        (["--store", "d", "--session", "s"], "exactly one delivery target"),
        (["--store", "d", "--session", "s", "--deliver-url", "file:///tmp/x"], "must be an http"),
        (["--store", "d", "--session", "s", "--deliver-cmd", ""], "command is empty"),
        (
            ["--store", "d", "--session", "s", "--deliver-cmd", "no-such-tickler-cmd --x"],
            "delivery command not found: no-such-tickler-cmd (it runs without a shell",
        ),
        (["--session", "s", "--deliver-cmd", "true"], "--store"),
    ],
)
def test_usage_errors_exit_2_with_one_line_before_anything_runs(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = [str(tmp_path / "store") if arg == "d" else arg for arg in argv]
    status: object
    try:
        status = run(cli, ["mcp", *args])
    except SystemExit as exited:
        status = exited.code
    assert status == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1
    assert message in captured.err
    assert not (tmp_path / "store").exists()
