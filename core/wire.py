"""The fast path of ``decode_change``: msgspec decodes straight into the
model's types (in C), then the v1 string and range rules are checked here
with ``str.strip`` and ``datetime.fromisoformat`` (also in C).

Anything that fails here is handed to the exact path, which alone decides
the rejection and its reason; this path only ever accepts what the exact
path accepts, with the same result.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Final, TypeAlias

import msgspec
from msgspec import UnsetType

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

DECODER: Final[msgspec.json.Decoder[ScheduleChange]] = msgspec.json.Decoder(ScheduleChange)
_MANY: Final[msgspec.json.Decoder[list[ScheduleChange]]] = msgspec.json.Decoder(
    list[ScheduleChange]
)
_EPOCH: Final = datetime(1970, 1, 1)  # noqa: DTZ001 - naive on purpose: the text is UTC
_ONE_MS: Final = timedelta(milliseconds=1)
# A decoded change and the instant it carries in ms (-1: none).
Checked: TypeAlias = tuple[ScheduleChange, int]


def _trimmed(text: str) -> bool:
    return bool(text) and text.strip(ES_WHITESPACE) == text


def instant_ms(text: str) -> int | None:
    """Epoch ms of ``YYYY-MM-DDTHH:mm:ss.sssZ`` naming a real UTC instant in
    years 0001-9999, else None. The fixed shape is checked here, the digits
    and the calendar by ``fromisoformat`` (ASCII only; year 0, hour 24,
    second 60 and 30 February all fail there)."""
    # Positions 4, 7, 10, 13, 16 and 19 hold "--T::." (one slice, not six tests).
    if len(text) != 24 or text[4:20:3] != "--T::." or text[23] != "Z" or not text.isascii():
        return None
    try:
        return (datetime.fromisoformat(text[:-1]) - _EPOCH) // _ONE_MS
    except ValueError:
        return None


def first_check(record: ScheduleRecord) -> bool:
    """The v1 rules of a record but its id and target (checked by callers)."""
    return _trimmed(record.prompt) and _seconds_ok(record)


def _seconds_ok(record: ScheduleRecord) -> bool:
    match record:
        case AfterSchedule(after_seconds=seconds):
            return 0 < seconds <= MAX_SAFE_INTEGER
        case EverySchedule(every_seconds=seconds):
            return MIN_EVERY_INTERVAL_SECONDS <= seconds <= MAX_EVERY_SECONDS
        case AtSchedule():
            return True


def checked(change: ScheduleChange) -> Checked | None:
    """The change with the instant it carries (a create's target or a
    dispatch's acceptedAt, in ms; -1 when none), or None when a v1 rule
    fails."""
    match change:
        case CreateChange(schedule=record):
            if not (_trimmed(record.id) and _trimmed(record.prompt) and _seconds_ok(record)):
                return None
            target = instant_ms(record.scheduled_at)
            return None if target is None else (change, target)
        case DeleteChange(id=schedule_id):
            return (change, -1) if _trimmed(schedule_id) else None
        case DispatchChange(id=schedule_id, accepted_at=accepted_at):
            if not _trimmed(schedule_id):
                return None
            if isinstance(accepted_at, UnsetType):
                return (change, -1)
            accepted = instant_ms(accepted_at)
            return None if accepted is None else (change, accepted)


def fast_decode(raw: bytes | str | msgspec.Raw) -> ScheduleChange | None:
    """The change, or None when only the exact path can say."""
    try:
        change = DECODER.decode(raw)
    except (msgspec.DecodeError, msgspec.ValidationError, UnicodeEncodeError, RecursionError):
        # (a str holding a lone surrogate cannot become UTF-8; deep nesting
        # is left to the exact path, which reads any depth)
        return None
    return None if checked(change) is None else change


def decode_many(raws: list[msgspec.Raw]) -> list[ScheduleChange] | None:
    """Many payloads decoded to their types in one call (the per-call cost
    dominates small payloads), without the v1 string rules: the caller
    checks what it uses. None when any payload does not fit the types."""
    joined = b"[" + b",".join(raws) + b"]"
    try:
        return _MANY.decode(joined)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return None
