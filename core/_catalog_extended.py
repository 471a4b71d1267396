"""The extended profile's tool contract: the v1 tools with the calendar
selector, written for models to get right the first time.

Input schemas follow OpenAI's strict mode: every object closed
(``additionalProperties: false``), every property required, an optional one
nullable (``parse_tool_call`` in the extended profile treats null as absent),
``anyOf`` rather than ``oneOf``. Each field says its type, its range and
pattern, and gives an example. The choice of one selector is the schema's
own: ``when`` is an ``anyOf`` of four closed objects of one member each, so
a model (or a test model filling every field the schema allows) cannot
send two; ``parse_tool_call`` lifts it to the flat arguments, which it
still accepts.
"""

from __future__ import annotations

import copy
from typing import Any, Final

from tickler.core._commands import CREATE, DELETE, LIST, UPDATE
from tickler.core._model import MIN_EVERY_INTERVAL_SECONDS
from tickler.core._when import WHEN

JsonSchema = dict[str, Any]

_NULL: Final[JsonSchema] = {"type": "null"}

CREATE_DESCRIPTION: Final = (
    "Create one reminder in the current session. Send prompt and when, an object holding "
    "exactly one selector: after_seconds (fire once, that many seconds from now), at (fire once "
    "at a date-time), every_seconds (fire every N seconds, at least "
    f"{MIN_EVERY_INTERVAL_SECONDS}) or calendar (fire on a cron rule in the user's time zone). "
    'E.g. every weekday at 9:00: {"prompt": "stand-up", "when": {"calendar": {"cron": '
    '"0 9 * * 1-5", "time_zone": "Europe/Berlin", "dst_gap": null, "dst_overlap": null}, '
    '"until": null, "count": null}, "request_id": null}. '
    "Recurring reminders that missed occurrences deliver the latest one only. The answer of a "
    "calendar reminder lists its next three occurrences in UTC and local time: read them back "
    "to the user. A recurring reminder may end: until (a date-time) and/or count (at most N "
    "occurrences) beside every_seconds or calendar in when; the answer then shows until and "
    "remaining. Delivery is session-local: a "
    "reminder runs on time only while this session is live and otherwise becomes overdue "
    "until the session is resumed."
)
LIST_DESCRIPTION: Final = (
    "List every active reminder in the current session in creation order, including its "
    "exact id, UTC target, scheduled or overdue state, session-local delivery mode and, for a "
    "calendar reminder, its next three occurrences."
)
DELETE_DESCRIPTION: Final = (
    "Delete one active reminder in the current session by the exact id returned by "
    'schedule_create or schedule_list, e.g. {"id": "schedule-3"}. Unknown or already-finished '
    "ids return deleted false."
)

OFFSET_INSTANT_PATTERN: Final = (
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,3})?"
    r"(Z|[+-][0-9]{2}:[0-9]{2})$"
)
LOCAL_DATE_PATTERN: Final = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
LOCAL_TIME_PATTERN: Final = r"^[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]{1,3})?)?$"


def _closed(properties: JsonSchema) -> JsonSchema:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _or_null(schema: JsonSchema, description: str) -> JsonSchema:
    """An optional member: the value, or null for absent (strict mode has
    every member required; ``anyOf`` rather than a type list, which some
    frameworks' schema readers do not know)."""
    return {"anyOf": [schema, _NULL], "description": description}


_ZONE: Final[JsonSchema] = {
    "type": "string",
    "description": 'An IANA time zone name or UTC, e.g. "Europe/Berlin" or "America/New_York".',
}
_LOCAL_AT: Final = _closed(
    {
        "date": {
            "type": "string",
            "pattern": LOCAL_DATE_PATTERN,
            "description": 'Local date YYYY-MM-DD, e.g. "2026-12-07".',
        },
        "time": {
            "type": "string",
            "pattern": LOCAL_TIME_PATTERN,
            "description": (
                'Local time HH:MM or HH:MM:SS (24-hour; seconds optional), e.g. "09:00".'
            ),
        },
        "time_zone": _ZONE,
    }
)
_CALENDAR: Final = _closed(
    {
        "cron": {
            "type": "string",
            "description": (
                "Five cron fields: minute hour day-of-month month day-of-week (0 and 7 are "
                "Sunday; names like mon, jan allowed; day-of-month L is the last day, LW the "
                "last weekday, 15W the weekday nearest the 15th; day-of-week 5L is the last "
                "Friday, 1#1 the first Monday; when both day fields are set, either matches), "
                'or @hourly, @daily, @weekly, @monthly, @yearly. E.g. "0 9 * * 1-5" is 09:00 '
                'Monday to Friday, "0 9 * * 1#1" 09:00 on the first Monday of each month.'
            ),
        },
        "time_zone": _ZONE,
        "dst_gap": _or_null(
            {"type": "string", "enum": ["shift", "skip"]},
            (
                "A matched local time that does not exist (clocks spring forward): shift "
                '(default, null) fires once just after the gap, skip does not fire. E.g. "shift".'
            ),
        ),
        "dst_overlap": _or_null(
            {"type": "string", "enum": ["first", "both"]},
            (
                "A matched local time that occurs twice (clocks fall back): first (default, "
                'null) fires at the earlier one only, both fires at each. E.g. "first".'
            ),
        ),
    }
)

_AFTER_SECONDS: Final[JsonSchema] = {
    "type": "integer",
    "minimum": 1,
    "description": "One-shot delay in whole seconds, at least 1, e.g. 600.",
}
_AT: Final[JsonSchema] = {
    "anyOf": [
        {
            "type": "string",
            "pattern": OFFSET_INSTANT_PATTERN,
            "description": (
                'RFC 3339 date-time with Z or an offset, e.g. "2026-12-07T09:00:00+01:00".'
            ),
        },
        _LOCAL_AT,
    ],
    "description": (
        "One-shot target: an RFC 3339 string with offset, or a local "
        '{"date", "time", "time_zone"} object, e.g. {"date": "2026-12-07", '
        '"time": "09:00", "time_zone": "Europe/Berlin"}.'
    ),
}
_EVERY_SECONDS: Final[JsonSchema] = {
    "type": "integer",
    "minimum": MIN_EVERY_INTERVAL_SECONDS,
    "description": (
        f"Fixed-rate interval in whole seconds, at least {MIN_EVERY_INTERVAL_SECONDS}, "
        "counted from creation, e.g. 3600."
    ),
}
_CALENDAR_RULE: Final[JsonSchema] = {
    **_CALENDAR,
    "description": (
        'Recurring on a calendar rule in a time zone, e.g. {"cron": "0 9 * * 1-5", '
        '"time_zone": "Europe/Berlin", "dst_gap": null, "dst_overlap": null}.'
    ),
}
_OFFSET_INSTANT: Final[JsonSchema] = {
    "type": "string",
    "pattern": OFFSET_INSTANT_PATTERN,
    "description": 'RFC 3339 date-time with Z or an offset, e.g. "2027-03-31T18:00:00+02:00".',
}
_LOCAL_UNTIL: Final = _closed(
    {
        "date": _LOCAL_AT["properties"]["date"],
        "time": _LOCAL_AT["properties"]["time"],
        "time_zone": _or_null(_ZONE, "Null: a calendar reminder's own zone."),
    }
)
_UNTIL_TEXT: Final = (
    "End of a recurring reminder (every_seconds or calendar): no occurrence after this "
    "date-time, given as at is (RFC 3339 with offset, or a local date and time; a calendar "
    "reminder's local time_zone may be null for its rule's zone)"
)
_COUNT_TEXT: Final = "End of a recurring reminder: at most this many occurrences"
_NONE: Final[JsonSchema] = {"type": "string", "enum": ["none"]}
# A series' end beside a recurring selector in when: the schema itself says
# that a one-shot has none.
_UNTIL: Final[JsonSchema] = {
    "anyOf": [_OFFSET_INSTANT, _LOCAL_UNTIL, _NULL],
    "description": f"{_UNTIL_TEXT}, e.g. "
    '{"date": "2027-03-31", "time": "18:00", "time_zone": null}; else null.',
}
_COUNT: Final[JsonSchema] = _or_null(
    {"type": "integer", "minimum": 1},
    f"{_COUNT_TEXT}, counted from its creation or reschedule (a catch-up counts every "
    "occurrence it stands for), e.g. 5 for the next five days; else null.",
)


def _ends() -> JsonSchema:
    """``until`` and ``count``, a fresh copy for each variant: a schema
    walker that rewrites a node in place (PydanticAI's OpenAI transformer
    does) must not meet the one it rewrote again under another variant."""
    return copy.deepcopy({"until": _UNTIL, "count": _COUNT})


# One closed object per selector: the schema itself says "exactly one". A
# create's recurring selectors hold the series' end beside them; an update's
# do not (its own until and count change the end, once, at the top level).
_WHEN_VARIANTS: Final = [
    _closed({"after_seconds": _AFTER_SECONDS}),
    _closed({"at": _AT}),
    _closed({"every_seconds": _EVERY_SECONDS, **_ends()}),
    _closed({"calendar": _CALENDAR_RULE, **_ends()}),
]
_UPDATE_WHEN_VARIANTS: Final = [
    _closed({"after_seconds": _AFTER_SECONDS}),
    _closed({"at": _AT}),
    _closed({"every_seconds": _EVERY_SECONDS}),
    _closed({"calendar": _CALENDAR_RULE}),
]
_WHEN_EXAMPLES: Final = (
    '{"after_seconds": 600}, {"at": "2026-12-07T09:00:00+01:00"}, '
    '{"every_seconds": 3600, "until": null, "count": null} or '
    '{"calendar": {"cron": "0 9 * * 1-5", "time_zone": "Europe/Berlin", "dst_gap": null, '
    '"dst_overlap": null}, "until": null, "count": 5}'
)

CREATE_INPUT: Final = _closed(
    {
        "prompt": {
            "type": "string",
            "description": (
                'Reminder content to present when it falls due; non-empty. E.g. "stand-up notes".'
            ),
        },
        WHEN: {
            "anyOf": _WHEN_VARIANTS,
            "description": (
                "When it fires: an object holding exactly one of after_seconds, at, "
                f"every_seconds or calendar, e.g. {_WHEN_EXAMPLES}."
            ),
        },
        "request_id": _or_null(
            {"type": "string"},
            "Your key for this call, at most 200 characters, so a retry never creates a second "
            "reminder: the same request_id with the same arguments returns the first answer. "
            'E.g. "call-7f3a"; else null.',
        ),
    }
)
LIST_INPUT: Final = _closed({})
DELETE_INPUT: Final = _closed(
    {"id": {"type": "string", "description": 'Exact schedule id, e.g. "schedule-3".'}}
)

UPDATE_DESCRIPTION: Final = (
    "Change one active reminder in place; its id stays. Send id and at least one of: prompt "
    "(new text), paused (true: deliver nothing until resumed; false: resume, waiting for the "
    "next occurrence without replaying what fell due while paused), snooze_seconds (move the "
    "next occurrence, or a one-shot's time, to now plus that many seconds; later occurrences "
    'stay on the rule), until or count (a recurring reminder\'s end; "none" removes it), '
    "or when, one new schedule in its place (after_seconds, at, every_seconds or calendar, as "
    "in schedule_create; the next occurrence follows it, an every_seconds series counted from "
    "now; not with snooze_seconds). Set what you do not change to null. "
    'E.g. {"id": "schedule-3", "prompt": null, "paused": null, "snooze_seconds": 600, '
    '"when": null, "until": null, "count": null}, or, to move a stand-up to 9:30, '
    '"when": {"calendar": {"cron": "30 9 * * 1-5", "time_zone": "Europe/Berlin", '
    '"dst_gap": null, "dst_overlap": null}} with the other '
    "members null. Unknown or finished ids return updated false."
)
UPDATE_INPUT: Final = _closed(
    {
        "id": {"type": "string", "description": 'Exact schedule id, e.g. "schedule-3".'},
        "prompt": _or_null(
            {"type": "string"}, 'New reminder text, e.g. "stand-up notes, room 4"; else null.'
        ),
        "paused": _or_null(
            {"type": "boolean"}, "true pauses, false resumes, e.g. true; else null."
        ),
        "snooze_seconds": _or_null(
            {"type": "integer", "minimum": 1},
            "Whole seconds from now for the next occurrence, e.g. 600; else null.",
        ),
        WHEN: {
            "anyOf": [*_UPDATE_WHEN_VARIANTS, _NULL],
            "description": (
                "A new schedule in place of the current one, the id kept: an object holding "
                "exactly one of after_seconds, at, every_seconds or calendar, e.g. "
                '{"every_seconds": 7200}; else null.'
            ),
        },
        "until": {
            "anyOf": [_NULL, _OFFSET_INSTANT, _LOCAL_UNTIL, _NONE],
            "description": f'{_UNTIL_TEXT}; "none" removes it; null leaves it as it is. '
            'E.g. "2027-03-31T18:00:00+02:00".',
        },
        "count": {
            "anyOf": [_NULL, {"type": "integer", "minimum": 1}, _NONE],
            "description": f"{_COUNT_TEXT} from now on, the next one included, e.g. 3; "
            '"none" removes it; null leaves it as it is.',
        },
    }
)

INPUTS: Final = {
    CREATE: CREATE_INPUT,
    LIST: LIST_INPUT,
    DELETE: DELETE_INPUT,
    UPDATE: UPDATE_INPUT,
}
DESCRIPTIONS: Final = {
    CREATE: CREATE_DESCRIPTION,
    LIST: LIST_DESCRIPTION,
    DELETE: DELETE_DESCRIPTION,
    UPDATE: UPDATE_DESCRIPTION,
}
