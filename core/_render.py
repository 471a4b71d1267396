"""``render``: the exact text a tool answers with.

Compact JSON, the reference's key order, non-ASCII unescaped: byte-identical
to the reference's ``JSON.stringify`` of the same value.
"""

from __future__ import annotations

from returns.pipeline import is_successful
from returns.result import Result

from tickler.core._codec import record_fields_json
from tickler.core._errors import ScheduleError
from tickler.core._jstext import js_string
from tickler.core._outcomes import (
    DELIVERY_MODE,
    Created,
    Deleted,
    Delivery,
    Listed,
    NotFound,
    Outcome,
    ScheduleView,
    Wait,
)


def view_json(view: ScheduleView) -> str:
    return (
        f'{record_fields_json(view.record)},"state":"{view.state}",'
        f'"deliveryMode":"{DELIVERY_MODE}"}}'
    )


def error_json(err: ScheduleError) -> str:
    text = f'{{"code":"{err.code}","message":{js_string(err.message)}'
    if err.operation is not None:
        text += f',"operation":"{err.operation}"'
    if err.id is not None:
        text += f',"id":{js_string(err.id)}'
    return text + "}"


def outcome_json(outcome: Outcome) -> str:
    match outcome:
        case Created(view=created):
            return view_json(created)
        case Listed(views=views):
            return "[" + ",".join(view_json(v) for v in views) + "]"
        case Deleted(id=schedule_id):
            return f'{{"id":{js_string(schedule_id)},"deleted":true}}'
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
