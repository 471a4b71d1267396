"""A compact, versioned image of ``State``, so reopening a long session does
not replay it from the start. Derived data: a store keeps it beside the log,
and a snapshot that does not decode is simply ignored (the log is the truth).

A prompt may hold a lone surrogate (a JavaScript string may, and the log
keeps it as a ``\\uXXXX`` escape). UTF-8 cannot carry one, and msgspec
neither writes nor reads such an escape, so an image holding one is written
and read with the standard library instead, as an ASCII escape like the
log's; every other image takes msgspec's fast path.
"""

from __future__ import annotations

import json
from typing import Final, Literal

import msgspec
from pyrsistent import pmap, pset

from tickler.core._codec import change_json, decode_change
from tickler.core._errors import CorruptScheduleLog
from tickler.core._layered import LayeredMap
from tickler.core._model import (
    RECURRING,
    AfterSchedule,
    AtSchedule,
    CalendarSchedule,
    CreateChangeV2,
    EverySchedule,
    ScheduleRecord,
    SeriesEnd,
)
from tickler.core._rules import is_continuation
from tickler.core._seen import SeenIds
from tickler.core._sortedkeys import DueKey, SortedKeys
from tickler.core._state import Entry, State, entry

_KINDS: Final = {"after": 0, "at": 1, "every": 2, "calendar": 3}

# (order, kind, id, prompt, seconds or 0, scheduled_at): plain types decode fast.
_Row = tuple[int, int, str, str, int, str]


class StateImage(msgspec.Struct, frozen=True, kw_only=True):
    """Version 2 adds ``calendars`` (a calendar row's rule: cron, zone, gap,
    overlap, by id); version 3, written only when there are any, adds
    ``lattices`` (where a snoozed recurring row's series continues, by id), so
    an older reader, which would drop them, refuses the image and folds the
    log instead; version 4, likewise, ``ends`` (a recurring row's series end:
    until in epoch ms and the occurrences left, each or null, by id).
    Versions 1 to 3 still load."""

    version: Literal[1, 2, 3, 4] = 2
    created: int
    seen_contiguous: int
    seen_others: list[str]
    rows: list[_Row]
    calendars: dict[str, tuple[str, str, str, str]] = {}
    paused: list[str] = []
    requests: dict[str, str] = {}  # request id -> its create change's JSON text
    lattices: dict[str, int] = {}
    ends: dict[str, tuple[int | None, int | None]] = {}


_DECODER: Final = msgspec.json.Decoder(StateImage)
_ENCODER: Final = msgspec.json.Encoder()


class SnapshotError(ValueError):
    """A snapshot that cannot be used (the caller folds the log instead)."""


def _decode_escaped(data: bytes, error: msgspec.DecodeError) -> StateImage:
    """An image msgspec cannot read: one holding a lone surrogate's escape
    (see the module docstring), or no image at all (raises SnapshotError)."""
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):
        raise SnapshotError(str(error)) from error
    try:
        return msgspec.convert(value, StateImage)
    except msgspec.MsgspecError as exc:
        raise SnapshotError(str(exc)) from exc


def _row(entry: Entry) -> _Row:
    record = entry.record
    seconds = 0
    if isinstance(record, AfterSchedule):
        seconds = record.after_seconds
    elif isinstance(record, EverySchedule):
        seconds = record.every_seconds
    return (
        entry.order,
        _KINDS[record.kind],
        record.id,
        record.prompt,
        seconds,
        record.scheduled_at,
    )


def _record(row: _Row, calendars: dict[str, tuple[str, str, str, str]]) -> ScheduleRecord:
    _, kind, schedule_id, prompt, seconds, scheduled_at = row
    if kind == 3:
        rule = calendars.get(schedule_id)
        if rule is None:
            raise SnapshotError(f"calendar row {schedule_id} has no rule")
        return CalendarSchedule(schedule_id, prompt, *rule, scheduled_at)
    if kind == 0:
        return AfterSchedule(schedule_id, prompt, seconds, scheduled_at)
    if kind == 1:
        return AtSchedule(schedule_id, prompt, scheduled_at)
    if kind == 2:
        return EverySchedule(schedule_id, prompt, seconds, scheduled_at)
    raise SnapshotError(f"unknown record kind {kind}")


def encode_state(state: State) -> bytes:
    seen = state.seen_ids
    image = StateImage(
        version=4 if state.ends else 3 if state.lattices else 2,
        created=state.created,
        seen_contiguous=seen.contiguous,
        seen_others=sorted(seen.others),
        rows=[_row(entry) for entry in sorted(state.entries.values())],
        calendars={
            r.id: (r.cron, r.time_zone, r.dst_gap, r.dst_overlap)
            for e in state.entries.values()
            if isinstance(r := e.record, CalendarSchedule)
        },
        paused=sorted(state.paused),
        requests={key: change_json(change) for key, change in sorted(state.requests.items())},
        lattices=dict(sorted(state.lattices.items())),
        ends={key: (end.until, end.remaining) for key, end in sorted(state.ends.items())},
    )
    try:
        return _ENCODER.encode(image)
    except UnicodeEncodeError:  # a lone surrogate: see the module docstring
        return json.dumps(msgspec.to_builtins(image), separators=(",", ":")).encode()


def _check_lattices(lattices: dict[str, int], entries: dict[str, Entry]) -> None:
    """Each snoozed row is an active recurring one, and where its series
    continues one that a snooze could have made."""
    for schedule_id, lattice in lattices.items():
        snoozed = entries.get(schedule_id)
        if snoozed is None or not isinstance(snoozed.record, RECURRING):
            raise SnapshotError(f"lattice of {schedule_id}, not an active recurring id")
        if not is_continuation(snoozed.record, snoozed.target, lattice):
            raise SnapshotError(f"lattice of {schedule_id} is no point its series continues at")


def _check_ends(ends: dict[str, tuple[int | None, int | None]], entries: dict[str, Entry]) -> None:
    """Each series end is an active recurring row's, and one a log could
    leave: a bound set, occurrences left at least 1."""
    for schedule_id, (until, remaining) in ends.items():
        bounded = entries.get(schedule_id)
        if bounded is None or not isinstance(bounded.record, RECURRING):
            raise SnapshotError(f"end of {schedule_id}, not an active recurring id")
        if (until is None and remaining is None) or (remaining is not None and remaining < 1):
            raise SnapshotError(f"end of {schedule_id} is no end a series can have")


def _entries(image: StateImage) -> dict[str, Entry]:
    """The image's rows, by id: each id and each creation order once
    (entries sort by order first: two alike would compare their records)."""
    entries = {row[2]: entry(row[0], _record(row, image.calendars)) for row in image.rows}
    if len(entries) != len(image.rows):
        raise SnapshotError("duplicate ids")
    if len({row[0] for row in image.rows}) != len(image.rows):
        raise SnapshotError("duplicate creation orders")
    return entries


def decode_state(data: bytes) -> State:
    """Raises :class:`SnapshotError` for anything unusable."""
    try:
        image = _DECODER.decode(data)
    except msgspec.DecodeError as exc:
        image = _decode_escaped(data, exc)
    except msgspec.MsgspecError as exc:
        raise SnapshotError(str(exc)) from exc
    entries = _entries(image)
    one_shots: list[DueKey] = []
    everies: list[DueKey] = []
    paused = pset(image.paused)
    requests = {}
    for request_id, text in image.requests.items():
        try:
            change = decode_change(text)
        except CorruptScheduleLog as exc:
            raise SnapshotError(str(exc)) from exc
        if not isinstance(change, CreateChangeV2) or change.request_id != request_id:
            raise SnapshotError(f"request {request_id} is not a create with that request id")
        requests[request_id] = change
    if not paused <= entries.keys():
        raise SnapshotError("a paused id is not active")
    _check_lattices(image.lattices, entries)
    _check_ends(image.ends, entries)
    for active in entries.values():
        if active.record.id in paused:
            continue
        (everies if isinstance(active.record, RECURRING) else one_shots).append(active.due_key)
    one_shots.sort()
    everies.sort()
    return State(
        LayeredMap(entries),
        SeenIds.of(image.seen_contiguous, image.seen_others),
        image.created,
        SortedKeys.from_sorted(one_shots),
        SortedKeys.from_sorted(everies),
        paused,
        pmap(requests),
        pmap(image.lattices),
        pmap({key: SeriesEnd(*end) for key, end in image.ends.items()}),
    )
