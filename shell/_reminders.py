"""The typed API's values: what a program passes and gets back instead of
the model's JSON text. They translate to and from the tool's arguments and
outcome, so a program and a model go through the same rules."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Final, Literal
from zoneinfo import ZoneInfo

import msgspec

from tickler.core import (
    AfterSchedule,
    CalendarRule,
    CalendarSchedule,
    ErrorCode,
    EverySchedule,
    Msg,
    Operation,
    ScheduleView,
    parse_calendar,
    parse_instant,
    series_points,
)
from tickler.core import ScheduleError as ErrorValue

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


_EXAMPLE_AT: Final = (
    "at=datetime(2031, 3, 7, 8, 0, tzinfo=UTC) or at=LocalTime(date(2031, 3, 7), time(9, 0), "
    '"Europe/Berlin")'
)
_TYPED_ID: Final = (
    'the reminder id must be non-empty without surrounding whitespace, e.g. "schedule-3" '
    "as schedule() or reminders() returned it."
)
# The tool's messages that name its JSON fields, in the typed API's words:
# a program passes keywords and Python values, not the model's JSON.
_TYPED_MESSAGES: Final = {
    Msg.SELECTOR: (
        "schedule() takes exactly one of after=, at= or every= in the reference profile "
        "(calendar= and request_id= need the extended profile), "
        'e.g. schedule("tea", after=timedelta(minutes=5)).'
    ),
    Msg.SELECTOR_EXTENDED: (
        "schedule() takes exactly one of after=, at=, every= or calendar=, e.g. "
        'schedule("tea", after=timedelta(minutes=5)) or schedule("stand-up", '
        'calendar=Calendar("0 9 * * 1-5", "Europe/Berlin")).'
    ),
    Msg.AFTER_SECONDS: (
        "after must be a positive timedelta of whole seconds, e.g. after=timedelta(minutes=20)."
    ),
    Msg.EVERY_SECONDS: "every must be a timedelta of whole seconds, e.g. every=timedelta(hours=1).",
    Msg.EVERY_FLOOR: "every must be at least 300 seconds, e.g. every=timedelta(minutes=5).",
    Msg.AT_SHAPE: f"at must be an aware datetime or a LocalTime, e.g. {_EXAMPLE_AT}.",
    Msg.AT_KIND: f"at must be an aware datetime or a LocalTime, e.g. {_EXAMPLE_AT}.",
    Msg.UPDATE: (
        "update() takes at least one of prompt=, paused=, snooze=, until=, count= or one new "
        "selector "
        "(after=, at=, every= or calendar=, not with snooze=), "
        'e.g. update("schedule-3", snooze=timedelta(minutes=10)) or '
        'update("schedule-3", every=timedelta(hours=2)).'
    ),
    Msg.UPDATE_ID: _TYPED_ID,
    Msg.DELETE_ID: _TYPED_ID,
    Msg.PAUSED: "paused must be True (stop delivering) or False (resume).",
    Msg.SNOOZE_SECONDS: (
        "snooze must be a timedelta of whole seconds, at least 1 second, "
        "e.g. snooze=timedelta(minutes=10)."
    ),
}


class ScheduleError(Exception):
    """A refused schedule operation: ``code`` is one of the ten closed
    codes and ``message`` the text the model would see for the same call,
    except that a message naming the tool's JSON fields (``after_seconds``,
    ``snooze_seconds``, ...) names the typed API's keywords instead
    (``after=``, ``snooze=``, ...); ``operation`` and ``id`` as in
    ``persistence_uncertain``."""

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        operation: Operation | None = None,
        id: str | None = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code: ErrorCode = code
        self.message = message
        self.operation = operation
        self.id = id

    @classmethod
    def of(cls, value: ErrorValue) -> ScheduleError:
        """The typed API's error for a tool's error value: the same code, in
        the typed API's words."""
        message = _TYPED_MESSAGES.get(value.message, value.message)
        return cls(value.code, message, value.operation, value.id)


@dataclass(frozen=True, slots=True)
class LocalTime:
    """A wall-clock time in an IANA zone, for ``schedule(at=...)``: resolved
    as the tool resolves ``{date, time, time_zone}`` (a time that occurs
    twice is the earlier one; one that does not exist is refused)."""

    date: date
    time: time
    zone: str


@dataclass(frozen=True, slots=True)
class Calendar:
    """A calendar rule for ``schedule(calendar=...)``: a 5-field cron (or
    @daily, ...) in an IANA zone, with its DST policy (see the
    ``calendar`` selector of ``schedule_create``)."""

    cron: str
    time_zone: str
    dst_gap: Literal["shift", "skip"] = "shift"
    dst_overlap: Literal["first", "both"] = "first"

    def as_arguments(self) -> dict[str, str]:
        return {
            "cron": self.cron,
            "time_zone": self.time_zone,
            "dst_gap": self.dst_gap,
            "dst_overlap": self.dst_overlap,
        }


PREVIEW_COUNT = 3


class Reminder(msgspec.Struct, frozen=True, kw_only=True):
    """An active reminder, as a program sees it."""

    id: str
    kind: Literal["after", "at", "every", "calendar"]
    prompt: str
    due: datetime
    """Its next target, an aware UTC datetime (millisecond precision)."""
    overdue: bool
    """Due and not yet delivered (the tool's ``"state": "overdue"``)."""
    after: timedelta | None = None
    """An ``after`` reminder's delay."""
    every: timedelta | None = None
    """An ``every`` reminder's interval."""
    calendar: Calendar | None = None
    """A ``calendar`` reminder's rule (its zone in canonical spelling)."""
    paused: bool = False
    """Paused with ``update(paused=True)``: it delivers nothing until resumed."""
    until: datetime | None = None
    """A series' end: no occurrence after it (an aware UTC datetime)."""
    remaining: int | None = None
    """A series' end: the occurrences it may still deliver, the next included."""
    next_occurrences: tuple[datetime, ...] = ()
    """A recurring reminder's next three occurrences (the first is ``due``):
    aware datetimes in a calendar reminder's zone, in UTC for a fixed-rate
    one (after a snooze: the snoozed time, then its interval's points)."""


def _seconds(value: object) -> object:
    """A ``timedelta`` as the tool's seconds (an int when whole: the rules
    refuse the rest); anything else is passed on for the rules to judge."""
    if isinstance(value, timedelta):
        seconds = value / timedelta(seconds=1)
        return int(seconds) if seconds.is_integer() else seconds
    return value


def _at(value: object) -> object:
    """An aware ``datetime`` as an RFC 3339 instant, a :class:`LocalTime` as
    the tool's local object; a naive ``datetime`` is written without an
    offset, which the rules refuse as the tool does."""
    if isinstance(value, LocalTime):
        clock = value.time.replace(tzinfo=None).isoformat(timespec="milliseconds")
        return {"date": value.date.isoformat(), "time": clock, "time_zone": value.zone}
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            return value.isoformat(timespec="milliseconds")
        return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return value


def create_arguments(
    prompt: object,
    after: object,
    at: object,
    every: object,
    *,
    calendar: object = None,
    request_id: object = None,
) -> dict[str, object]:
    """The ``schedule_create`` arguments a typed call stands for."""
    args: dict[str, object] = {"prompt": prompt}
    if calendar is not None:
        args["calendar"] = calendar.as_arguments() if isinstance(calendar, Calendar) else calendar
    if request_id is not None:
        args["request_id"] = request_id
    if after is not None:
        args["after_seconds"] = _seconds(after)
    if at is not None:
        args["at"] = _at(at)
    if every is not None:
        args["every_seconds"] = _seconds(every)
    return args


def update_arguments(
    reminder_id: object,
    prompt: object,
    paused: object,
    snooze: object,
    *,
    after: object = None,
    at: object = None,
    every: object = None,
    calendar: object = None,
) -> dict[str, object]:
    """The ``schedule_update`` arguments a typed call stands for (a new
    selector written as :func:`create_arguments` writes it)."""
    args: dict[str, object] = {"id": reminder_id}
    if prompt is not None:
        args["prompt"] = prompt
    if paused is not None:
        args["paused"] = paused
    if snooze is not None:
        args["snooze_seconds"] = _seconds(snooze)
    selector = create_arguments(None, after, at, every, calendar=calendar)
    del selector["prompt"]
    return args | selector


def end_arguments(until: object, count: object) -> dict[str, object]:
    """A series' end as the tools take it (``until`` written as ``at``)."""
    args: dict[str, object] = {}
    if until is not None:
        args["until"] = until if until == "none" else _at(until)
    if count is not None:
        args["count"] = count
    return args


def _calendar(record: CalendarSchedule) -> Calendar | None:
    rule = parse_calendar(
        {
            "cron": record.cron,
            "time_zone": record.time_zone,
            "dst_gap": record.dst_gap,
            "dst_overlap": record.dst_overlap,
        }
    )
    if not isinstance(rule, CalendarRule):  # a logged record's rule was judged valid
        return None
    return Calendar(rule.cron, rule.time_zone, rule.dst_gap, rule.dst_overlap)


def _previews(view: ScheduleView) -> tuple[datetime, ...]:
    """A recurring reminder's next occurrences (a calendar one's in its zone,
    a fixed-rate one's in UTC), as the tools' ``nextOccurrences``."""
    record = view.record
    target = parse_instant(record.scheduled_at)
    instants = series_points(record, target, view.lattice, PREVIEW_COUNT, view.end)
    zone = ZoneInfo(record.time_zone) if isinstance(record, CalendarSchedule) else UTC
    return tuple((_EPOCH + timedelta(milliseconds=at)).astimezone(zone) for at in instants)


def reminder_of(view: ScheduleView) -> Reminder:
    record = view.record
    due = _EPOCH + timedelta(milliseconds=parse_instant(record.scheduled_at))
    calendar = _calendar(record) if isinstance(record, CalendarSchedule) else None
    recurring = isinstance(record, CalendarSchedule | EverySchedule)
    previews = _previews(view) if recurring else ()
    until, remaining = view.end if view.end is not None else (None, None)
    return Reminder(
        until=None if until is None else _EPOCH + timedelta(milliseconds=until),
        remaining=remaining,
        id=record.id,
        kind=record.kind,
        prompt=record.prompt,
        due=due,
        overdue=view.state == "overdue",
        paused=view.state == "paused",
        calendar=calendar,
        next_occurrences=previews,
        after=timedelta(seconds=record.after_seconds)
        if isinstance(record, AfterSchedule)
        else None,
        every=timedelta(seconds=record.every_seconds)
        if isinstance(record, EverySchedule)
        else None,
    )
