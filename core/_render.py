"""``render``: the exact text a tool answers with.

Compact JSON, the reference's key order, non-ASCII unescaped: byte-identical
to the reference's ``JSON.stringify`` of the same value.
"""

from __future__ import annotations

from returns.pipeline import is_successful
from returns.result import Result

from tickler.core import _rules as rules
from tickler.core._codec import record_fields_json
from tickler.core._errors import ScheduleError
from tickler.core._model import CalendarSchedule, EverySchedule
from tickler.core._outcomes import (
    DELIVERY_MODE,
    Created,
    Deleted,
    Delivery,
    Listed,
    NotFound,
    Outcome,
    ScheduleView,
    Updated,
    Wait,
)
from tickler.core.timing import format_instant, local_time_text, parse_instant
from tickler.core.wire import js_string

PREVIEW_COUNT = 3
# A fixed-rate reminder has no zone: its "local" preview is the UTC wall time.
_FIXED_RATE_ZONE = "UTC"


def previews_json(time_zone: str, instants: tuple[int, ...]) -> str:
    """``nextOccurrences``: each instant in UTC (like ``scheduledAt``) and as
    the wall time in ``time_zone`` with its offset."""
    items = ",".join(
        f'{{"utc":"{format_instant(at)}","local":"{local_time_text(time_zone, at)}"}}'
        for at in instants
    )
    return f'"nextOccurrences":[{items}]'


def calendar_view_json(view: ScheduleView) -> str:
    """A calendar reminder as the extended tools show it: its rule as it
    would be sent back, and ``nextOccurrences``, the next three in UTC and
    in the reminder's zone (so a model can read them back to the user)."""
    record = view.record
    assert isinstance(record, CalendarSchedule)
    instants = previews(view)
    return (
        f'{{"id":{js_string(record.id)},"kind":"calendar","prompt":{js_string(record.prompt)},'
        f'"calendar":{{"cron":{js_string(record.cron)},"time_zone":{js_string(record.time_zone)},'
        f'"dst_gap":"{record.dst_gap}","dst_overlap":"{record.dst_overlap}"}},'
        f'"scheduledAt":"{record.scheduled_at}"{end_json(view)},"state":"{view.state}",'
        f'"deliveryMode":"{DELIVERY_MODE}",{previews_json(record.time_zone, instants)}}}'
    )


def previews(view: ScheduleView) -> tuple[int, ...]:
    """The next occurrences of a recurring reminder: its target, then its
    series (a snoozed one: from where it continues; paused or not)."""
    target = parse_instant(view.record.scheduled_at)
    return rules.series_points(view.record, target, view.lattice, PREVIEW_COUNT, view.end)


def end_json(view: ScheduleView) -> str:
    """A series' end, when it has one: ``until`` (UTC) and ``remaining``,
    the occurrences it may still deliver (the next included)."""
    if view.end is None:
        return ""
    until, remaining = view.end
    text = "" if until is None else f',"until":"{format_instant(until)}"'
    return text if remaining is None else f'{text},"remaining":{remaining}'


def view_json(view: ScheduleView) -> str:
    if isinstance(view.record, CalendarSchedule):
        return calendar_view_json(view)
    text = (
        f'{record_fields_json(view.record)}{end_json(view)},"state":"{view.state}",'
        f'"deliveryMode":"{DELIVERY_MODE}"'
    )
    if view.previews and isinstance(view.record, EverySchedule):
        text += "," + previews_json(_FIXED_RATE_ZONE, previews(view))
    return text + "}"


def error_json(err: ScheduleError) -> str:
    text = f'{{"code":"{err.code}","message":{js_string(err.message)}'
    if err.operation is not None:
        text += f',"operation":"{err.operation}"'
    if err.id is not None:
        text += f',"id":{js_string(err.id)}'
    return text + "}"


def outcome_json(outcome: Outcome) -> str:
    match outcome:
        case Created(view=created) | Updated(view=created):
            return view_json(created)
        case Listed(views=views):
            return "[" + ",".join(view_json(v) for v in views) + "]"
        case Deleted(id=schedule_id):
            return f'{{"id":{js_string(schedule_id)},"deleted":true}}'
        case NotFound(id=schedule_id, tool="update"):
            return f'{{"id":{js_string(schedule_id)},"updated":false,"code":"schedule_not_found"}}'
        case NotFound(id=schedule_id):
            return f'{{"id":{js_string(schedule_id)},"deleted":false,"code":"schedule_not_found"}}'
        case Delivery(text=text):
            return text
        case Wait(next_wake=next_wake):
            return f'{{"nextWake":{"null" if next_wake is None else next_wake}}}'


def render(result: Result[Outcome, ScheduleError]) -> str:
    """The tool output text of a decision's result."""
    if is_successful(result):
        return outcome_json(result.unwrap())
    return error_json(result.failure())
