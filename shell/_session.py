"""One way to open a session: ``async with open_session(store, id, host=...)``.

:func:`open_session` opens the session's log, builds its host from the
session (the factory gets the session, so the host may use its tools: the
host and the runtime need each other, and this is where that is solved),
starts the runtime and the host, and on the way out - however the block is
left: normally, by an exception, or by a cancelled task - stops them in one
order: the runtime (a hand-over in flight gets its grace), the host, a
snapshot, the log. :func:`open_log_session` does the same over a log the
caller opened (a worker's claimed session).

The :class:`Session` it yields carries the model's tools (``session.tools``)
and a typed API for programs (``schedule``, ``reminders``, ``cancel``) that
goes through the same pipeline: the same rules, the same events, the same
durability barrier, with a :class:`Reminder` back or a
:class:`ScheduleError` raised.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any, Protocol, runtime_checkable

from returns.pipeline import is_successful

from tickler.core import (
    CorruptScheduleLog,
    Created,
    Deleted,
    Listed,
    NotFound,
    State,
    ToolCommand,
    parse_tool_call,
    render,
    tool_catalog,
)
from tickler.shell import _telemetry
from tickler.shell._clock import Clock, SystemClock
from tickler.shell._host import AgentHost
from tickler.shell._pending import PendingDelivery
from tickler.shell._ports import SessionLog, SessionStore
from tickler.shell._reminders import (
    LocalTime,
    Reminder,
    ScheduleError,
    create_arguments,
    reminder_of,
)
from tickler.shell._runtime import DISPOSE_GRACE_S, Phase, ScheduleRuntime, ToolResult
from tickler.shell._timers import TimerHeap

logger = logging.getLogger("tickler.session")

HostFactory = Callable[["Session"], AgentHost]
"""Builds the session's host (the agent, or a delivery target) from the
session: its ``tools`` for the model, its ``log``, ``clock`` and ``id``."""


@runtime_checkable
class _Starts(Protocol):
    def start(self) -> None: ...


@runtime_checkable
class _Closes(Protocol):
    async def close(self) -> None: ...


@runtime_checkable
class _AsyncCloses(Protocol):
    async def aclose(self) -> None: ...


class SessionTools:
    """The schedule tools of one session, as a model gets them: each call
    answers the exact text the model sees (closed error codes included; it
    never raises for any arguments). Adapters translate these for a
    framework (``schedule_toolset(session.tools)``, ...)."""

    def __init__(self, session: Session) -> None:
        self._session = session

    @property
    def catalog(self) -> list[dict[str, Any]]:
        """Per tool: ``name``, ``description``, ``input_schema``, ``output_schema``."""
        return tool_catalog()

    async def call_tool(self, name: str, args: object) -> str:
        return render(await self._session.tool_result(name, args))


class Session:
    """An open session (see :func:`open_session`): its tools, its typed API,
    and what it is doing."""

    def __init__(self, log: SessionLog, clock: Clock) -> None:
        self.log = log
        self.clock = clock
        self.tools = SessionTools(self)
        self._host: AgentHost | None = None
        self._runtime: ScheduleRuntime | None = None

    @property
    def id(self) -> str:
        return self.log.header.id

    @property
    def host(self) -> AgentHost:
        """The host the factory built."""
        if self._host is None:
            raise RuntimeError("the session's host is being built")
        return self._host

    @property
    def runtime(self) -> ScheduleRuntime:
        """The session's runtime (the session starts and stops it)."""
        if self._runtime is None:
            raise RuntimeError("the session is not started yet")
        return self._runtime

    @property
    def phase(self) -> Phase:
        return Phase.NEW if self._runtime is None else self._runtime.phase

    @property
    def state(self) -> State:
        return self.runtime.state

    @property
    def fault(self) -> CorruptScheduleLog | None:
        """Why deliveries stopped (a corrupt log), or None."""
        return self.runtime.fault

    @property
    def pending_deliveries(self) -> tuple[PendingDelivery, ...]:
        return self.runtime.pending_deliveries

    async def settle(self) -> bool:
        """Run the delivery work due now to its end (see
        :meth:`ScheduleRuntime.settle`)."""
        return await self.runtime.settle()

    # -- the typed API ------------------------------------------------------

    async def schedule(
        self,
        prompt: str,
        *,
        after: Any = None,
        at: Any = None,
        every: Any = None,
    ) -> Reminder:
        """Create a reminder: exactly one of ``after`` (a ``timedelta``),
        ``at`` (an aware ``datetime``, or a :class:`LocalTime`) or ``every``
        (a ``timedelta`` of at least 300 s). Raises :class:`ScheduleError`
        for what the tool would refuse, with the same code and message."""
        outcome = await self._typed("schedule_create", create_arguments(prompt, after, at, every))
        assert isinstance(outcome, Created)
        return reminder_of(outcome.view)

    async def reminders(self) -> tuple[Reminder, ...]:
        """The active reminders, in creation order."""
        outcome = await self._typed("schedule_list", {})
        assert isinstance(outcome, Listed)
        return tuple(reminder_of(view) for view in outcome.views)

    async def cancel(self, reminder_id: str) -> bool:
        """Delete an active reminder: True, or False when no active reminder
        has that id. Raises :class:`ScheduleError` for a malformed id."""
        outcome = await self._typed("schedule_delete", {"id": reminder_id})
        assert isinstance(outcome, Deleted | NotFound)
        return isinstance(outcome, Deleted)

    async def _typed(self, name: str, args: Mapping[str, object]) -> object:
        result = await self.tool_result(name, args)
        if not is_successful(result):
            raise ScheduleError.of(result.failure())
        return result.unwrap()

    async def tool_result(self, name: str, args: object) -> ToolResult:
        """A tool call before it is shown: checked as the tool checks it
        (before the session's queue), then run in it."""
        parsed = parse_tool_call(name, args)
        if not is_successful(parsed):
            _telemetry.refused_call(self.id, name, parsed.failure())
            return parsed  # type: ignore[return-value] # a failure holds no command
        return await self.execute(parsed.unwrap())

    async def execute(self, command: ToolCommand) -> ToolResult:
        return await self.runtime.execute(command)

    # -- lifecycle (open_session's) ------------------------------------------

    async def _start(
        self, host: HostFactory, runtime: Callable[[AgentHost], ScheduleRuntime]
    ) -> None:
        self._host = host(self)
        self._runtime = runtime(self._host)
        await self._runtime.start()
        if isinstance(self._host, _Starts):
            self._host.start()

    async def _stop(self, *, snapshot_after: int) -> None:
        """The one teardown order; a step that fails is logged and the next
        still runs. Raises the first failure at the end."""
        failures: list[BaseException] = []

        async def step(name: str, action: Callable[[], Awaitable[object]]) -> None:
            try:
                await action()
            except Exception as exc:  # noqa: BLE001 - every step runs; reported below
                logger.warning("session %s: %s failed: %s", self.id, name, exc)
                failures.append(exc)

        runtime, host = self._runtime, self._host
        if runtime is not None:
            await step("stopping the runtime", runtime.dispose)
        host_object: object = host  # hosts close in one of two ways, or not at all
        if isinstance(host_object, _AsyncCloses):
            await step("closing the host", host_object.aclose)
        elif isinstance(host_object, _Closes):
            await step("closing the host", host_object.close)
        if (
            runtime is not None
            and runtime.phase is Phase.STOPPED
            and self._due_snapshot(snapshot_after)
        ):
            await step("saving a snapshot", runtime.save_snapshot)
        await step("closing the log", self.log.close)
        if failures:
            raise failures[0]

    def _due_snapshot(self, snapshot_after: int) -> bool:
        """Whether at least ``snapshot_after`` events follow the last snapshot."""
        if snapshot_after <= 0:
            return True
        snapshot = self.log.load_snapshot()
        return self.log.length - (0 if snapshot is None else snapshot.through) >= snapshot_after


@asynccontextmanager
async def open_session(
    store: SessionStore,
    session_id: str,
    *,
    host: HostFactory,
    clock: Clock | None = None,
    timers: TimerHeap | None = None,
    dispose_grace_s: float = DISPOSE_GRACE_S,
    snapshot_after: int = 0,
) -> AsyncIterator[Session]:
    """Open ``session_id`` of ``store`` (creating it when absent) and run it
    for the ``async with`` block: the runtime delivers due reminders to the
    host ``host(session)`` builds, and the session's tools and typed API
    answer. On the way out, however the block is left, it stops the runtime
    (a hand-over in flight gets ``dispose_grace_s``), closes the host, saves
    a snapshot (when at least ``snapshot_after`` events follow the last
    one; 0: always) and closes the log, which releases its lock or lease.

    Raises what ``store.open`` raises (``SessionLocked``, ``InvalidSessionId``,
    a corrupt store's error) before anything starts."""
    clock = clock if clock is not None else SystemClock()
    log = await store.open(session_id, created_at=clock.now_ms())
    async with open_log_session(
        log,
        host=host,
        clock=clock,
        timers=timers,
        dispose_grace_s=dispose_grace_s,
        snapshot_after=snapshot_after,
    ) as session:
        yield session


@asynccontextmanager
async def open_log_session(
    log: SessionLog,
    *,
    host: HostFactory,
    clock: Clock | None = None,
    timers: TimerHeap | None = None,
    dispose_grace_s: float = DISPOSE_GRACE_S,
    snapshot_after: int = 0,
) -> AsyncIterator[Session]:
    """:func:`open_session` over a log the caller opened (and this closes):
    a worker's claimed session."""
    clock = clock if clock is not None else SystemClock()
    session = Session(log, clock)

    def runtime(built: AgentHost) -> ScheduleRuntime:
        return ScheduleRuntime(log, built, clock, timers=timers, dispose_grace_s=dispose_grace_s)

    try:
        await session._start(host, runtime)
        yield session
    except BaseException:
        await _to_the_end(session._stop(snapshot_after=snapshot_after), quiet=True)
        raise
    await _to_the_end(session._stop(snapshot_after=snapshot_after), quiet=False)


async def _to_the_end(teardown: Awaitable[None], *, quiet: bool) -> None:
    """Run ``teardown`` to its end even when the task running us is
    cancelled meanwhile (a cancelled task must leave no lock, lease, task or
    open file behind); the cancellation is raised after. ``quiet``: the
    block already failed, so a teardown failure is only logged."""
    task = asyncio.ensure_future(teardown)
    cancelled = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.done():
                break
            cancelled = True
        except Exception:  # noqa: BLE001 - the task's own error, taken from it below
            break
    error = None if task.cancelled() else task.exception()
    if error is not None and not quiet:
        raise error
    if cancelled:
        raise asyncio.CancelledError


__all__ = [
    "HostFactory",
    "LocalTime",
    "Reminder",
    "ScheduleError",
    "Session",
    "SessionTools",
    "open_log_session",
    "open_session",
]
