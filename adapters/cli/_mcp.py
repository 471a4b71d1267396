"""``tickler mcp``: serve one session of a JSONL store over stdio (the
library part is :mod:`tickler.adapters.mcp._server`)."""

from __future__ import annotations

import asyncio
import logging

from tickler.adapters.cli._options import configure_logging
from tickler.adapters.delivery._target import TargetFactory, delivery_target
from tickler.adapters.mcp._server import require_mcp, serve_corrupt, serve_stdio
from tickler.adapters.stores._files import CorruptStore
from tickler.core import DEFAULT_PROFILE, Profile
from tickler.shell import StoreError, validate_session_id

logger = logging.getLogger("tickler.mcp")


def mcp_target(
    deliver_cmd: str | None, deliver_url: str | None, *, timeout: float | None = None
) -> TargetFactory:
    """The delivery target of exactly one of ``--deliver-cmd`` and
    ``--deliver-url`` (raises ``ValueError`` otherwise, or for an empty or
    missing command, or a non-http URL: both are checked now, not at the
    first delivery)."""
    if (deliver_cmd is None) == (deliver_url is None):
        raise ValueError("give exactly one delivery target: --deliver-cmd or --deliver-url")
    return delivery_target(command=deliver_cmd, url=deliver_url, timeout=timeout)


def run_mcp(
    store_dir: str,
    session_id: str,
    deliver_cmd: str | None,
    deliver_url: str | None,
    *,
    deliver_timeout: float | None = None,
    profile: Profile = DEFAULT_PROFILE,
) -> None:
    """Serve one session of the JSONL store in ``store_dir`` over stdio until
    the client disconnects. Raises ``ValueError`` for bad arguments,
    ``StoreError`` (``SessionLocked``, ``InvalidSessionId``) from the store,
    ``ImportError`` without the ``mcp`` extra."""
    require_mcp()
    deliver = mcp_target(deliver_cmd, deliver_url, timeout=deliver_timeout)
    from tickler.adapters.stores._jsonl import JsonlStore

    async def serve() -> None:
        try:
            store = JsonlStore(store_dir)
        except CorruptStore as exc:  # a damaged journal: every session is suspect
            await serve_corrupt(session_id, exc, profile=profile)
            return
        try:
            await serve_stdio(store, session_id, deliver, profile=profile)
        finally:
            await store.close()

    asyncio.run(serve())


def serve_command(
    store_dir: str,
    session_id: str,
    deliver_cmd: str | None,
    deliver_url: str | None,
    *,
    deliver_timeout: float | None = None,
    profile: Profile = DEFAULT_PROFILE,
    log_level: str = "INFO",
    log_format: str = "text",
) -> int:
    """What ``tickler mcp`` does: check the options, then serve until the
    client disconnects. Returns the exit status: 0 after the client
    disconnected, 1 when the server could not run (the session is locked,
    the ``mcp`` extra is missing). Raises ``ValueError`` for usage errors
    (a bad session id, not exactly one target, a delivery program that is
    not there, a bad URL or timeout) before anything is created."""
    validate_session_id(session_id)
    try:
        mcp_target(deliver_cmd, deliver_url, timeout=deliver_timeout)
        configure_logging(log_level, log_format)
        run_mcp(
            store_dir,
            session_id,
            deliver_cmd,
            deliver_url,
            deliver_timeout=deliver_timeout,
            profile=profile,
        )
    except (ImportError, StoreError) as exc:
        logger.error("%s", exc)
        return 1
    return 0
