"""Serving the dashboard: the loopback rule, the listening socket, and
uvicorn running the app on it (the ``ui`` extra)."""

from __future__ import annotations

import asyncio
import signal
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from tickler.adapters._extras import missing_extra

try:
    import uvicorn
    from starlette.types import ASGIApp
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
    again once it has shut down. A second SIGINT stops at once. Off the
    main thread (a server in a thread of a test) signals are not its own."""

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


async def serve(app: ASGIApp, sock: socket.socket) -> None:
    """Serve ``app`` on ``sock`` until SIGINT or SIGTERM. No access log:
    a request's URL may carry the token."""
    config = uvicorn.Config(
        app, log_config=None, access_log=False, lifespan="off", server_header=False
    )
    await _Server(config).serve(sockets=[sock])
