"""What the read model shows: one row per reminder, one per delivery, and
how a session's stored rows become them.

Read-only and store-neutral: a store reader hands over a session's header,
its snapshot (if any), the events after it and its latest delivery records
(:class:`SessionRows`); :func:`summarize` folds them with the same code the
runtime loads a session with (``load_session``), so the two never disagree.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Final

import msgspec

from tickler.core import (
    SCHEDULE_CHANGE,
    CalendarSchedule,
    CreateChange,
    CreateChangeV2,
    ReminderState,
    ScheduleRecord,
    SessionEvent,
    SessionHeader,
    decode_change,
    parse_instant,
    standing_rule,
)
from tickler.shell import (
    DELIVERED,
    FOLLOWUP,
    FOLLOWUP_FAILED,
    TURN_INPUT,
    FailureCount,
    FollowUp,
    Loaded,
    NewEvent,
    Snapshot,
    StoreError,
    TurnInput,
    decode_delivered,
    decode_followup,
    decode_followup_failed,
    load_session,
)

HISTORY_TYPES: Final = (FOLLOWUP, DELIVERED, FOLLOWUP_FAILED, TURN_INPUT)
"""The records a session's delivery history is read from."""
ONE_SHOT: Final = "once"
"""The kind shown for a one-shot (``after`` or ``at``) already dispatched and
still waiting in the outbox when its creation is not among the events read:
the state no longer holds its record, and so not its kind."""
_TURN_INPUT: Final = msgspec.json.Decoder(TurnInput)


@dataclass(frozen=True, slots=True)
class ReminderView:
    """One reminder of one session, as an operator sees it at a query's
    ``now``: its state is the core's (:func:`tickler.core.standing_rule`)."""

    session_id: str
    id: str
    kind: str  # the core's kind: "after", "at", "every", "calendar" (or "once", see ONE_SHOT)
    prompt: str
    # Its next occurrence; None while paused (a paused reminder is due never);
    # for a one-shot dispatched whose follow-up still waits, that occurrence.
    next_due_ms: int | None
    time_zone: str | None  # a calendar rule's zone; v1 records keep none
    paused: bool
    state: ReminderState  # scheduled, due, paused, delivering or failing (ended: not listed)
    overdue_ms: int | None  # how long its next occurrence is past due, not yet dispatched
    outbox: str  # "idle" | "pending" | "failing"
    failures: int  # failed hand-overs in a row of its pending follow-up
    last_delivery_ms: int | None
    last_lateness_ms: int | None


@dataclass(frozen=True, slots=True)
class ReminderFacts:
    """One reminder as a session's rows tell it, at no instant in
    particular (a summary is kept between queries): :meth:`at` is its
    :class:`ReminderView` at a query's ``now``."""

    session_id: str
    id: str
    kind: str
    prompt: str
    target: int | None  # its next occurrence while it is active, paused or not
    next_due_ms: int | None  # as ReminderView's
    time_zone: str | None
    paused: bool
    outbox: str
    failures: int
    last_delivery_ms: int | None
    last_lateness_ms: int | None

    def at(self, now_ms: int) -> ReminderView:
        standing = standing_rule(
            self.target,
            now_ms,
            paused=self.paused,
            waiting=self.outbox != "idle",
            failures=self.failures,
        )
        return ReminderView(
            session_id=self.session_id,
            id=self.id,
            kind=self.kind,
            prompt=self.prompt,
            next_due_ms=self.next_due_ms,
            time_zone=self.time_zone,
            paused=self.paused,
            state=standing.state,
            overdue_ms=standing.overdue_ms,
            outbox=self.outbox,
            failures=self.failures,
            last_delivery_ms=self.last_delivery_ms,
            last_lateness_ms=self.last_lateness_ms,
        )


@dataclass(frozen=True, slots=True)
class DeliveryView:
    """One follow-up of one session: delivered, or still in the outbox."""

    session_id: str
    occurrence_key: str
    reminder_ids: tuple[str, ...]
    due_ms: int
    delivered_ms: int | None
    lateness_ms: int | None
    status: str  # "delivered" | "pending" | "failing"
    failures: int


@dataclass(frozen=True, slots=True)
class SessionRows:
    """What a store reader found for one session. ``events`` run from the
    snapshot's ``through`` (or from the start) to the end, in order;
    ``history`` holds its latest :data:`HISTORY_TYPES` records, in order
    (all of them, or the latest a store reads); ``failures`` is the store's
    failure index for the outbox's first follow-up (0 where none is kept)."""

    header: SessionHeader
    snapshot: Snapshot | None
    events: Sequence[SessionEvent]
    history: Sequence[SessionEvent]
    failures: int = 0


@dataclass(frozen=True, slots=True)
class Summary:
    reminders: list[ReminderFacts]
    deliveries: list[DeliveryView]


class _ReadLog:
    """A session log that only reads (``load_session`` needs no more)."""

    def __init__(self, rows: SessionRows) -> None:
        self._rows = rows
        start = rows.snapshot.through if rows.snapshot is not None else 0
        self._length = rows.events[-1].seq + 1 if rows.events else start

    @property
    def header(self) -> SessionHeader:
        return self._rows.header

    @property
    def length(self) -> int:
        return self._length

    def events(self, start: int = 0) -> Iterator[SessionEvent]:
        return (e for e in self._rows.events if e.seq >= start)

    def append(self, batch: Sequence[NewEvent]) -> tuple[SessionEvent, ...]:
        raise StoreError("the read model never writes")

    async def flush(self) -> None:
        raise StoreError("the read model never writes")

    def load_snapshot(self) -> Snapshot | None:
        return self._rows.snapshot

    async def save_snapshot(self, snapshot: Snapshot) -> None:
        raise StoreError("the read model never writes")

    async def close(self) -> None:
        return None


@dataclass
class _Sent:
    """A follow-up as the history tells it."""

    key: str
    ids: tuple[str, ...]
    due_ms: int
    delivered_ms: int | None = None
    failures: FailureCount = field(default_factory=FailureCount)


def _from_key(key: str) -> tuple[str, int]:
    """A follow-up key is ``<first id>@<its occurrence instant>``."""
    first, _, at = key.rpartition("@")
    return first, parse_instant(at)


def _sent_of(message: FollowUp) -> _Sent:
    first = message.occurrences[0]
    ids = tuple(o.id for o in message.occurrences)
    return _Sent(message.key, ids, parse_instant(first.occurrence_at))


def _history(history: Sequence[SessionEvent]) -> dict[str, _Sent]:
    """The follow-ups the history records, by key, in order."""
    sent: dict[str, _Sent] = {}
    for event in history:
        if event.type == FOLLOWUP:
            message = decode_followup(event.data)
            sent[message.key] = _sent_of(message)
            continue
        if event.type == DELIVERED:
            key: str | None = decode_delivered(event.data)
        elif event.type == TURN_INPUT:
            key = _TURN_INPUT.decode(event.data).key  # the reference host took it
        elif event.type == FOLLOWUP_FAILED:
            failed = decode_followup_failed(event.data)
            if (found := sent.get(failed.key)) is not None:
                found.failures = found.failures.recorded(failed.attempt, failed.error)
            continue
        else:
            continue
        if key is None:
            continue
        found = sent.get(key)
        if found is None:  # its follow-up record lies before the history read
            first, due = _from_key(key)
            found = sent[key] = _Sent(key, (first,), due)
        found.delivered_ms = event.time
    return sent


def _kinds(events: Sequence[SessionEvent]) -> dict[str, str]:
    """The kinds of the reminders created among ``events``."""
    kinds: dict[str, str] = {}
    for event in events:
        if event.type == SCHEDULE_CHANGE:
            change = decode_change(event.data)
            if isinstance(change, CreateChange | CreateChangeV2):
                kinds[change.schedule.id] = change.schedule.kind
    return kinds


def summarize(rows: SessionRows) -> Summary:
    """The session's reminders and deliveries. Raises what a corrupt session
    raises when the runtime loads it (``CorruptScheduleLog``), or
    ``msgspec``/``ValueError`` for a malformed record."""
    session_id = rows.header.id
    loaded: Loaded = load_session(_ReadLog(rows), rows.snapshot)
    sent = _history(rows.history)
    outbox = {k: m for k, m in loaded.outbox.items() if not _taken(sent.get(k))}
    failures: dict[str, int] = {}
    for position, key in enumerate(outbox):
        count = loaded.failures.get(key, FailureCount())
        if (recorded := sent.get(key)) is not None:
            count = count.at_least(recorded.failures.total)
        if position == 0:  # the store's failure index counts the head's
            count = count.at_least(rows.failures)
        failures[key] = count.total
    deliveries = _deliveries(session_id, sent, outbox, failures)
    reminders = _reminders(
        session_id,
        loaded,
        outbox=outbox,
        failures=failures,
        deliveries=deliveries,
        events=rows.events,
    )
    return Summary(reminders, deliveries)


def _taken(found: _Sent | None) -> bool:
    return found is not None and found.delivered_ms is not None


def _deliveries(
    session_id: str, sent: dict[str, _Sent], outbox: dict[str, FollowUp], failures: dict[str, int]
) -> list[DeliveryView]:
    rows: list[DeliveryView] = []
    for key, found in sent.items():
        if found.delivered_ms is not None:
            late = max(0, found.delivered_ms - found.due_ms)
            rows.append(
                DeliveryView(
                    session_id,
                    key,
                    found.ids,
                    found.due_ms,
                    found.delivered_ms,
                    late,
                    "delivered",
                    found.failures.total,
                )
            )
    for key, message in outbox.items():
        waiting = _sent_of(message)
        count = failures.get(key, 0)
        status = "failing" if count else "pending"
        rows.append(
            DeliveryView(session_id, key, waiting.ids, waiting.due_ms, None, None, status, count)
        )
    return rows


def _waiting(outbox: dict[str, FollowUp], failures: dict[str, int]) -> dict[str, _Waiting]:
    """Each reminder with a follow-up in the outbox: its first one's state."""
    waiting: dict[str, _Waiting] = {}
    for key, message in outbox.items():
        count = failures.get(key, 0)
        for occurrence in message.occurrences:
            if occurrence.id not in waiting:
                due = parse_instant(occurrence.occurrence_at)
                waiting[occurrence.id] = _Waiting("failing" if count else "pending", count, due)
    return waiting


def _last_delivered(deliveries: list[DeliveryView]) -> dict[str, DeliveryView]:
    """Each reminder's latest delivered follow-up."""
    last: dict[str, DeliveryView] = {}
    for row in deliveries:
        if row.delivered_ms is None:
            continue
        for reminder_id in row.reminder_ids:
            known = last.get(reminder_id)
            if known is None or (known.delivered_ms or 0) <= row.delivered_ms:
                last[reminder_id] = row
    return last


@dataclass(frozen=True, slots=True)
class _Waiting:
    state: str
    failures: int
    due: int


_IDLE: Final = _Waiting("idle", 0, 0)


def _reminders(
    session_id: str,
    loaded: Loaded,
    *,
    outbox: dict[str, FollowUp],
    failures: dict[str, int],
    deliveries: list[DeliveryView],
    events: Sequence[SessionEvent],
) -> list[ReminderFacts]:
    waiting = _waiting(outbox, failures)
    last = _last_delivered(deliveries)

    def facts(
        reminder_id: str,
        kind: str,
        prompt: str,
        due: int,
        state: _Waiting,
        *,
        record: ScheduleRecord | None = None,
    ) -> ReminderFacts:
        delivered = last.get(reminder_id)
        paused = loaded.state.is_paused(reminder_id)
        return ReminderFacts(
            session_id=session_id,
            id=reminder_id,
            kind=kind,
            prompt=prompt,
            target=None if record is None else due,
            next_due_ms=None if paused else due,
            # A calendar rule keeps its zone; v1 records keep only an instant.
            time_zone=record.time_zone if isinstance(record, CalendarSchedule) else None,
            paused=paused,
            outbox=state.state,
            failures=state.failures,
            last_delivery_ms=None if delivered is None else delivered.delivered_ms,
            last_lateness_ms=None if delivered is None else delivered.lateness_ms,
        )

    rows: list[ReminderFacts] = []
    for record in loaded.state.active:
        due = parse_instant(record.scheduled_at)
        state = waiting.get(record.id, _IDLE)
        rows.append(facts(record.id, record.kind, record.prompt, due, state, record=record))
    # One-shots dispatched whose follow-up the host has not taken yet.
    shown = {record.id for record in loaded.state.active}
    kinds: dict[str, str] | None = None
    for message in outbox.values():
        for occurrence in message.occurrences:
            if occurrence.id in shown:
                continue
            shown.add(occurrence.id)
            kinds = _kinds(events) if kinds is None else kinds
            state = waiting[occurrence.id]
            kind = kinds.get(occurrence.id, ONE_SHOT)
            rows.append(facts(occurrence.id, kind, occurrence.prompt, state.due, state))
    return rows
