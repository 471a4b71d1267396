"""Replay: ``State``, ``evolve`` (one change) and ``fold`` (a whole log).

The transition rules are written once, in :func:`_apply`, against a small
"book" interface. ``fold`` runs them over plain dicts and freezes the result
once; ``evolve`` runs them over the persistent structures, so the shell keeps
state incrementally at a cost that does not grow with the log.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Final, NamedTuple, Protocol

import msgspec

from tickler.core.codec import decode_change
from tickler.core.errors import CorruptScheduleLog
from tickler.core.fixedrate import lattice
from tickler.core.instant import format_instant, parse_instant
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
from tickler.core.wire import fast_decode_many

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
    book = _FoldBook()
    count = 0
    chunk: list[tuple[int, msgspec.Raw]] = []
    for count, event in enumerate(events, start=1):
        if count > seed and event.type == SCHEDULE_CHANGE:
            chunk.append((count - 1, event.data))
            if len(chunk) == _CHUNK:
                _apply_chunk(book, chunk)
                chunk = []
    _apply_chunk(book, chunk)
    if count < seed:
        raise CorruptScheduleLog(SeedReason.OUT_OF_LOG)
    return book.freeze()


_CHUNK: Final = 4096


def _apply_chunk(book: _FoldBook, chunk: list[tuple[int, msgspec.Raw]]) -> None:
    """Decode a chunk in one call when it is all well-formed; any payload the
    fast path cannot vouch for is decoded exactly, for its exact reason."""
    if not chunk:
        return
    decoded = fast_decode_many([data for _, data in chunk])
    for position, (index, data) in enumerate(chunk):
        try:
            fast = decoded[position] if decoded is not None else None
            if fast is not None:
                _apply(book, fast[0], fast[1])
            else:
                _apply(book, decode_change(data))
        except CorruptScheduleLog as exc:
            raise exc.at(index) from None


def fold_changes(changes: Iterable[ScheduleChange], state: State = EMPTY_STATE) -> State:
    """Evolve ``state`` by already-decoded changes, in order."""
    for change in changes:
        state = evolve(state, change)
    return state
