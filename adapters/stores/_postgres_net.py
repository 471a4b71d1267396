"""The PostgreSQL store's guards against a network that fails quietly.

A connection can stop answering without being closed: a frozen link, a
peer that lost power, a NAT or load balancer that forgot the flow (a
*half-open* connection: neither end is told). Nothing in libpq then ends a
query that was sent, so a worker's claim, lease renewal or commit would wait
forever. Two guards bound that wait:

* **A deadline on every round trip** (:func:`deadline`, :func:`sync_deadline`):
  when a block of statements on one connection has not finished within
  ``round_trip_s`` seconds, the connection's socket is shut down. libpq
  reads end-of-file at once, the statement fails ("server closed the
  connection unexpectedly"), the pool discards the connection and the next
  round trip gets a fresh one. Cancelling the query instead would wait for
  the server to confirm the cancel, over the same dead path. A statement
  that committed before its reply was lost is safe to repeat: the store's
  commit is idempotent under its lease (see :mod:`._postgres`).
* **TCP keepalive and a user timeout in the connection string**
  (:func:`with_tcp_guards`), unless the DSN sets them: an idle connection
  (the worker's ``LISTEN``, a pooled connection between polls) whose peer is
  gone is closed by the kernel within ``keepalives_idle`` + ``keepalives_count``
  x ``keepalives_interval`` seconds, and one whose sent data is not
  acknowledged within ``tcp_user_timeout``. These catch a peer whose kernel
  is gone; the round-trip deadline also catches a path that still
  acknowledges but never answers (a stalled proxy or server).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import socket
import threading
from collections.abc import Iterator
from typing import Final, Protocol

from tickler.adapters._extras import missing_extra

try:
    from psycopg.conninfo import conninfo_to_dict, make_conninfo
except ImportError as exc:
    raise missing_extra("PostgreSQL", "postgres") from exc

DEFAULT_ROUND_TRIP_S: Final = 30.0
"""The longest one round trip may take before its connection is cut (the
store uses a third of its lease, within these bounds)."""
MIN_ROUND_TRIP_S: Final = 5.0
"""A busy database or machine may take seconds over a statement: cutting it
sooner would only make it run again."""
KEEPALIVE_IDLE_S: Final = 10
KEEPALIVE_INTERVAL_S: Final = 5
KEEPALIVE_COUNT: Final = 3


class _PgConn(Protocol):
    @property
    def socket(self) -> int: ...


class _Conn(Protocol):
    @property
    def pgconn(self) -> _PgConn: ...


def round_trip_for(lease_s: float) -> float:
    """The default deadline of one round trip under a lease of ``lease_s``:
    a third of it (a renewal cut at its deadline leaves time for another
    before the lease ends), at least :data:`MIN_ROUND_TRIP_S` and at most
    :data:`DEFAULT_ROUND_TRIP_S`."""
    return min(DEFAULT_ROUND_TRIP_S, max(MIN_ROUND_TRIP_S, lease_s / 3))


def with_tcp_guards(dsn: str, round_trip_s: float) -> str:
    """``dsn`` with TCP keepalive (idle 10 s, then 3 probes 5 s apart) and a
    TCP user timeout of ``round_trip_s``, each unless the DSN sets it. Unix
    socket connections ignore them."""
    params = conninfo_to_dict(dsn)
    guards: dict[str, int] = {
        "keepalives": 1,
        "keepalives_idle": KEEPALIVE_IDLE_S,
        "keepalives_interval": KEEPALIVE_INTERVAL_S,
        "keepalives_count": KEEPALIVE_COUNT,
        "tcp_user_timeout": max(1000, math.ceil(round_trip_s * 1000)),
    }
    missing = {key: value for key, value in guards.items() if key not in params}
    return make_conninfo(dsn, **missing) if missing else dsn


def keepalive_bound_s() -> int:
    """How long the kernel takes at most to close an idle connection whose
    peer is gone, under :func:`with_tcp_guards`'s settings."""
    return KEEPALIVE_IDLE_S + KEEPALIVE_COUNT * KEEPALIVE_INTERVAL_S


class Cut:
    """Shuts a connection's socket down (once) when its deadline passes."""

    def __init__(self, conn: _Conn) -> None:
        self._conn = conn
        self.fired = False

    def __call__(self) -> None:
        self.fired = True
        with contextlib.suppress(Exception):  # already closed: nothing to cut
            fd = self._conn.pgconn.socket
            # A duplicate descriptor: shutdown acts on the connection, and
            # closing the duplicate leaves libpq's own descriptor alone.
            with socket.socket(fileno=os.dup(fd)) as sock:
                sock.shutdown(socket.SHUT_RDWR)


@contextlib.contextmanager
def deadline(conn: _Conn, seconds: float) -> Iterator[Cut]:
    """Cut ``conn`` if the block (on the running event loop) outlasts
    ``seconds``; the yielded :class:`Cut` says whether it did."""
    cut = Cut(conn)
    handle = asyncio.get_running_loop().call_later(seconds, cut)
    try:
        yield cut
    finally:
        handle.cancel()


@contextlib.contextmanager
def sync_deadline(conn: _Conn, seconds: float) -> Iterator[Cut]:
    """:func:`deadline` for a blocking connection (a timer thread cuts it)."""
    cut = Cut(conn)
    timer = threading.Timer(seconds, cut)
    timer.daemon = True
    timer.start()
    try:
        yield cut
    finally:
        timer.cancel()
