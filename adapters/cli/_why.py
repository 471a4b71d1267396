"""``tickler inspect --why ID``: one reminder's story, told from the log.

Created (with its rule), each occurrence that fell due (how late it was
queued, how many earlier ones catch-up folded into it), each hand-over
(delivered when, how late; refused, with the error), each change in place
(prompt, paused, resumed, snoozed, moved to a new selector), deleted or finished, and where it
stands now. The log is replayed with the core's own fold, so
the story cannot disagree with what the runtime did.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import msgspec

from tickler.core import (
    EMPTY_STATE,
    SCHEDULE_CHANGE,
    AfterSchedule,
    AtSchedule,
    Breach,
    CalendarSchedule,
    CreateChange,
    CreateChangeV2,
    DeleteChange,
    DeleteChangeV2,
    DispatchChange,
    EverySchedule,
    ParsedSession,
    ReminderState,
    ScheduleChange,
    ScheduleRecord,
    SessionEvent,
    Standing,
    State,
    UpdateChange,
    decode_change,
    evolve,
    fold,
    format_instant,
    parse_instant,
    reminder_standing,
    series_step,
)
from tickler.shell import (
    DELIVERED,
    FOLLOWUP,
    FOLLOWUP_FAILED,
    TURN,
    TURN_INPUT,
    TurnInput,
    TurnRecord,
    decode_delivered,
    decode_followup,
    decode_followup_failed,
)


class Step(msgspec.Struct, frozen=True, omit_defaults=True, rename="camel"):
    """One thing that happened to the reminder: ``at`` is the log time of
    the event that says so; ``event`` a fixed word; ``text`` a sentence."""

    at: str
    event: str
    text: str
    occurrence_at: str | None = None
    late_ms: int | None = None
    skipped: int | None = None
    by: str | None = None  # the operator who made the change, when one did


@dataclass
class Story:
    """``state`` is the core's word for where the reminder stands now (as
    every view shows it), ``status`` that in a sentence."""

    session: str
    id: str
    now: str
    steps: list[Step] = field(default_factory=list)
    status: str = ""
    found: bool = False
    state: str = ""
    next_due: str | None = None
    overdue_ms: int | None = None

    def as_json(self) -> dict[str, object]:
        return {
            "session": self.session,
            "id": self.id,
            "now": self.now,
            "found": self.found,
            "steps": [msgspec.to_builtins(step) for step in self.steps],
            "state": self.state,
            "nextDue": self.next_due,
            "overdueMs": self.overdue_ms,
            "status": self.status,
        }


def duration_text(ms: int) -> str:
    """``0.250 s``, ``42 s``, ``3 min 20 s``, ``2 h 5 min``, ``3 d 4 h``."""
    if ms < 10_000:
        return f"{ms / 1000:.3f} s"
    seconds = ms // 1000
    minutes, second = divmod(seconds, 60)
    hours, minute = divmod(minutes, 60)
    days, hour = divmod(hours, 24)
    if days:
        return f"{days} d {hour} h"
    if hours:
        return f"{hours} h {minute} min"
    if minutes:
        return f"{minutes} min {second} s"
    return f"{seconds} s"


def rule_text(record: ScheduleRecord) -> str:
    """The reminder's rule, as it was created."""
    if isinstance(record, AfterSchedule):
        return f"one-shot, {record.after_seconds} s after creation"
    if isinstance(record, AtSchedule):
        return "one-shot at a fixed instant"
    if isinstance(record, EverySchedule):
        return f"fixed-rate, every {record.every_seconds} s"
    return (
        f"calendar {record.cron!r} in {record.time_zone} "
        f"(dst_gap {record.dst_gap}, dst_overlap {record.dst_overlap})"
    )


def _skipped(before: ScheduleRecord, lattice: int | None, occurrence_ms: int) -> int:
    """Occurrences due before ``occurrence_ms`` that catch-up folded into it
    (``lattice``: where a snoozed series continues, as the core keeps it):
    the core's own step, as if accepted at the occurrence."""
    if not isinstance(before, EverySchedule | CalendarSchedule):
        return 0
    step = series_step(before, parse_instant(before.scheduled_at), lattice, occurrence_ms)
    return 0 if isinstance(step, Breach) else step.skipped


def _end_text(change: ScheduleChange) -> str:
    """A create's series end, as the story says it."""
    if not isinstance(change, CreateChangeV2):
        return ""
    text = "" if change.until is None else f"; ends after {change.until}"
    if change.count is None:
        return text
    return f"{text}; at most {change.count} occurrence{'' if change.count == 1 else 's'}"


class _Teller:
    """Walks the owned events once, keeping the schedule state with the
    core's ``evolve``, and notes each event that concerns ``schedule_id``."""

    def __init__(self, story: Story) -> None:
        self.story = story
        self.id = story.id
        self.state: State = EMPTY_STATE
        # The record as the last dispatch found it, and its lattice point apart.
        self.before: tuple[ScheduleRecord, int | None] | None = None
        self.keys: dict[str, int] = {}  # follow-up key -> the occurrence (ms) it holds for us
        self.failures: dict[str, int] = {}  # follow-up key -> its failed hand-overs recorded
        self.turns: dict[int, str] = {}  # turn input number -> follow-up key
        self.done = "never created"

    def add(self, event: SessionEvent, text: str, kind: str, **extra: object) -> None:
        self.story.steps.append(Step(format_instant(event.time), kind, text, **extra))  # type: ignore[arg-type]

    def change(self, event: SessionEvent, change: ScheduleChange) -> None:
        before = self.state.get(self.id)
        lattice = self.state.lattice(self.id)
        self.state = evolve(self.state, change)
        match change:
            case CreateChange(schedule=record) | CreateChangeV2(schedule=record) if (
                record.id == self.id
            ):
                self.story.found = True
                self.done = ""
                self.add(
                    event,
                    f"{rule_text(record)}; first due {record.scheduled_at}{_end_text(change)}",
                    "created",
                )
            case DeleteChange(id=self.id):
                self.done = f"deleted at {format_instant(event.time)}"
                self.add(event, "by schedule_delete", "deleted")
            case DeleteChangeV2(id=self.id, by=by):
                self.done = f"cancelled by operator {by} at {format_instant(event.time)}"
                self.add(event, f"cancelled by operator {by}", "deleted", by=by)
            case UpdateChange(id=self.id):
                self.updated(event, change, before)
            case DispatchChange(id=self.id):
                self.before = None if before is None else (before, lattice)
                if self.state.get(self.id) is None and not self.done:
                    self.done = "its last occurrence was dispatched"

    def updated(
        self, event: SessionEvent, change: UpdateChange, before: ScheduleRecord | None
    ) -> None:
        """A change in place: one step per thing that changed (and who made
        it, when an operator did)."""
        by = change.by if isinstance(change.by, str) else None
        extra: dict[str, object] = {} if by is None else {"by": by}
        who = "" if by is None else f" (by operator {by})"
        if not isinstance(change.schedule, msgspec.UnsetType) and before is not None:
            new = change.schedule
            text = (
                f"moved from {rule_text(before)} (next due {before.scheduled_at}) "
                f"to {rule_text(new)} (next due {new.scheduled_at}) "
                f"at {format_instant(event.time)}{who}"
            )
            if new.prompt != before.prompt:
                text += f"; prompt changed to {new.prompt!r}"
            self.add(event, text, "moved", **extra)
        if isinstance(change.prompt, str):
            self.add(event, f"prompt changed to {change.prompt!r}{who}", "updated", **extra)
        if not isinstance(change.until, msgspec.UnsetType):
            until = "removed" if change.until is None else f"set to {change.until}"
            self.add(event, f"end changed: until {until}{who}", "end", **extra)
        if not isinstance(change.count, msgspec.UnsetType):
            count = "removed" if change.count is None else f"{change.count} from now on"
            self.add(event, f"end changed: occurrences {count}{who}", "end", **extra)
        moved = change.scheduled_at if isinstance(change.scheduled_at, str) else None
        if change.paused is True:
            text = f"paused{who}: it delivers nothing until it is resumed"
            self.add(event, text, "paused", **extra)
        elif change.paused is False:
            after = f"; next due {moved}" if moved else ""
            text = f"resumed{who} (what fell due while paused is not replayed){after}"
            self.add(event, text, "resumed", **extra)
        elif moved and parse_instant(moved) <= event.time:
            text = f"made due now{who}, to be delivered at once: next due {moved}"
            self.add(event, text, "due_now", **extra)
        elif moved:
            self.add(event, f"snoozed{who}: next due {moved}", "snoozed", **extra)

    def followup(self, event: SessionEvent) -> None:
        message = decode_followup(event.data)
        for occurrence in message.occurrences:
            if occurrence.id != self.id:
                continue
            due = parse_instant(occurrence.occurrence_at)
            self.keys[message.key] = due
            record = self.state.get(self.id)
            before = self.before or (
                None if record is None else (record, self.state.lattice(self.id))
            )
            skipped = 0 if before is None else _skipped(*before, due)
            text = f"occurrence {occurrence.occurrence_at}; queued for delivery "
            text += f"{duration_text(max(0, event.time - due))} after it fell due"
            if skipped:
                noun = "occurrence" if skipped == 1 else "occurrences"
                text += f"; {skipped} earlier {noun} skipped by catch-up (one delivery for all)"
            self.add(
                event,
                text,
                "due",
                occurrence_at=occurrence.occurrence_at,
                late_ms=event.time - due,
                skipped=skipped,
            )
            self.before = None

    def delivered(self, event: SessionEvent, key: str, how: str) -> None:
        due = self.keys.pop(key, None)
        if due is None:
            return
        late = event.time - due
        occurrence = format_instant(due)
        self.add(
            event,
            f"{how}, {duration_text(max(0, late))} after it fell due",
            "delivered",
            occurrence_at=occurrence,
            late_ms=late,
        )

    def failed(self, event: SessionEvent) -> None:
        record = decode_followup_failed(event.data)
        if record.key in self.keys:
            self.failures[record.key] = record.attempt
            self.add(
                event,
                f"refused (failure {record.attempt}): {record.error}; retried",
                "handover_failed",
                occurrence_at=format_instant(self.keys[record.key]),
            )

    def tell(self, events: tuple[SessionEvent, ...]) -> None:
        for event in events:
            if event.type == SCHEDULE_CHANGE:
                self.change(event, decode_change(event.data))
            elif event.type == FOLLOWUP:
                self.followup(event)
            elif event.type == DELIVERED:
                self.delivered(event, decode_delivered(event.data), "to the host")
            elif event.type == FOLLOWUP_FAILED:
                self.failed(event)
            elif event.type == TURN_INPUT:
                turn = msgspec.json.decode(event.data, type=TurnInput)
                if turn.key is not None and turn.key in self.keys:
                    self.turns[turn.n] = turn.key
                    self.delivered(event, turn.key, f"as the agent's turn #{turn.n}")
            elif event.type == TURN:
                done = msgspec.json.decode(event.data, type=TurnRecord).input
                if done in self.turns:
                    self.add(event, f"turn #{done} answered", "answered")
                    del self.turns[done]


def _standing(teller: _Teller, now_ms: int) -> Standing:
    """The core's state of the reminder, told what its outbox holds: the
    follow-ups of it not yet taken, and the failed hand-overs of the first."""
    first = next(iter(teller.keys), None)
    failures = 0 if first is None else teller.failures.get(first, 0)
    return reminder_standing(
        teller.state, teller.id, now_ms, waiting=first is not None, failures=failures
    )


def _status(teller: _Teller, standing: Standing) -> str:
    """``standing`` in a sentence, led by its state's word."""
    waiting = ", ".join(format_instant(due) for due in teller.keys.values())
    then = "" if standing.next_due is None else f"; next due {format_instant(standing.next_due)}"
    match standing.state:
        case ReminderState.FAILING:
            count = teller.failures[next(iter(teller.keys))]
            noun = "failure" if count == 1 else "failures"
            return f"failing: {waiting} not taken ({count} {noun} recorded); retried{then}"
        case ReminderState.DELIVERING:
            return f"delivering: {waiting} waits to be taken by its host{then}"
        case ReminderState.ENDED:
            return f"ended: {teller.done or 'not active'}"
        case ReminderState.PAUSED:
            return "paused: nothing is delivered until it is resumed"
        case ReminderState.DUE:  # a due one has both (``or 0`` is for the type only)
            late = duration_text(standing.overdue_ms or 0)
            since = format_instant(standing.next_due or 0)
            return (
                f"due: overdue by {late} since {since}: no runtime has served this session "
                "since it fell due"
            )
        case ReminderState.SCHEDULED:
            return f"scheduled{then.replace(';', ':', 1)}"


def reminder_story(parsed: ParsedSession, schedule_id: str, now_ms: int) -> Story:
    """The story of ``schedule_id`` in one session (``found`` False when the
    session never created it). Raises CorruptScheduleLog like ``fold``."""
    owned = parsed.events[parsed.header.owned_from :]
    fold(parsed.events, parsed.header.owned_from)  # a corrupt log is refused as a whole
    story = Story(parsed.header.id, schedule_id, format_instant(now_ms))
    teller = _Teller(story)
    teller.tell(owned)
    standing = _standing(teller, now_ms)
    story.state = str(standing.state)
    story.next_due = None if standing.next_due is None else format_instant(standing.next_due)
    story.overdue_ms = standing.overdue_ms
    story.status = _status(teller, standing)
    return story
