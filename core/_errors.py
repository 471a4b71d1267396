"""The closed set of tool error values, and the corrupt-log exception.

Codes and messages are the reference's, byte for byte; a model or a client may
match on either. ``schedule_not_found`` is not an error: it is a result.
"""

from __future__ import annotations

import json
from typing import Final, Literal, get_args

import msgspec

ErrorCode = Literal[
    "invalid_prompt",
    "invalid_selector",
    "invalid_rule",
    "invalid_time_zone",
    "not_future",
    "time_out_of_range",
    "frequency_too_high",
    "corrupt_schedule_log",
    "persistence_uncertain",
    "internal_error",
]
ERROR_CODES: Final[tuple[ErrorCode, ...]] = get_args(ErrorCode)

Operation = Literal["create", "list", "delete", "update"]
# the reference's (``update`` is the extended profile's schedule_update)
OPERATIONS: Final[tuple[Operation, ...]] = ("create", "list", "delete")
EXTENDED_OPERATIONS: Final[tuple[Operation, ...]] = get_args(Operation)


class ScheduleError(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """One closed tool error value: ``{code, message[, operation[, id]]}``.

    ``operation`` (and ``id`` where known) are present only for
    ``persistence_uncertain``.
    """

    code: ErrorCode
    message: str
    operation: Operation | None = None
    id: str | None = None


class Msg:
    """The reference's exact messages."""

    PROMPT: Final = "prompt must be non-empty after trimming."
    SELECTOR: Final = "schedule_create accepts exactly one of after_seconds, at, or every_seconds."
    # the extended profile's (not the reference's): it names the fourth selector
    SELECTOR_EXTENDED: Final = (
        "schedule_create accepts prompt and when, holding exactly one of after_seconds, at, "
        'every_seconds, or calendar, e.g. {"prompt": "tea", "when": {"after_seconds": 300}} or '
        '{"prompt": "stand-up", "when": {"calendar": {"cron": "0 9 * * 1-5", '
        '"time_zone": "Europe/Berlin"}}}.'
    )
    # the extended profile's: its schemas hold the selector in a ``when`` object
    WHEN: Final = (
        "when must be an object holding exactly one of after_seconds, at, every_seconds, or "
        "calendar (until and count may stand beside a recurring one), e.g. "
        '{"after_seconds": 600} or {"calendar": {"cron": "0 9 * * 1-5", '
        '"time_zone": "Europe/Berlin"}, "count": 5}.'
    )
    WHEN_AND_FLAT: Final = (
        "Send the schedule once: in when, or as a top-level after_seconds, at, every_seconds, "
        "or calendar (and until or count), not both, e.g. "
        '{"prompt": "tea", "when": {"after_seconds": 300}}.'
    )
    AFTER_SECONDS: Final = "after_seconds must be a positive safe integer."
    EVERY_SECONDS: Final = "every_seconds must be a safe integer."
    EVERY_FLOOR: Final = "every_seconds must be at least 300."
    DELETE_ID: Final = "schedule_delete id must be non-empty without surrounding whitespace."
    AT_SHAPE: Final = (
        "at must use YYYY-MM-DDTHH:mm:ss with optional 1-3 digit fractional seconds "
        "and an explicit Z or numeric offset."
    )
    AT_REAL: Final = "The at value must be a real ISO calendar date and time."
    AT_OFFSET: Final = "The at numeric offset is invalid."
    AT_KIND: Final = "at must be an explicit-offset string or local calendar object."
    LOCAL_KEYS: Final = "Local at must contain exactly date, time, and time_zone."
    LOCAL_STRINGS: Final = "Local at date and time must be strings."
    LOCAL_SHAPE: Final = (
        "Local at requires date YYYY-MM-DD and time HH:mm:ss with optional "
        "one-to-three digit milliseconds."
    )
    LOCAL_REAL: Final = "The local at value must be a real ISO calendar date and time."
    LOCAL_GAP: Final = "The local at time does not exist in the selected time zone."
    ZONE_STRING: Final = "time_zone must be a string."
    ZONE: Final = "time_zone must be UTC or a valid IANA Area/Location name."
    NOT_FUTURE: Final = "The scheduled time must be strictly in the future."
    OUT_OF_RANGE: Final = (
        "The scheduled time must be representable as a four-digit-year RFC 3339 UTC instant."
    )
    UPDATE: Final = (
        "schedule_update accepts id and at least one of prompt, paused, snooze_seconds, until, "
        "count, or a new selector (at most one of after_seconds, at, every_seconds, or "
        'calendar, not with snooze_seconds), e.g. {"id": "schedule-3", "paused": true} or '
        '{"id": "schedule-3", "every_seconds": 7200}.'
    )
    UPDATE_ID: Final = (
        "schedule_update id must be non-empty without surrounding whitespace, "
        'e.g. "schedule-3" as schedule_create or schedule_list returned it.'
    )
    PAUSED: Final = "paused must be true (stop delivering) or false (resume)."
    SNOOZE_SECONDS: Final = (
        "snooze_seconds must be a whole number of seconds, at least 1, e.g. 600."
    )
    REQUEST_ID: Final = (
        "request_id must be a non-empty string without surrounding whitespace, at most 200 "
        'characters, e.g. "call-7f3a"; send the same one when you retry the same call.'
    )
    REQUEST_OTHER_ARGS: Final = (
        "request_id was already used with other arguments: retry with exactly the same "
        "arguments to get the first answer, or send a new request_id for a new reminder."
    )
    OPERATOR: Final = (
        "by must name the operator: a non-empty string without surrounding whitespace, "
        "at most 200 characters."
    )
    DELIVER_PAUSED: Final = "A paused reminder is not delivered now: resume it first."
    COUNT: Final = (
        "count must be a whole number of occurrences, at least 1, e.g. 5 (every_seconds and "
        'calendar reminders only); in schedule_update, the occurrences still to come, or "none".'
    )
    END_ONE_SHOT: Final = (
        "until and count end a recurring reminder: send them with every_seconds or calendar "
        "only (a one-shot fires once)."
    )
    UNTIL_BEFORE: Final = (
        "until is before the reminder's next occurrence, so nothing would remain: send a "
        'later until, or "none" in schedule_update to remove it.'
    )
    RESUMED_PAST_UNTIL: Final = (
        "This series ended (its until passed) while it was paused, so resuming it would "
        'deliver nothing: send a later until with paused false, e.g. {"paused": false, '
        '"until": "2027-03-31T18:00:00+02:00"}, or delete it.'
    )
    CORRUPT: Final = "The session schedule log is corrupt."
    PERSISTENCE: Final = (
        "Schedule persistence is uncertain; retry with schedule_list before relying on this result."
    )
    INTERNAL: Final = "The schedule operation failed."


def error(code: ErrorCode, message: str) -> ScheduleError:
    return ScheduleError(code=code, message=message)


_SHOWN_CHARACTERS: Final = 20


def shown(value: str) -> str:
    """A sent value as a message quotes it: a JSON string, ASCII only (any
    other character escaped, so a message stays one plain line), its first
    20 characters and its length when it is longer."""
    if len(value) <= _SHOWN_CHARACTERS:
        return json.dumps(value)
    return f"{json.dumps(value[:_SHOWN_CHARACTERS])}... ({len(value):,} characters)"


def persistence_uncertain(operation: Operation, schedule_id: str | None = None) -> ScheduleError:
    return ScheduleError(
        code="persistence_uncertain", message=Msg.PERSISTENCE, operation=operation, id=schedule_id
    )


INTERNAL_ERROR: Final = error("internal_error", Msg.INTERNAL)
CORRUPT_LOG: Final = error("corrupt_schedule_log", Msg.CORRUPT)


class CorruptScheduleLog(Exception):
    """A ``schedule/change`` stream that breaks a v1 rule.

    ``reason`` is the reference's exact text; ``index`` is the position of the
    offending event in the supplied sequence (None when the whole log is at
    fault, e.g. a seed length beyond its end).
    """

    def __init__(self, reason: str, index: int | None = None) -> None:
        super().__init__(reason if index is None else f"event {index}: {reason}")
        self.reason = reason
        self.index = index

    def at(self, index: int) -> CorruptScheduleLog:
        """The same reason, located at ``index``."""
        return CorruptScheduleLog(self.reason, index)
