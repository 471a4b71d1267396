"""Delivery targets: agent hosts that hand due reminders to something outside
the process, for frameworks (such as MCP) where the server cannot start a
model turn itself.

Both hosts send one JSON document per follow-up::

    {"key": "<id>@<occurrence_at>", "text": "<the exact framing>",
     "occurrences": [{"id": ..., "occurrenceAt": ..., "prompt": ...}],
     "session": "<session id>"}

* :class:`DeliverCommand` runs a command (an argv, no shell) with the
  document on its stdin: exit status 0 means delivered.
* :class:`DeliverUrl` POSTs the document (``application/json``): a 2xx
  status means delivered.

Anything else (non-zero exit, timeout, connection error, non-2xx) raises,
which tells the runtime "not taken": the follow-up stays in the session's
outbox and is handed over again with backoff, and after a restart. The
runtime marks it delivered in the log only after ``followup`` returns. A
crash between the target's success and that mark hands it over once more
after the restart, with the same ``key``, so a target that must never see a
repeat keeps the keys it has taken.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import os
import shlex
import signal
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Final
from urllib.parse import urlsplit

from tickler import __version__
from tickler.adapters.tools import missing_extra
from tickler.core.jstext import js_string
from tickler.shell.host import FollowUp, IdleClaim, ReleaseOnce

logger = logging.getLogger("tickler.delivery")

DEFAULT_COMMAND_TIMEOUT_S: Final = 30.0
DEFAULT_URL_TIMEOUT_S: Final = 10.0


class DeliveryFailed(Exception):
    """The target did not take a follow-up (it will be handed over again)."""


def followup_payload(message: FollowUp, session: str) -> bytes:
    """The JSON document a delivery target receives, UTF-8.

    Strings are written like ``JSON.stringify`` (non-ASCII kept, a lone
    surrogate escaped), as in the session log, so any prompt gives valid
    UTF-8.
    """
    occurrences = ",".join(
        f'{{"id":{js_string(o.id)},"occurrenceAt":{js_string(o.occurrence_at)},'
        f'"prompt":{js_string(o.prompt)}}}'
        for o in message.occurrences
    )
    return (
        f'{{"key":{js_string(message.key)},"text":{js_string(message.text)},'
        f'"occurrences":[{occurrences}],"session":{js_string(session)}}}'
    ).encode()


class _DeliveryHost(ABC):
    """The ``AgentHost`` part both targets share: the agent is never busy
    with a turn here, so a claim is granted unless a delivery is in flight;
    ``followup`` is idempotent per key within the process."""

    def __init__(self, session: str) -> None:
        self.session = session
        self._claimed = False
        self._idle = asyncio.Event()
        self._idle.set()
        self._taken: set[str] = set()

    def claim_idle(self) -> IdleClaim | None:
        if self._claimed:
            return None
        self._claimed = True
        self._idle.clear()
        return ReleaseOnce(self._release)

    async def when_idle(self) -> None:
        await self._idle.wait()

    async def followup(self, message: FollowUp) -> None:
        if message.key in self._taken:
            logger.info("delivery: %s was already delivered; dropping the repeat", message.key)
            return
        await self._send(message.key, followup_payload(message, self.session))
        self._taken.add(message.key)
        logger.info("delivery: %s delivered", message.key)

    def _release(self) -> None:
        self._claimed = False
        self._idle.set()

    @abstractmethod
    async def _send(self, key: str, payload: bytes) -> None:
        """Hand ``payload`` over; raise when it was not taken."""


class DeliverCommand(_DeliveryHost):
    """Deliver by running ``command`` with the follow-up JSON on stdin.

    ``command`` is an argv, or a string split with :func:`shlex.split` (no
    shell is involved). Exit status 0 means delivered; a non-zero status, a
    command that cannot be started, or one still running after ``timeout``
    seconds (it is then killed, with its process group) means not delivered.
    The command's stdout is discarded (the MCP server's stdout is the
    protocol); its stderr is the server's stderr.
    """

    def __init__(
        self,
        command: str | Sequence[str],
        *,
        session: str,
        timeout: float = DEFAULT_COMMAND_TIMEOUT_S,
        env: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(session)
        argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not argv:
            raise ValueError("the delivery command is empty")
        if not timeout > 0:  # NaN too
            raise ValueError("the delivery timeout must be positive")
        self.argv: tuple[str, ...] = tuple(argv)
        self.timeout = timeout
        self._env = None if env is None else dict(env)

    async def _send(self, key: str, payload: bytes) -> None:
        process = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.DEVNULL,
            env=self._env,
            start_new_session=True,  # its own process group: a timeout kills all of it
        )
        try:
            async with asyncio.timeout(self.timeout):
                await process.communicate(payload)
        except TimeoutError:
            raise DeliveryFailed(
                f"{self.argv[0]} did not finish within {self.timeout:g} s for {key}"
            ) from None
        finally:
            if process.returncode is None:
                _kill_group(process.pid)
                await process.wait()
        if process.returncode != 0:
            raise DeliveryFailed(f"{self.argv[0]} exited with {process.returncode} for {key}")


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


class DeliverUrl(_DeliveryHost):
    """Deliver by POSTing the follow-up JSON to ``url`` (http or https).

    A 2xx response means delivered; any other status, a connection error or
    no response within ``timeout`` seconds means not delivered. Redirects
    are not followed.
    """

    def __init__(
        self,
        url: str,
        *,
        session: str,
        timeout: float = DEFAULT_URL_TIMEOUT_S,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(session)
        if importlib.util.find_spec("httpx") is None:
            raise missing_extra("URL delivery", "mcp")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"the delivery URL must be an http(s) URL, not {url!r}")
        if not timeout > 0:  # NaN too
            raise ValueError("the delivery timeout must be positive")
        self.url = url
        self.timeout = timeout
        self._headers = {
            "content-type": "application/json",
            "user-agent": f"tickler/{__version__}",
            **(headers or {}),
        }

    async def _send(self, key: str, payload: bytes) -> None:
        try:
            import httpx
        except ImportError as exc:
            raise missing_extra("URL delivery", "mcp") from exc
        async with httpx.AsyncClient(timeout=self.timeout, follow_redirects=False) as client:
            response = await client.post(self.url, content=payload, headers=self._headers)
        if not response.is_success:
            raise DeliveryFailed(f"{self.url} answered HTTP {response.status_code} for {key}")
