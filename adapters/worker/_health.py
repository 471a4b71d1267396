"""``tickler worker --health [HOST:]PORT``: liveness and readiness over HTTP,
served by the worker's own event loop (asyncio streams, no dependency).

* ``GET /livez``: 200 while the event loop turns. A process whose loop is
  wedged does not answer at all, and the probe's own timeout fails it.
  Liveness never looks at the database: restarting a worker does not bring
  a database back, and every worker restarting at once would not help it.
* ``GET /readyz``: 200 once the worker has started (the store answered),
  while its last successful store round trip is at most the worker's
  readiness bound old (see :meth:`~tickler.adapters.worker._worker.Worker.readiness`),
  and until it is asked to stop; else 503 with the reason in one line.

Anything else is 404 (another path) or 405 (another method); ``HEAD`` is
answered like ``GET`` without a body. The answers hold no data and no
secret, and the server reads nothing but one request line and its headers
(at most :data:`MAX_REQUEST_HEAD` bytes, within :data:`READ_TIMEOUT_S`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Callable
from typing import Final, NamedTuple

logger = logging.getLogger("tickler.worker")

DEFAULT_HOST: Final = "127.0.0.1"
MAX_REQUEST_HEAD: Final = 8 * 1024
READ_TIMEOUT_S: Final = 5.0
_ADDRESS: Final = re.compile(r"(?:(?P<host>\[[0-9A-Fa-f:.]+\]|[^:\[\]]*):)?(?P<port>[0-9]{1,5})")
_REASONS: Final = {200: "OK", 404: "Not Found", 405: "Method Not Allowed", 503: "Unavailable"}


class Readiness(NamedTuple):
    ready: bool
    reason: str  # one line: "ready", or why not


def readiness_of(*, started: bool, stopping: bool, since_ok_s: float, bound_s: float) -> Readiness:
    """A worker is ready once started, until it is asked to stop, while its
    last successful store round trip is at most ``bound_s`` old
    (``since_ok_s``)."""
    if not started:
        return Readiness(False, "starting")
    if stopping:
        return Readiness(False, "stopping (deliveries in flight finish)")
    if since_ok_s > bound_s:
        return Readiness(
            False,
            f"no successful store round trip for {since_ok_s:.1f} s (the bound is {bound_s:g} s)",
        )
    return Readiness(True, "ready")


class HealthUnavailable(Exception):
    """The health endpoint could not listen on the address given."""


def parse_address(text: str) -> tuple[str, int]:
    """``PORT`` (on loopback), ``HOST:PORT`` or ``[IPv6]:PORT``; ValueError
    with the reason otherwise. Port 0 picks a free port (logged)."""
    found = _ADDRESS.fullmatch(text.strip())
    if found is None or int(found["port"]) > 65535:
        raise ValueError(f"--health {text}: give PORT or HOST:PORT (such as 127.0.0.1:8080)")
    host = found["host"] or DEFAULT_HOST
    return host.strip("[]"), int(found["port"])


class HealthServer:
    """The two endpoints over ``readiness`` (called per request)."""

    def __init__(self, readiness: Callable[[], Readiness]) -> None:
        self._readiness = readiness
        self._server: asyncio.Server | None = None

    async def start(self, host: str, port: int) -> tuple[str, int]:
        """Listen; the address bound (its real port when 0 was asked for)."""
        try:
            self._server = await asyncio.start_server(
                self._serve, host, port, limit=MAX_REQUEST_HEAD
            )
        except OSError as exc:
            raise HealthUnavailable(
                f"--health {host}:{port}: cannot listen: {exc.strerror or exc}"
            ) from None
        bound = self._server.sockets[0].getsockname()
        return str(bound[0]), int(bound[1])

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), READ_TIMEOUT_S)
            status, body = self._answer(head)
            writer.write(_response(status, body, head.startswith(b"HEAD ")))
            await asyncio.wait_for(writer.drain(), READ_TIMEOUT_S)
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, OSError):
            pass  # a probe that went away, or not HTTP: nothing to answer
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    def _answer(self, head: bytes) -> tuple[int, str]:
        method, _, rest = head.partition(b" ")
        target = rest.split(b" ", 1)[0].split(b"?", 1)[0]
        if target not in (b"/livez", b"/readyz"):
            return 404, "not found: GET /livez or /readyz\n"
        if method not in (b"GET", b"HEAD"):
            return 405, "only GET and HEAD\n"
        if target == b"/livez":
            return 200, "live\n"
        ready, reason = self._readiness()
        return (200, "ready\n") if ready else (503, f"not ready: {reason}\n")


def _response(status: int, body: str, head_only: bool) -> bytes:
    data = body.encode()
    lines = [
        f"HTTP/1.1 {status} {_REASONS[status]}",
        "Content-Type: text/plain; charset=utf-8",
        f"Content-Length: {len(data)}",
        "Cache-Control: no-store",
        "Connection: close",
    ]
    if status == 405:
        lines.append("Allow: GET, HEAD")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + (b"" if head_only else data)
