"""Replay: ``State``, ``evolve`` (one change) and ``fold`` (a whole log).

The transition rules are written once, in :func:`_apply`, against a small
"book" interface. ``fold`` runs them over plain dicts and freezes the result
once; ``evolve`` runs them over the persistent structures, so the shell keeps
state incrementally at a cost that does not grow with the log.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Final, NamedTuple, Protocol

import msgspec
from msgspec import UNSET, UnsetType
from pyrsistent import PMap, PSet, pmap, pset

from tickler.core._codec import decode_change
from tickler.core._errors import CorruptScheduleLog
from tickler.core._layered import LayeredMap
from tickler.core._model import (
    RECURRING,
    AfterSchedule,
    CalendarSchedule,
    CreateChange,
    CreateChangeV2,
    DeleteChange,
    DeleteChangeV2,
    DispatchChange,
    EverySchedule,
    ScheduleChange,
    ScheduleRecord,
    SeriesEnd,
    UpdateChange,
)
from tickler.core._rules import (
    Breach,
    Reason,
    after_seconds_rule,
    args_digest_breach,
    bounded_step,
    continuation_rule,
    count_rule,
    dispatch_form_breach,
    end_rule,
    every_seconds_rule,
    id_breach,
    instant_rule,
    is_stored_text,
    log_reason,
    occurrence_rule,
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


class _Book(Protocol):
    def get(self, schedule_id: str) -> Entry | None: ...
    def __contains__(self, schedule_id: object) -> bool:
        """Whether ``schedule_id`` was ever created (the seen ids)."""
        ...

    @property
    def created(self) -> int: ...
    def create(
        self, new: Entry, request: CreateChangeV2 | None = None, end: SeriesEnd | None = None
    ) -> None: ...
    def requested(self, request_id: str) -> bool: ...
    def replace(self, entry: Entry, moved: Entry, end: SeriesEnd | None) -> None: ...
    def remove(self, entry: Entry) -> None: ...
    def is_paused(self, schedule_id: str) -> bool: ...
    def lattice(self, schedule_id: str) -> int | None: ...
    def end(self, schedule_id: str) -> SeriesEnd | None: ...
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


def _apply(book: _Book, change: ScheduleChange) -> None:  # noqa: C901 - a case per change
    """The log's rules (reference section (c)), each from the rulebook: the
    record's fields, then ids never reused; deletes and dispatches of active
    ids; the dispatch's form and the fixed-rate lattice."""
    match change:
        case CreateChange(schedule=record) | CreateChangeV2(schedule=record):
            target = record_rule(record)
            if isinstance(target, Breach):
                raise _broken(target, kind=record.kind)
            reused = reuse_breach(book, record.id)
            if reused is not None:
                raise _broken(reused, record.id)
            request = _request(book, change)
            end = _created_end(change, record, target)
            book.create(Entry(book.created, record, target), request, end)
        case DeleteChange(id=schedule_id) | DeleteChangeV2(id=schedule_id):
            entry = book.get(schedule_id)
            if entry is None:
                raise _broken(id_breach(schedule_id) or Breach.DELETE_INACTIVE, schedule_id)
            _judge_operator(change)
            book.remove(entry)
        case DispatchChange(id=schedule_id, accepted_at=accepted_at):
            entry = book.get(schedule_id)
            if entry is None:
                invalid = id_breach(schedule_id)
                if invalid is not None:
                    raise _broken(invalid)
                raise _broken(Breach.DISPATCH_INACTIVE, schedule_id)
            if book.is_paused(schedule_id):
                raise _broken(Breach.DISPATCH_PAUSED, schedule_id)
            _dispatch(book, entry, accepted_at if isinstance(accepted_at, str) else None)
        case UpdateChange(id=schedule_id):
            entry = book.get(schedule_id)
            if entry is None:
                raise _broken(id_breach(schedule_id) or Breach.UPDATE_INACTIVE, schedule_id)
            _judge_operator(change)
            _update(book, entry, change)


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
    if isinstance(read, Breach):
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
    reused = request_reuse_breach(_Requests(book), change.request_id)
    if reused is not None:
        raise _broken(reused, change.request_id)
    return change


class _Requests:
    """The request ids a book has seen, as a container."""

    __slots__ = ("_book",)

    def __init__(self, book: _Book) -> None:
        self._book = book

    def __contains__(self, request_id: object) -> bool:
        return isinstance(request_id, str) and self._book.requested(request_id)


def _update(book: _Book, entry: Entry, change: UpdateChange) -> None:
    """A change in place: the prompt, paused or not, the target (a recurring
    series keeps its later occurrences: see ``continuation_rule``), or a new
    record (rescheduled: its series starts afresh at its own target)."""
    record, target = entry.record, entry.target
    continuation = book.lattice(record.id)
    if not isinstance(change.schedule, UnsetType):
        rescheduled = reschedule_rule(
            record.id,
            change.schedule,
            prompt=not isinstance(change.prompt, UnsetType),
            scheduled_at=not isinstance(change.scheduled_at, UnsetType),
        )
        if isinstance(rescheduled, Breach):
            raise _broken(rescheduled, kind=change.schedule.kind)
        record, target, continuation = change.schedule, rescheduled, None
    if not isinstance(change.prompt, UnsetType):
        breach = prompt_breach(change.prompt)
        if breach is not None:
            raise _broken(breach, kind="update")
        record = msgspec.structs.replace(record, prompt=change.prompt)
    if not isinstance(change.scheduled_at, UnsetType):
        moved = instant_rule(change.scheduled_at)
        if isinstance(moved, Breach):
            raise _broken(moved)
        following = continuation_rule(record, entry.target, continuation, moved)
        if isinstance(following, Breach):  # a record built by hand that no create vouched for
            raise _broken(following)
        continuation = following
        record = msgspec.structs.replace(record, scheduled_at=change.scheduled_at)
        target = moved
    paused = book.is_paused(record.id)
    if not isinstance(change.paused, UnsetType):
        read = paused_rule(change.paused)
        if isinstance(read, Breach):
            raise _broken(read)
        paused = read
    end = _changed_end(book.end(record.id), change, record, target)
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
        if isinstance(count, Breach):
            raise _broken(count)
        remaining = count
    if not sent and not isinstance(record, RECURRING):
        return None  # rescheduled to a one-shot: it has no series to end
    breach = end_rule(record, target, until, remaining)
    if breach is not None:
        raise _broken(breach)
    return None if until is None and remaining is None else SeriesEnd(until, remaining)


def _dispatch(book: _Book, entry: Entry, accepted_at: str | None) -> None:
    """A one-shot finishes; a recurring record moves to its series' next
    point after ``accepted_at`` (latest-only catch-up), or ends past year
    9999."""
    record = entry.record
    form = dispatch_form_breach(record, accepted_at is not None)
    if form is not None:
        raise _broken(form)
    if accepted_at is None or not isinstance(record, RECURRING):
        book.remove(entry)
        return
    accepted_ms = instant_rule(accepted_at)
    if isinstance(accepted_ms, Breach):
        raise _broken(accepted_ms)
    bounded = bounded_step(
        record, entry.target, book.lattice(record.id), book.end(record.id), accepted_ms
    )
    if isinstance(bounded, Breach):
        raise _broken(bounded, kind=record.kind)
    step, end = bounded
    if step.next is None:  # its last occurrence (or past year 9999): the series ends
        book.remove(entry)
    else:
        moved = msgspec.structs.replace(record, scheduled_at=format_instant(step.next))
        book.replace(entry, Entry(entry.order, moved, step.next), end)


class _PersistentBook:
    """Applies rules to a ``State``, producing the next one."""

    __slots__ = ("state",)

    def __init__(self, state: State) -> None:
        self.state = state

    def get(self, schedule_id: str) -> Entry | None:
        return self.state.entries.get(schedule_id)

    def __contains__(self, schedule_id: object) -> bool:
        return schedule_id in self.state.seen_ids

    def is_paused(self, schedule_id: str) -> bool:
        return schedule_id in self.state.paused

    def requested(self, request_id: str) -> bool:
        return request_id in self.state.requests

    def lattice(self, schedule_id: str) -> int | None:
        return self.state.lattices.get(schedule_id)

    def end(self, schedule_id: str) -> SeriesEnd | None:
        return self.state.ends.get(schedule_id)

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

    def replace(self, old: Entry, moved: Entry, end: SeriesEnd | None) -> None:
        """A dispatch's move: onto the lattice, with the end that is left."""
        self.update(old, moved, self.is_paused(old.record.id), None, end)

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

    def lattice(self, schedule_id: str) -> int | None:
        return self.lattices.get(schedule_id)

    def end(self, schedule_id: str) -> SeriesEnd | None:
        return self.ends.get(schedule_id)

    def _set_end(self, schedule_id: str, end: SeriesEnd | None) -> None:
        if end is None:
            self.ends.pop(schedule_id, None)
        else:
            self.ends[schedule_id] = end

    def requested(self, request_id: str) -> bool:
        return request_id in self.requests

    def is_paused(self, schedule_id: str) -> bool:
        return schedule_id in self.paused

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

    def get(self, schedule_id: str) -> Entry | None:
        return self.entries.get(schedule_id)

    def __contains__(self, schedule_id: object) -> bool:
        return schedule_id in self.seen_ids

    def create(
        self, new: Entry, request: CreateChangeV2 | None = None, end: SeriesEnd | None = None
    ) -> None:
        self._set_end(new.record.id, end)
        if request is not None and request.request_id is not None:
            self.requests[request.request_id] = request
        self.entries[new.record.id] = new
        self.seen_ids.add(new.record.id)
        self.created += 1

    def remove(self, entry: Entry) -> None:
        del self.entries[entry.record.id]
        self.paused.discard(entry.record.id)
        self.lattices.pop(entry.record.id, None)
        self.ends.pop(entry.record.id, None)

    def replace(self, old: Entry, moved: Entry, end: SeriesEnd | None) -> None:
        """A dispatch's move: onto the lattice, with the end that is left."""
        self.entries[moved.record.id] = moved
        self.lattices.pop(moved.record.id, None)
        self._set_end(moved.record.id, end)

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


def fold(events: Iterable[SessionEvent], seed_length: int = 0) -> State:
    """Strict replay of the ``schedule/change`` events after ``seed_length``.

    Other event types are skipped. Raises :class:`CorruptScheduleLog` with the
    reference's reason and the offending event's index.
    """
    seed = _seed_length(seed_length)
    log = events if isinstance(events, Sequence) else list(events)
    if len(log) < seed:
        raise CorruptScheduleLog(Reason.SEED_OUT_OF_LOG)
    owned = [event.data for event in islice(log, seed, None) if event.type == SCHEDULE_CHANGE]
    book = _FoldBook()
    try:
        for start in range(0, len(owned), _CHUNK):
            _apply_chunk(book, owned, start)
    except _Rejected as rejected:
        raise rejected.error.at(_log_index(log, seed, rejected.position)) from None
    return book.freeze()


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


def _apply_chunk(  # noqa: C901, PLR0912, PLR0915 - the hot loop, a branch per usual change
    book: _FoldBook, owned: list[msgspec.Raw], start: int
) -> None:
    """Decode a chunk in one call and replay it on the fast path: the usual
    change (a valid create of a new id, a delete or dispatch of an active
    one) is judged by the same rules as :func:`_apply` but applied to plain
    dicts, with no exception raised. Any other change goes through the exact
    decoder and :func:`_apply`, for its exact outcome or reason. The
    property tests hold both paths to the same result.

    A fixed-rate record moved here keeps its old ``scheduledAt`` text (only
    its target moves); ``freeze`` writes the text once, for the survivors.
    """
    chunk = owned[start : start + _CHUNK]
    decoded = decode_many(chunk)
    if decoded is None:
        for position, data in enumerate(chunk, start):
            _apply_exactly(book, position, data)
        return
    entries, seen, paused, lattices = book.entries, book.seen_ids, book.paused, book.lattices
    ends = book.ends
    new_entry = _new_entry
    accepted_text, accepted_ms = "", 0
    for position, change in enumerate(decoded, start):
        if type(change) is DispatchChange:
            # An active id's text was judged at its create.
            active = entries.get(change.id)
            accepted = change.accepted_at
            if (
                active is not None
                and type(active.record) is not CalendarSchedule  # the exact path's
                and (not paused or change.id not in paused)
                and (not lattices or change.id not in lattices)  # a snoozed one: exact path
                and (not ends or change.id not in ends)  # a series that ends: exact path
                and dispatch_form_breach(active.record, accepted is not UNSET) is None
            ):
                if accepted is UNSET:
                    del entries[change.id]  # a one-shot finishes
                    continue
                assert isinstance(accepted, str)
                if accepted != accepted_text:  # a batch's dispatches share one acceptedAt
                    read = instant_rule(accepted)
                    if isinstance(read, Breach):
                        _apply_exactly(book, position, chunk[position - start])
                        continue
                    accepted_text, accepted_ms = accepted, read
                record = active.record
                assert isinstance(record, EverySchedule)
                # The interval and acceptedAt were judged valid already.
                step = occurrence_rule(active.target, record.every_seconds * 1000, accepted_ms)
                if not isinstance(step, Breach):
                    following = step[1]
                    if following is None:  # the series ends
                        del entries[change.id]
                    else:
                        entries[change.id] = new_entry(Entry, (active.order, record, following))
                    continue
        elif type(change) is CreateChange:
            # Every field rule must hold (their order only picks the reason,
            # and a breach goes to the exact path for it); the id allocated
            # next is a valid one that was never seen (``SeenBuilder``).
            record = change.schedule
            if type(record) is AfterSchedule:
                interval = after_seconds_rule(record.after_seconds)
            elif type(record) is EverySchedule:
                interval = every_seconds_rule(record.every_seconds)
            else:
                interval = 0
            schedule_id = record.id
            if (
                type(interval) is int
                and is_stored_text(record.prompt)
                and (
                    schedule_id == seen.next_id
                    or (id_breach(schedule_id) is None and reuse_breach(seen, schedule_id) is None)
                )
            ):
                target = instant_rule(record.scheduled_at)
                if type(target) is int:
                    entries[schedule_id] = new_entry(Entry, (book.created, record, target))
                    seen.add(schedule_id)
                    book.created += 1
                    continue
        elif type(change) is DeleteChange and entries.pop(change.id, None) is not None:
            if paused:
                paused.discard(change.id)
            if lattices:
                lattices.pop(change.id, None)
            if ends:
                ends.pop(change.id, None)
            continue  # a delete of an active id
        _apply_exactly(book, position, chunk[position - start])


# Builds an Entry without the Python-level NamedTuple constructor (hot path).
_new_entry: Final = tuple.__new__


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
