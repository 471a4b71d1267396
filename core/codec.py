"""Strict v1 ``schedule/change`` decoding and byte-exact encoding.

Decoding runs a typed msgspec decoder first (fast, in C). Anything it does
not accept goes to the exact path, which walks the JSON value in the
reference's order so a rejection carries the reference's exact reason, and
which also accepts what JavaScript accepts and msgspec does not (``30.0`` for
30, lone surrogates). The fast path only ever accepts values the exact path
accepts, with the same result.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import msgspec

from tickler.core.deepjson import loads_any_depth
from tickler.core.errors import CorruptScheduleLog
from tickler.core.instant import is_real_canonical, matches_canonical_pattern
from tickler.core.jsnum import safe_integer
from tickler.core.jstext import is_trimmed_nonempty, js_string
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
    create,
    delete,
    dispatch,
)
from tickler.core.wire import fast_decode

_CREATE_KEYS: Final = frozenset({"version", "operation", "schedule"})
_ID_KEYS: Final = frozenset({"version", "operation", "id"})
_DISPATCH_AT_KEYS: Final = frozenset({"version", "operation", "id", "acceptedAt"})
_AFTER_KEYS: Final = frozenset({"id", "kind", "prompt", "afterSeconds", "scheduledAt"})
_AT_KEYS: Final = frozenset({"id", "kind", "prompt", "scheduledAt"})
_EVERY_KEYS: Final = frozenset({"id", "kind", "prompt", "everySeconds", "scheduledAt"})


class Reason:
    """The reference's exact corrupt-log reasons."""

    PAYLOAD: Final = "schedule/change payload must be an object"
    VERSION: Final = "schedule/change version must be 1"
    OPERATION: Final = "schedule/change operation must be create, delete, or dispatch"
    CREATE_KEYS: Final = "schedule create must contain exactly version, operation, and schedule"
    DELETE_KEYS: Final = "schedule delete must contain exactly version, operation, and id"
    DISPATCH_KEYS: Final = "schedule dispatch must contain id and optional acceptedAt only"
    RECORD: Final = "schedule record must be an object"
    KIND: Final = 'v1 schedule kind must be "after", "at", or "every"'
    AFTER_KEYS: Final = (
        "after schedule must contain exactly id, kind, prompt, afterSeconds, and scheduledAt"
    )
    AT_KEYS: Final = "at schedule must contain exactly id, kind, prompt, and scheduledAt"
    EVERY_KEYS: Final = (
        "every schedule must contain exactly id, kind, prompt, everySeconds, and scheduledAt"
    )
    AFTER_SECONDS: Final = "afterSeconds must be a positive safe integer"
    EVERY_SECONDS: Final = "everySeconds must be a safe integer of at least 300"
    ID: Final = "schedule id must be a non-empty string without surrounding whitespace"
    INSTANT_SHAPE: Final = "scheduledAt must be a canonical four-digit-year RFC 3339 UTC instant"
    INSTANT_REAL: Final = "scheduledAt is not a real UTC calendar instant"
    NOT_JSON: Final = "schedule/change payload is not valid JSON"

    @staticmethod
    def prompt(kind: str) -> str:
        return f"{kind} prompt must be non-empty and already trimmed"


def decode_change(raw: bytes | str | msgspec.Raw) -> ScheduleChange:
    """Decode one strict v1 payload; raises :class:`CorruptScheduleLog`."""
    change = fast_decode(raw)
    if change is not None:
        return change
    text = bytes(raw) if isinstance(raw, msgspec.Raw) else raw
    return decode_change_value(_load_json(text))


def _load_json(raw: bytes | str) -> object:
    # Any nesting depth, as JavaScript reads it: a deep payload is judged by
    # its shape like any other, not refused as unreadable.
    try:
        return loads_any_depth(raw)
    except ValueError as exc:
        raise CorruptScheduleLog(Reason.NOT_JSON) from exc


def decode_change_value(value: object) -> ScheduleChange:
    """Decode an already-parsed JSON value, in the reference's check order."""
    if not isinstance(value, Mapping):
        raise CorruptScheduleLog(Reason.PAYLOAD)
    version = value.get("version")
    if isinstance(version, bool) or version != 1:
        raise CorruptScheduleLog(Reason.VERSION)
    keys = value.keys()
    match value.get("operation"):
        case "create":
            if keys != _CREATE_KEYS:
                raise CorruptScheduleLog(Reason.CREATE_KEYS)
            return create(_decode_record(value["schedule"]))
        case "delete":
            if keys != _ID_KEYS:
                raise CorruptScheduleLog(Reason.DELETE_KEYS)
            return delete(_decode_id(value["id"]))
        case "dispatch":
            if keys == _ID_KEYS:
                return dispatch(_decode_id(value["id"]))
            if keys == _DISPATCH_AT_KEYS:
                schedule_id = _decode_id(value["id"])
                return dispatch(schedule_id, _decode_instant(value["acceptedAt"]))
            raise CorruptScheduleLog(Reason.DISPATCH_KEYS)
        case _:
            raise CorruptScheduleLog(Reason.OPERATION)


def _decode_record(value: object) -> ScheduleRecord:
    if not isinstance(value, Mapping):
        raise CorruptScheduleLog(Reason.RECORD)
    keys = value.keys()
    match value.get("kind"):
        case "after":
            if keys != _AFTER_KEYS:
                raise CorruptScheduleLog(Reason.AFTER_KEYS)
            prompt = _decode_prompt(value["prompt"], "after")
            after_seconds = safe_integer(value["afterSeconds"])
            if after_seconds is None or after_seconds <= 0:
                raise CorruptScheduleLog(Reason.AFTER_SECONDS)
            return AfterSchedule(
                id=_decode_id(value["id"]),
                prompt=prompt,
                after_seconds=after_seconds,
                scheduled_at=_decode_instant(value["scheduledAt"]),
            )
        case "at":
            if keys != _AT_KEYS:
                raise CorruptScheduleLog(Reason.AT_KEYS)
            prompt = _decode_prompt(value["prompt"], "at")
            return AtSchedule(
                id=_decode_id(value["id"]),
                prompt=prompt,
                scheduled_at=_decode_instant(value["scheduledAt"]),
            )
        case "every":
            if keys != _EVERY_KEYS:
                raise CorruptScheduleLog(Reason.EVERY_KEYS)
            prompt = _decode_prompt(value["prompt"], "every")
            every_seconds = safe_integer(value["everySeconds"])
            if every_seconds is None or not (
                MIN_EVERY_INTERVAL_SECONDS <= every_seconds <= MAX_EVERY_SECONDS
            ):
                raise CorruptScheduleLog(Reason.EVERY_SECONDS)
            return EverySchedule(
                id=_decode_id(value["id"]),
                prompt=prompt,
                every_seconds=every_seconds,
                scheduled_at=_decode_instant(value["scheduledAt"]),
            )
        case _:
            raise CorruptScheduleLog(Reason.KIND)


def _decode_prompt(value: object, kind: str) -> str:
    if not isinstance(value, str) or not is_trimmed_nonempty(value):
        raise CorruptScheduleLog(Reason.prompt(kind))
    return value


def _decode_id(value: object) -> str:
    if not isinstance(value, str) or not is_trimmed_nonempty(value):
        raise CorruptScheduleLog(Reason.ID)
    return value


def _decode_instant(value: object) -> str:
    if not isinstance(value, str) or not matches_canonical_pattern(value):
        raise CorruptScheduleLog(Reason.INSTANT_SHAPE)
    if not is_real_canonical(value):
        raise CorruptScheduleLog(Reason.INSTANT_REAL)
    return value


def _record_json(record: ScheduleRecord) -> str:
    head = (
        f'{{"id":{js_string(record.id)},"kind":"{record.kind}","prompt":{js_string(record.prompt)}'
    )
    match record:
        case AfterSchedule(after_seconds=seconds):
            head += f',"afterSeconds":{seconds}'
        case EverySchedule(every_seconds=seconds):
            head += f',"everySeconds":{seconds}'
        case AtSchedule():
            pass
    return f'{head},"scheduledAt":"{record.scheduled_at}"}}'


def change_json(change: ScheduleChange) -> str:
    """The reference's JSON text of one change, keys in its order."""
    match change:
        case CreateChange(schedule=record):
            return f'{{"version":1,"operation":"create","schedule":{_record_json(record)}}}'
        case DeleteChange(id=schedule_id):
            return f'{{"version":1,"operation":"delete","id":{js_string(schedule_id)}}}'
        case DispatchChange(id=schedule_id, accepted_at=str(accepted_at)):
            return (
                f'{{"version":1,"operation":"dispatch","id":{js_string(schedule_id)},'
                f'"acceptedAt":"{accepted_at}"}}'
            )
        case DispatchChange(id=schedule_id):
            return f'{{"version":1,"operation":"dispatch","id":{js_string(schedule_id)}}}'


def encode_change(change: ScheduleChange) -> bytes:
    """UTF-8 bytes of :func:`change_json`."""
    return change_json(change).encode("utf-8")


def record_fields_json(record: ScheduleRecord) -> str:
    """The record's JSON members without the closing brace (for views)."""
    return _record_json(record)[:-1]
