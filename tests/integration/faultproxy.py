"""A fault-injecting TCP proxy for the tests: clients connect to it on
127.0.0.1 (loopback only), it connects each to the upstream (PostgreSQL)
and forwards the bytes both ways, until told to misbehave:

* :meth:`FaultProxy.delay`: every chunk, either way, waits ``ms`` first
  (order kept), on every connection, current and new;
* :meth:`FaultProxy.freeze`: nothing is forwarded either way, on every
  connection, current and new; the sockets stay open, and what was held is
  forwarded after :meth:`FaultProxy.heal` (a link that stalls, then recovers);
* :meth:`FaultProxy.down`: the current connections are closed (FIN) and new
  ones are closed as soon as they are accepted, until ``heal``;
* :meth:`FaultProxy.drop`: the current connections are closed, both sides;
* :meth:`FaultProxy.half_open`: the current connections go silent for good:
  nothing more is forwarded and nothing is ever closed, so the server still
  thinks the client is there and the client waits for an answer that never
  comes; new connections pass (a peer that vanished, a NAT that forgot the
  flow). The proxy's own kernel still acknowledges what the client sends,
  so TCP keepalive does not see it: only the client's own deadline does;
* :meth:`FaultProxy.reset`: the current connections are reset (RST, by
  ``SO_LINGER`` 0), both sides; with ``before_reply`` at the next request
  in flight instead: the request reaches the server, its reply is thrown
  away, then both sides are reset (the statement ran; the client cannot
  know).

:meth:`FaultProxy.heal` ends ``delay``, ``freeze`` and ``down``.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
from dataclasses import dataclass, field

from psycopg.conninfo import conninfo_to_dict, make_conninfo

_CHUNK = 64 * 1024


@dataclass(eq=False)
class _Link:
    client: asyncio.StreamWriter
    server: asyncio.StreamWriter
    tasks: list[asyncio.Task[None]] = field(default_factory=list)
    silent: bool = False  # half-open: never forwards again, never closes
    reset_on_reply: bool = False  # reset when the reply to a forwarded request comes
    requested: bool = False  # a request was forwarded since reset_on_reply was set
    closed: bool = False


class FaultProxy:
    """See the module docstring. ``start`` listens on an ephemeral port."""

    def __init__(self, upstream_host: str, upstream_port: int) -> None:
        self.upstream = (upstream_host, upstream_port)
        self.port = 0
        self.accepted = 0  # connections accepted since the start
        self._links: set[_Link] = set()  # open, not silent
        self._every: list[_Link] = []  # every link ever made (closed at the end)
        self.server_notices_s = 10.0  # a silent link's server side closes after this
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._delay_s = 0.0
        self._down = False
        self._server: asyncio.Server | None = None

    @classmethod
    def for_dsn(cls, dsn: str) -> FaultProxy:
        params = conninfo_to_dict(dsn)
        return cls(str(params.get("host") or "127.0.0.1"), int(str(params.get("port") or 5432)))

    def dsn(self, dsn: str) -> str:
        """``dsn`` pointed at this proxy."""
        return make_conninfo(dsn, host="127.0.0.1", port=self.port)

    async def start(self) -> FaultProxy:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        self._flowing.set()
        tasks = [task for link in self._every for task in link.tasks]
        for link in list(self._every):
            self._close(link, reset=True)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()

    @property
    def links(self) -> int:
        """Connections open and forwarding now."""
        return len(self._links)

    # -- faults -------------------------------------------------------------

    def heal(self) -> None:
        self._delay_s = 0.0
        self._down = False
        self._flowing.set()

    def delay(self, ms: float) -> None:
        self._delay_s = ms / 1000

    def freeze(self) -> None:
        self._flowing.clear()

    def down(self) -> None:
        self._down = True
        self.drop()

    def drop(self) -> None:
        for link in list(self._links):
            self._close(link, reset=False)

    def half_open(self) -> None:
        """See the module docstring. The server's side of a silent link is
        closed ``server_notices_s`` later (as the server's own keepalive
        would), so silent links do not pile up server connections."""
        loop = asyncio.get_running_loop()
        for link in list(self._links):
            link.silent = True
            self._links.discard(link)
            loop.call_later(self.server_notices_s, link.server.close)

    def reset(self, *, before_reply: bool = False) -> None:
        for link in list(self._links):
            if before_reply:
                link.reset_on_reply, link.requested = True, False
            else:
                self._close(link, reset=True)

    # -- forwarding ---------------------------------------------------------

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        if self._down:
            writer.close()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            writer.close()
            return
        link = _Link(writer, up_writer)
        self._links.add(link)
        self._every.append(link)
        loop = asyncio.get_running_loop()
        link.tasks = [
            loop.create_task(self._pump(link, reader, up_writer, upstream=True)),
            loop.create_task(self._pump(link, up_reader, writer, upstream=False)),
        ]

    async def _pump(
        self,
        link: _Link,
        source: asyncio.StreamReader,
        target: asyncio.StreamWriter,
        *,
        upstream: bool,
    ) -> None:
        try:
            while not link.closed:
                data = await source.read(_CHUNK)
                if not data:
                    break
                await self._gate(link)
                if _closed(link):  # while the chunk waited
                    return
                if not upstream and link.reset_on_reply and link.requested:
                    self._close(link, reset=True)  # the reply is thrown away
                    return
                target.write(data)
                await target.drain()
                if upstream and link.reset_on_reply:
                    link.requested = True
        except (OSError, asyncio.IncompleteReadError):
            pass
        if not link.silent:
            self._close(link, reset=False)

    async def _gate(self, link: _Link) -> None:
        """Wait until this chunk may go: never for a silent link."""
        if link.silent:
            await asyncio.Event().wait()  # cancelled only by close()
        if self._delay_s:
            await asyncio.sleep(self._delay_s)
        await self._flowing.wait()
        if link.silent:
            await asyncio.Event().wait()

    def _close(self, link: _Link, *, reset: bool) -> None:
        if link.closed:
            return
        link.closed = True
        self._links.discard(link)
        for writer in (link.client, link.server):
            if reset:
                sock = writer.get_extra_info("socket")
                if sock is not None:
                    with contextlib.suppress(OSError):
                        sock.setsockopt(
                            socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                        )
                writer.transport.abort()
            else:
                writer.close()
        current = asyncio.current_task()
        for task in link.tasks:
            if task is not current:
                task.cancel()


def _closed(link: _Link) -> bool:
    return link.closed
