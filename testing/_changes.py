"""Strategies for v1 ``schedule/change`` values and valid change logs, with
an independent model of the replay (active records in creation order, every
id seen) written from the reference's prose, not with the core's fold."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Final

import msgspec
from hypothesis import strategies as st

from tickler.core import (
    SCHEDULE_CHANGE,
    AfterSchedule,
    AtSchedule,
    CreateChange,
    DeleteChange,
    DispatchChange,
    EverySchedule,
    ScheduleChange,
    ScheduleRecord,
    SessionEvent,
)
from tickler.testing._values import (
    MAX_MS,
    MAX_SAFE,
    SCHEDULE_IDS,
    draw_instant,
    iso,
    ms_from_iso,
    small_json_values,
    trimmed_texts,
)

MAX_EVERY_SECONDS: Final = MAX_SAFE // 1000
after_seconds_values: Final = st.one_of(
    st.integers(1, MAX_SAFE), st.integers(1, 10_000), st.sampled_from([1, MAX_SAFE])
)
every_seconds_values: Final = st.one_of(
    st.integers(300, MAX_EVERY_SECONDS),
    st.integers(300, 86_400),
    st.sampled_from([300, MAX_EVERY_SECONDS]),
)


def draw_record(
    draw: st.DrawFn, schedule_id: str, targets: st.SearchStrategy[int] | None = None
) -> AfterSchedule | AtSchedule | EverySchedule:
    """A v1 record (after, at or every) with ``schedule_id``, its target drawn
    from ``targets`` or anywhere in range."""
    prompt = draw(trimmed_texts)
    at = iso(draw(targets) if targets is not None else draw_instant(draw))
    match draw(st.sampled_from(["after", "at", "every"])):
        case "after":
            seconds = draw(after_seconds_values)
            return AfterSchedule(
                id=schedule_id, prompt=prompt, after_seconds=seconds, scheduled_at=at
            )
        case "at":
            return AtSchedule(id=schedule_id, prompt=prompt, scheduled_at=at)
        case _:
            seconds = draw(every_seconds_values)
            return EverySchedule(
                id=schedule_id, prompt=prompt, every_seconds=seconds, scheduled_at=at
            )


def draw_fresh_id(draw: st.DrawFn, seen: Collection[str], ids: st.SearchStrategy[str]) -> str:
    """An id not in ``seen``."""
    candidate = draw(ids)
    while candidate in seen:
        candidate += "'"
    return candidate


@st.composite
def _changes(draw: st.DrawFn) -> ScheduleChange:
    """Any valid change value, context-free."""
    schedule_id = draw(SCHEDULE_IDS)
    match draw(st.integers(0, 4)):
        case 0 | 1:
            return CreateChange(version=1, schedule=draw_record(draw, schedule_id))
        case 2:
            return DeleteChange(version=1, id=schedule_id)
        case 3:
            return DispatchChange(version=1, id=schedule_id)
        case _:
            return DispatchChange(version=1, id=schedule_id, accepted_at=iso(draw_instant(draw)))


# Any one valid v1 change, outside any log (its id need not exist).
CHANGES: Final = _changes()


# --- valid logs, with an independent model of the replay -------------------------


@dataclass
class Book:
    """The replay model: active records in creation order, and every id seen."""

    active: dict[str, ScheduleRecord] = field(default_factory=dict)
    seen: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Step:
    """One change of a valid log, with the model's state before it."""

    change: ScheduleChange
    active_before: Mapping[str, ScheduleRecord]
    seen_before: frozenset[str]


def following_target(record: EverySchedule, accepted: int) -> int | None:
    """A fixed-rate record's next target after a dispatch accepted at
    ``accepted``: the first grid point after it (None past the range)."""
    target = ms_from_iso(record.scheduled_at)
    interval = record.every_seconds * 1000
    following = target + (accepted - target) // interval * interval + interval
    return following if following <= MAX_MS else None


@st.composite
def valid_logs(
    draw: st.DrawFn,
    min_steps: int = 0,
    max_steps: int = 14,
    targets: st.SearchStrategy[int] | None = None,
    ids: st.SearchStrategy[str] | None = None,
) -> tuple[list[Step], Book]:
    """A valid v1 change sequence, each step with the model state before it,
    and the model after the last step."""
    book = Book()
    steps: list[Step] = []
    id_source = SCHEDULE_IDS if ids is None else ids
    for _ in range(draw(st.integers(min_steps, max_steps))):
        op = draw(st.sampled_from(["create", "create", "delete", "dispatch"]))
        active_before, seen_before = dict(book.active), frozenset(book.seen)
        if op == "create" or not book.active:
            change = _create(draw, book, draw_fresh_id(draw, book.seen, id_source), targets)
        else:
            change = _finish(draw, book, draw(st.sampled_from(sorted(book.active))), op)
        steps.append(Step(change, active_before, seen_before))
    return steps, book


def _create(
    draw: st.DrawFn, book: Book, new_id: str, targets: st.SearchStrategy[int] | None
) -> ScheduleChange:
    record = draw_record(draw, new_id, targets)
    book.active[new_id] = record
    book.seen.append(new_id)
    return CreateChange(version=1, schedule=record)


def _finish(draw: st.DrawFn, book: Book, target_id: str, op: str) -> ScheduleChange:
    """A delete or a dispatch of an active record, and its effect on the model."""
    record = book.active[target_id]
    if op == "delete":
        del book.active[target_id]
        return DeleteChange(version=1, id=target_id)
    if not isinstance(record, EverySchedule):
        del book.active[target_id]
        return DispatchChange(version=1, id=target_id)
    accepted = draw_instant(draw, ms_from_iso(record.scheduled_at))
    following = following_target(record, accepted)
    if following is None:
        del book.active[target_id]
    else:
        book.active[target_id] = EverySchedule(
            id=record.id,
            prompt=record.prompt,
            every_seconds=record.every_seconds,
            scheduled_at=iso(following),
        )
    return DispatchChange(version=1, id=target_id, accepted_at=iso(accepted))


# --- session events -------------------------------------------------------------

# Event types the schedule replay ignores: near misses of schedule/change too.
OTHER_EVENT_TYPES: Final = (
    "message",
    "session/end-seed",
    "agent/status",
    "schedule/changes",
    "Schedule/change",
    "schedule",
)
_JSON_BYTES: Final = small_json_values.map(lambda v: json.dumps(v).encode())
# (type, data) of an event the replay ignores.
OTHER_EVENTS: Final = st.tuples(st.sampled_from(OTHER_EVENT_TYPES), _JSON_BYTES)
# A seed prefix may hold anything, even corrupt schedule/change events.
GARBAGE_SCHEDULE_CHANGES: Final = st.tuples(st.just(SCHEDULE_CHANGE), _JSON_BYTES)


class EventLog:
    """An append-only event list with contiguous ``seq``."""

    def __init__(self) -> None:
        self.events: list[SessionEvent] = []

    def append(self, type_: str, data: bytes, time: int = 0) -> int:
        """Append one event; its index."""
        seq, at = len(self.events), max(0, min(time, MAX_SAFE))
        self.events.append(SessionEvent(type=type_, seq=seq, time=at, data=msgspec.Raw(data)))
        return seq
