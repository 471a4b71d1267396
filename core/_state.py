"""Replay: ``State``, ``evolve`` (one change) and ``fold`` (a whole log).

Two functions over one event type, ``ScheduleChange``: ``evolve`` applies
one change, ``fold_changes`` many; ``fold`` reads a log's session events,
skips the ``seed_length`` events before the owned part and every event that
is not a ``schedule/change``, and is ``fold_changes`` of the changes it
decodes. What ``decide`` returns composes with them::

    state = fold(history, seed_length)
    d = decide(state, command, now)
    assert fold_changes(d.changes, state) == d.state

The transition rules are written once, one function per kind of change
(:data:`_RULE_OF`, reached through :func:`_apply`), against a small "book"
interface. ``evolve`` runs them over the persistent structures, so the shell
keeps state incrementally at a cost that does not grow with the log;
``fold`` runs the same functions over plain dicts and freezes the result
once. Its speed comes from decoding (a chunk of changes at a time, in C),
not from a second copy of the rules.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice
from typing import Any, Final, Protocol, TypeVar

import msgspec
from msgspec import UNSET, UnsetType
from pyrsistent import PMap, PSet, pmap, pset

from tickler.core._codec import decode_change
from tickler.core._errors import CorruptScheduleLog
from tickler.core._layered import LayeredMap
from tickler.core._model import (
    RECURRING,
    CreateChange,
    CreateChangeV2,
    DeleteChange,
    DeleteChangeV2,
    DispatchChange,
    ScheduleChange,
    ScheduleRecord,
    SeriesEnd,
    UpdateChange,
)
from tickler.core._rules import (
    Breach,
    Reason,
    args_digest_breach,
    bounded_step,
    continuation_rule,
    count_rule,
    dispatch_form_breach,
    end_rule,
    id_breach,
    instant_rule,
    is_breach,
    log_reason,
    operator_breach,
    paused_rule,
    prompt_breach,
    record_rule,
    request_id_breach,
    request_reuse_breach,
    reschedule_rule,
    reuse_breach,
)
from tickler.core._seen import SeenBuilder, SeenIds
from tickler.core._sortedkeys import DueKey, SortedKeys
from tickler.core._wire import decode_many
from tickler.core.timing import format_instant, parse_instant
from tickler.core.wire import SessionEvent, safe_integer

SCHEDULE_CHANGE: Final = "schedule/change"


class Entry(msgspec.Struct, frozen=True, order=True, gc=False):
    """An active record, its creation order, and its target in epoch ms.

    Ordered as a tuple of its fields (the order is unique: records are never
    compared). Not tracked by the garbage collector (``gc=False``): it holds
    only an int, an immutable record and an int, so it is in no cycle, and a
    process holding many sessions' reminders does not have the collector
    walk every one of them on each full pass.
    """

    order: int
    record: ScheduleRecord
    target: int

    @property
    def due_key(self) -> DueKey:
        return (self.target, self.order, self.record.id)


def entry(order: int, record: ScheduleRecord) -> Entry:
    return Entry(order, record, parse_instant(record.scheduled_at))


_V_co = TypeVar("_V_co", covariant=True)
_NO_PAUSED: Final[PSet[str]] = pset()
_NO_REQUESTS: Final[PMap[str, CreateChangeV2]] = pmap()
_NO_LATTICES: Final[PMap[str, int]] = pmap()
_NO_ENDS: Final[PMap[str, SeriesEnd]] = pmap()


@dataclass(frozen=True, slots=True)
class State:
    """The replayed schedule state of one session's owned suffix.

    ``entries`` maps each active id to its record; ``one_shots`` and
    ``everies`` index the active records by (target, creation order);
    ``seen_ids`` holds every id ever created; ``created`` counts creates;
    ``paused`` holds the active ids that are paused (in no due index);
    ``requests`` maps each request id ever used to its create (for the life
    of the log: a retry is answered from it); ``lattices`` maps each active
    recurring id whose target was snoozed to the point of its rule its
    series continues at after that target, where that is not the rule's
    next point after it (``rules.continuation_rule``; ``END_OF_SERIES``: the
    series ends after the target); ``ends`` maps each active recurring id
    whose series ends to its end (``until``, and the occurrences it may
    still deliver).
    """

    entries: LayeredMap[Entry]
    seen_ids: SeenIds
    created: int
    one_shots: SortedKeys
    everies: SortedKeys
    paused: PSet[str] = _NO_PAUSED
    requests: PMap[str, CreateChangeV2] = _NO_REQUESTS
    lattices: PMap[str, int] = _NO_LATTICES
    ends: PMap[str, SeriesEnd] = _NO_ENDS

    def end(self, schedule_id: str) -> SeriesEnd | None:
        """Where a series ends, or None (it does not, before year 10000)."""
        return self.ends.get(schedule_id)

    def is_paused(self, schedule_id: str) -> bool:
        return schedule_id in self.paused

    def lattice(self, schedule_id: str) -> int | None:
        """Where a snoozed series continues after its target, or None (at
        its rule's next point after the target)."""
        return self.lattices.get(schedule_id)

    @property
    def active(self) -> tuple[ScheduleRecord, ...]:
        """Active records in creation order."""
        return tuple(entry.record for entry in sorted(self.entries.values()))

    def get(self, schedule_id: str) -> ScheduleRecord | None:
        entry = self.entries.get(schedule_id)
        return None if entry is None else entry.record


EMPTY_STATE: Final = State(LayeredMap(), SeenIds(), 0, SortedKeys(), SortedKeys())


class _Lookup(Protocol[_V_co]):
    def get(self, key: str, /) -> _V_co | None: ...
    def __contains__(self, key: object, /) -> bool: ...


class _Book(Protocol):
    """What the rules read of a state (each lookup a plain one) and the
    changes they make to it."""

    @property
    def entries(self) -> _Lookup[Entry]:
        """The active records."""
        ...

    @property
    def seen_ids(self) -> Container[str]:
        """Every id ever created."""
        ...

    @property
    def paused(self) -> Container[str]: ...
    @property
    def requests(self) -> Container[str]:
        """Every request id ever used."""
        ...

    @property
    def lattices(self) -> _Lookup[int]: ...
    @property
    def ends(self) -> _Lookup[SeriesEnd]: ...
    @property
    def created(self) -> int: ...
    def create(
        self, new: Entry, request: CreateChangeV2 | None = None, end: SeriesEnd | None = None
    ) -> None: ...
    def move(self, entry: Entry, target: int, end: SeriesEnd | None) -> None:
        """A dispatch's move of a recurring record to ``target``, with the
        end that is left."""
        ...

    def remove(self, entry: Entry) -> None: ...
    def update(
        self,
        entry: Entry,
        changed: Entry,
        paused: bool,
        lattice: int | None,
        end: SeriesEnd | None,
    ) -> None: ...


def _broken(breach: Breach, change_id: str = "", kind: str = "") -> CorruptScheduleLog:
    return CorruptScheduleLog(log_reason(breach, kind=kind, schedule_id=change_id))


def _apply(book: _Book, change: ScheduleChange) -> None:
    """The log's rules (reference section (c)), each from the rulebook: the
    record's fields, then ids never reused; deletes and dispatches of active
    ids; the dispatch's form and the fixed-rate lattice. One rule per kind
    of change (:data:`_RULE_OF`); the book changes only once the change is
    judged whole."""
    _RULE_OF[type(change)](book, change)


def _on_create(book: _Book, change: CreateChange | CreateChangeV2) -> None:
    record = change.schedule
    target = record_rule(record)
    if type(target) is not int:
        assert is_breach(target)
        raise _broken(target, kind=record.kind)
    reused = reuse_breach(book.seen_ids, record.id)
    if reused is not None:
        raise _broken(reused, record.id)
    new = Entry(book.created, record, target)
    if type(change) is CreateChangeV2:
        book.create(new, _request(book, change), _created_end(change, record, target))
    else:
        book.create(new)


def _on_delete(book: _Book, change: DeleteChange | DeleteChangeV2) -> None:
    entry = book.entries.get(change.id)
    if entry is None:
        raise _broken(id_breach(change.id) or Breach.DELETE_INACTIVE, change.id)
    _judge_operator(change)
    book.remove(entry)


def _on_dispatch(book: _Book, change: DispatchChange) -> None:
    """A dispatch of an active id that is not paused, in its kind's form:
    a one-shot finishes; a recurring record moves to its series' next point
    after ``acceptedAt`` (latest-only catch-up), or ends (its end reached,
    or past year 9999)."""
    schedule_id, accepted_at = change.id, change.accepted_at
    entry = book.entries.get(schedule_id)
    if entry is None:
        invalid = id_breach(schedule_id)
        if invalid is not None:
            raise _broken(invalid)
        raise _broken(Breach.DISPATCH_INACTIVE, schedule_id)
    if schedule_id in book.paused:
        raise _broken(Breach.DISPATCH_PAUSED, schedule_id)
    record, target = entry.record, entry.target
    accepted = isinstance(accepted_at, str)
    form = dispatch_form_breach(record, accepted)
    if form is not None:
        raise _broken(form)
    if not accepted:  # a one-shot (the form's rule): it finishes
        book.remove(entry)
        return
    accepted_ms = _accepted_instant(accepted_at)
    if type(accepted_ms) is not int:
        assert is_breach(accepted_ms)
        raise _broken(accepted_ms)
    bounded = bounded_step(
        record,
        target,
        book.lattices.get(schedule_id),
        book.ends.get(schedule_id),
        accepted_ms,
    )
    if not isinstance(bounded, tuple):  # (a breach: by its type, as it is quicker)
        raise _broken(bounded, kind=record.kind)
    step, end = bounded
    if step.next is None:  # its last occurrence (or past year 9999): the series ends
        book.remove(entry)
    else:
        book.move(entry, step.next, end)


# A batch's dispatches share one acceptedAt: its instant is read once.
_accepted_instant: Final = lru_cache(maxsize=4)(instant_rule)


def _on_update(book: _Book, change: UpdateChange) -> None:
    entry = book.entries.get(change.id)
    if entry is None:
        raise _broken(id_breach(change.id) or Breach.UPDATE_INACTIVE, change.id)
    _judge_operator(change)
    _update(book, entry, change)


# The rule of each kind of change (the union ``ScheduleChange`` is closed).
_RULE_OF: Final[dict[type, Callable[[_Book, Any], None]]] = {
    CreateChange: _on_create,
    CreateChangeV2: _on_create,
    DeleteChange: _on_delete,
    DeleteChangeV2: _on_delete,
    DispatchChange: _on_dispatch,
    UpdateChange: _on_update,
}


def _judge_operator(change: ScheduleChange) -> None:
    """The operator an operator's change names (one built by hand too)."""
    by = getattr(change, "by", UNSET)
    if by is not UNSET:
        breach = operator_breach(by)
        if breach is not None:
            raise _broken(breach)


def _created_end(change: ScheduleChange, record: ScheduleRecord, target: int) -> SeriesEnd | None:
    """A create's series end, judged (the rulebook's ``end_rule``)."""
    if not isinstance(change, CreateChangeV2) or (change.until is None and change.count is None):
        return None
    until = None if change.until is None else _instant(change.until)
    breach = end_rule(record, target, until, change.count)
    if breach is not None:
        raise _broken(breach)
    return SeriesEnd(until, change.count)


def _instant(text: str) -> int:
    read = instant_rule(text)
    if is_breach(read):
        raise _broken(read)
    return read


def _request(book: _Book, change: ScheduleChange) -> CreateChangeV2 | None:
    """A create's request id, judged: well formed, with its digest, never
    used before."""
    if not isinstance(change, CreateChangeV2) or change.request_id is None:
        return None
    breach = request_id_breach(change.request_id) or args_digest_breach(change.args_digest)
    if breach is not None:
        raise _broken(breach)
    reused = request_reuse_breach(book.requests, change.request_id)
    if reused is not None:
        raise _broken(reused, change.request_id)
    return change


def _update(book: _Book, entry: Entry, change: UpdateChange) -> None:
    """A change in place: the prompt, paused or not, the target (a recurring
    series keeps its later occurrences: see ``continuation_rule``), or a new
    record (rescheduled: its series starts afresh at its own target)."""
    record, target = entry.record, entry.target
    continuation = book.lattices.get(record.id)
    if not isinstance(change.schedule, UnsetType):
        rescheduled = reschedule_rule(
            record.id,
            change.schedule,
            prompt=not isinstance(change.prompt, UnsetType),
            scheduled_at=not isinstance(change.scheduled_at, UnsetType),
        )
        if is_breach(rescheduled):
            raise _broken(rescheduled, kind=change.schedule.kind)
        record, target, continuation = change.schedule, rescheduled, None
    if not isinstance(change.prompt, UnsetType):
        breach = prompt_breach(change.prompt)
        if breach is not None:
            raise _broken(breach, kind="update")
        record = msgspec.structs.replace(record, prompt=change.prompt)
    if not isinstance(change.scheduled_at, UnsetType):
        moved = instant_rule(change.scheduled_at)
        if is_breach(moved):
            raise _broken(moved)
        following = continuation_rule(record, entry.target, continuation, moved)
        if is_breach(following):  # a record built by hand that no create vouched for
            raise _broken(following)
        continuation = following
        record = msgspec.structs.replace(record, scheduled_at=change.scheduled_at)
        target = moved
    paused = record.id in book.paused
    if not isinstance(change.paused, UnsetType):
        read = paused_rule(change.paused)
        if is_breach(read):
            raise _broken(read)
        paused = read
    end = _changed_end(book.ends.get(record.id), change, record, target)
    book.update(entry, Entry(entry.order, record, target), paused, continuation, end)


def _changed_end(
    end: SeriesEnd | None, change: UpdateChange, record: ScheduleRecord, target: int
) -> SeriesEnd | None:
    """A series' end after a change in place: each bound sent replaces its
    old one (null removes it) and is judged with the record as it now is; a
    new record keeps the old end, judged too, unless it is a one-shot."""
    rescheduled = not isinstance(change.schedule, UnsetType)
    sent = not isinstance(change.until, UnsetType) or not isinstance(change.count, UnsetType)
    if not rescheduled and not sent:
        return end
    until, remaining = end if end is not None else (None, None)
    if not isinstance(change.until, UnsetType):
        until = None if change.until is None else _instant(change.until)
    if not isinstance(change.count, UnsetType):
        count = None if change.count is None else count_rule(change.count)
        if is_breach(count):
            raise _broken(count)
        remaining = count
    if not sent and not isinstance(record, RECURRING):
        return None  # rescheduled to a one-shot: it has no series to end
    breach = end_rule(record, target, until, remaining)
    if breach is not None:
        raise _broken(breach)
    return None if until is None and remaining is None else SeriesEnd(until, remaining)


class _PersistentBook:
    """Applies rules to a ``State``, producing the next one."""

    __slots__ = ("state",)

    def __init__(self, state: State) -> None:
        self.state = state

    @property
    def entries(self) -> LayeredMap[Entry]:
        return self.state.entries

    @property
    def seen_ids(self) -> SeenIds:
        return self.state.seen_ids

    @property
    def paused(self) -> PSet[str]:
        return self.state.paused

    @property
    def requests(self) -> PMap[str, CreateChangeV2]:
        return self.state.requests

    @property
    def lattices(self) -> PMap[str, int]:
        return self.state.lattices

    @property
    def ends(self) -> PMap[str, SeriesEnd]:
        return self.state.ends

    def _index(
        self, entry: Entry, add: bool, indexes: tuple[SortedKeys, SortedKeys] | None = None
    ) -> tuple[SortedKeys, SortedKeys]:
        """The (one-shot, recurring) indexes with ``entry``'s key added or
        removed; a paused entry is in neither."""
        s = self.state
        one_shots, everies = (s.one_shots, s.everies) if indexes is None else indexes
        if not add and entry.record.id in s.paused:
            return one_shots, everies
        if isinstance(entry.record, RECURRING):
            keys = everies.insert(entry.due_key) if add else everies.remove(entry.due_key)
            return one_shots, keys
        keys = one_shots.insert(entry.due_key) if add else one_shots.remove(entry.due_key)
        return keys, everies

    @property
    def created(self) -> int:
        return self.state.created

    def create(
        self, new: Entry, request: CreateChangeV2 | None = None, end: SeriesEnd | None = None
    ) -> None:
        s = self.state
        record = new.record
        one_shots, everies = self._index(new, add=True)
        requests = s.requests
        if request is not None and request.request_id is not None:
            requests = requests.set(request.request_id, request)
        self.state = State(
            s.entries.set(record.id, new),
            s.seen_ids.add(record.id),
            s.created + 1,
            one_shots,
            everies,
            s.paused,
            requests,
            s.lattices,
            s.ends if end is None else s.ends.set(record.id, end),
        )

    def remove(self, entry: Entry) -> None:
        s = self.state
        one_shots, everies = self._index(entry, add=False)
        schedule_id = entry.record.id
        self.state = State(
            s.entries.discard(schedule_id),
            s.seen_ids,
            s.created,
            one_shots,
            everies,
            s.paused.discard(schedule_id),
            s.requests,
            s.lattices.discard(schedule_id),
            s.ends.discard(schedule_id),
        )

    def move(self, old: Entry, target: int, end: SeriesEnd | None) -> None:
        """A dispatch's move: onto the lattice, with the end that is left."""
        moved = msgspec.structs.replace(old.record, scheduled_at=format_instant(target))
        self.update(old, Entry(old.order, moved, target), old.record.id in self.paused, None, end)

    def update(
        self,
        entry: Entry,
        changed: Entry,
        paused: bool,
        lattice: int | None,
        end: SeriesEnd | None,
    ) -> None:
        s = self.state
        indexes = self._index(entry, add=False)
        if not paused:
            indexes = self._index(changed, add=True, indexes=indexes)
        schedule_id = changed.record.id
        lattices = (
            s.lattices.discard(schedule_id)
            if lattice is None
            else s.lattices.set(schedule_id, lattice)
        )
        self.state = State(
            s.entries.set(schedule_id, changed),
            s.seen_ids,
            s.created,
            *indexes,
            s.paused.add(schedule_id) if paused else s.paused.discard(schedule_id),
            s.requests,
            lattices,
            s.ends.discard(schedule_id) if end is None else s.ends.set(schedule_id, end),
        )


class _FoldBook:
    """Applies rules to plain dicts; frozen into a ``State`` once at the end."""

    __slots__ = ("created", "ends", "entries", "lattices", "paused", "requests", "seen_ids")

    def __init__(self) -> None:
        self.entries: dict[str, Entry] = {}
        self.seen_ids = SeenBuilder()
        self.created = 0
        self.paused: set[str] = set()
        self.requests: dict[str, CreateChangeV2] = {}
        self.lattices: dict[str, int] = {}
        self.ends: dict[str, SeriesEnd] = {}

    def _set_end(self, schedule_id: str, end: SeriesEnd | None) -> None:
        if end is None:
            self.ends.pop(schedule_id, None)
        else:
            self.ends[schedule_id] = end

    def update(
        self,
        entry: Entry,
        changed: Entry,
        paused: bool,
        lattice: int | None,
        end: SeriesEnd | None,
    ) -> None:
        schedule_id = changed.record.id
        self._set_end(schedule_id, end)
        self.entries[schedule_id] = changed
        if paused:
            self.paused.add(schedule_id)
        else:
            self.paused.discard(schedule_id)
        if lattice is None:
            self.lattices.pop(schedule_id, None)
        else:
            self.lattices[schedule_id] = lattice

    def create(
        self, new: Entry, request: CreateChangeV2 | None = None, end: SeriesEnd | None = None
    ) -> None:
        schedule_id = new.record.id
        if end is not None:  # a new id: it has no end yet
            self.ends[schedule_id] = end
        if request is not None and request.request_id is not None:
            self.requests[request.request_id] = request
        self.entries[schedule_id] = new
        self.seen_ids.add(schedule_id)
        self.created += 1

    def remove(self, entry: Entry) -> None:
        schedule_id = entry.record.id
        del self.entries[schedule_id]
        if self.paused:
            self.paused.discard(schedule_id)
        if self.lattices:
            self.lattices.pop(schedule_id, None)
        if self.ends:
            self.ends.pop(schedule_id, None)

    def move(self, old: Entry, target: int, end: SeriesEnd | None) -> None:
        """A dispatch's move: onto the lattice, with the end that is left.
        Only the target moves: ``freeze`` writes the record's text once,
        for the survivors."""
        record = old.record
        schedule_id = record.id
        self.entries[schedule_id] = Entry(old.order, record, target)
        if self.lattices:
            self.lattices.pop(schedule_id, None)
        if end is not None or self.ends:
            self._set_end(schedule_id, end)

    def freeze(self) -> State:
        one_shots: list[DueKey] = []
        everies: list[DueKey] = []
        entries = self.entries
        for schedule_id, active in entries.items():
            record = active.record
            indexed = schedule_id not in self.paused  # a paused one is in no due index
            if not isinstance(record, RECURRING):
                if indexed:
                    one_shots.append((active.target, active.order, schedule_id))
                continue
            if indexed:
                everies.append((active.target, active.order, schedule_id))
            text = format_instant(active.target)  # the replay moved only the target
            if text != record.scheduled_at:
                moved = msgspec.structs.replace(record, scheduled_at=text)
                entries[schedule_id] = Entry(active.order, moved, active.target)
        one_shots.sort()
        everies.sort()
        return State(
            LayeredMap(self.entries),
            self.seen_ids.freeze(),
            self.created,
            SortedKeys.from_sorted(one_shots),
            SortedKeys.from_sorted(everies),
            pset(self.paused),
            pmap(self.requests),
            pmap(self.lattices),
            pmap(self.ends),
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
        raise CorruptScheduleLog(Reason.SEED_OUT_OF_LOG)
    return value


def fold(events: Iterable[SessionEvent], seed_length: int = 0, state: State = EMPTY_STATE) -> State:
    """Strict replay of the ``schedule/change`` events after ``seed_length``,
    from ``state`` (the empty state: a whole log; a snapshot's state: the
    events after it).

    Other event types are skipped. Raises :class:`CorruptScheduleLog` with the
    reference's reason and the offending event's index in ``events``. Any
    iterable is read once: from the empty state it is read to its end before
    the first change is judged; from another state each change is applied as
    it is read. ``fold`` of a log's events is ``fold_changes`` of its owned
    changes, decoded.
    """
    seed = _seed_length(seed_length)
    if state is not EMPTY_STATE:
        return _resume(state, events, seed)
    if isinstance(events, Sequence):
        log: Sequence[SessionEvent] = events
        if len(log) < seed:
            raise CorruptScheduleLog(Reason.SEED_OUT_OF_LOG)
        owned = [e.data for e in islice(log, seed, None) if e.type == SCHEDULE_CHANGE]
        indices: Sequence[int] | None = None
    else:  # read once, keeping only the owned changes and where they stand
        owned, indices, length = [], [], 0
        for length, event in enumerate(events, 1):
            if event.type == SCHEDULE_CHANGE and length > seed:
                owned.append(event.data)
                indices.append(length - 1)
        if length < seed:
            raise CorruptScheduleLog(Reason.SEED_OUT_OF_LOG)
        log = ()
    book = _FoldBook()
    try:
        for start in range(0, len(owned), _CHUNK):
            _apply_chunk(book, owned, start)
    except _Rejected as rejected:
        at = rejected.position
        index = _log_index(log, seed, at) if indices is None else indices[at]
        raise rejected.error.at(index) from None
    return book.freeze()


def _resume(state: State, events: Iterable[SessionEvent], seed: int) -> State:
    """``fold`` from a state that is not empty: each owned change evolves
    it as it is read."""
    index = -1
    for index, event in enumerate(events):
        if event.type == SCHEDULE_CHANGE and index >= seed:
            try:
                state = evolve(state, decode_change(event.data))
            except CorruptScheduleLog as exc:
                raise exc.at(index) from None
    if index + 1 < seed:
        raise CorruptScheduleLog(Reason.SEED_OUT_OF_LOG)
    return state


_CHUNK: Final = 4096


class _Rejected(Exception):
    """The ``position``-th owned change broke a rule (its log index is found
    only then, so the replay need not carry indices)."""

    def __init__(self, error: CorruptScheduleLog, position: int) -> None:
        super().__init__(error, position)
        self.error, self.position = error, position


def _log_index(log: Sequence[SessionEvent], seed: int, position: int) -> int:
    for index in range(seed, len(log)):
        if log[index].type == SCHEDULE_CHANGE:
            if position == 0:
                return index
            position -= 1
    raise AssertionError("position beyond the owned changes")  # pragma: no cover


def _apply_chunk(book: _FoldBook, owned: list[msgspec.Raw], start: int) -> None:
    """Decode a chunk in one call (in C, straight into the model's types,
    without the field rules) and apply each change by the one set of rules,
    :func:`_apply`, which judges every field it uses. A change that breaks
    a rule there, and every change of a chunk that does not decode so, goes
    through the exact decoder and :func:`_apply`, for its exact outcome or
    reason (the rules change the book only once a change is judged whole).
    """
    chunk = owned[start : start + _CHUNK]
    decoded = decode_many(chunk)
    if decoded is None:
        for position, data in enumerate(chunk, start):
            _apply_exactly(book, position, data)
        return
    rule_of = _RULE_OF
    for position, change in enumerate(decoded, start):
        try:
            rule_of[type(change)](book, change)  # what ``_apply`` does
        except CorruptScheduleLog:
            _apply_exactly(book, position, chunk[position - start])


def _apply_exactly(book: _FoldBook, position: int, data: msgspec.Raw) -> None:
    try:
        _apply(book, decode_change(data))
    except CorruptScheduleLog as exc:
        raise _Rejected(exc, position) from None


def fold_changes(changes: Iterable[ScheduleChange], state: State = EMPTY_STATE) -> State:
    """Evolve ``state`` by already-decoded changes, in order."""
    for change in changes:
        state = evolve(state, change)
    return state
