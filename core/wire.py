"""The fast path of ``decode_change``: plain typed msgspec structs (decoded in
C) plus the v1 string and range rules checked in Python.

msgspec's regex constraints cost several microseconds per field, so the
public types in :mod:`tickler.core.model` keep them for the JSON Schema and
this module checks the same rules with ``str.strip`` and one compiled match.
Anything that fails here is handed to the exact path, which alone decides
the rejection and its reason.
"""

from __future__ import annotations

import re
from typing import Final, Literal

import msgspec
from msgspec import UNSET, UnsetType

from tickler.core.instant import CANONICAL_INSTANT_PATTERN
from tickler.core.jsnum import MAX_SAFE_INTEGER
from tickler.core.jstext import ES_WHITESPACE
from tickler.core.model import (
    MAX_EVERY_SECONDS,
    MIN_EVERY_INTERVAL_SECONDS,
    AfterSchedule,
    AtSchedule,
    CreateChange,
    DeleteChange,
    DispatchChange,
    EverySchedule,
    ScheduleChange,
    ScheduleRecord,
)

_INSTANT: Final = re.compile(CANONICAL_INSTANT_PATTERN, re.ASCII)
_DAYS_29_TO_31: Final = frozenset({"29", "30", "31"})
_SHORT_MONTHS: Final = frozenset({"04", "06", "09", "11"})


class _After(
    msgspec.Struct, tag_field="kind", tag="after", rename="camel", forbid_unknown_fields=True
):
    id: str
    prompt: str
    after_seconds: int
    scheduled_at: str


class _At(msgspec.Struct, tag_field="kind", tag="at", rename="camel", forbid_unknown_fields=True):
    id: str
    prompt: str
    scheduled_at: str


class _Every(
    msgspec.Struct, tag_field="kind", tag="every", rename="camel", forbid_unknown_fields=True
):
    id: str
    prompt: str
    every_seconds: int
    scheduled_at: str


class _Create(msgspec.Struct, tag_field="operation", tag="create", forbid_unknown_fields=True):
    version: Literal[1]
    schedule: _After | _At | _Every


class _Delete(msgspec.Struct, tag_field="operation", tag="delete", forbid_unknown_fields=True):
    version: Literal[1]
    id: str


class _Dispatch(
    msgspec.Struct,
    tag_field="operation",
    tag="dispatch",
    rename="camel",
    forbid_unknown_fields=True,
):
    version: Literal[1]
    id: str
    accepted_at: str | UnsetType = UNSET


DECODER: Final[msgspec.json.Decoder[_Create | _Delete | _Dispatch]] = msgspec.json.Decoder(
    _Create | _Delete | _Dispatch
)


def _trimmed(text: str) -> bool:
    return bool(text) and text.strip(ES_WHITESPACE) == text


def _instant(text: str) -> bool:
    """Canonical pattern and a real calendar day."""
    if _INSTANT.match(text) is None:
        return False
    day = text[8:10]
    if day not in _DAYS_29_TO_31:
        return True
    month = text[5:7]
    if month == "02":
        year = int(text[0:4])
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        return day == "29" and leap
    return day != "31" or month not in _SHORT_MONTHS


def _record(wire: _After | _At | _Every) -> ScheduleRecord | None:
    if not (_trimmed(wire.prompt) and _trimmed(wire.id) and _instant(wire.scheduled_at)):
        return None
    match wire:
        case _After(after_seconds=seconds):
            if not 0 < seconds <= MAX_SAFE_INTEGER:
                return None
            return AfterSchedule(wire.id, wire.prompt, seconds, wire.scheduled_at)
        case _Every(every_seconds=seconds):
            if not MIN_EVERY_INTERVAL_SECONDS <= seconds <= MAX_EVERY_SECONDS:
                return None
            return EverySchedule(wire.id, wire.prompt, seconds, wire.scheduled_at)
        case _At():
            return AtSchedule(wire.id, wire.prompt, wire.scheduled_at)


_Wire = _Create | _Delete | _Dispatch
_MANY: Final[msgspec.json.Decoder[list[_Wire]]] = msgspec.json.Decoder(list[_Wire])


def fast_decode(raw: bytes | str | msgspec.Raw) -> ScheduleChange | None:
    """The change, or None when only the exact path can say."""
    try:
        wire = DECODER.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError, UnicodeEncodeError):
        return None  # (a str holding a lone surrogate cannot become UTF-8)
    return from_wire(wire)


def fast_decode_many(raws: list[msgspec.Raw]) -> list[ScheduleChange | None] | None:
    """Many payloads in one decoder call (a log's worth, in chunks): the
    per-call cost dominates small payloads. None when any payload needs the
    exact path; the caller then decodes them one by one."""
    joined = b"[" + b",".join(raws) + b"]"
    try:
        wires = _MANY.decode(joined)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return [from_wire(wire) for wire in wires]


def from_wire(wire: _Wire) -> ScheduleChange | None:
    match wire:
        case _Create(schedule=schedule):
            record = _record(schedule)
            return None if record is None else CreateChange(version=1, schedule=record)
        case _Delete(id=schedule_id):
            return DeleteChange(version=1, id=schedule_id) if _trimmed(schedule_id) else None
        case _Dispatch(id=schedule_id, accepted_at=accepted_at):
            if not _trimmed(schedule_id):
                return None
            if isinstance(accepted_at, UnsetType):
                return DispatchChange(version=1, id=schedule_id)
            if not _instant(accepted_at):
                return None
            return DispatchChange(version=1, id=schedule_id, accepted_at=accepted_at)
