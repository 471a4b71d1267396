"""Delivery targets under attack: deadlines that hold against targets that
trickle, bounded reads, a command that is missing at start, and commands that
never outlive the server (a clean close, or a kill -9).

Every wait is on observed progress (a pid file, a connection), bounded by a
generous ``wait_for`` so a regression fails instead of hanging; nothing
asserts on elapsed time.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from tickler.adapters.delivery._hosts import DeliverCommand, DeliverUrl, DeliveryFailed
from tickler.core import Occurrence
from tickler.shell._host import FollowUp

SUPPORT = Path(__file__).parent / "mcp_support"
BOUND_S = 60.0  # a regression fails after this instead of hanging
TRICKLE_S = 0.2

MESSAGE = FollowUp(
    key="schedule-1@2026-08-05T12:00:00.000Z",
    text="[SCHEDULE REMINDER]",
    occurrences=(Occurrence("schedule-1", "2026-08-05T12:00:00.000Z", "ping"),),
)


def alive(pid: int) -> bool:
    """Whether ``pid`` runs; a zombie (dead, waiting for a parent that may
    never reap it) counts as dead."""
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:  # no /proc here: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat_line.rpartition(")")[2].split()[0] not in ("Z", "X")


def wait_until(done: Callable[[], bool], bound_s: float) -> None:
    deadline = time.monotonic() + bound_s
    while not done() and time.monotonic() < deadline:
        time.sleep(0.05)


async def appears(path: Path) -> str:
    await asyncio.to_thread(wait_until, path.exists, BOUND_S)
    return await asyncio.to_thread(path.read_text)


@contextlib.contextmanager
def reaped(pids: list[int]) -> Iterator[None]:
    """Kill whatever a failed test left running."""
    try:
        yield
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


# -- URL targets ------------------------------------------------------------

Behaviour = Callable[[asyncio.StreamWriter], Awaitable[None]]


class Endpoint:
    """A raw HTTP endpoint on 127.0.0.1 that answers as ``behaviour`` says."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.connected = asyncio.Event()
        self.dropped = asyncio.Event()  # the client closed the connection


@asynccontextmanager
async def endpoint(behaviour: Behaviour) -> AsyncIterator[Endpoint]:
    handlers: set[asyncio.Task[None]] = set()
    state: list[Endpoint] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        handlers.add(task)
        state[0].connected.set()
        try:
            await behaviour(writer)
        except ConnectionError:
            state[0].dropped.set()
        except asyncio.CancelledError:
            pass  # the test is over (ending normally keeps asyncio's callback quiet)
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    state.append(Endpoint(f"http://127.0.0.1:{port}/hook"))
    try:
        yield state[0]
    finally:
        server.close()
        for task in handlers:
            task.cancel()
        await asyncio.gather(*handlers, return_exceptions=True)
        await server.wait_closed()


async def trickle(writer: asyncio.StreamWriter, data: bytes) -> None:
    for byte in data:
        writer.write(bytes([byte]))
        await writer.drain()
        await asyncio.sleep(TRICKLE_S)


async def trickle_forever(writer: asyncio.StreamWriter) -> None:
    while True:
        await trickle(writer, b"a")


async def headers_trickled(writer: asyncio.StreamWriter) -> None:
    await trickle(writer, b"HTTP/1.1 200 OK\r\nX-Slow: ")
    await trickle_forever(writer)


async def body_trickled(writer: asyncio.StreamWriter) -> None:
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\n")
    await writer.drain()
    await trickle_forever(writer)


async def huge_body(writer: asyncio.StreamWriter) -> None:
    # 1 MiB at once, then a byte at a time, never ending: only a bounded
    # read returns.
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000000000\r\n\r\n")
    writer.write(b"x" * (1 << 20))
    await writer.drain()
    await trickle_forever(writer)


@pytest.mark.parametrize("behaviour", [headers_trickled, body_trickled], ids=["headers", "body"])
def test_a_url_that_trickles_is_cut_at_the_total_deadline(behaviour: Behaviour) -> None:
    async def scenario() -> None:
        async with endpoint(behaviour) as target:
            host = DeliverUrl(target.url, session="s", timeout=1)
            with pytest.raises(DeliveryFailed, match="within 1 s"):
                await asyncio.wait_for(host.followup(MESSAGE), BOUND_S)

    asyncio.run(scenario())


def test_a_2xx_with_an_endless_body_is_delivered_after_a_bounded_read() -> None:
    async def scenario() -> None:
        async with endpoint(huge_body) as target:
            host = DeliverUrl(target.url, session="s", timeout=30)
            await asyncio.wait_for(host.followup(MESSAGE), BOUND_S)
            # The client hung up instead of reading on.
            await asyncio.wait_for(target.dropped.wait(), BOUND_S)

    asyncio.run(scenario())


def test_an_unreachable_url_is_a_delivery_failure() -> None:
    async def scenario() -> None:
        async with endpoint(headers_trickled) as target:
            url = target.url
        host = DeliverUrl(url, session="s", timeout=5)  # the port is closed again
        with pytest.raises(DeliveryFailed, match="could not reach"):
            await asyncio.wait_for(host.followup(MESSAGE), BOUND_S)

    asyncio.run(scenario())


def test_aclose_cancels_a_url_request_in_flight_and_refuses_later_ones() -> None:
    async def scenario() -> None:
        async with endpoint(headers_trickled) as target:
            host = DeliverUrl(target.url, session="s", timeout=10_000)
            sending = asyncio.ensure_future(host.followup(MESSAGE))
            await asyncio.wait_for(target.connected.wait(), BOUND_S)
            await asyncio.wait_for(host.aclose(), BOUND_S)
            with pytest.raises(DeliveryFailed, match="closed"):
                await asyncio.wait_for(sending, BOUND_S)
            with pytest.raises(DeliveryFailed, match="closed"):
                await host.followup(MESSAGE)
            await host.aclose()  # idempotent

    asyncio.run(scenario())


# -- command targets ----------------------------------------------------------


def test_a_missing_command_is_refused_at_start(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="delivery command not found: no-such-tickler-cmd"):
        DeliverCommand("no-such-tickler-cmd --flag", session="s")
    with pytest.raises(ValueError, match="runs without a shell"):
        DeliverCommand([str(tmp_path / "missing")], session="s")


def test_a_command_that_is_not_executable_is_refused_at_start(tmp_path: Path) -> None:
    script = tmp_path / "notify"
    script.write_text("#!/bin/sh\nexit 0\n")
    with pytest.raises(ValueError, match="not executable"):
        DeliverCommand([str(script)], session="s")
    with pytest.raises(ValueError, match="not executable"):
        DeliverCommand(["notify"], session="s", env={"PATH": str(tmp_path)})


def test_the_command_is_looked_up_on_the_path_it_runs_with(tmp_path: Path) -> None:
    out = tmp_path / "out"
    script = tmp_path / "tickler-test-notify"
    script.write_text(f"#!/bin/sh\ncat > '{out}'\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    env = {"PATH": f"{tmp_path}{os.pathsep}{os.defpath}"}
    with pytest.raises(ValueError, match="not found"):
        DeliverCommand([script.name], session="s")  # not on this process's PATH
    host = DeliverCommand([script.name], session="s", env=env)
    asyncio.run(asyncio.wait_for(host.followup(MESSAGE), BOUND_S))
    assert b'"key":"schedule-1@2026-08-05T12:00:00.000Z"' in out.read_bytes()


def test_a_command_removed_after_start_is_a_delivery_failure(tmp_path: Path) -> None:
    script = tmp_path / "notify"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    host = DeliverCommand([str(script)], session="s")
    script.unlink()
    with pytest.raises(DeliveryFailed, match="could not be started"):
        asyncio.run(asyncio.wait_for(host.followup(MESSAGE), BOUND_S))


def test_a_command_that_never_reads_a_large_payload_is_cut_at_the_deadline() -> None:
    big = FollowUp(
        key=MESSAGE.key,
        text="x" * (4 << 20),  # far more than a pipe holds
        occurrences=MESSAGE.occurrences,
    )
    host = DeliverCommand(["sleep", "1000"], session="s", timeout=1)
    with pytest.raises(DeliveryFailed, match="within 1 s"):
        asyncio.run(asyncio.wait_for(host.followup(big), BOUND_S))


def test_a_command_killed_by_a_signal_is_not_taken(tmp_path: Path) -> None:
    host = DeliverCommand(["sh", "-c", "kill -TERM $$"], session="s")
    with pytest.raises(DeliveryFailed, match="killed by signal 15"):
        asyncio.run(asyncio.wait_for(host.followup(MESSAGE), BOUND_S))


def test_aclose_kills_a_command_in_flight_with_its_children(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    script = 'sleep 1000 & echo "$$ $!" > "$1.tmp" && mv "$1.tmp" "$1"; wait'
    pids: list[int] = []

    async def scenario() -> None:
        host = DeliverCommand(
            ["sh", "-c", script, "sh", str(pid_file)], session="s", timeout=10_000
        )
        sending = asyncio.ensure_future(host.followup(MESSAGE))
        pids.extend(int(p) for p in (await asyncio.wait_for(appears(pid_file), BOUND_S)).split())
        await asyncio.wait_for(host.aclose(), 30)
        with pytest.raises(DeliveryFailed, match="closed"):
            await asyncio.wait_for(sending, BOUND_S)

    with reaped(pids):
        asyncio.run(scenario())
        wait_until(lambda: not any(alive(pid) for pid in pids), 30)
        assert len(pids) == 2
        assert not any(alive(pid) for pid in pids)


def test_a_server_killed_9_takes_its_delivery_command_with_it(tmp_path: Path) -> None:
    pid_file = tmp_path / "pids"
    server = subprocess.Popen([sys.executable, str(SUPPORT / "deliver_forever.py"), str(pid_file)])
    pids: list[int] = []
    with reaped(pids):
        try:
            wait_until(lambda: pid_file.exists() or server.poll() is not None, BOUND_S)
            assert server.poll() is None, "the server ended before its command started"
            pids.extend(int(p) for p in pid_file.read_text().split())
            assert len(pids) == 2
            assert all(alive(pid) for pid in pids)
            server.kill()  # SIGKILL: no clean-up code of the server runs
            server.wait()
            wait_until(lambda: not any(alive(pid) for pid in pids), 30)
            assert not any(alive(pid) for pid in pids)
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()


def test_cancelling_the_caller_kills_the_command_and_stays_a_cancellation(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    script = 'echo $$ > "$1.tmp" && mv "$1.tmp" "$1"; exec sleep 1000'
    pids: list[int] = []

    async def scenario() -> None:
        host = DeliverCommand(
            ["sh", "-c", script, "sh", str(pid_file)], session="s", timeout=10_000
        )
        sending = asyncio.ensure_future(host.followup(MESSAGE))
        pids.append(int(await asyncio.wait_for(appears(pid_file), BOUND_S)))
        sending.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(sending, BOUND_S)
        assert not host.closed  # the host still takes later follow-ups

    with reaped(pids):
        asyncio.run(scenario())
        wait_until(lambda: not alive(pids[0]), 30)
        assert not alive(pids[0])
