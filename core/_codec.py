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

from tickler.core._errors import CorruptScheduleLog
from tickler.core._model import (
    AfterSchedule,
    AtSchedule,
    CalendarSchedule,
    CreateChange,
    CreateChangeV2,
    DeleteChange,
    DeleteChangeV2,
    DispatchChange,
    EverySchedule,
    ScheduleChange,
    ScheduleRecord,
    UpdateChange,
    create,
    delete,
    dispatch,
)
from tickler.core._rules import (
    Breach,
    Reason,
    args_digest_breach,
    calendar_record_rule,
    count_rule,
    end_rule,
    fields_rule,
    id_breach,
    instant_rule,
    log_reason,
    operator_breach,
    paused_rule,
    prompt_breach,
    request_id_breach,
    reschedule_rule,
)
from tickler.core._wire import fast_decode
from tickler.core.timing import parse_instant
from tickler.core.wire import js_string, loads_any_depth

_CREATE_KEYS: Final = frozenset({"version", "operation", "schedule"})
_CALENDAR_KEYS: Final = frozenset(
    {"id", "kind", "prompt", "cron", "timeZone", "dstGap", "dstOverlap", "scheduledAt"}
)
_ID_KEYS: Final = frozenset({"version", "operation", "id"})
_DISPATCH_AT_KEYS: Final = frozenset({"version", "operation", "id", "acceptedAt"})
# Per kind: its exact key set, the reason a wrong one gets, its interval key.
_RECORD_SHAPES: Final = {
    "after": (
        frozenset({"id", "kind", "prompt", "afterSeconds", "scheduledAt"}),
        Reason.AFTER_KEYS,
        "afterSeconds",
    ),
    "at": (frozenset({"id", "kind", "prompt", "scheduledAt"}), Reason.AT_KEYS, ""),
    "every": (
        frozenset({"id", "kind", "prompt", "everySeconds", "scheduledAt"}),
        Reason.EVERY_KEYS,
        "everySeconds",
    ),
}


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


def decode_change_value(value: object) -> ScheduleChange:  # noqa: C901 - one branch per shape
    """Decode an already-parsed JSON value, in the reference's check order."""
    if not isinstance(value, Mapping):
        raise CorruptScheduleLog(Reason.PAYLOAD)
    version = value.get("version")
    if _is_v2_create(value):
        return _decode_v2_create(value)
    operation = value.get("operation")
    # A version-2 delete names its operator; any other is the reference's
    # wrong version.
    if _is_v2(value) and (operation == "update" or (operation == "delete" and "by" in value)):
        return _decode_update(value) if operation == "update" else _decode_v2_delete(value)
    # Version 2 holds only what version 1 cannot say; any other payload must
    # be version 1 (the reference's own reason for every other version).
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


def _is_v2(value: Mapping[str, object]) -> bool:
    version = value.get("version")
    return type(version) is int and version == 2


_UPDATE_REQUIRED: Final = frozenset({"version", "operation", "id"})
_UPDATE_OPTIONAL: Final = frozenset(
    {"prompt", "paused", "scheduledAt", "schedule", "until", "count"}
)
_V2_DELETE_KEYS: Final = frozenset({"version", "operation", "id", "by"})


def _decode_operator(value: object) -> str:
    breach = operator_breach(value)
    if breach is not None:
        raise CorruptScheduleLog(log_reason(breach))
    assert isinstance(value, str)
    return value


def _decode_v2_delete(value: Mapping[str, object]) -> DeleteChangeV2:
    """An operator's delete: exactly its keys, then id and by."""
    if value.keys() != _V2_DELETE_KEYS:
        raise CorruptScheduleLog(Reason.V2_DELETE_KEYS)
    return DeleteChangeV2(id=_decode_id(value["id"]), by=_decode_operator(value["by"]))


def _decode_update(value: Mapping[str, object]) -> UpdateChange:  # noqa: C901 - per member
    """Keys, then id, prompt, paused, scheduledAt, schedule, until and count
    by the rulebook."""
    keys = value.keys()
    changed = keys - _UPDATE_REQUIRED - {"by"}  # who made it is no change of its own
    if not keys >= _UPDATE_REQUIRED or not changed or not (changed <= _UPDATE_OPTIONAL):
        raise CorruptScheduleLog(Reason.UPDATE_KEYS)
    schedule_id = _decode_id(value["id"])
    change = UpdateChange(id=schedule_id)
    if "prompt" in keys:
        prompt = value["prompt"]
        breach = prompt_breach(prompt)
        if breach is not None:
            raise CorruptScheduleLog(log_reason(breach, kind="update"))
        assert isinstance(prompt, str)
        change = msgspec.structs.replace(change, prompt=prompt)
    if "paused" in keys:
        paused = paused_rule(value["paused"])
        if isinstance(paused, Breach):
            raise CorruptScheduleLog(log_reason(paused))
        change = msgspec.structs.replace(change, paused=paused)
    if "scheduledAt" in keys:
        change = msgspec.structs.replace(change, scheduled_at=_decode_instant(value["scheduledAt"]))
    if "by" in keys:
        change = msgspec.structs.replace(change, by=_decode_operator(value["by"]))
    if "schedule" in keys:
        record = _decode_any_record(value["schedule"])
        judged = reschedule_rule(
            schedule_id, record, prompt="prompt" in keys, scheduled_at="scheduledAt" in keys
        )
        if isinstance(judged, Breach):
            raise CorruptScheduleLog(log_reason(judged, kind=record.kind))
        change = msgspec.structs.replace(change, schedule=record)
    if "until" in keys:  # null: the bound removed
        until = value["until"]
        change = msgspec.structs.replace(
            change, until=None if until is None else _decode_instant(until)
        )
    if "count" in keys:
        change = msgspec.structs.replace(
            change, count=None if value["count"] is None else _decode_count(value["count"])
        )
    return change


def _decode_count(value: object) -> int:
    count = count_rule(value)
    if isinstance(count, Breach):
        raise CorruptScheduleLog(log_reason(count))
    return count


def _decode_any_record(value: object) -> ScheduleRecord:
    """A record of any kind, calendar included (a version-2 change's)."""
    if isinstance(value, Mapping) and value.get("kind") == "calendar":
        return _decode_calendar(value)
    return _decode_record(value)


def _is_v2_create(value: Mapping[str, object]) -> bool:
    """A version-2 create: of a calendar record, or with a request id."""
    schedule = value.get("schedule")
    return (
        _is_v2(value)
        and value.get("operation") == "create"
        and isinstance(schedule, Mapping)
        and (
            schedule.get("kind") == "calendar"
            or "requestId" in value
            or not _END_KEYS.isdisjoint(value)
        )
    )


_REQUEST_KEYS: Final = frozenset({"requestId", "argsDigest"})
_END_KEYS: Final = frozenset({"until", "count"})


def _decode_v2_create(value: Mapping[str, object]) -> CreateChangeV2:
    keys = value.keys() - _END_KEYS
    if keys != _CREATE_KEYS and keys != _CREATE_KEYS | _REQUEST_KEYS:
        if "requestId" in keys and keys <= _CREATE_KEYS | _REQUEST_KEYS:
            raise CorruptScheduleLog(Reason.REQUEST_KEYS)
        raise CorruptScheduleLog(Reason.V2_CREATE_KEYS)
    decoded = _decode_any_record(value["schedule"])
    until = _decode_instant(value["until"]) if "until" in value else None
    count = _decode_count(value["count"]) if "count" in value else None
    ends = end_rule(
        decoded,
        parse_instant(decoded.scheduled_at),
        None if until is None else parse_instant(until),
        count,
    )
    if ends is not None:
        raise CorruptScheduleLog(log_reason(ends))
    if "requestId" not in keys:
        return CreateChangeV2(schedule=decoded, until=until, count=count)
    request_id, digest = value["requestId"], value["argsDigest"]
    breach = request_id_breach(request_id) or args_digest_breach(digest)
    if breach is not None:
        raise CorruptScheduleLog(log_reason(breach))
    assert isinstance(request_id, str)
    assert isinstance(digest, str)
    return CreateChangeV2(
        schedule=decoded, request_id=request_id, args_digest=digest, until=until, count=count
    )


def _decode_calendar(record: Mapping[str, object]) -> CalendarSchedule:
    if record.keys() != _CALENDAR_KEYS:
        raise CorruptScheduleLog(Reason.CALENDAR_KEYS)
    fields = [
        record[key]
        for key in ("prompt", "cron", "timeZone", "dstGap", "dstOverlap", "id", "scheduledAt")
    ]
    checked = calendar_record_rule(*fields)
    if isinstance(checked, Breach):
        raise CorruptScheduleLog(log_reason(checked, kind="calendar"))
    prompt, cron, zone, gap, overlap, schedule_id, scheduled_at = (str(f) for f in fields)
    return CalendarSchedule(schedule_id, prompt, cron, zone, gap, overlap, scheduled_at)


def _decode_record(value: object) -> ScheduleRecord:
    if not isinstance(value, Mapping):
        raise CorruptScheduleLog(Reason.RECORD)
    kind = value.get("kind")
    if not isinstance(kind, str) or kind not in _RECORD_SHAPES:
        raise CorruptScheduleLog(Reason.KIND)
    shape = _RECORD_SHAPES[kind]
    keys, keys_reason, seconds_key = shape
    if value.keys() != keys:
        raise CorruptScheduleLog(keys_reason)
    prompt, schedule_id, scheduled_at = value["prompt"], value["id"], value["scheduledAt"]
    checked = fields_rule(kind, prompt, value.get(seconds_key), schedule_id, scheduled_at)
    if isinstance(checked, Breach):
        raise CorruptScheduleLog(log_reason(checked, kind=kind))
    # The rules said so:
    assert isinstance(prompt, str)
    assert isinstance(schedule_id, str)
    assert isinstance(scheduled_at, str)
    seconds = checked[0]
    if kind == "after":
        return AfterSchedule(schedule_id, prompt, seconds, scheduled_at)
    if kind == "every":
        return EverySchedule(schedule_id, prompt, seconds, scheduled_at)
    return AtSchedule(schedule_id, prompt, scheduled_at)


def _decode_id(value: object) -> str:
    breach = id_breach(value)
    if breach is not None:
        raise CorruptScheduleLog(log_reason(breach))
    assert isinstance(value, str)
    return value


def _decode_instant(value: object) -> str:
    read = instant_rule(value)
    if isinstance(read, Breach):
        raise CorruptScheduleLog(log_reason(read))
    assert isinstance(value, str)
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
        case CalendarSchedule():
            head += (
                f',"cron":{js_string(record.cron)},"timeZone":{js_string(record.time_zone)}'
                f',"dstGap":"{record.dst_gap}","dstOverlap":"{record.dst_overlap}"'
            )
        case AtSchedule():
            pass
    return f'{head},"scheduledAt":"{record.scheduled_at}"}}'


def change_json(change: ScheduleChange) -> str:
    """The reference's JSON text of one change, keys in its order."""
    match change:
        case CreateChange(schedule=record):
            return f'{{"version":1,"operation":"create","schedule":{_record_json(record)}}}'
        case CreateChangeV2(schedule=record, request_id=str(request_id), args_digest=digest):
            return (
                f'{{"version":2,"operation":"create","schedule":{_record_json(record)},'
                f'"requestId":{js_string(request_id)},"argsDigest":"{digest}"'
                f"{_end_json(change)}}}"
            )
        case CreateChangeV2(schedule=record):
            return (
                f'{{"version":2,"operation":"create","schedule":{_record_json(record)}'
                f"{_end_json(change)}}}"
            )
        case DeleteChange(id=schedule_id):
            return f'{{"version":1,"operation":"delete","id":{js_string(schedule_id)}}}'
        case DispatchChange(id=schedule_id, accepted_at=str(accepted_at)):
            return (
                f'{{"version":1,"operation":"dispatch","id":{js_string(schedule_id)},'
                f'"acceptedAt":"{accepted_at}"}}'
            )
        case DispatchChange(id=schedule_id):
            return f'{{"version":1,"operation":"dispatch","id":{js_string(schedule_id)}}}'
        case UpdateChange():
            return _update_json(change)
        case DeleteChangeV2(id=schedule_id, by=by):
            return (
                f'{{"version":2,"operation":"delete","id":{js_string(schedule_id)},'
                f'"by":{js_string(by)}}}'
            )


def _update_json(change: UpdateChange) -> str:
    text = f'{{"version":2,"operation":"update","id":{js_string(change.id)}'
    if isinstance(change.prompt, str):
        text += f',"prompt":{js_string(change.prompt)}'
    if isinstance(change.paused, bool):
        text += f',"paused":{"true" if change.paused else "false"}'
    if isinstance(change.scheduled_at, str):
        text += f',"scheduledAt":"{change.scheduled_at}"'
    if not isinstance(change.schedule, msgspec.UnsetType):
        text += f',"schedule":{_record_json(change.schedule)}'
    if not isinstance(change.until, msgspec.UnsetType):
        text += ',"until":' + ("null" if change.until is None else f'"{change.until}"')
    if not isinstance(change.count, msgspec.UnsetType):
        text += f',"count":{"null" if change.count is None else change.count}'
    if isinstance(change.by, str):
        text += f',"by":{js_string(change.by)}'
    return text + "}"


def _end_json(change: CreateChangeV2) -> str:
    """A create's series end, when it has one."""
    text = "" if change.until is None else f',"until":"{change.until}"'
    return text if change.count is None else f'{text},"count":{change.count}'


def encode_change(change: ScheduleChange) -> bytes:
    """UTF-8 bytes of :func:`change_json`."""
    return change_json(change).encode("utf-8")


def record_fields_json(record: ScheduleRecord) -> str:
    """The record's JSON members without the closing brace (for views)."""
    return _record_json(record)[:-1]
