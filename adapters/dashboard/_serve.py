"""Serving the dashboard: the listening socket, and uvicorn running the
app on it (the ``ui`` extra) until SIGINT or SIGTERM, which stop it at
once even while a page waits on a store that does not answer."""

from __future__ import annotations

import asyncio
import signal
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

from tickler.adapters._extras import missing_extra

try:
    import uvicorn
    from starlette.responses import PlainTextResponse
    from starlette.types import ASGIApp, Message, Receive, Scope, Send
except ImportError as exc:
    raise missing_extra("dashboard", "ui") from exc


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port`` (port 0: one the system picks).
    Connections made from now on wait in its backlog until the server
    serves them. Raises ``OSError``."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


def url_of(sock: socket.socket) -> str:
    """The page's address on ``sock`` (brackets around an IPv6 address)."""
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


class _Server(uvicorn.Server):
    """uvicorn's server, but SIGINT and SIGTERM only end the serving (the
    command then exits 0, as ``tickler worker`` does); uvicorn raises them
    again once it has shut down. They set ``stopping`` too, which cuts the
    pages being read (:class:`_CutOnStop`). A second SIGINT stops at once.
    Off the main thread (a server in a thread of a test) signals are not
    its own."""

    def __init__(self, config: uvicorn.Config, stopping: asyncio.Event) -> None:
        super().__init__(config)
        self._stopping = stopping

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, self._stop)
        try:
            yield
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.remove_signal_handler(sig)

    def _stop(self) -> None:
        if self.should_exit:
            self.force_exit = True
        self.should_exit = True
        self._stopping.set()


class _CutOnStop:
    """A page still being read when the server stops is answered 503 at
    once and its read left behind (cancelled; a read in a thread is a
    daemon's, see :mod:`tickler.adapters._off_loop`): a store that does
    not answer, or a read that hangs, cannot hold Ctrl-C."""

    def __init__(self, app: ASGIApp, stopping: asyncio.Event) -> None:
        self._app = app
        self._stopping = stopping

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            started = True
            await send(message)

        page = asyncio.ensure_future(self._app(scope, receive, tracked))
        stop = asyncio.ensure_future(self._stopping.wait())
        try:
            await asyncio.wait((page, stop), return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
        if page.done():
            page.result()  # its error, if any, as uvicorn would have had it
            return
        page.cancel()
        if not started:
            stopping = PlainTextResponse("503: the dashboard is stopping\n", status_code=503)
            await stopping(scope, receive, send)


# How long (seconds) a stop waits for a page before uvicorn cuts it; a
# page cut by _CutOnStop ends at once, so this bounds only what lingers.
DRAIN_S: Final = 1


async def serve(app: ASGIApp, sock: socket.socket) -> None:
    """Serve ``app`` on ``sock`` until SIGINT or SIGTERM, which answer the
    pages still being read 503 and stop the server at once. No access
    log: a request's URL may carry the token."""
    stopping = asyncio.Event()
    config = uvicorn.Config(
        _CutOnStop(app, stopping),
        log_config=None,
        access_log=False,
        lifespan="off",
        server_header=False,
        timeout_graceful_shutdown=DRAIN_S,
    )
    await _Server(config, stopping).serve(sockets=[sock])
