"""What the runtime tells an observer: a small interface, and a no-op one.

The unit of work (:mod:`~tickler.shell._unit_of_work`) and the deliverer
(:mod:`~tickler.shell._deliverer`) report what happens to a
:class:`RuntimeObserver`: a tool transaction (a scope around it, and the
changes it committed), a started runtime, a delivery task, a hand-over (a
scope around it, and whether the host took the follow-up). They never look
at what the observer does with it. :data:`NO_OBSERVER` does nothing;
telemetry (:mod:`~tickler.shell._telemetry`) is the observer the runtime
gets.
"""

from __future__ import annotations

import enum
from types import TracebackType
from typing import TYPE_CHECKING, Final, Protocol

from returns.result import Result

from tickler.core import ScheduleError, State, ToolOutcome

if TYPE_CHECKING:
    from tickler.shell._clock import Clock
    from tickler.shell._host import FollowUp

ToolResult = Result[ToolOutcome, ScheduleError]
"""What a tool call comes to before it is shown: the outcome, or a closed
error. ``render`` makes it the model's text; the typed API makes it a
``Reminder`` or raises."""


class Observed(Protocol):
    """What an observer may read of a started runtime."""

    @property
    def phase(self) -> enum.Enum: ...

    @property
    def state(self) -> State: ...

    @property
    def pending_followups(self) -> tuple[FollowUp, ...]: ...


class Scope(Protocol):
    """A context manager around one step (a tool call, a hand-over)."""

    def __enter__(self) -> object: ...

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


class CallScope(Scope, Protocol):
    """The scope of one tool transaction, told its result."""

    def __enter__(self) -> CallScope: ...

    def ended(self, result: ToolResult) -> ToolResult:
        """Note the call's result; returns it."""
        ...


class RuntimeObserver(Protocol):
    """What the unit of work and the deliverer report, as it happens."""

    def watch(self, runtime: Observed) -> None:
        """A runtime started (its session loaded, or found corrupt)."""

    def tool_call(self, session_id: str, tool: str) -> CallScope:
        """The scope of one tool transaction, queue included."""
        ...

    def committed(self, outcome: object) -> None:
        """A tool's changes were appended (even when the barrier fails)."""

    def bind_session(self, session_id: str) -> None:
        """A task of this session begins (its drive loop)."""

    def attempt(self, session_id: str, key: str) -> Scope:
        """The scope of one hand-over of the follow-up ``key``."""
        ...

    def delivered(self, message: FollowUp, clock: Clock) -> None:
        """The host took ``message`` (within its attempt's scope)."""

    def delivery_failed(self, error: BaseException) -> None:
        """A hand-over failed or was not started; it is retried."""


class _NoScope:
    __slots__ = ()

    def __enter__(self) -> _NoScope:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None

    def ended(self, result: ToolResult) -> ToolResult:
        return result


_NO_SCOPE: Final = _NoScope()


class NoObserver:
    """Observes nothing (the default of a unit of work and a deliverer)."""

    __slots__ = ()

    def watch(self, runtime: Observed) -> None:
        return None

    def tool_call(self, session_id: str, tool: str) -> CallScope:
        return _NO_SCOPE

    def committed(self, outcome: object) -> None:
        return None

    def bind_session(self, session_id: str) -> None:
        return None

    def attempt(self, session_id: str, key: str) -> Scope:
        return _NO_SCOPE

    def delivered(self, message: FollowUp, clock: Clock) -> None:
        return None

    def delivery_failed(self, error: BaseException) -> None:
        return None


NO_OBSERVER: Final[RuntimeObserver] = NoObserver()

__all__ = [
    "NO_OBSERVER",
    "CallScope",
    "NoObserver",
    "Observed",
    "RuntimeObserver",
    "Scope",
    "ToolResult",
]
