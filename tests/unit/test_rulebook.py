# ruff: noqa: E501 - the case tables read best one case per line
"""Every rule through every path that applies it, with the same verdict.

Each case is one value that breaks exactly one rule of the rulebook
(:mod:`tickler.core._rules`), or a boundary value that keeps it. A logged
record or change is run through the exact decoder, the fold (its fast path
first: the logs are valid JSON of the right types wherever the case allows),
``evolve`` on the typed value (built by hand, so no decoder vouched for it)
and ``check_log``; a tool call through ``parse_tool_call`` and ``decide`` on
a command built by hand. Every path must answer the rule's verdict: the
same breach, shown as that path shows it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pytest
from returns.pipeline import is_successful

from tickler.core import (
    SCHEDULE_CHANGE,
    CorruptScheduleLog,
    CreateAfter,
    CreateCalendar,
    CreateEvery,
    DeleteSchedule,
    ScheduleChange,
    SessionEvent,
    State,
    UpdateSchedule,
    check_log,
    decide,
    decode_change,
    evolve,
    fold,
    fold_changes,
    parse_tool_call,
)
from tickler.core._commands import arguments_digest
from tickler.core._model import (
    AfterSchedule,
    AtSchedule,
    CalendarSchedule,
    CreateChangeV2,
    EverySchedule,
    UpdateChange,
    create,
    delete,
    dispatch,
)
from tickler.core._rules import Breach, DueNext, allocation_rule, due_rule, log_reason, tool_error
from tickler.core._seen import SeenIds
from tickler.core.wire._session import event

T0 = "2026-08-05T12:00:00.000Z"
T1 = "2026-08-05T12:05:00.000Z"
NOW = 1785931200000  # T0 in ms
C1 = "2026-08-06T09:00:00.000Z"  # a calendar record's first occurrence after T0
MAX_SAFE = 2**53 - 1


def _record(kind: str, **fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"id": "schedule-1", "kind": kind, "prompt": "p"}
    if kind == "after":
        base["afterSeconds"] = 300
    elif kind == "every":
        base["everySeconds"] = 300
    base["scheduledAt"] = T1
    base.update(fields)
    return base


def _calendar(**fields: Any) -> dict[str, Any]:
    """A version-2 create of a calendar record (09:00 UTC daily; its first
    occurrence after T0 is the next day's)."""
    base: dict[str, Any] = {
        "id": "schedule-1",
        "kind": "calendar",
        "prompt": "p",
        "cron": "0 9 * * *",
        "timeZone": "UTC",
        "dstGap": "shift",
        "dstOverlap": "first",
        "scheduledAt": C1,
    }
    base.update(fields)
    return {"version": 2, "operation": "create", "schedule": base}


def _typed(record: dict[str, Any]) -> Any:
    """The record as a Struct built by hand: nothing validated it."""
    kind = record["kind"]
    if kind == "calendar":
        return CalendarSchedule(
            record["id"],
            record["prompt"],
            record["cron"],
            record["timeZone"],
            record["dstGap"],
            record["dstOverlap"],
            record["scheduledAt"],
        )
    if kind == "after":
        return AfterSchedule(
            record["id"], record["prompt"], record["afterSeconds"], record["scheduledAt"]
        )
    if kind == "every":
        return EverySchedule(
            record["id"], record["prompt"], record["everySeconds"], record["scheduledAt"]
        )
    return AtSchedule(record["id"], record["prompt"], record["scheduledAt"])


@dataclass(frozen=True)
class LogCase:
    """A log: changes before (valid) and the judged one last."""

    name: str
    before: tuple[dict[str, Any], ...]
    judged: dict[str, Any]
    breach: Breach | None  # None: every path accepts it
    kind: str = ""
    schedule_id: str = ""


def _create(record: dict[str, Any]) -> dict[str, Any]:
    return {"version": 1, "operation": "create", "schedule": record}


def _delete(schedule_id: str) -> dict[str, Any]:
    return {"version": 1, "operation": "delete", "id": schedule_id}


def _dispatch(schedule_id: str, accepted_at: str | None = None) -> dict[str, Any]:
    change: dict[str, Any] = {"version": 1, "operation": "dispatch", "id": schedule_id}
    if accepted_at is not None:
        change["acceptedAt"] = accepted_at
    return change


DIGEST = "0" * 64


def _requested(
    record: dict[str, Any], request_id: Any = "r1", digest: Any = DIGEST
) -> dict[str, Any]:
    """A version-2 create with a request id and its arguments' digest."""
    change = {"version": 2, "operation": "create", "schedule": record}
    return {**change, "requestId": request_id, "argsDigest": digest}


def _update(schedule_id: str = "schedule-1", **members: Any) -> dict[str, Any]:
    members.setdefault("id", schedule_id)
    return {"version": 2, "operation": "update", **members}


def _ended(record: dict[str, Any], **end: Any) -> dict[str, Any]:
    """A version-2 create of ``record`` with a series end (until, count)."""
    return {"version": 2, "operation": "create", "schedule": record, **end}


def _ids(*numbers: int) -> tuple[dict[str, Any], ...]:
    return tuple(_create(_record("at", id=f"schedule-{n}")) for n in numbers)


HUGE_ID = "schedule-" + "1" * 5000
EVERY = _create(_record("every", id="schedule-1"))
CALENDAR = _calendar()
AT = _create(_record("at", id="schedule-1"))
LOG_CASES = [
    # prompt
    LogCase("prompt empty", (), _create(_record("after", prompt="")), Breach.PROMPT, "after"),
    LogCase("prompt padded", (), _create(_record("at", prompt=" p")), Breach.PROMPT, "at"),
    LogCase("prompt nbsp", (), _create(_record("every", prompt="p\u00a0")), Breach.PROMPT, "every"),
    LogCase("prompt not text", (), _create(_record("at", prompt=5)), Breach.PROMPT, "at"),
    LogCase("prompt inner space", (), _create(_record("at", prompt="a b")), None),
    # afterSeconds
    LogCase("after 0", (), _create(_record("after", afterSeconds=0)), Breach.AFTER_SECONDS),
    LogCase("after -1", (), _create(_record("after", afterSeconds=-1)), Breach.AFTER_SECONDS),
    LogCase("after 1", (), _create(_record("after", afterSeconds=1)), None),
    LogCase("after max safe", (), _create(_record("after", afterSeconds=MAX_SAFE)), None),
    LogCase(
        "after 2^53", (), _create(_record("after", afterSeconds=MAX_SAFE + 1)), Breach.AFTER_SECONDS
    ),
    LogCase("after 1.5", (), _create(_record("after", afterSeconds=1.5)), Breach.AFTER_SECONDS),
    LogCase("after true", (), _create(_record("after", afterSeconds=True)), Breach.AFTER_SECONDS),
    LogCase("after text", (), _create(_record("after", afterSeconds="30")), Breach.AFTER_SECONDS),
    # everySeconds
    LogCase("every 60", (), _create(_record("every", everySeconds=60)), Breach.EVERY_TOO_FREQUENT),
    LogCase(
        "every 299", (), _create(_record("every", everySeconds=299)), Breach.EVERY_TOO_FREQUENT
    ),
    LogCase("every 0", (), _create(_record("every", everySeconds=0)), Breach.EVERY_TOO_FREQUENT),
    LogCase("every 300", (), _create(_record("every", everySeconds=300)), None),
    LogCase("every largest", (), _create(_record("every", everySeconds=MAX_SAFE // 1000)), None),
    LogCase(
        "every ms unsafe",
        (),
        _create(_record("every", everySeconds=MAX_SAFE // 1000 + 1)),
        Breach.EVERY_TOO_LONG,
    ),
    LogCase(
        "every 300.5", (), _create(_record("every", everySeconds=300.5)), Breach.EVERY_NOT_INTEGER
    ),
    # id
    LogCase("id empty", (), _create(_record("at", id="")), Breach.ID),
    LogCase("id padded", (), _create(_record("at", id="schedule-1 ")), Breach.ID),
    LogCase("id foreign", (), _create(_record("at", id="custom")), None),
    LogCase("delete id padded", (AT,), _delete(" schedule-1"), Breach.ID),
    LogCase("dispatch id empty", (AT,), _dispatch(""), Breach.ID),
    # scheduledAt / acceptedAt
    LogCase("instant no ms", (), _create(_record("at", scheduledAt=T1[:19] + "Z")), Breach.INSTANT_SHAPE),
    LogCase(
        "instant year 0", (), _create(_record("at", scheduledAt="0000" + T1[4:])), Breach.INSTANT_SHAPE
    ),
    LogCase(
        "instant 30 Feb",
        (),
        _create(_record("at", scheduledAt="2026-02-30T00:00:00.000Z")),
        Breach.INSTANT_NOT_REAL,
    ),
    LogCase("instant 29 Feb leap", (), _create(_record("at", scheduledAt="2028-02-29T00:00:00.000Z")), None),
    LogCase(
        "instant 29 Feb 2100",
        (),
        _create(_record("at", scheduledAt="2100-02-29T00:00:00.000Z")),
        Breach.INSTANT_NOT_REAL,
    ),
    LogCase("instant first", (), _create(_record("at", scheduledAt="0001-01-01T00:00:00.000Z")), None),
    LogCase("instant last", (), _create(_record("at", scheduledAt="9999-12-31T23:59:59.999Z")), None),
    LogCase("accepted bad", (EVERY,), _dispatch("schedule-1", "2026-13-01T00:00:00.000Z"), Breach.INSTANT_SHAPE),
    # ids are never reused
    LogCase("reuse", _ids(1), _create(_record("at", id="schedule-1")), Breach.ID_REUSED, schedule_id="schedule-1"),
    LogCase(
        "reuse deleted",
        (*_ids(1), _delete("schedule-1")),
        _create(_record("at", id="schedule-1")),
        Breach.ID_REUSED,
        schedule_id="schedule-1",
    ),
    LogCase(
        "reuse after out-of-order ids",
        (*_ids(2, 3, 4, 1), _delete("schedule-3")),
        _create(_record("at", id="schedule-3")),
        Breach.ID_REUSED,
        schedule_id="schedule-3",
    ),
    LogCase("out-of-order new id", _ids(2, 3, 4, 1), _create(_record("at", id="schedule-5")), None),
    LogCase(
        "reuse foreign",
        _ids(7),
        _create(_record("at", id="schedule-7")),
        Breach.ID_REUSED,
        schedule_id="schedule-7",
    ),
    # an id of more digits than Python's int() reads (issue 25, item 3)
    LogCase("new huge id", _ids(1), _create(_record("at", id=HUGE_ID)), None),
    LogCase(
        "reuse huge id",
        (*_ids(1), _create(_record("at", id=HUGE_ID))),
        _create(_record("at", id=HUGE_ID)),
        Breach.ID_REUSED,
        schedule_id=HUGE_ID,
    ),
    # deletes and dispatches of active ids
    LogCase("delete unknown", (), _delete("schedule-1"), Breach.DELETE_INACTIVE, schedule_id="schedule-1"),
    LogCase(
        "delete twice",
        (AT, _delete("schedule-1")),
        _delete("schedule-1"),
        Breach.DELETE_INACTIVE,
        schedule_id="schedule-1",
    ),
    LogCase(
        "dispatch finished",
        (AT, _dispatch("schedule-1")),
        _dispatch("schedule-1"),
        Breach.DISPATCH_INACTIVE,
        schedule_id="schedule-1",
    ),
    LogCase("dispatch one-shot", (AT,), _dispatch("schedule-1"), None),
    LogCase("one-shot with acceptedAt", (AT,), _dispatch("schedule-1", T1), Breach.ONE_SHOT_ACCEPTED_AT),
    LogCase("every without acceptedAt", (EVERY,), _dispatch("schedule-1"), Breach.EVERY_NO_ACCEPTED_AT),
    # the lattice
    LogCase(
        "dispatch before target",
        (EVERY,),
        _dispatch("schedule-1", "2026-08-05T12:04:59.999Z"),
        Breach.DISPATCH_PRECEDES,
    ),
    LogCase("dispatch at target", (EVERY,), _dispatch("schedule-1", T1), None),
    LogCase(
        "dispatch at the end",
        (_create(_record("every", scheduledAt="9999-12-31T23:55:00.000Z")),),
        _dispatch("schedule-1", "9999-12-31T23:59:59.999Z"),
        None,
    ),
    # calendar records (version-2 creates) and their dispatches
    LogCase("calendar", (), CALENDAR, None),
    LogCase("calendar prompt padded", (), _calendar(prompt="p "), Breach.PROMPT, "calendar"),
    LogCase("calendar cron bad", (), _calendar(cron="0 25 * * *"), Breach.CALENDAR_RULE),
    LogCase("calendar cron not text", (), _calendar(cron=9), Breach.CALENDAR_RULE),
    LogCase("calendar zone unknown", (), _calendar(timeZone="Mars/Olympus"), Breach.CALENDAR_RULE),
    LogCase("calendar zone not canonical", (), _calendar(timeZone="etc/utc"), Breach.CALENDAR_RULE),
    LogCase("calendar zone canonical", (), _calendar(timeZone="Etc/UTC"), None),
    LogCase("calendar gap bad", (), _calendar(dstGap="never"), Breach.CALENDAR_RULE),
    LogCase("calendar overlap bad", (), _calendar(dstOverlap="last"), Breach.CALENDAR_RULE),
    LogCase("calendar id padded", (), _calendar(id=" schedule-1"), Breach.ID),
    LogCase("calendar instant no ms", (), _calendar(scheduledAt=C1[:19] + "Z"), Breach.INSTANT_SHAPE),
    LogCase("calendar off its rule", (), _calendar(scheduledAt=T1), Breach.CALENDAR_OFF_RULE),
    LogCase("calendar reuse", _ids(1), CALENDAR, Breach.ID_REUSED, schedule_id="schedule-1"),
    LogCase("calendar dispatch without acceptedAt", (CALENDAR,), _dispatch("schedule-1"), Breach.CALENDAR_NO_ACCEPTED_AT),
    LogCase(
        "calendar dispatch before target",
        (CALENDAR,),
        _dispatch("schedule-1", "2026-08-06T08:59:59.999Z"),
        Breach.DISPATCH_PRECEDES,
        "calendar",
    ),
    LogCase("calendar dispatch at target", (CALENDAR,), _dispatch("schedule-1", C1), None),
    LogCase("calendar dispatch days late", (CALENDAR,), _dispatch("schedule-1", "2026-09-01T00:00:00.000Z"), None),
    LogCase("calendar delete", (CALENDAR,), _delete("schedule-1"), None),
    # request ids (version 2)
    LogCase("request", (), _requested(_record("after")), None),
    LogCase("request of a calendar", (), _requested(CALENDAR["schedule"]), None),
    LogCase("request id padded", (), _requested(_record("after"), " r1"), Breach.REQUEST_ID),
    LogCase("request id too long", (), _requested(_record("after"), "r" * 201), Breach.REQUEST_ID),
    LogCase("request id longest", (), _requested(_record("after"), "r" * 200), None),
    LogCase("request digest short", (), _requested(_record("after"), digest="0" * 63), Breach.ARGS_DIGEST),
    LogCase("request digest upper", (), _requested(_record("after"), digest="A" * 64), Breach.ARGS_DIGEST),
    LogCase(
        "request reused",
        (_requested(_record("at")),),
        _requested(_record("at", id="schedule-2")),
        Breach.REQUEST_REUSED,
        schedule_id="r1",
    ),
    LogCase(
        "request reused after a delete",
        (_requested(_record("at")), _delete("schedule-1")),
        _requested(_record("at", id="schedule-2")),
        Breach.REQUEST_REUSED,
        schedule_id="r1",
    ),
    # updates in place (version 2)
    LogCase("update prompt", (AT,), _update(prompt="q"), None),
    LogCase("update pause", (AT,), _update(paused=True), None),
    LogCase("update snooze", (AT,), _update(scheduledAt="2026-08-05T13:00:00.000Z"), None),
    LogCase("update inactive", (), _update(paused=True), Breach.UPDATE_INACTIVE, schedule_id="schedule-1"),
    LogCase("update id padded", (AT,), _update(id="schedule-1 ", paused=True), Breach.ID),
    LogCase("update prompt padded", (AT,), _update(prompt=" q"), Breach.PROMPT, "update"),
    LogCase("update paused not boolean", (AT,), _update(paused=1), Breach.PAUSED_NOT_BOOLEAN),
    # the operator an operator's change names (by)
    LogCase("update by an operator", (AT,), _update(paused=True, by="ana"), None),
    LogCase("update by empty", (AT,), _update(paused=True, by=""), Breach.OPERATOR),
    LogCase("update by padded", (AT,), _update(paused=True, by="ana "), Breach.OPERATOR),
    LogCase("update by too long", (AT,), _update(paused=True, by="a" * 201), Breach.OPERATOR),
    LogCase("delete by an operator", (AT,), {"version": 2, "operation": "delete", "id": "schedule-1", "by": "ana"}, None),
    LogCase("delete by not text", (AT,), {"version": 2, "operation": "delete", "id": "schedule-1", "by": 1}, Breach.OPERATOR),
    LogCase("update instant bad", (AT,), _update(scheduledAt="2026-08-05T13:00:00Z"), Breach.INSTANT_SHAPE),
    LogCase("update every on its lattice", (EVERY,), _update(scheduledAt="2026-08-05T12:15:00.000Z"), None),
    LogCase("update every snoozed off its lattice", (EVERY,), _update(scheduledAt="2026-08-05T12:14:00.000Z"), None),
    LogCase(
        "every dispatch at its snoozed target",
        (EVERY, _update(scheduledAt="2026-08-05T12:14:00.000Z")),
        _dispatch("schedule-1", "2026-08-05T12:14:00.000Z"),
        None,
    ),
    LogCase(
        "every dispatch before its snoozed target",
        (EVERY, _update(scheduledAt="2026-08-05T12:14:00.000Z")),
        _dispatch("schedule-1", "2026-08-05T12:13:59.999Z"),
        Breach.DISPATCH_PRECEDES,
        "every",
    ),
    LogCase("dispatch paused", (AT, _update(paused=True)), _dispatch("schedule-1"), Breach.DISPATCH_PAUSED, schedule_id="schedule-1"),
    LogCase("dispatch resumed", (AT, _update(paused=True), _update(paused=False)), _dispatch("schedule-1"), None),
    LogCase("delete paused", (EVERY, _update(paused=True)), _delete("schedule-1"), None),
    # rescheduled in place (version 2): a whole new record, same id
    LogCase("reschedule at to every", (AT,), _update(schedule=_record("every", everySeconds=600)), None),
    LogCase("reschedule every to calendar", (EVERY,), _update(schedule=CALENDAR["schedule"]), None),
    LogCase("reschedule every to at, paused", (EVERY,), _update(paused=True, schedule=_record("at")), None),
    LogCase("reschedule another id", (AT,), _update(schedule=_record("at", id="schedule-2")), Breach.RESCHEDULE_ID),
    LogCase("reschedule beside a prompt", (AT,), _update(prompt="q", schedule=_record("at")), Breach.RESCHEDULE_KEYS),
    LogCase("reschedule beside scheduledAt", (AT,), _update(scheduledAt=T1, schedule=_record("at")), Breach.RESCHEDULE_KEYS),
    LogCase("reschedule too frequent", (AT,), _update(schedule=_record("every", everySeconds=299)), Breach.EVERY_TOO_FREQUENT),
    LogCase("reschedule prompt padded", (AT,), _update(schedule=_record("after", prompt="p ")), Breach.PROMPT, "after"),
    LogCase("reschedule off its rule", (AT,), _update(schedule={**CALENDAR["schedule"], "scheduledAt": T1}), Breach.CALENDAR_OFF_RULE),
    LogCase("reschedule inactive", (), _update(schedule=_record("at")), Breach.UPDATE_INACTIVE, schedule_id="schedule-1"),
    LogCase("dispatch rescheduled to every", (AT, _update(schedule=_record("every"))), _dispatch("schedule-1", T1), None),
    LogCase("dispatch rescheduled, one-shot form", (AT, _update(schedule=_record("every"))), _dispatch("schedule-1"), Breach.EVERY_NO_ACCEPTED_AT),
    LogCase("dispatch rescheduled to at", (EVERY, _update(schedule=_record("at"))), _dispatch("schedule-1", T1), Breach.ONE_SHOT_ACCEPTED_AT),
    # a series' end (version 2): until and count on a create or an update
    LogCase("create every with an end", (), _ended(_record("every"), until=T1, count=3), None),
    LogCase("create calendar until", (), _ended(CALENDAR["schedule"], until=C1), None),
    LogCase("create count 0", (), _ended(_record("every"), count=0), Breach.COUNT),
    LogCase("create count 1.5", (), _ended(_record("every"), count=1.5), Breach.COUNT),
    LogCase("create until not an instant", (), _ended(_record("every"), until="soon"), Breach.INSTANT_SHAPE),
    LogCase("create one-shot with a count", (), _ended(_record("at"), count=2), Breach.END_ONE_SHOT),
    LogCase("create until before the target", (), _ended(_record("every"), until=T0), Breach.UNTIL_BEFORE),
    LogCase("create with a request and an end", (), {**_requested(_record("every")), "count": 2}, None),
    LogCase("update count", (EVERY,), _update(count=2), None),
    LogCase("update count removed", (_ended(_record("every"), count=3),), _update(count=None), None),
    LogCase("update until removed", (_ended(_record("every"), until=T1),), _update(until=None), None),
    LogCase("update count 0", (EVERY,), _update(count=0), Breach.COUNT),
    LogCase("update until on a one-shot", (AT,), _update(until=T1), Breach.END_ONE_SHOT),
    LogCase("update until before the target", (EVERY,), _update(until=T0), Breach.UNTIL_BEFORE),
    LogCase("reschedule past until", (_ended(_record("every"), until=T1),), _update(schedule=CALENDAR["schedule"]), Breach.UNTIL_BEFORE),
    LogCase("reschedule to a one-shot drops the end", (_ended(_record("every"), count=2),), _update(schedule=_record("at")), None),
    LogCase("dispatch the last of a count", (_ended(_record("every"), count=1),), _dispatch("schedule-1", T1), None),
    LogCase(
        "dispatch after the last of a count",
        (_ended(_record("every"), count=1), _dispatch("schedule-1", T1)),
        _dispatch("schedule-1", "2026-08-05T12:10:00.000Z"),
        Breach.DISPATCH_INACTIVE,
        schedule_id="schedule-1",
    ),
    LogCase(
        "calendar dispatch at its snoozed target",
        (CALENDAR, _update(scheduledAt="2026-08-06T09:10:00.000Z")),
        _dispatch("schedule-1", "2026-08-06T09:10:00.000Z"),
        None,
    ),
    LogCase(
        "calendar dispatch before its snoozed target",
        (CALENDAR, _update(scheduledAt="2026-08-06T09:10:00.000Z")),
        _dispatch("schedule-1", "2026-08-06T09:09:00.000Z"),
        Breach.DISPATCH_PRECEDES,
        "calendar",
    ),
]  # fmt: skip


def _events(changes: list[dict[str, Any]]) -> list[SessionEvent]:
    return [
        event(SCHEDULE_CHANGE, seq, 0, json.dumps(change).encode())
        for seq, change in enumerate(changes)
    ]


def _state(before: tuple[dict[str, Any], ...]) -> State:
    return fold(_events(list(before)))


def _typed_change(change: dict[str, Any]) -> ScheduleChange:
    if change["operation"] == "create":
        record = _typed(change["schedule"])
        if change["version"] != 2:
            return create(record)
        return CreateChangeV2(
            schedule=record,
            request_id=change.get("requestId"),
            args_digest=change.get("argsDigest"),
            until=change.get("until"),
            count=change.get("count"),
        )
    if change["operation"] == "delete":
        return delete(change["id"], change.get("by"))
    if change["operation"] == "update":
        fields = {
            "prompt": "prompt",
            "paused": "paused",
            "scheduledAt": "scheduled_at",
            "until": "until",
            "count": "count",
            "by": "by",
        }
        members = {fields[k]: v for k, v in change.items() if k in fields}
        if "schedule" in change:
            members["schedule"] = _typed(change["schedule"])
        return UpdateChange(id=change["id"], **members)
    return dispatch(change["id"], change.get("acceptedAt"))


def _expected(case: LogCase) -> str:
    assert case.breach is not None
    return log_reason(case.breach, kind=case.kind, schedule_id=case.schedule_id)


@pytest.mark.parametrize("case", LOG_CASES, ids=lambda case: case.name)
def test_a_logged_change_gets_one_verdict_on_every_path(case: LogCase) -> None:
    events = _events([*case.before, case.judged])
    judged_at = len(case.before)
    typed = _typed_change(case.judged)
    state = _state(case.before)
    field_rule = case.breach in {
        Breach.PROMPT,
        Breach.AFTER_SECONDS,
        Breach.EVERY_NOT_INTEGER,
        Breach.EVERY_TOO_FREQUENT,
        Breach.EVERY_TOO_LONG,
        Breach.ID,
        Breach.INSTANT_SHAPE,
        Breach.INSTANT_NOT_REAL,
        Breach.CALENDAR_RULE,
        Breach.CALENDAR_OFF_RULE,
        Breach.PAUSED_NOT_BOOLEAN,
        Breach.REQUEST_ID,
        Breach.ARGS_DIGEST,
        Breach.OPERATOR,
        Breach.RESCHEDULE_ID,
        Breach.RESCHEDULE_KEYS,
        Breach.COUNT,
    } or (  # a create's end is judged with its record; an update's needs the state
        case.breach in {Breach.END_ONE_SHOT, Breach.UNTIL_BEFORE}
        and case.judged["operation"] == "create"
    )
    if case.breach is None:
        decode_change(json.dumps(case.judged))
        folded = fold(events)
        assert evolve(state, typed) == folded
        checked = check_log(events)
        assert is_successful(checked)
        assert checked.unwrap() == folded
        return
    reason = _expected(case)
    # the exact decoder: field rules only (the log's transitions need a state)
    if field_rule:
        with pytest.raises(CorruptScheduleLog) as decoded:
            decode_change(json.dumps(case.judged))
        assert decoded.value.reason == reason
    else:
        decode_change(json.dumps(case.judged))
    # the fold (fast path, then the exact path for the reason)
    with pytest.raises(CorruptScheduleLog) as folded_error:
        fold(events)
    assert (folded_error.value.reason, folded_error.value.index) == (reason, judged_at)
    # evolve, on the typed change nothing vouched for
    with pytest.raises(CorruptScheduleLog) as evolved:
        evolve(state, typed)
    assert evolved.value.reason == reason
    # the checker
    checked = check_log(events)
    assert not is_successful(checked)
    assert (checked.failure().reason, checked.failure().index) == (reason, judged_at)


@dataclass(frozen=True)
class ToolCase:
    """A tool call: its arguments, and the command built by hand for decide
    (None when only the parser sees the value)."""

    name: str
    tool: str
    args: dict[str, Any]
    command: object
    breach: Breach | None
    now: int = NOW


DAILY = {"cron": "0 9 * * *", "time_zone": "Europe/Berlin"}
TOOL_CASES = [
    ToolCase("prompt blank", "schedule_create", {"prompt": " \u3000", "after_seconds": 5},
             CreateAfter(" \u3000", 5), Breach.PROMPT),
    ToolCase("prompt padded ok", "schedule_create", {"prompt": " p ", "after_seconds": 5},
             CreateAfter(" p ", 5), None),
    ToolCase("after 0", "schedule_create", {"prompt": "p", "after_seconds": 0},
             CreateAfter("p", 0), Breach.AFTER_SECONDS),
    ToolCase("after 1", "schedule_create", {"prompt": "p", "after_seconds": 1},
             CreateAfter("p", 1), None),
    ToolCase("after 1.5", "schedule_create", {"prompt": "p", "after_seconds": 1.5},
             CreateAfter("p", 1.5), Breach.AFTER_SECONDS),  # type: ignore[arg-type]
    ToolCase("after 2^53", "schedule_create", {"prompt": "p", "after_seconds": MAX_SAFE + 1},
             CreateAfter("p", MAX_SAFE + 1), Breach.AFTER_SECONDS),
    ToolCase("every 299", "schedule_create", {"prompt": "p", "every_seconds": 299},
             CreateEvery("p", 299), Breach.EVERY_TOO_FREQUENT),
    ToolCase("every -300", "schedule_create", {"prompt": "p", "every_seconds": -300},
             CreateEvery("p", -300), Breach.EVERY_TOO_FREQUENT),
    ToolCase("every 300", "schedule_create", {"prompt": "p", "every_seconds": 300},
             CreateEvery("p", 300), None),
    ToolCase("every 300.5", "schedule_create", {"prompt": "p", "every_seconds": 300.5},
             CreateEvery("p", 300.5), Breach.EVERY_NOT_INTEGER),  # type: ignore[arg-type]
    ToolCase("delete id padded", "schedule_delete", {"id": "schedule-1 "},
             DeleteSchedule("schedule-1 "), Breach.ID),
    ToolCase("delete id empty", "schedule_delete", {"id": ""}, DeleteSchedule(""), Breach.ID),
    ToolCase("after past the range", "schedule_create",
             {"prompt": "p", "after_seconds": 251616369600}, CreateAfter("p", 251616369600),
             Breach.OUT_OF_RANGE),
    ToolCase("after at the range's end", "schedule_create",
             {"prompt": "p", "after_seconds": 251616369599}, CreateAfter("p", 251616369599), None),
    ToolCase("an unusable clock", "schedule_create", {"prompt": "p", "after_seconds": 5},
             CreateAfter("p", 5), Breach.OUT_OF_RANGE, now=MAX_SAFE + 1),
    ToolCase("calendar", "schedule_create", {"prompt": "p", "calendar": DAILY},
             CreateCalendar("p", DAILY), None),
    ToolCase("calendar prompt blank", "schedule_create", {"prompt": " ", "calendar": DAILY},
             CreateCalendar(" ", DAILY), Breach.PROMPT),
    ToolCase("calendar past the range", "schedule_create", {"prompt": "p", "calendar": DAILY},
             CreateCalendar("p", DAILY), Breach.OUT_OF_RANGE, now=253402300799999),
    ToolCase("update paused not boolean", "schedule_update", {"id": "schedule-1", "paused": "yes"},
             UpdateSchedule(id="schedule-1", paused="yes"), Breach.PAUSED_NOT_BOOLEAN),
    ToolCase("update paused", "schedule_update", {"id": "schedule-1", "paused": True},
             UpdateSchedule(id="schedule-1", paused=True), None),
    ToolCase("update snooze 0", "schedule_update", {"id": "schedule-1", "snooze_seconds": 0},
             UpdateSchedule(id="schedule-1", snooze_seconds=0), Breach.SNOOZE_SECONDS),
    ToolCase("update snooze 1.5", "schedule_update", {"id": "schedule-1", "snooze_seconds": 1.5},
             UpdateSchedule(id="schedule-1", snooze_seconds=1.5), Breach.SNOOZE_SECONDS),
    ToolCase("update snooze 1", "schedule_update", {"id": "schedule-1", "snooze_seconds": 1},
             UpdateSchedule(id="schedule-1", snooze_seconds=1), None),
    ToolCase("update snooze every", "schedule_update", {"id": "schedule-2", "snooze_seconds": 60},
             UpdateSchedule(id="schedule-2", snooze_seconds=60), None),
    ToolCase("update snooze past the range", "schedule_update",
             {"id": "schedule-1", "snooze_seconds": 251616369600},
             UpdateSchedule(id="schedule-1", snooze_seconds=251616369600), Breach.OUT_OF_RANGE),
    ToolCase("update prompt blank", "schedule_update", {"id": "schedule-1", "prompt": " "},
             UpdateSchedule(id="schedule-1", prompt=" "), Breach.PROMPT),
    ToolCase("request id padded", "schedule_create",
             {"prompt": "p", "after_seconds": 5, "request_id": "r2 "},
             CreateAfter("p", 5, "r2 "), Breach.REQUEST_ID),
    ToolCase("request id new", "schedule_create",
             {"prompt": "p", "after_seconds": 5, "request_id": "r2"},
             CreateAfter("p", 5, "r2"), None),
    ToolCase("request id with other arguments", "schedule_create",
             {"prompt": "p", "after_seconds": 6, "request_id": "r1"},
             CreateAfter("p", 6, "r1"), Breach.REQUEST_OTHER_ARGS),
    ToolCase("calendar at an unusable clock", "schedule_create", {"prompt": "p", "calendar": DAILY},
             CreateCalendar("p", DAILY), Breach.OUT_OF_RANGE, now=MAX_SAFE + 1),
    # a new selector in place: create's rules, the same verdicts
    ToolCase("reschedule every 600", "schedule_update", {"id": "schedule-1", "every_seconds": 600},
             UpdateSchedule(id="schedule-1", every_seconds=600), None),
    ToolCase("reschedule every 299", "schedule_update", {"id": "schedule-1", "every_seconds": 299},
             UpdateSchedule(id="schedule-1", every_seconds=299), Breach.EVERY_TOO_FREQUENT),
    ToolCase("reschedule every 300.5", "schedule_update", {"id": "schedule-1", "every_seconds": 300.5},
             UpdateSchedule(id="schedule-1", every_seconds=300.5), Breach.EVERY_NOT_INTEGER),
    ToolCase("reschedule after 0", "schedule_update", {"id": "schedule-2", "after_seconds": 0},
             UpdateSchedule(id="schedule-2", after_seconds=0), Breach.AFTER_SECONDS),
    ToolCase("reschedule after past the range", "schedule_update",
             {"id": "schedule-2", "after_seconds": 251616369600},
             UpdateSchedule(id="schedule-2", after_seconds=251616369600), Breach.OUT_OF_RANGE),
    ToolCase("reschedule calendar", "schedule_update", {"id": "schedule-2", "calendar": DAILY},
             UpdateSchedule(id="schedule-2", calendar=DAILY), None),
    ToolCase("reschedule calendar at an unusable clock", "schedule_update",
             {"id": "schedule-2", "calendar": DAILY},
             UpdateSchedule(id="schedule-2", calendar=DAILY), Breach.OUT_OF_RANGE, now=MAX_SAFE + 1),
    ToolCase("reschedule with a blank prompt", "schedule_update",
             {"id": "schedule-1", "prompt": " ", "after_seconds": 5},
             UpdateSchedule(id="schedule-1", prompt=" ", after_seconds=5), Breach.PROMPT),
]  # fmt: skip


def _digest(command: CreateAfter) -> str:
    digest = arguments_digest(command)
    assert digest is not None
    return digest


@pytest.mark.parametrize("case", TOOL_CASES, ids=lambda case: case.name)
def test_a_tool_call_gets_one_verdict_on_every_path(case: ToolCase) -> None:
    state = fold_changes(
        [
            create(_typed(_record("at"))),
            create(_typed(_record("every", id="schedule-2"))),
            create(
                _typed(_record("after", id="schedule-3")),
                ("r1", _digest(CreateAfter("p", 5, "r1"))),
            ),
        ]
    )
    parsed = parse_tool_call(case.tool, case.args)
    changes, decided = decide(state, case.command, case.now)  # type: ignore[arg-type]
    if case.breach is None:
        assert is_successful(parsed)
        assert is_successful(decided)
        assert changes
        return
    expected = tool_error(case.breach)
    # The parser judges the rules the reference judges before the queue; the
    # range and future rules need the clock, so only decide judges them.
    decide_only = {
        Breach.OUT_OF_RANGE,
        Breach.NOT_FUTURE,
        Breach.REQUEST_OTHER_ARGS,
    }
    if case.breach in decide_only:
        assert is_successful(parsed)
        assert decide(state, parsed.unwrap(), case.now)[1].failure() == expected
    else:
        assert parsed.failure() == expected
    assert changes == ()
    assert decided.failure() == expected


def test_each_tool_rule_has_a_case() -> None:
    """The table covers every breach a tool call can commit."""
    covered = {case.breach for case in TOOL_CASES}
    tool_breaches = {
        Breach.REQUEST_ID,
        Breach.REQUEST_OTHER_ARGS,
        Breach.PAUSED_NOT_BOOLEAN,
        Breach.SNOOZE_SECONDS,
        Breach.PROMPT,
        Breach.AFTER_SECONDS,
        Breach.EVERY_NOT_INTEGER,
        Breach.EVERY_TOO_FREQUENT,
        Breach.ID,
        Breach.OUT_OF_RANGE,
    }
    assert tool_breaches <= covered


def test_each_log_rule_has_a_case() -> None:
    covered = {case.breach for case in LOG_CASES}
    log_breaches = set(Breach) - {
        Breach.OUT_OF_RANGE,  # a new target's rules, judged on tool calls
        Breach.NOT_FUTURE,
        Breach.SNOOZE_SECONDS,  # a tool call's (the log keeps the snoozed target)
        Breach.REQUEST_OTHER_ARGS,  # a tool call's (the log keeps the first create)
        Breach.ACCEPTED_OUT_OF_RANGE,  # not reachable from a decodable acceptedAt
        Breach.INTERVAL_NOT_POSITIVE,  # not reachable from a decodable everySeconds
    }
    assert log_breaches <= covered


def test_the_id_a_create_allocates_is_the_least_free_one_from_the_count_on() -> None:
    assert allocation_rule(set(), 0) == "schedule-1"
    assert allocation_rule({"schedule-1", "schedule-2"}, 2) == "schedule-3"
    # three ids seen, one of them foreign: from schedule-4 on, skipping taken ones
    assert allocation_rule({"schedule-1", "x", "schedule-4"}, 3) == "schedule-5"
    assert SeenIds.of(3, ["schedule-5", "x"]).allocate() == "schedule-6"
    assert SeenIds.of(2, []).allocate() == "schedule-3"


def test_the_due_order_takes_a_due_one_shot_before_a_batch_and_waits_otherwise() -> None:
    assert due_rule(10, 5, 10) is DueNext.ONE_SHOT  # due one-shot first, whatever is earlier
    assert due_rule(11, 5, 10) is DueNext.BATCH
    assert due_rule(None, 10, 10) is DueNext.BATCH
    assert due_rule(11, 12, 10) is None
    assert due_rule(None, None, 10) is None
