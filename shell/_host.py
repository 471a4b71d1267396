"""The agent side of the runtime: who receives due reminders as turns."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, Protocol, runtime_checkable

import msgspec

from tickler.core import Occurrence

DRAIN_TIMEOUT_S: Final = 10.0
"""How long leaving a session lets the host's turns in flight finish by
default (``open_session(..., drain_timeout_s=...)``), as a host's own
``close()`` grace: long enough for a model that is answering, short enough
that a program stops promptly when one hangs."""


class SessionClosed(RuntimeError):
    """A tool call reached a session whose runtime is stopping or stopped:
    nothing was run. Raised, never answered as a tool's text, so a turn
    that calls a tool after its session closed fails instead of reading an
    answer as if the call had run."""


class FollowUp(msgspec.Struct, frozen=True):
    """A reminder turn for the agent: ``text`` is the exact framing the model
    sees as a user-role message. ``key`` identifies this delivery across
    restarts (``<id>@<occurrence_at>`` of its first occurrence), so a host
    can drop a repeat of one it already took."""

    key: str
    text: str
    occurrences: tuple[Occurrence, ...]


class IdleClaim(Protocol):
    def release(self) -> None:
        """End the claim; a follow-up queued under it may now start a turn."""
        ...


class ReleaseOnce:
    """An :class:`IdleClaim` that calls ``release`` on its first
    ``release()`` only (a host hands one out per granted claim)."""

    __slots__ = ("_release",)

    def __init__(self, release: Callable[[], None]) -> None:
        self._release: Callable[[], None] | None = release

    def release(self) -> None:
        if self._release is not None:
            release, self._release = self._release, None
            release()


class AgentHost(Protocol):
    """An agent that takes follow-up turns (the reference's ``Agent``)."""

    def claim_idle(self) -> IdleClaim | None:
        """Claim the agent's idle phase, or None when a turn or another claim
        owns the agent (the reference's ``runMaintenance`` refusal)."""
        ...

    async def when_idle(self) -> None:
        """Resolve when no turn and no claim remains."""
        ...

    async def followup(self, message: FollowUp) -> None:
        """Durably take ``message`` as the agent's next turn. Idempotent per
        ``message.key``: a repeat of a key already taken does nothing.
        Raising means "not taken": the runtime hands it over again later."""
        ...


@runtime_checkable
class TimedHost(Protocol):
    """A host whose ``followup`` has a total deadline (a delivery target):
    a hand-over under a lease is started only when the lease outlasts it."""

    @property
    def timeout(self) -> float:
        """The most one ``followup`` call takes, in seconds."""
        ...


@runtime_checkable
class DrainingHost(Protocol):
    """A host with turns of its own that leaving a session lets finish:
    ``open_session`` calls ``drain`` before it stops the runtime, so the
    tool calls of those turns are still answered."""

    async def drain(self, timeout_s: float) -> None:
        """Start no new turn for a new hand-over; let the turns of the
        inputs taken so far run for at most ``timeout_s`` (on the host's
        clock), then cut a turn still running, recorded so that it runs
        again later. Cancelling the call cuts at once."""
        ...
