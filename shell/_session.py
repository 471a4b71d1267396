"""One way to open a session: ``async with open_session(store, id, host=...)``.

:func:`open_session` opens the session's log, builds its host from the
session (the factory gets the session, so the host may use its tools: the
host and the runtime need each other, and this is where that is solved),
starts the runtime and the host, and on the way out - however the block is
left: normally, by an exception, or by a cancelled task, cancelled again
during the teardown too - stops them in one order: the host's turns in
flight are drained (they finish, their tool calls answered by the live
runtime, for at most the drain timeout; a cancellation during the teardown
cuts them at once), then the runtime stops (a hand-over in flight gets its
grace), the host closes, a snapshot is saved, the log closes. A task the
timer heap ran only for this session is stopped as well, so nothing of the
session is left running. :func:`open_log_session` does the same over a log
the caller opened (a worker's claimed session).

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
from datetime import datetime, timedelta
from typing import Any, Generic, Literal, Protocol, TypeAlias, runtime_checkable

from returns.pipeline import is_successful
from returns.result import Failure
from typing_extensions import TypeVar

from tickler.core import (
    CORRUPT_LOG,
    DEFAULT_PROFILE,
    CorruptScheduleLog,
    Created,
    Deleted,
    Listed,
    NotFound,
    Profile,
    State,
    ToolCommand,
    Updated,
    render,
    tool_catalog,
)
from tickler.shell._clock import Clock, SystemClock
from tickler.shell._host import DRAIN_TIMEOUT_S, AgentHost, DrainingHost
from tickler.shell._pending import PendingDelivery
from tickler.shell._phase import Phase
from tickler.shell._ports import SessionLog, SessionStore
from tickler.shell._reminders import (
    Calendar,
    LocalTime,
    Reminder,
    ScheduleError,
    create_arguments,
    end_arguments,
    reminder_of,
    update_arguments,
)
from tickler.shell._runtime import (
    DISPOSE_GRACE_S,
    ScheduleRuntime,
    ToolResult,
    tool_result,
)
from tickler.shell._timers import TimerHeap, shared_timers

logger = logging.getLogger("tickler.session")

H = TypeVar("H", bound=AgentHost, default=AgentHost)
H_co = TypeVar("H_co", bound=AgentHost, default=AgentHost, covariant=True)
"""The type of a session's host (``Session[PydanticAIHost]``; plain
``Session`` is ``Session[AgentHost]``, and takes any session)."""

HostFactory: TypeAlias = Callable[["Session[H]"], H]
"""Builds the session's host (the agent, or a delivery target) from the
session: its ``tools`` for the model, its ``log``, ``clock`` and ``id``."""

Execute: TypeAlias = Callable[[ToolCommand], Awaitable[ToolResult]]
"""Runs a checked tool command to its outcome or closed error."""


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
    never raises for any arguments). A call on a session that is closing or
    closed raises :class:`~tickler.shell._host.SessionClosed` instead:
    nothing ran, and no text may read as if it had. Adapters translate
    these for a framework (``schedule_toolset(session.tools)``, ...)."""

    def __init__(
        self, execute: Execute, *, session_id: str = "", profile: Profile = DEFAULT_PROFILE
    ) -> None:
        self._execute = execute
        self._session_id = session_id
        self._profile: Profile = profile

    @property
    def profile(self) -> Profile:
        """The tool contract (``reference``: exactly v1; ``extended``: more)."""
        return self._profile

    @property
    def catalog(self) -> list[dict[str, Any]]:
        """Per tool: ``name``, ``description``, ``input_schema``, ``output_schema``."""
        return tool_catalog(profile=self._profile)

    async def result(self, name: str, args: object) -> ToolResult:
        """A tool call before it is shown: checked as the tool checks it
        (before the session's queue), then run in it."""
        return await tool_result(
            self._execute, name, args, session_id=self._session_id, profile=self._profile
        )

    async def call_tool(self, name: str, args: object) -> str:
        """The text the model sees for one call. Never raises for any
        ``args``; raises :class:`~tickler.shell._host.SessionClosed` once
        the session's runtime is stopping."""
        return render(await self.result(name, args))


def corrupt_session_tools(*, profile: Profile = DEFAULT_PROFILE) -> SessionTools:
    """The tools of a session its store refused to open as corrupt: a call
    of the right shape answers ``corrupt_schedule_log`` (as a runtime does
    for a corrupt log), a malformed one its own closed code first. Nothing
    is read or written, so the damaged files stay as they are for
    ``tickler check`` and a person to look at."""

    async def refuse(command: ToolCommand) -> ToolResult:
        return Failure(CORRUPT_LOG)

    return SessionTools(refuse, profile=profile)


class Session(Generic[H_co]):
    """An open session (see :func:`open_session`): its tools, its typed API,
    and what it is doing. Once the runtime stops (the block is being left),
    both raise :class:`~tickler.shell._host.SessionClosed`."""

    def __init__(
        self, log: SessionLog, clock: Clock, *, profile: Profile = DEFAULT_PROFILE
    ) -> None:
        self.log = log
        self.clock = clock
        self.profile: Profile = profile
        self.tools = SessionTools(self.execute, session_id=log.header.id, profile=profile)
        self._host: H_co | None = None
        self._runtime: ScheduleRuntime | None = None

    @property
    def id(self) -> str:
        return self.log.header.id

    @property
    def host(self) -> H_co:
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
        after: timedelta | None = None,
        at: datetime | LocalTime | None = None,
        every: timedelta | None = None,
        calendar: Calendar | None = None,
        request_id: str | None = None,
        until: datetime | LocalTime | None = None,
        count: int | None = None,
    ) -> Reminder:
        """Create a reminder: exactly one of ``after`` (a ``timedelta``),
        ``at`` (an aware ``datetime``, or a :class:`LocalTime`), ``every``
        (a ``timedelta`` of at least 300 s) or ``calendar`` (a
        :class:`Calendar`; extended profile). ``request_id`` makes a retry
        return the first reminder instead of a second (extended profile).
        ``until`` (as ``at``) and ``count`` end an ``every`` or ``calendar``
        series: no occurrence after ``until``, at most ``count`` of them
        (extended profile).
        Raises :class:`ScheduleError` for what the tool would refuse, with
        the same code and the message in this method's keywords."""
        args = create_arguments(
            prompt, after, at, every, calendar=calendar, request_id=request_id
        ) | end_arguments(until, count)
        outcome = await self._typed("schedule_create", args)
        assert isinstance(outcome, Created)
        return reminder_of(outcome.view)

    async def update(
        self,
        reminder_id: str,
        *,
        prompt: str | None = None,
        paused: bool | None = None,
        snooze: timedelta | None = None,
        after: timedelta | None = None,
        at: datetime | LocalTime | None = None,
        every: timedelta | None = None,
        calendar: Calendar | None = None,
        until: datetime | LocalTime | Literal["none"] | None = None,
        count: int | Literal["none"] | None = None,
    ) -> Reminder | None:
        """Change an active reminder in place (extended profile): a new
        ``prompt``; ``paused`` True/False to pause or resume (a resumed one
        waits for its next occurrence); ``snooze`` to move its next
        occurrence to now plus that; or reschedule it with one new selector
        (``after``, ``at``, ``every`` or ``calendar``, as :meth:`schedule`
        takes them; not with ``snooze``): its id, prompt and request id stay,
        its next occurrence follows the new selector (``every`` counted from
        now); ``until`` or ``count`` to change a series' end (``count``: the
        occurrences from now on; ``"none"`` removes that bound). None when
        no active reminder has that id; raises
        :class:`ScheduleError` for what the tool would refuse."""
        args = update_arguments(
            reminder_id, prompt, paused, snooze, after=after, at=at, every=every, calendar=calendar
        ) | end_arguments(until, count)
        outcome = await self._typed("schedule_update", args)
        assert isinstance(outcome, Updated | NotFound)
        return reminder_of(outcome.view) if isinstance(outcome, Updated) else None

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
        result = await self.tools.result(name, args)
        if not is_successful(result):
            raise ScheduleError.of(result.failure())
        return result.unwrap()

    async def execute(self, command: ToolCommand) -> ToolResult:
        """One checked tool command in the session's queue: the pipeline the
        tools and the typed API share."""
        return await self.runtime.execute(command)

    # -- lifecycle (open_session's) ------------------------------------------

    async def _stop(
        self,
        *,
        snapshot_after: int,
        timers: TimerHeap,
        drain_timeout_s: float,
        hurry: asyncio.Event,
    ) -> None:
        """The one teardown order; a step that fails is logged and the next
        still runs. Raises the first failure at the end. ``hurry`` (a
        cancellation during the teardown) cuts the drain short."""
        failures: list[BaseException] = []

        async def step(name: str, action: Callable[[], Awaitable[object]]) -> None:
            try:
                await action()
            except Exception as exc:  # noqa: BLE001 - every step runs; reported below
                logger.warning("session %s: %s failed: %s", self.id, name, exc)
                failures.append(exc)

        runtime, host = self._runtime, self._host
        host_object: object = host  # hosts drain and close in their own ways, or not at all
        if runtime is not None and isinstance(host_object, DrainingHost):
            # Before the runtime stops: the turns' tool calls are answered.
            drainable = host_object
            await step(
                "draining the host's turns", lambda: _drain(drainable, drain_timeout_s, hurry)
            )
        if runtime is not None:
            await step("stopping the runtime", runtime.dispose)
        await step("stopping the timers", timers.release)
        if isinstance(host_object, _AsyncCloses):
            await step("closing the host", host_object.aclose)
        elif isinstance(host_object, _Closes):
            await step("closing the host", host_object.close)
        if runtime is not None and self._due_snapshot(snapshot_after):
            # The runtime saves none when it never loaded the session.
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


async def _drain(host: DrainingHost, timeout_s: float, hurry: asyncio.Event) -> None:
    """``host.drain(timeout_s)``, cancelled (the host cuts its turns at
    once) when ``hurry`` is set meanwhile."""
    # The drain's task is scheduled first, so it has begun (and a cancel
    # cuts its turns) even when ``hurry`` is set already.
    drain = asyncio.ensure_future(host.drain(timeout_s))
    hurried = asyncio.ensure_future(hurry.wait())
    try:
        await asyncio.wait((drain, hurried), return_when=asyncio.FIRST_COMPLETED)
    finally:
        hurried.cancel()
    if not drain.done():
        drain.cancel()  # its turns are cut on purpose: not a failure of the teardown
    try:
        await drain
    except asyncio.CancelledError:
        if not drain.cancelled():
            raise  # not ours: the host's own


async def _start(
    session: Session[H], host: HostFactory[H], runtime: Callable[[AgentHost], ScheduleRuntime]
) -> None:
    built = session._host = host(session)
    session._runtime = runtime(built)
    # To its end even when our task is cancelled meanwhile: the log is read
    # in a thread, which must be done before the log is closed.
    await _to_the_end(session._runtime.start(), quiet=False)
    host_object: object = built  # a host may have turns of its own to start
    if isinstance(host_object, _Starts):
        host_object.start()


@asynccontextmanager
async def open_session(
    store: SessionStore,
    session_id: str,
    *,
    host: HostFactory[H],
    clock: Clock | None = None,
    timers: TimerHeap | None = None,
    dispose_grace_s: float = DISPOSE_GRACE_S,
    drain_timeout_s: float = DRAIN_TIMEOUT_S,
    snapshot_after: int = 0,
    profile: Profile = DEFAULT_PROFILE,
) -> AsyncIterator[Session[H]]:
    """Open ``session_id`` of ``store`` (creating it when absent) and run it
    for the ``async with`` block: the runtime delivers due reminders to the
    host ``host(session)`` builds, and the session's tools and typed API
    answer. On the way out, however the block is left, it first lets the
    host's turns in flight finish (a host with ``drain``, as
    ``ReferenceHost`` and the framework hosts: the messages sent in the
    block get their turns, their tool calls answered) for at most
    ``drain_timeout_s`` (10 s), cutting a turn still running then, or at
    once when the task is cancelled again during the teardown (a cut turn
    is recorded as cut and runs when the session is next opened). Then it
    stops the runtime (a hand-over in flight gets ``dispose_grace_s``),
    closes the host, saves a snapshot (when at least ``snapshot_after``
    events follow the last one; 0: always) and closes the log, which
    releases its lock or lease.
    ``timers`` is the timer heap (default: the process's, per event loop
    and clock); its task stops when no session has a wake left in it.
    ``profile`` is the tool contract: ``extended`` (the default) or
    ``reference`` (exactly the v1 contract, v1 events only).

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
        drain_timeout_s=drain_timeout_s,
        snapshot_after=snapshot_after,
        profile=profile,
    ) as session:
        yield session


@asynccontextmanager
async def open_log_session(
    log: SessionLog,
    *,
    host: HostFactory[H],
    clock: Clock | None = None,
    timers: TimerHeap | None = None,
    dispose_grace_s: float = DISPOSE_GRACE_S,
    drain_timeout_s: float = DRAIN_TIMEOUT_S,
    snapshot_after: int = 0,
    on_start_error: Callable[[Exception], None] | None = None,
    profile: Profile = DEFAULT_PROFILE,
) -> AsyncIterator[Session[H]]:
    """:func:`open_session` over a log the caller opened (and this closes):
    a worker's claimed session. ``on_start_error(exc)`` is called when the
    session cannot start (the log does not load, the host factory raises),
    before anything is torn down, so the caller can still mark the log (a
    worker sets the session aside or defers it); ``exc`` is raised after
    the teardown."""
    clock = clock if clock is not None else SystemClock()
    heap = timers if timers is not None else shared_timers(clock)
    session: Session[H] = Session(log, clock, profile=profile)

    def runtime(built: AgentHost) -> ScheduleRuntime:
        return ScheduleRuntime(
            log, built, clock, timers=heap, dispose_grace_s=dispose_grace_s, profile=profile
        )

    hurry = asyncio.Event()  # a cancellation during the teardown: cut the turns now

    def stop() -> Awaitable[None]:
        return session._stop(
            snapshot_after=snapshot_after,
            timers=heap,
            drain_timeout_s=drain_timeout_s,
            hurry=hurry,
        )

    try:
        try:
            await _start(session, host, runtime)
        except Exception as exc:
            if on_start_error is not None:
                on_start_error(exc)
            raise
        yield session
    except BaseException:
        await _to_the_end(stop(), quiet=True, on_cancel=hurry.set)
        raise
    await _to_the_end(stop(), quiet=False, on_cancel=hurry.set)


async def _to_the_end(
    work: Awaitable[None], *, quiet: bool, on_cancel: Callable[[], None] | None = None
) -> None:
    """Run ``work`` to its end even when the task running us is cancelled
    meanwhile, once or again (a cancelled task must leave no lock, lease,
    task or open file behind); the cancellation is raised after, and
    ``on_cancel`` is called at each one (to hurry ``work``). ``quiet``: the
    block already failed, so a failure of ``work`` is only logged."""
    task = asyncio.ensure_future(work)
    cancelled = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.done():
                break
            cancelled = True
            if on_cancel is not None:
                on_cancel()
        except Exception:  # noqa: BLE001 - the task's own error, taken from it below
            break
    error = None if task.cancelled() else task.exception()
    if error is not None and not quiet:
        raise error
    if cancelled:
        raise asyncio.CancelledError


__all__ = [
    "Calendar",
    "HostFactory",
    "LocalTime",
    "Reminder",
    "ScheduleError",
    "Session",
    "SessionTools",
    "corrupt_session_tools",
    "open_log_session",
    "open_session",
]
