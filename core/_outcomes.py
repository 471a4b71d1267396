"""What ``decide`` answers: tool results, and delivery decisions."""

from __future__ import annotations

from typing import Final, Literal, TypeAlias

import msgspec

from tickler.core._model import ScheduleRecord, SeriesEnd

DELIVERY_MODE: Final = "session-local"
ViewState = Literal["scheduled", "overdue", "paused"]


class ScheduleView(msgspec.Struct, frozen=True):
    """An active record as a tool shows it, with its state at ``now``."""

    record: ScheduleRecord
    state: ViewState
    # Set by ``decide`` in the extended profile: a fixed-rate reminder then
    # shows its next occurrences too (the v1 texts have no such field).
    previews: bool = False
    # A fixed-rate reminder snoozed off its lattice: the lattice point its
    # series continues at after the snoozed target (State.lattice).
    lattice: int | None = None
    # A recurring reminder whose series ends (State.end): previews stop there.
    end: SeriesEnd | None = None


class Created(msgspec.Struct, frozen=True):
    view: ScheduleView


class Listed(msgspec.Struct, frozen=True):
    views: tuple[ScheduleView, ...]


class Deleted(msgspec.Struct, frozen=True):
    id: str


class NotFound(msgspec.Struct, frozen=True):
    """``schedule_not_found``: a result (``deleted: false``, or
    ``updated: false`` for ``schedule_update``), not an error."""

    id: str
    tool: Literal["delete", "update"] = "delete"


class Updated(msgspec.Struct, frozen=True):
    """``schedule_update``: the reminder as it is now."""

    view: ScheduleView


class Occurrence(msgspec.Struct, frozen=True):
    """One reminder occurrence handed to the agent."""

    id: str
    occurrence_at: str
    prompt: str

    @property
    def key(self) -> str:
        """``<id>@<occurrence_at>``: unique per delivery, so a host can drop a
        repeat handed over again after a restart."""
        return f"{self.id}@{self.occurrence_at}"


class Delivery(msgspec.Struct, frozen=True):
    """Deliver ``text`` as one follow-up turn. ``accepted_at`` is the shared
    decision instant of a fixed-rate batch (None for a one-shot)."""

    text: str
    occurrences: tuple[Occurrence, ...]
    accepted_at: str | None = None
    # per occurrence of a batch: the earlier due occurrences of that
    # recurring reminder it stands for (latest-only catch-up); for the log
    # and the operator, in no text the model sees
    skipped: tuple[int, ...] = ()


class Wait(msgspec.Struct, frozen=True):
    """Nothing is due; look again at ``next_wake`` (epoch ms), or never."""

    next_wake: int | None


ToolOutcome: TypeAlias = Created | Listed | Deleted | NotFound | Updated
Outcome: TypeAlias = ToolOutcome | Delivery | Wait
