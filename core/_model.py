"""The durable v1 values: schedule records and ``schedule/change`` payloads.

Attributes are snake_case; on the wire they are the reference's camelCase
keys. ``FIELD_RULES`` are the v1 field constraints: decoding enforces them and the
JSON Schema in ``specs/`` is generated from these types and those rules.
"""

from __future__ import annotations

from typing import Final, Literal, NamedTuple, TypeAlias

import msgspec
from msgspec import UNSET, Meta, UnsetType

from tickler.core.timing import CANONICAL_INSTANT_PATTERN
from tickler.core.wire import ES_WHITESPACE, MAX_SAFE_INTEGER

SCHEDULE_CHANGE_VERSION: Final = 1
MIN_EVERY_INTERVAL_SECONDS: Final = 300
# everySeconds * 1000 must stay a safe integer too.
MAX_EVERY_SECONDS: Final = MAX_SAFE_INTEGER // 1000

_WS: Final = "".join(f"\\u{ord(c):04x}" for c in ES_WHITESPACE)
# Non-empty, no ECMAScript whitespace at either end ("already trimmed").
TRIMMED_PATTERN: Final = f"^[^{_WS}](?:[\\s\\S]*[^{_WS}])?$(?!\\n)"

# The v1 field rules by attribute name. Decoding checks them in Python (see
# tickler.core._wire: msgspec's regex constraints cost microseconds per field);
# the JSON Schema in specs/ carries them (tickler.core._schema).
FIELD_RULES: Final[dict[str, Meta]] = {
    "id": Meta(pattern=TRIMMED_PATTERN),
    "prompt": Meta(pattern=TRIMMED_PATTERN),
    "scheduled_at": Meta(pattern=CANONICAL_INSTANT_PATTERN),
    "accepted_at": Meta(pattern=CANONICAL_INSTANT_PATTERN),
    "after_seconds": Meta(gt=0, le=MAX_SAFE_INTEGER),
    "every_seconds": Meta(ge=MIN_EVERY_INTERVAL_SECONDS, le=MAX_EVERY_SECONDS),
}
ScheduleId: TypeAlias = str
Prompt: TypeAlias = str
Instant: TypeAlias = str


# gc=False: records and changes hold only strings and numbers (no cycles), so
# the collector need not track them: 16 bytes less each, and less to scan.
class _Record(
    msgspec.Struct,
    frozen=True,
    gc=False,
    forbid_unknown_fields=True,
    rename="camel",
    tag_field="kind",
):
    id: ScheduleId
    prompt: Prompt


class AfterSchedule(_Record, frozen=True, tag="after"):
    """One-shot, ``after_seconds`` after creation."""

    after_seconds: int
    scheduled_at: Instant

    @property
    def kind(self) -> Literal["after"]:
        return "after"


class AtSchedule(_Record, frozen=True, tag="at"):
    """One-shot at an absolute instant (only the UTC target is kept)."""

    scheduled_at: Instant

    @property
    def kind(self) -> Literal["at"]:
        return "at"


class EverySchedule(_Record, frozen=True, tag="every"):
    """Fixed-rate; ``scheduled_at`` is the earliest occurrence not yet dispatched."""

    every_seconds: int
    scheduled_at: Instant

    @property
    def kind(self) -> Literal["every"]:
        return "every"


class CalendarSchedule(_Record, frozen=True, tag="calendar"):
    """A calendar rule (5-field cron in an IANA zone, with its DST policy);
    ``scheduled_at`` is its next occurrence not yet dispatched. A v2 record:
    only a version-2 create carries it."""

    cron: str
    time_zone: str
    dst_gap: str
    dst_overlap: str
    scheduled_at: Instant

    @property
    def kind(self) -> Literal["calendar"]:
        return "calendar"


class SeriesEnd(NamedTuple):
    """Where a recurring series ends: ``until`` (epoch ms; no occurrence
    after it) and ``remaining`` (how many occurrences it may still deliver,
    the next included); None where that bound is not set."""

    until: int | None
    remaining: int | None


V1Record: TypeAlias = AfterSchedule | AtSchedule | EverySchedule
ScheduleRecord: TypeAlias = AfterSchedule | AtSchedule | EverySchedule | CalendarSchedule
RECURRING: Final = (EverySchedule, CalendarSchedule)


class _Change(
    msgspec.Struct,
    frozen=True,
    gc=False,
    kw_only=True,
    forbid_unknown_fields=True,
    rename="camel",
    tag_field="operation",
):
    version: Literal[1]


class CreateChange(_Change, frozen=True, kw_only=True, tag="create"):
    schedule: V1Record


class DeleteChange(_Change, frozen=True, kw_only=True, tag="delete"):
    id: ScheduleId


class DispatchChange(_Change, frozen=True, kw_only=True, tag="dispatch"):
    """One-shot form without ``accepted_at``; fixed-rate form with it."""

    id: ScheduleId
    accepted_at: Instant | UnsetType = UNSET


class CreateChangeV2(
    msgspec.Struct, frozen=True, gc=False, kw_only=True, forbid_unknown_fields=True
):
    """The version-2 create: a calendar record, or any record created with a
    ``request_id`` (kept with the digest of the call's other arguments, so
    a retry is answered from the log). Version 2 is how an old reader
    (tickler v1, the reference) refuses it by name ("schedule/change version
    must be 1") instead of misreading it. Decoded by the exact path only
    (:mod:`tickler.core._codec`)."""

    schedule: ScheduleRecord
    request_id: str | None = None
    args_digest: str | None = None
    # a recurring series' end: no occurrence after ``until``, at most
    # ``count`` occurrences (from creation); None: not bounded so
    until: Instant | None = None
    count: int | None = None

    @property
    def version(self) -> Literal[2]:
        return 2


class UpdateChange(msgspec.Struct, frozen=True, gc=False, kw_only=True, forbid_unknown_fields=True):
    """A version-2 change of an active reminder in place (the id stays):
    its prompt, paused or not, and its target when that moves (a snooze, or
    a resume past what fell due); or ``schedule``, the reminder rescheduled
    to a new selector: its whole new record (same id; its prompt, kind,
    selector and first target), which replaces the old one, a fixed-rate
    lattice anchored at the change; ``until`` and ``count``, a series' new
    end, or null: that bound removed. Each member is absent when unchanged;
    at least one is present; ``prompt`` and ``scheduled_at`` never beside
    ``schedule`` (the record holds both). Decoded by the exact path only."""

    id: ScheduleId
    prompt: Prompt | UnsetType = UNSET
    paused: bool | UnsetType = UNSET
    scheduled_at: Instant | UnsetType = UNSET
    schedule: ScheduleRecord | UnsetType = UNSET
    # a series' new end (``count``: occurrences from this change on); None
    # removes that bound
    until: Instant | UnsetType | None = UNSET
    count: int | UnsetType | None = UNSET
    # The operator who made the change (tickler pause, the dashboard); a
    # model's tool call names none.
    by: str | UnsetType = UNSET

    @property
    def version(self) -> Literal[2]:
        return 2


class DeleteChangeV2(
    msgspec.Struct, frozen=True, gc=False, kw_only=True, forbid_unknown_fields=True
):
    """A version-2 delete: an operator's cancel, naming the operator
    ``by`` (a model's ``schedule_delete`` is the version-1 delete). Decoded
    by the exact path only."""

    id: ScheduleId
    by: str

    @property
    def version(self) -> Literal[2]:
        return 2


V1Change: TypeAlias = CreateChange | DeleteChange | DispatchChange
ScheduleChange: TypeAlias = (
    CreateChange | DeleteChange | DispatchChange | CreateChangeV2 | UpdateChange | DeleteChangeV2
)


def create(
    record: ScheduleRecord,
    request: tuple[str, str] | None = None,
    until: str | None = None,
    count: int | None = None,
) -> CreateChange | CreateChangeV2:
    """The create of ``record`` (``request``: its request id and arguments
    digest; ``until`` and ``count``: its series' end): version 1 when
    version 1 can say it, else version 2."""
    if request is not None:
        return CreateChangeV2(
            schedule=record,
            request_id=request[0],
            args_digest=request[1],
            until=until,
            count=count,
        )
    if isinstance(record, CalendarSchedule) or until is not None or count is not None:
        return CreateChangeV2(schedule=record, until=until, count=count)
    return CreateChange(version=1, schedule=record)


def delete(schedule_id: str, by: str | None = None) -> DeleteChange | DeleteChangeV2:
    """The delete of ``schedule_id``; version 2 when an operator ``by`` made it."""
    if by is not None:
        return DeleteChangeV2(id=schedule_id, by=by)
    return DeleteChange(version=1, id=schedule_id)


def dispatch(schedule_id: str, accepted_at: str | None = None) -> DispatchChange:
    if accepted_at is None:
        return DispatchChange(version=1, id=schedule_id)
    return DispatchChange(version=1, id=schedule_id, accepted_at=accepted_at)
