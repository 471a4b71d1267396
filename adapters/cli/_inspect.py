"""``tickler inspect``: what a session file holds, for people."""

from __future__ import annotations

from dataclasses import dataclass, field
from zoneinfo import ZoneInfo

import msgspec

from tickler.adapters._times import zone_text
from tickler.core import (
    AfterSchedule,
    EverySchedule,
    ParsedSession,
    ScheduleRecord,
    Standing,
    fold,
    format_instant,
    next_target,
    parse_instant,
    reminder_standing,
)
from tickler.shell import (
    DELIVERED,
    FOLLOWUP,
    TURN,
    TURN_INPUT,
    Pending,
    PendingDelivery,
    PendingTurn,
    TurnInput,
    TurnRecord,
    decode_delivered,
    decode_followup,
    pending_work,
)


@dataclass
class Delivered:
    key: str
    occurrences: list[dict[str, str]]
    appended_at: str
    delivered: bool = False
    turn_input: int | None = None
    turn_done: bool = False


@dataclass
class Report:
    session: str
    events: int
    seed_length: int
    now: str
    zone: str
    active: list[dict[str, object]] = field(default_factory=list)
    next_wake: str | None = None
    history: list[Delivered] = field(default_factory=list)
    pending: Pending = field(default_factory=lambda: pending_work([]))

    def as_json(self) -> dict[str, object]:
        return {
            "session": self.session,
            "events": self.events,
            "seedLength": self.seed_length,
            "now": self.now,
            "zone": self.zone,
            "active": self.active,
            "nextWake": self.next_wake,
            "deliveries": [msgspec.structs.asdict(_Out(**d.__dict__)) for d in self.history],
            "pending": pending_json(self.pending),
        }


def pending_json(pending: Pending) -> dict[str, object]:
    return {
        "stuck": pending.stuck,
        "deliveries": [_delivery_json(d) for d in pending.deliveries],
        "turns": [_turn_json(t) for t in pending.turns],
        "abandoned": [_turn_json(t) for t in pending.abandoned],
    }


def _delivery_json(row: PendingDelivery) -> dict[str, object]:
    queued = None if row.queued_at is None else format_instant(row.queued_at)
    return {
        "key": row.key,
        "ids": list(row.ids),
        "queuedAt": queued,
        "failures": row.failures,
        "lastError": row.last_error,
    }


def _turn_json(row: PendingTurn) -> dict[str, object]:
    return {
        "input": row.input,
        "source": row.source,
        "key": row.key,
        "starts": row.starts,
        "failures": row.failures,
        "cuts": row.cuts,
        "lastError": row.last_error,
    }


class _Out(msgspec.Struct, rename="camel"):
    key: str
    occurrences: list[dict[str, str]]
    appended_at: str
    delivered: bool
    turn_input: int | None
    turn_done: bool


def _row(
    record: ScheduleRecord, standing: Standing, zone: ZoneInfo, own: ZoneInfo | None = None
) -> dict[str, object]:
    """One active reminder: its target in UTC, in the viewer's ``zone`` and,
    for a reminder that carries a zone of its own (``own``), in that one;
    its state, next due (none while paused) and how long overdue, as the
    core's :func:`~tickler.core.reminder_standing` says. A v1 record keeps
    only the UTC instant (an ``at`` given as local time keeps no zone), so
    v1 rows have no ``zone``/``zoneLocal``."""
    row: dict[str, object] = {"id": record.id, "kind": record.kind, "prompt": record.prompt}
    if isinstance(record, AfterSchedule):
        row["afterSeconds"] = record.after_seconds
    if isinstance(record, EverySchedule):
        row["everySeconds"] = record.every_seconds
    row["scheduledAt"] = record.scheduled_at
    target = parse_instant(record.scheduled_at)
    row["local"] = zone_text(target, zone)
    if own is not None:
        row["zone"] = own.key
        row["zoneLocal"] = zone_text(target, own)
    row["state"] = str(standing.state)
    row["nextDue"] = None if standing.next_due is None else format_instant(standing.next_due)
    row["overdueMs"] = standing.overdue_ms
    return row


def outbox_of(pending: Pending) -> dict[str, int]:
    """Each reminder with a follow-up waiting in the outbox: the failed
    hand-overs of the first one (what the core's state is told)."""
    waiting: dict[str, int] = {}
    for delivery in pending.deliveries:
        for schedule_id in delivery.ids:
            waiting.setdefault(schedule_id, delivery.failures)
    return waiting


def inspect_session(parsed: ParsedSession, now_ms: int, zone: ZoneInfo) -> Report:
    """Raises CorruptScheduleLog for a corrupt schedule log, or for a
    malformed runtime or host record (its ``index`` is the event's seq)."""
    owned = parsed.events[parsed.header.owned_from :]
    pending = pending_work(owned)  # first: it vets every record read below
    state = fold(parsed.events, parsed.header.owned_from)
    report = Report(
        parsed.header.id,
        len(parsed.events),
        parsed.header.owned_from,
        format_instant(now_ms),
        zone.key,
        pending=pending,
    )
    waiting = outbox_of(pending)

    def standing(schedule_id: str) -> Standing:
        failures = waiting.get(schedule_id)
        return reminder_standing(
            state, schedule_id, now_ms, waiting=failures is not None, failures=failures or 0
        )

    report.active = [_row(r, standing(r.id), zone) for r in state.active]
    # The core's next wake: a paused reminder has none.
    wake = next_target(state)
    report.next_wake = None if wake is None else format_instant(wake)
    by_key: dict[str, Delivered] = {}
    for event in owned:
        if event.type == FOLLOWUP:
            message = decode_followup(event.data)
            occurrences = [
                {"id": o.id, "occurrenceAt": o.occurrence_at, "prompt": o.prompt}
                for o in message.occurrences
            ]
            item = Delivered(message.key, occurrences, format_instant(event.time))
            by_key[message.key] = item
            report.history.append(item)
        elif event.type == DELIVERED and (found := by_key.get(decode_delivered(event.data))):
            found.delivered = True
        elif event.type == TURN_INPUT:
            turn = msgspec.json.decode(event.data, type=TurnInput)
            if turn.key is not None and (found := by_key.get(turn.key)):
                found.turn_input = turn.n
                found.delivered = True
        elif event.type == TURN:
            done = msgspec.json.decode(event.data, type=TurnRecord).input
            for item in report.history:
                if item.turn_input == done:
                    item.turn_done = True
    return report
