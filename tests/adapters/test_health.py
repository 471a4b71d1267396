"""The worker's health endpoint over real HTTP (httpx and raw sockets
against the asyncio server), and its readiness rule as a pure function."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from tickler.adapters.worker._health import (
    MAX_REQUEST_HEAD,
    HealthServer,
    HealthUnavailable,
    Readiness,
    parse_address,
    readiness_of,
)
from tickler.adapters.worker._worker import readiness_bound


def test_ready_once_started_while_the_store_answered_within_the_bound() -> None:
    def at(since_ok_s: float, *, started: bool = True, stopping: bool = False) -> Readiness:
        return readiness_of(started=started, stopping=stopping, since_ok_s=since_ok_s, bound_s=10.0)

    assert at(0.0, started=False) == (False, "starting")
    assert at(0.0) == (True, "ready")
    assert at(10.0) == (True, "ready")  # the bound itself is still ready
    assert at(10.5) == (
        False,
        "no successful store round trip for 10.5 s (the bound is 10 s)",
    )
    assert at(0.0, stopping=True).ready is False
    assert "stopping" in at(0.0, stopping=True).reason


def test_the_bound_is_three_polls_and_at_least_ten_seconds() -> None:
    assert readiness_bound(1.0) == 10.0
    assert readiness_bound(5.0) == 15.0


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("8080", ("127.0.0.1", 8080)),
        ("127.0.0.1:0", ("127.0.0.1", 0)),
        ("0.0.0.0:9000", ("0.0.0.0", 9000)),
        ("[::1]:8080", ("::1", 8080)),
        ("localhost:8080", ("localhost", 8080)),
    ],
)
def test_an_address_is_a_port_or_host_and_port(text: str, address: tuple[str, int]) -> None:
    assert parse_address(text) == address


@pytest.mark.parametrize("text", ["", "http://x:80", "x:", ":x", "1.2.3.4:70000", "::1:80"])
def test_a_bad_address_is_refused_with_the_form_to_use(text: str) -> None:
    with pytest.raises(ValueError, match="give PORT or HOST:PORT"):
        parse_address(text)


async def test_the_endpoints_answer_over_http() -> None:
    state = Readiness(False, "starting")
    server = HealthServer(lambda: state)
    host, port = await server.start("127.0.0.1", 0)
    assert host == "127.0.0.1"
    assert port > 0
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
            live = await http.get("/livez")
            assert (live.status_code, live.text) == (200, "live\n")
            assert live.headers["cache-control"] == "no-store"
            ready = await http.get("/readyz")
            assert (ready.status_code, ready.text) == (503, "not ready: starting\n")
            state = Readiness(True, "ready")
            ready = await http.get("/readyz?verbose=1")
            assert (ready.status_code, ready.text) == (200, "ready\n")
            head = await http.head("/readyz")
            assert (head.status_code, head.content) == (200, b"")
            assert head.headers["content-length"] == "6"
            posted = await http.post("/livez", content=b"x")
            assert posted.status_code == 405
            assert posted.headers["allow"] == "GET, HEAD"
            assert (await http.get("/metrics")).status_code == 404
    finally:
        await server.close()


async def test_a_request_that_is_not_http_or_too_long_is_closed_unanswered() -> None:
    server = HealthServer(lambda: Readiness(True, "ready"))
    _, port = await server.start("127.0.0.1", 0)
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /livez HTTP/1.1\r\nX: " + b"a" * MAX_REQUEST_HEAD + b"\r\n\r\n")
        await writer.drain()
        assert await asyncio.wait_for(reader.read(), 30) == b""
        writer.close()
        # The server still answers the next one.
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"GET /livez HTTP/1.0\r\n\r\n")
        answer = await asyncio.wait_for(reader.read(), 30)
        assert answer.startswith(b"HTTP/1.1 200 OK\r\n")
        assert answer.endswith(b"\r\n\r\nlive\n")
        writer.close()
    finally:
        await server.close()


async def test_an_address_in_use_is_one_clear_error() -> None:
    first = HealthServer(lambda: Readiness(True, "ready"))
    _, port = await first.start("127.0.0.1", 0)
    try:
        with pytest.raises(HealthUnavailable, match=rf"--health 127.0.0.1:{port}: cannot listen"):
            await HealthServer(lambda: Readiness(True, "ready")).start("127.0.0.1", port)
    finally:
        await first.close()
