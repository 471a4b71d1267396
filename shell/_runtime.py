"""``ScheduleRuntime``: executes the core's decisions for one session.

One FIFO per session for tool calls and deliveries; a flush before every
read and a barrier after every write; state kept incrementally (the state
each ``core.decide`` returns with its changes); due reminders delivered
through an outbox (dispatch changes and the follow-up in one atomic append,
flushed before the host hears of it); the hand-over to the host outside
the FIFO, so a slow or hung host never delays a tool call; one
process-wide timer heap; failed flushes and hand-overs retried with backoff
instead of waiting for the next activity.

The runtime is a facade over its jobs: the unit of work of a tool call
(:mod:`~tickler.shell._unit_of_work`), the deliverer
(:mod:`~tickler.shell._deliverer`, with :mod:`~tickler.shell._handover` and
:mod:`~tickler.shell._handover_failures`), and telemetry, which observes
them (:mod:`~tickler.shell._observer`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Final

from returns.pipeline import is_successful
from returns.result import Failure

from tickler.core import (
    DEFAULT_PROFILE,
    CorruptScheduleLog,
    Profile,
    State,
    ToolCommand,
    parse_tool_call,
    render,
)
from tickler.shell import _telemetry
from tickler.shell._clock import Clock, SystemClock
from tickler.shell._deliverer import Deliverer
from tickler.shell._handover import LEASE_MARGIN_S, LeaseTooShort
from tickler.shell._handover_failures import HandoverFailures
from tickler.shell._host import AgentHost, FollowUp
from tickler.shell._observer import ToolResult
from tickler.shell._pending import PendingDelivery
from tickler.shell._phase import Phase
from tickler.shell._ports import SessionLog
from tickler.shell._retry import Backoff
from tickler.shell._timers import TimerHeap, shared_timers
from tickler.shell._unit_of_work import UnitOfWork

logger = logging.getLogger("tickler.runtime")

DISPOSE_GRACE_S: Final = 1.0
"""How long ``dispose()`` lets a hand-over in flight finish by default: long
enough for a host that is about to answer, short enough that a process
stops promptly when a target hangs (an MCP client kills a server 2 s after
closing its stdin)."""


class ScheduleRuntime:
    """The live runtime of one session: tools, timers and deliveries.

    ``start()`` loads the session (snapshot, then the log after it) and makes
    the first delivery check; ``call_tool`` answers the profile's tools;
    ``dispose()`` stops it: it waits for the transaction in flight, lets a
    hand-over in flight finish for up to ``dispose_grace_s`` (and records its
    outcome) before it cancels it (that follow-up stays in the outbox), and
    deletes nothing.

    On a log held under a lease (:class:`~tickler.shell._ports.LeasedLog`),
    no hand-over starts that the lease might not outlast, and deliveries
    stop once the log says another process took the session over.
    """

    def __init__(
        self,
        log: SessionLog,
        host: AgentHost,
        clock: Clock | None = None,
        *,
        timers: TimerHeap | None = None,
        backoff: Backoff | None = None,
        on_fault: Callable[[CorruptScheduleLog], None] | None = None,
        dispose_grace_s: float = DISPOSE_GRACE_S,
        profile: Profile = DEFAULT_PROFILE,
    ) -> None:
        self._log = log
        self._clock: Clock = clock if clock is not None else SystemClock()
        observer = _telemetry.OBSERVER
        self._observer = observer
        work = UnitOfWork(
            log, self._clock, profile, timers=timers, on_fault=on_fault, observer=observer
        )
        self._work = work
        self._failures = HandoverFailures(work)
        self._deliverer = Deliverer(work, host, self._failures, backoff=backoff, observer=observer)
        work.driver = self._deliverer
        self._disposal: asyncio.Task[None] | None = None
        self._dispose_grace_s = dispose_grace_s

    # -- public surface ---------------------------------------------------

    @property
    def phase(self) -> Phase:
        return self._work.phase

    @property
    def profile(self) -> Profile:
        """The tool contract this runtime answers (``reference``: exactly v1)."""
        return self._work.profile

    @property
    def state(self) -> State:
        return self._work.current().state

    @property
    def pending_followups(self) -> tuple[FollowUp, ...]:
        """Follow-ups appended but not yet taken by the host, in log order."""
        return tuple(self._work.current().outbox.values())

    @property
    def pending_deliveries(self) -> tuple[PendingDelivery, ...]:
        """The outbox as the operator sees it: each follow-up not yet taken,
        with its failed hand-overs so far (this runtime's and the ones
        before it that the log, or the log's failure index, kept) and the
        last error."""
        return self._failures.rows(self._work.current())

    @property
    def fault(self) -> CorruptScheduleLog | None:
        """Why deliveries stopped (a corrupt log), or None."""
        return self._work.fault

    @property
    def next_wake(self) -> int | None:
        timers = self._work.timers
        return None if timers is None else timers.deadline(self._work)

    async def start(self) -> None:
        """Load the session and make the first delivery check."""
        work = self._work
        if work.timers is None:
            work.timers = shared_timers(self._clock)
        if work.phase is not Phase.NEW:
            raise RuntimeError(f"ScheduleRuntime.start(): the runtime is {work.phase.value}")
        async with work.lock:
            await work.load()
            self._failures.load(work.loaded)
            work.note_wake()
        self._observer.watch(self)
        self._deliverer.request_drive()

    async def settle(self) -> bool:
        """Run the delivery work due now to its end, for a process that holds
        the session only while it delivers (``tickler worker``). True when
        nothing is due and every follow-up was taken; False when a flush or
        a hand-over failed (its retry is then the caller's), or the log is
        corrupt. Cancelling the caller leaves the work running."""
        return await self._deliverer.settle()

    async def call_tool(self, name: str, args: object) -> str:
        """One tool call: the exact output text the model sees. Never raises
        for any ``args``; a malformed call answers a closed error code.
        Raises :class:`SessionClosed` once :meth:`dispose` has begun."""
        return render(
            await tool_result(
                self.execute, name, args, session_id=self._log.header.id, profile=self.profile
            )
        )

    def execute(self, command: ToolCommand) -> Awaitable[ToolResult]:
        """One tool transaction in the session's FIFO: the one pipeline every
        surface (the model's tools, the typed API) goes through, with the
        same rules, events and durability barrier. Never raises for a
        command; a refused one is a closed error. Raises
        :class:`SessionClosed` once :meth:`dispose` has begun: nothing is
        run then, and an answer would read as if it had been."""
        return self._work.execute(command)  # its coroutine: no await between

    def request_drive(self) -> None:
        """Look for due work now (coalesced; runs in the session's FIFO)."""
        self._deliverer.request_drive()

    async def save_snapshot(self) -> bool:
        """Flush, then keep a snapshot of the state for a fast reopen."""
        return await self._work.save_snapshot()

    def dispose(self) -> Awaitable[None]:
        """Stop: cancel timers and waits, wait for the transaction in flight,
        let a hand-over in flight finish for up to ``dispose_grace_s`` (its
        outcome is recorded: the delivered mark, flushed, or the failure)
        and then cancel it (it stays in the outbox). Idempotent."""
        if self._disposal is None:
            self._disposal = asyncio.get_running_loop().create_task(self._dispose())
        return self._disposal

    async def _dispose(self) -> None:
        work = self._work
        lost = work.phase is Phase.LOST
        work.phase = Phase.STOPPING
        await self._deliverer.stop(self._dispose_grace_s)
        async with work.lock:  # waits for the transaction in flight
            pass
        await self._deliverer.join()
        if not lost:
            await self._failures.keep()
        work.phase = Phase.STOPPED


async def tool_result(
    execute: Callable[[ToolCommand], Awaitable[ToolResult]],
    name: str,
    args: object,
    *,
    session_id: str = "",
    profile: Profile = DEFAULT_PROFILE,
) -> ToolResult:
    """A tool call before it is shown: checked as the tool checks it (shape
    only, before the session's queue), then run by ``execute``. ``render``
    of it is the model's text; the typed API makes it a value or raises."""
    parsed = parse_tool_call(name, args, profile=profile)
    if not is_successful(parsed):
        _telemetry.refused_call(session_id, name, parsed.failure())
        return Failure(parsed.failure())
    return await execute(parsed.unwrap())


__all__ = [
    "DISPOSE_GRACE_S",
    "LEASE_MARGIN_S",
    "LeaseTooShort",
    "ScheduleRuntime",
    "ToolResult",
    "tool_result",
]
