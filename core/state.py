"""Replay: ``State``, ``evolve`` (one change) and ``fold`` (a whole log).

The transition rules are written once, in :func:`_apply`, against a small
"book" interface. ``fold`` runs them over plain dicts and freezes the result
once; ``evolve`` runs them over the persistent structures, so the shell keeps
state incrementally at a cost that does not grow with the log.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final, NamedTuple, Protocol

import msgspec
from msgspec import UNSET, UnsetType

from tickler.core.codec import decode_change
from tickler.core.errors import CorruptScheduleLog
from tickler.core.fixedrate import lattice
from tickler.core.instant import MAX_INSTANT_MS, format_instant, parse_instant
from tickler.core.jsnum import safe_integer
from tickler.core.jstext import js_string
from tickler.core.layered import LayeredMap
from tickler.core.model import (
    CreateChange,
    DeleteChange,
    DispatchChange,
    EverySchedule,
    ScheduleChange,
    ScheduleRecord,
)
from tickler.core.seen import SeenBuilder, SeenIds
from tickler.core.session import SessionEvent
from tickler.core.sortedkeys import DueKey, SortedKeys
from tickler.core.wire import decode_many, first_check, instant_ms

SCHEDULE_CHANGE: Final = "schedule/change"


class SeedReason:
    OUT_OF_LOG: Final = "schedule seedLength must be within the supplied event log"


class Entry(NamedTuple):
    """An active record, its creation order, and its target in epoch ms."""

    order: int
    record: ScheduleRecord
    target: int

    @property
    def due_key(self) -> DueKey:
        return (self.target, self.order, self.record.id)


def entry(order: int, record: ScheduleRecord) -> Entry:
    return Entry(order, record, parse_instant(record.scheduled_at))


@dataclass(frozen=True, slots=True)
class State:
    """The replayed schedule state of one session's owned suffix.

    ``entries`` maps each active id to its record; ``one_shots`` and
    ``everies`` index the active records by (target, creation order);
    ``seen_ids`` holds every id ever created; ``created`` counts creates.
    """

    entries: LayeredMap[Entry]
    seen_ids: SeenIds
    created: int
    one_shots: SortedKeys
    everies: SortedKeys

    @property
    def active(self) -> tuple[ScheduleRecord, ...]:
        """Active records in creation order."""
        return tuple(entry.record for entry in sorted(self.entries.values()))

    def get(self, schedule_id: str) -> ScheduleRecord | None:
        entry = self.entries.get(schedule_id)
        return None if entry is None else entry.record


EMPTY_STATE: Final = State(LayeredMap(), SeenIds(), 0, SortedKeys(), SortedKeys())


class _Book(Protocol):
    def get(self, schedule_id: str) -> Entry | None: ...
    def seen(self, schedule_id: str) -> bool: ...
    @property
    def created(self) -> int: ...
    def create(self, new: Entry) -> None: ...
    def replace(self, entry: Entry, moved: Entry) -> None: ...
    def remove(self, entry: Entry) -> None: ...


def _inactive(operation: str, schedule_id: str) -> CorruptScheduleLog:
    return CorruptScheduleLog(f"schedule {operation} targets inactive id {js_string(schedule_id)}")


def _apply(book: _Book, change: ScheduleChange, instant: int = -1) -> None:
    """The v1 transition rules (reference section (c)). ``instant`` is the
    ms of the change's scheduledAt or acceptedAt when the caller already read
    it (-1: read it here)."""
    match change:
        case CreateChange(schedule=record):
            if book.seen(record.id):
                raise CorruptScheduleLog(f"schedule id {js_string(record.id)} was reused")
            target = instant if instant >= 0 else parse_instant(record.scheduled_at)
            book.create(Entry(book.created, record, target))
        case DeleteChange(id=schedule_id):
            entry = book.get(schedule_id)
            if entry is None:
                raise _inactive("delete", schedule_id)
            book.remove(entry)
        case DispatchChange(id=schedule_id, accepted_at=accepted_at):
            entry = book.get(schedule_id)
            if entry is None:
                raise _inactive("dispatch", schedule_id)
            if not isinstance(accepted_at, str):
                _dispatch(book, entry, None)
            else:
                _dispatch(book, entry, instant if instant >= 0 else _accepted_ms(accepted_at))


def _dispatch(book: _Book, entry: Entry, accepted_ms: int | None) -> None:
    """A one-shot finishes; a fixed-rate record moves to its next lattice
    point after ``accepted_at``, or ends past year 9999."""
    record = entry.record
    if not isinstance(record, EverySchedule):
        if accepted_ms is not None:
            raise CorruptScheduleLog("one-shot dispatch must not contain acceptedAt")
        book.remove(entry)
        return
    if accepted_ms is None:
        raise CorruptScheduleLog("every dispatch must contain acceptedAt")
    _, following = lattice(entry.target, record.every_seconds, accepted_ms)
    if following is None:
        book.remove(entry)
    else:
        moved = msgspec.structs.replace(record, scheduled_at=format_instant(following))
        book.replace(entry, Entry(entry.order, moved, following))


@lru_cache(maxsize=64)
def _accepted_ms(accepted_at: str) -> int:
    """A fixed-rate batch's dispatches share one ``acceptedAt``: read it once."""
    return parse_instant(accepted_at)


class _PersistentBook:
    """Applies rules to a ``State``, producing the next one."""

    __slots__ = ("entries", "everies", "one_shots", "seen_ids", "state")

    def __init__(self, state: State) -> None:
        self.state = state

    def get(self, schedule_id: str) -> Entry | None:
        return self.state.entries.get(schedule_id)

    def seen(self, schedule_id: str) -> bool:
        return schedule_id in self.state.seen_ids

    def _index(self, entry: Entry, add: bool) -> tuple[SortedKeys, SortedKeys]:
        s = self.state
        if isinstance(entry.record, EverySchedule):
            keys = s.everies.insert(entry.due_key) if add else s.everies.remove(entry.due_key)
            return s.one_shots, keys
        keys = s.one_shots.insert(entry.due_key) if add else s.one_shots.remove(entry.due_key)
        return keys, s.everies

    @property
    def created(self) -> int:
        return self.state.created

    def create(self, new: Entry) -> None:
        s = self.state
        record = new.record
        one_shots, everies = self._index(new, add=True)
        self.state = State(
            s.entries.set(record.id, new),
            s.seen_ids.add(record.id),
            s.created + 1,
            one_shots,
            everies,
        )

    def remove(self, entry: Entry) -> None:
        s = self.state
        one_shots, everies = self._index(entry, add=False)
        self.state = State(
            s.entries.discard(entry.record.id), s.seen_ids, s.created, one_shots, everies
        )

    def replace(self, old: Entry, moved: Entry) -> None:
        self.remove(old)
        s = self.state
        one_shots, everies = self._index(moved, add=True)
        self.state = State(
            s.entries.set(moved.record.id, moved), s.seen_ids, s.created, one_shots, everies
        )


class _FoldBook:
    """Applies rules to plain dicts; frozen into a ``State`` once at the end."""

    __slots__ = ("created", "entries", "seen_ids")

    def __init__(self) -> None:
        self.entries: dict[str, Entry] = {}
        self.seen_ids = SeenBuilder()
        self.created = 0

    def get(self, schedule_id: str) -> Entry | None:
        return self.entries.get(schedule_id)

    def seen(self, schedule_id: str) -> bool:
        if schedule_id == self.seen_ids.next_id:  # the usual case: the next allocated id
            return False
        return schedule_id in self.seen_ids

    def create(self, new: Entry) -> None:
        self.entries[new.record.id] = new
        self.seen_ids.add(new.record.id)
        self.created += 1

    def remove(self, entry: Entry) -> None:
        del self.entries[entry.record.id]

    def replace(self, old: Entry, moved: Entry) -> None:
        self.entries[moved.record.id] = moved

    def freeze(self) -> State:
        one_shots: list[DueKey] = []
        everies: list[DueKey] = []
        for active in self.entries.values():
            (everies if isinstance(active.record, EverySchedule) else one_shots).append(
                active.due_key
            )
        one_shots.sort()
        everies.sort()
        return State(
            LayeredMap(self.entries),
            self.seen_ids.freeze(),
            self.created,
            SortedKeys.from_sorted(one_shots),
            SortedKeys.from_sorted(everies),
        )


def evolve(state: State, change: ScheduleChange) -> State:
    """One step of the fold; raises :class:`CorruptScheduleLog`.

    ``change`` must be a validated value (from :func:`decode_change` or
    ``decide``); the rules here are the log's transition rules.
    """
    book = _PersistentBook(state)
    _apply(book, change)
    return book.state


def _seed_length(seed_length: object) -> int:
    """A JSON safe integer >= 0 (``1.0`` is 1), else the reference's reason."""
    value = safe_integer(seed_length)
    if value is None or value < 0:
        raise CorruptScheduleLog(SeedReason.OUT_OF_LOG)
    return value


def fold(events: Iterable[SessionEvent], seed_length: int = 0) -> State:
    """Strict replay of the ``schedule/change`` events after ``seed_length``.

    Other event types are skipped. Raises :class:`CorruptScheduleLog` with the
    reference's reason and the offending event's index.
    """
    seed = _seed_length(seed_length)
    log = events if isinstance(events, Sequence) else list(events)
    if len(log) < seed:
        raise CorruptScheduleLog(SeedReason.OUT_OF_LOG)
    owned = [
        (index, event.data)
        for index, event in enumerate(log)
        if event.type == SCHEDULE_CHANGE and index >= seed
    ]
    book = _FoldBook()
    for start in range(0, len(owned), _CHUNK):
        _apply_chunk(book, owned[start : start + _CHUNK])
    return book.freeze()


_CHUNK: Final = 4096


def _apply_chunk(book: _FoldBook, chunk: list[tuple[int, msgspec.Raw]]) -> None:
    """Decode a chunk in one call and replay it on the fast path; an event
    the fast path cannot vouch for goes through the exact decoder and the
    general rules (:func:`_apply`), for its exact outcome or reason. The
    property tests hold both paths to the same result."""
    if not chunk:
        return
    decoded = decode_many([data for _, data in chunk])
    if decoded is None:
        for index, data in chunk:
            _apply_exactly(book, index, data)
        return
    accepted = _Accepted()
    for (index, data), change in zip(chunk, decoded, strict=True):
        if isinstance(change, DispatchChange):
            done = _fast_dispatch(book.entries, change, accepted)
        elif isinstance(change, CreateChange):
            done = _fast_create(book, change.schedule)
        else:
            done = book.entries.pop(change.id, None) is not None
        if not done:
            _apply_exactly(book, index, data)


class _Accepted:
    """The last acceptedAt read: a fixed-rate batch's dispatches share one."""

    __slots__ = ("ms", "text")

    def __init__(self) -> None:
        self.text, self.ms = "", 0

    def read(self, text: str) -> int | None:
        if text != self.text:
            ms = instant_ms(text)
            if ms is None:
                return None
            self.text, self.ms = text, ms
        return self.ms


def _fast_dispatch(entries: dict[str, Entry], change: DispatchChange, cache: _Accepted) -> bool:
    active = entries.get(change.id)  # an active id was checked at its create
    if active is None:
        return False
    record, accepted = active.record, change.accepted_at
    if not isinstance(record, EverySchedule):
        if accepted is not UNSET:
            return False
        del entries[change.id]
        return True
    accepted_ms = None if isinstance(accepted, UnsetType) else cache.read(accepted)
    if accepted_ms is None or accepted_ms < active.target:
        return False
    interval = record.every_seconds * 1000
    following = active.target + ((accepted_ms - active.target) // interval + 1) * interval
    if following > MAX_INSTANT_MS:
        del entries[change.id]
    else:
        moved = msgspec.structs.replace(record, scheduled_at=format_instant(following))
        entries[change.id] = Entry(active.order, moved, following)
    return True


def _fast_create(book: _FoldBook, record: ScheduleRecord) -> bool:
    if record.id != book.seen_ids.next_id or not first_check(record):
        return False
    target = instant_ms(record.scheduled_at)
    if target is None:
        return False
    book.entries[record.id] = Entry(book.created, record, target)
    book.seen_ids.add(record.id)
    book.created += 1
    return True


def _apply_exactly(book: _FoldBook, index: int, data: msgspec.Raw) -> None:
    try:
        _apply(book, decode_change(data))
    except CorruptScheduleLog as exc:
        raise exc.at(index) from None


def fold_changes(changes: Iterable[ScheduleChange], state: State = EMPTY_STATE) -> State:
    """Evolve ``state`` by already-decoded changes, in order."""
    for change in changes:
        state = evolve(state, change)
    return state
