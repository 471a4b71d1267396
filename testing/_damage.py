"""Damaged logs, each paired with the reason it must be refused with.

A valid log (drawn with the independent replay model of
:mod:`tickler.testing._changes`) gets one field of one logged change a wrong
type or value, inside whatever other events and seed prefix surround it;
``fold`` and ``check_log`` must refuse it at that event's index with the
reference's exact reason text, given here as the reference states it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, TypeAlias

from hypothesis import strategies as st

from tickler.core import (
    SCHEDULE_CHANGE,
    CreateChange,
    DeleteChange,
    DispatchChange,
    EverySchedule,
    ScheduleRecord,
    SessionEvent,
    encode_change,
)
from tickler.testing._changes import (
    GARBAGE_SCHEDULE_CHANGES,
    MAX_EVERY_SECONDS,
    OTHER_EVENTS,
    EventLog,
    Step,
    valid_logs,
)
from tickler.testing._values import (
    ES_WHITESPACE,
    MAX_SAFE,
    MIN_MS,
    Json,
    iso,
    js_stringify,
    json_values,
    ms_from_iso,
    texts,
)

PAYLOAD: Final = "schedule/change payload must be an object"
VERSION: Final = "schedule/change version must be 1"
OPERATION: Final = "schedule/change operation must be create, delete, or dispatch"
KEYS: Final = {
    "create": "schedule create must contain exactly version, operation, and schedule",
    "delete": "schedule delete must contain exactly version, operation, and id",
    "dispatch": "schedule dispatch must contain id and optional acceptedAt only",
    "after": "after schedule must contain exactly id, kind, prompt, afterSeconds, and scheduledAt",
    "at": "at schedule must contain exactly id, kind, prompt, and scheduledAt",
    "every": "every schedule must contain exactly id, kind, prompt, everySeconds, and scheduledAt",
}
RECORD: Final = "schedule record must be an object"
KIND: Final = 'v1 schedule kind must be "after", "at", or "every"'
AFTER_SECONDS: Final = "afterSeconds must be a positive safe integer"
EVERY_SECONDS: Final = "everySeconds must be a safe integer of at least 300"
ID: Final = "schedule id must be a non-empty string without surrounding whitespace"
INSTANT_SHAPE: Final = "scheduledAt must be a canonical four-digit-year RFC 3339 UTC instant"
INSTANT_REAL: Final = "scheduledAt is not a real UTC calendar instant"
ONE_SHOT_ACCEPTED: Final = "one-shot dispatch must not contain acceptedAt"
EVERY_ACCEPTED: Final = "every dispatch must contain acceptedAt"
PRECEDES: Final = "every dispatch cannot precede the active scheduledAt"

NOT_AN_OBJECT: Final[tuple[Json, ...]] = (None, [], [1], "x", 1, 1.5, True, False)
BAD_VERSIONS: Final[tuple[Json, ...]] = (
    2,
    0,
    -1,
    9,
    "1",
    True,
    None,
    1.5,
    [1],
    {"v": 1},
    1 + 2**-52,
)
BAD_OPERATIONS: Final[tuple[Json, ...]] = (
    None,
    "",
    "Create",
    "update",
    "create ",
    1,
    ["create"],
    {},
    True,
)
BAD_KINDS: Final[tuple[Json, ...]] = (None, "", "At", "cron", "after ", 1, ["at"], {}, False)
BAD_TEXT: Final[tuple[Json, ...]] = (None, 1, 0, True, [], {}, "", " ", "\n", "\u3000")
BAD_AFTER: Final[tuple[Json, ...]] = (
    0,
    -1,
    1.5,
    -0.0,
    "30",
    True,
    False,
    None,
    2**53,
    MAX_SAFE + 1,
    1e300,
    [],
)
BAD_EVERY: Final[tuple[Json, ...]] = (
    299,
    0,
    -300,
    300.5,
    "300",
    True,
    None,
    MAX_EVERY_SECONDS + 1,
    2**53,
    1e300,
    {},
)
UNREAL_DAYS: Final = ("02-30", "02-31", "04-31", "06-31", "09-31", "11-31")


@dataclass(frozen=True)
class Mutation:
    value: Json
    reason: str


def _padded(draw: st.DrawFn, text: str) -> str:
    pad = draw(st.text(st.sampled_from(sorted(ES_WHITESPACE)), min_size=1, max_size=2))
    return draw(st.sampled_from([pad + text, text + pad, pad + text + pad]))


def _bad_text(draw: st.DrawFn, valid: str) -> Json:
    return draw(st.one_of(st.sampled_from(BAD_TEXT), st.just(_padded(draw, valid))))


def _bad_instant(draw: st.DrawFn, valid: str) -> Mutation:
    """A wrong scheduledAt/acceptedAt, and which check rejects it."""
    year = valid[:4]
    shape_misses = [
        valid.replace("T", "t"),
        valid.replace("Z", "z"),
        valid.replace("T", " "),
        valid[:-1] + "+00:00",
        valid[:19] + "Z",
        valid[:19] + ".0Z",
        valid[:23] + "0Z",
        "0000" + valid[4:],
        "1" + valid,
        valid[1:],
        valid[:5] + "13" + valid[7:],
        valid[:5] + "00" + valid[7:],
        valid[:8] + "00" + valid[10:],
        valid[:8] + "32" + valid[10:],
        valid[:11] + "24" + valid[13:],
        valid[:14] + "60" + valid[16:],
        valid[:17] + "60" + valid[19:],
        valid + "\n",
        " " + valid,
        valid + " ",
        "\u0662" + valid[1:],
        valid[:3] + "\uff11" + valid[4:],
        valid[:10],
    ]
    choice = draw(st.integers(0, 2))
    if choice == 0:
        return Mutation(draw(st.sampled_from(shape_misses)), INSTANT_SHAPE)
    if choice == 1:
        return Mutation(
            draw(st.sampled_from([None, 0, 1.5, True, [], {}, ms_from_iso(valid)])), INSTANT_SHAPE
        )
    leap = int(year) % 4 == 0 and (int(year) % 100 != 0 or int(year) % 400 == 0)
    days = list(UNREAL_DAYS) if leap else [*UNREAL_DAYS, "02-29"]
    return Mutation(valid[:5] + draw(st.sampled_from(days)) + valid[10:], INSTANT_REAL)


def _extra_key(draw: st.DrawFn, allowed: set[str]) -> str:
    return draw(texts.filter(lambda k: k not in allowed))


Mutator: TypeAlias = Callable[[st.DrawFn, Step, dict[str, Json]], Mutation]


def _without(value: dict[str, Json], key: str) -> dict[str, Json]:
    return {k: v for k, v in value.items() if k != key}


def _allowed_keys(op: str) -> set[str]:
    if op == "create":
        return {"version", "operation", "schedule"}
    return {"version", "operation", "id"} | ({"acceptedAt"} if op == "dispatch" else set())


# --- any change -------------------------------------------------------------------


def _payload(draw: st.DrawFn, step: Step, value: dict[str, Json]) -> Mutation:
    return Mutation(draw(st.sampled_from(NOT_AN_OBJECT)), PAYLOAD)


def _version(draw: st.DrawFn, step: Step, value: dict[str, Json]) -> Mutation:
    if draw(st.booleans()):
        return Mutation(_without(value, "version"), VERSION)
    return Mutation({**value, "version": draw(st.sampled_from(BAD_VERSIONS))}, VERSION)


def _operation(draw: st.DrawFn, step: Step, value: dict[str, Json]) -> Mutation:
    if draw(st.booleans()):
        return Mutation(_without(value, "operation"), OPERATION)
    return Mutation({**value, "operation": draw(st.sampled_from(BAD_OPERATIONS))}, OPERATION)


def _extra(draw: st.DrawFn, step: Step, value: dict[str, Json]) -> Mutation:
    op = value["operation"]
    key = _extra_key(draw, _allowed_keys(op))
    return Mutation({**value, key: draw(json_values)}, KEYS[op])


# --- create -----------------------------------------------------------------------


def _record(value: dict[str, Json], **fields: Json) -> dict[str, Json]:
    return {**value, "schedule": {**value["schedule"], **fields}}


def _no_schedule(draw: st.DrawFn, step: Step, value: dict[str, Json]) -> Mutation:
    return Mutation(_without(value, "schedule"), KEYS["create"])


def _schedule_not_object(draw: st.DrawFn, step: Step, value: dict[str, Json]) -> Mutation:
    return Mutation({**value, "schedule": draw(st.sampled_from(NOT_AN_OBJECT))}, RECORD)


def _kind(draw: st.DrawFn, step: Step, value: dict[str, Json]) -> Mutation:
    kind = value["schedule"]["kind"]
    match draw(st.integers(0, 2)):
        case 0:
            return Mutation({**value, "schedule": _without(value["schedule"], "kind")}, KIND)
        case 1:
            return Mutation(_record(value, kind=draw(st.sampled_from(BAD_KINDS))), KIND)
        case _:
            other = draw(st.sampled_from(sorted({"after", "at", "every"} - {kind})))
            return Mutation(_record(value, kind=other), KEYS[other])


def _record_keys(draw: st.DrawFn, step: Step, value: dict[str, Json]) -> Mutation:
    record = value["schedule"]
    if draw(st.booleans()):
        known = {"id", "kind", "prompt", "afterSeconds", "everySeconds", "scheduledAt"}
        key = _extra_key(draw, known)
        return Mutation(_record(value, **{key: draw(json_values)}), KEYS[record["kind"]])
    key = draw(st.sampled_from(sorted(set(record) - {"kind"})))
    return Mutation({**value, "schedule": _without(record, key)}, KEYS[record["kind"]])


def _prompt(draw: st.DrawFn, step: Step, value: dict[str, Json]) -> Mutation:
    record = value["schedule"]
    reason = f"{record['kind']} prompt must be non-empty and already trimmed"
    return Mutation(_record(value, prompt=_bad_text(draw, record["prompt"])), reason)


def _seconds(draw: st.DrawFn, step: Step, value: dict[str, Json]) -> Mutation:
    if value["schedule"]["kind"] == "after":
        bad = draw(st.sampled_from(BAD_AFTER))
        return Mutation(_record(value, afterSeconds=bad), AFTER_SECONDS)
    return Mutation(_record(value, everySeconds=draw(st.sampled_from(BAD_EVERY))), EVERY_SECONDS)


def _record_id(draw: st.DrawFn, step: Step, value: dict[str, Json]) -> Mutation:
    return Mutation(_record(value, id=_bad_text(draw, value["schedule"]["id"])), ID)


def _reused_id(draw: st.DrawFn, step: Step, value: dict[str, Json]) -> Mutation:
    reused = draw(st.sampled_from(sorted(step.seen_before)))
    return Mutation(_record(value, id=reused), f"schedule id {js_stringify(reused)} was reused")


def _scheduled_at(draw: st.DrawFn, step: Step, value: dict[str, Json]) -> Mutation:
    bad = _bad_instant(draw, value["schedule"]["scheduledAt"])
    return Mutation(_record(value, scheduledAt=bad.value), bad.reason)


def _create_mutators(step: Step, value: dict[str, Json]) -> list[Mutator]:
    out: list[Mutator] = [_no_schedule, _schedule_not_object, _kind, _record_keys, _prompt]
    out += [_record_id, _scheduled_at]
    if value["schedule"]["kind"] != "at":
        out.append(_seconds)
    if step.seen_before:
        out.append(_reused_id)
    return out


# --- delete and dispatch ------------------------------------------------------------


def _target(step: Step) -> ScheduleRecord:
    assert isinstance(step.change, DeleteChange | DispatchChange)
    return step.active_before[step.change.id]


def _no_id(draw: st.DrawFn, step: Step, value: dict[str, Json]) -> Mutation:
    return Mutation(_without(value, "id"), KEYS[value["operation"]])


def _bad_id(draw: st.DrawFn, step: Step, value: dict[str, Json]) -> Mutation:
    return Mutation({**value, "id": _bad_text(draw, value["id"])}, ID)


def _inactive_id(draw: st.DrawFn, step: Step, value: dict[str, Json]) -> Mutation:
    finished = sorted(step.seen_before - set(step.active_before))
    unknown = texts.map(lambda t: f"absent {t}!").filter(lambda i: i not in step.active_before)
    absent = draw(st.one_of(st.sampled_from(finished), unknown) if finished else unknown)
    reason = f"schedule {value['operation']} targets inactive id {js_stringify(absent)}"
    return Mutation({**value, "id": absent}, reason)


def _accepted_at_on_delete(draw: st.DrawFn, step: Step, value: dict[str, Json]) -> Mutation:
    return Mutation({**value, "acceptedAt": _target(step).scheduled_at}, KEYS["delete"])


def _accepted_at_on_one_shot(draw: st.DrawFn, step: Step, value: dict[str, Json]) -> Mutation:
    scheduled_at = _target(step).scheduled_at
    if draw(st.booleans()):
        return Mutation({**value, "acceptedAt": scheduled_at}, ONE_SHOT_ACCEPTED)
    bad = _bad_instant(draw, scheduled_at)
    return Mutation({**value, "acceptedAt": bad.value}, bad.reason)


def _every_accepted_at(draw: st.DrawFn, step: Step, value: dict[str, Json]) -> Mutation:
    record = _target(step)
    assert isinstance(record, EverySchedule)
    target = ms_from_iso(record.scheduled_at)
    match draw(st.integers(0, 2)):
        case 0:
            return Mutation(_without(value, "acceptedAt"), EVERY_ACCEPTED)
        case 1 if target > MIN_MS:
            lo = max(MIN_MS, target - 10 * record.every_seconds * 1000)
            earlier = draw(st.integers(lo, target - 1))
            return Mutation({**value, "acceptedAt": iso(earlier)}, PRECEDES)
        case _:
            bad = _bad_instant(draw, value["acceptedAt"])
            return Mutation({**value, "acceptedAt": bad.value}, bad.reason)


def _id_change_mutators(step: Step, value: dict[str, Json]) -> list[Mutator]:
    out: list[Mutator] = [_no_id, _bad_id, _inactive_id]
    if value["operation"] == "delete":
        out.append(_accepted_at_on_delete)
    elif isinstance(_target(step), EverySchedule):
        out.append(_every_accepted_at)
    else:
        out.append(_accepted_at_on_one_shot)
    return out


def _mutators(step: Step, value: dict[str, Json]) -> list[Mutator]:
    common: list[Mutator] = [_payload, _version, _operation, _extra]
    if isinstance(step.change, CreateChange):
        return common + _create_mutators(step, value)
    return common + _id_change_mutators(step, value)


@dataclass(frozen=True)
class DamagedLog:
    """A log with one damaged ``schedule/change`` event, and how a checker
    must report it: at ``index`` (in ``events``), with ``reason``."""

    events: tuple[SessionEvent, ...]
    seed_length: int
    index: int
    reason: str
    valid: tuple[SessionEvent, ...]  # the same log before the damage


@st.composite
def damaged_logs(draw: st.DrawFn, max_steps: int = 10) -> DamagedLog:
    """A valid log of 1 to ``max_steps`` changes (after a seed prefix that
    may hold anything, other events in between) with one field of one
    change made wrong, and the reference's reason for it."""
    steps, _ = draw(valid_logs(min_steps=1, max_steps=max_steps))
    broken_at = draw(st.integers(0, len(steps) - 1))
    step = steps[broken_at]
    value = json.loads(encode_change(step.change))
    mutation = draw(st.sampled_from(_mutators(step, value)))(draw, step, value)
    seed = draw(st.lists(st.one_of(OTHER_EVENTS, GARBAGE_SCHEDULE_CHANGES), max_size=3))
    valid, broken = EventLog(), EventLog()
    for type_, data in seed:
        valid.append(type_, data)
        broken.append(type_, data)
    index = -1
    for position, s in enumerate(steps):
        for type_, data in draw(st.lists(OTHER_EVENTS, max_size=2)):
            valid.append(type_, data)
            broken.append(type_, data)
        valid.append(SCHEDULE_CHANGE, encode_change(s.change))
        if position == broken_at:
            index = broken.append(SCHEDULE_CHANGE, json.dumps(mutation.value).encode())
        else:
            broken.append(SCHEDULE_CHANGE, encode_change(s.change))
    return DamagedLog(tuple(broken.events), len(seed), index, mutation.reason, tuple(valid.events))
