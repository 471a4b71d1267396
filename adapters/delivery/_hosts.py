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

(:class:`~tickler.adapters.delivery._callable.DeliverCallable` calls a
Python function instead.)
:func:`~tickler.adapters.delivery._target.delivery_target` makes the host
factory of any of them for ``open_session(..., host=...)``, ``tickler mcp``
and ``tickler worker``.

Each attempt has one total deadline (``timeout``) covering everything:
starting the command, writing its stdin and waiting for it; or connecting,
sending, and reading the status line, the headers and at most
:data:`MAX_RESPONSE_BODY` bytes of the body. A target that answers slowly
cannot hold an attempt past it.

Anything else (non-zero exit, deadline passed, connection error, non-2xx)
raises :class:`DeliveryFailed`, which tells the runtime "not taken": the
follow-up stays in the session's outbox and is handed over again with
backoff, and after a restart. The runtime marks it delivered in the log only
after ``followup`` returns. A crash between the target's success and that
mark hands it over once more after the restart, with the same ``key``, so a
target that must never see a repeat keeps the keys it has taken.

:meth:`DeliveryHost.aclose` stops a host at shutdown: the attempt in flight
ends at once (a command is killed with its process group), not at its
deadline. A command never outlives the server, even one killed by SIGKILL:
see :mod:`tickler.adapters.delivery._supervisor`.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import os
import shlex
import shutil
import signal
import sys
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Final
from urllib.parse import urlsplit

from tickler._version import __version__
from tickler.adapters._extras import missing_extra
from tickler.core import js_string
from tickler.shell import FollowUp, IdleClaim, ReleaseOnce

logger = logging.getLogger("tickler.delivery")

DEFAULT_COMMAND_TIMEOUT_S: Final = 30.0
DEFAULT_URL_TIMEOUT_S: Final = 10.0
MAX_RESPONSE_BODY: Final = 64 * 1024
"""Bytes of a URL target's response body read at most (only the status
counts; the rest is never waited for)."""

_SUPERVISOR: Final = Path(__file__).with_name("_supervisor.py")
_SUPERVISOR_GRACE_S: Final = 10.0  # it kills and reaps within milliseconds


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


class DeliveryHost(ABC):
    """The ``AgentHost`` part both targets share: the agent is never busy
    with a turn here, so a claim is granted unless a delivery is in flight;
    ``followup`` is idempotent per key within the process; ``aclose`` ends
    the attempts in flight and refuses later ones."""

    timeout: float

    def __init__(self, session: str) -> None:
        self.session = session
        self._claimed = False
        self._idle = asyncio.Event()
        self._idle.set()
        self._taken: set[str] = set()
        self._closed = False
        self._sending: set[asyncio.Task[None]] = set()

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
        if self._closed:
            raise DeliveryFailed(f"the delivery target is closed; {message.key} was not sent")
        # A task of its own, so that aclose can end it without cancelling
        # the caller; the caller's cancellation still reaches it.
        sending = asyncio.ensure_future(self._deliver(message))
        self._sending.add(sending)
        try:
            await sending
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if (current is None or not current.cancelling()) and self.closed:
                raise DeliveryFailed(
                    f"the delivery target was closed while sending {message.key}"
                ) from None
            raise  # our caller was cancelled
        finally:
            self._sending.discard(sending)
        self._taken.add(message.key)
        logger.info("delivery: %s delivered", message.key)

    @property
    def closed(self) -> bool:
        """True once :meth:`aclose` was called."""
        return self._closed

    async def aclose(self) -> None:
        """Stop at shutdown: the attempt in flight ends now (a command is
        killed with its process group, a request is dropped) and fails as
        not taken; later follow-ups are refused. Idempotent."""
        self._closed = True
        sending = tuple(self._sending)
        for task in sending:
            task.cancel()
        await asyncio.gather(*sending, return_exceptions=True)

    def _release(self) -> None:
        self._claimed = False
        self._idle.set()

    async def _deliver(self, message: FollowUp) -> None:
        await self._send(message.key, followup_payload(message, self.session))

    @abstractmethod
    async def _send(self, key: str, payload: bytes) -> None:
        """Hand ``payload`` over within ``self.timeout``; raise
        :class:`DeliveryFailed` when it was not taken."""


def _positive(timeout: float) -> float:
    if not timeout > 0:  # NaN too
        raise ValueError("the delivery timeout must be positive")
    return timeout


class DeliverCommand(DeliveryHost):
    """Deliver by running ``command`` with the follow-up JSON on stdin.

    ``command`` is an argv, or a string split with :func:`shlex.split`: no
    shell is involved, so pipes, redirections and shell built-ins need an
    explicit ``sh -c '...'``. The program must exist (on the ``PATH`` of
    ``env`` when given) when the host is made, or ``ValueError`` says so.

    Exit status 0 means delivered; a non-zero status, a signal, a command
    that cannot be started, or one still running ``timeout`` seconds after
    the attempt began (it is then killed, with its process group) means not
    delivered. The command's stdout is discarded (the MCP server's stdout is
    the protocol); its stderr is the server's stderr.

    The command runs under a small supervisor in a process group of its own
    (POSIX): the group is killed at the deadline, by :meth:`aclose`, and
    when the server process dies, even by SIGKILL. A process that leaves
    the group on purpose (``setsid``) escapes this.
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
        self.timeout = _positive(timeout)
        self._env = None if env is None else dict(env)
        _check_program(argv[0], self._env)
        self.argv: tuple[str, ...] = tuple(argv)

    async def _send(self, key: str, payload: bytes) -> None:
        # The lifeline: the supervisor kills the command's group when this
        # pipe's write end closes, which the kernel does when we die.
        lifeline, keep = os.pipe()
        process: asyncio.subprocess.Process | None = None
        try:
            async with asyncio.timeout(self.timeout):
                try:
                    process = await self._start(lifeline)
                finally:
                    os.close(lifeline)
                report, _ = await process.communicate(payload)
        except TimeoutError:
            raise DeliveryFailed(
                f"{self.argv[0]} did not finish within {self.timeout:g} s for {key}"
            ) from None
        except OSError as exc:
            raise DeliveryFailed(
                f"could not start the delivery supervisor for {key}: {exc}"
            ) from exc
        finally:
            os.close(keep)  # a supervisor still running kills the command now
            if process is not None and process.returncode is None:
                await _reaped(process)
        self._judge(report.decode(errors="replace").strip(), process.returncode, key)

    async def _start(self, lifeline: int) -> asyncio.subprocess.Process:
        return await asyncio.create_subprocess_exec(
            sys.executable or "python3",
            "-I",  # isolated: no PYTHON* variables, no user site, no script dir
            "-S",  # the standard library only: starts fast
            str(_SUPERVISOR),
            str(lifeline),
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,  # the supervisor's one-line report
            env=self._env,
            start_new_session=True,  # a group of its own, to kill as one
            pass_fds=(lifeline,),
        )

    def _judge(self, report: str, supervisor_status: int | None, key: str) -> None:
        kind, _, detail = report.partition(" ")
        if kind == "exit" and detail == "0":
            return
        name = self.argv[0]
        if kind == "exit":
            raise DeliveryFailed(f"{name} exited with {detail} for {key}")
        if kind == "signal":
            raise DeliveryFailed(f"{name} was killed by signal {detail} for {key}")
        if kind == "error":
            raise DeliveryFailed(f"{name} could not be started for {key}: {detail}")
        if kind == "cut":
            raise DeliveryFailed(f"{name} was killed (the delivery was cut short) for {key}")
        raise DeliveryFailed(
            f"the supervisor of {name} ended with status {supervisor_status} "
            f"without a report for {key}"
        )


def _check_program(program: str, env: Mapping[str, str] | None) -> None:
    """Refuse a program that cannot run, now rather than at the first
    reminder (looked up as the command will be: on ``env``'s PATH)."""
    path = os.pathsep.join(os.get_exec_path(env))
    if shutil.which(program, path=path) is not None:
        return
    candidates = (
        [Path(program)]
        if os.sep in program
        else [Path(d or ".", program) for d in path.split(os.pathsep)]
    )
    if any(c.is_file() for c in candidates):
        raise ValueError(f"the delivery command is not executable: {program}")
    raise ValueError(
        f"delivery command not found: {program} (it runs without a shell; "
        "for pipes, redirections or shell built-ins give sh -c '...')"
    )


async def _reaped(supervisor: asyncio.subprocess.Process) -> None:
    """Wait for a supervisor whose lifeline was closed to kill and reap its
    command; one that does not end soon is killed itself."""
    # wait_for, not asyncio.timeout: this may run in a task already
    # cancelled once (aclose), where a timeout would not fire as one.
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(supervisor.wait(), _SUPERVISOR_GRACE_S)
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(supervisor.pid, signal.SIGKILL)
    await supervisor.wait()


class DeliverUrl(DeliveryHost):
    """Deliver by POSTing the follow-up JSON to ``url`` (http or https).

    A 2xx status means delivered; any other status, a connection error or
    no complete answer (headers and up to :data:`MAX_RESPONSE_BODY` bytes of
    body) within ``timeout`` seconds of the attempt's start means not
    delivered. Redirects are not followed.
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
        self.url = url
        self.timeout = _positive(timeout)
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
        try:
            # httpx's own timeout applies per read; the total is ours.
            async with (
                asyncio.timeout(self.timeout),
                httpx.AsyncClient(timeout=self.timeout, follow_redirects=False) as client,
                client.stream("POST", self.url, content=payload, headers=self._headers) as answer,
            ):
                read = 0
                async for chunk in answer.aiter_raw():
                    read += len(chunk)
                    if read >= MAX_RESPONSE_BODY:
                        break  # closing the stream drops the connection
        except (TimeoutError, httpx.TimeoutException):
            raise DeliveryFailed(
                f"{self.url} did not answer within {self.timeout:g} s for {key}"
            ) from None
        except httpx.HTTPError as exc:
            raise DeliveryFailed(f"could not reach {self.url} for {key}: {exc!r}") from exc
        if not answer.is_success:
            raise DeliveryFailed(f"{self.url} answered HTTP {answer.status_code} for {key}")
