"""``decide``: every rule that turns a command and ``now`` into changes.

Pure: the caller passes the wall-clock sample ``now`` (epoch ms) and appends
the returned changes; nothing here reads a clock or allocates at random.
"""

from __future__ import annotations

from returns.result import Failure, Result, Success

from tickler.core.at import parse_at
from tickler.core.commands import (
    Command,
    CreateAfter,
    CreateAt,
    CreateEvery,
    CreateSchedule,
    DeleteSchedule,
    DeliverDue,
    ListSchedules,
)
from tickler.core.errors import Msg, ScheduleError, error
from tickler.core.fixedrate import lattice
from tickler.core.framing import every_batch_framing, one_shot_framing
from tickler.core.instant import format_instant, in_range, parse_instant
from tickler.core.jsnum import is_safe_integer, safe_integer
from tickler.core.jstext import es_trim, is_trimmed_nonempty, join_surrogate_pairs
from tickler.core.model import (
    MIN_EVERY_INTERVAL_SECONDS,
    AfterSchedule,
    AtSchedule,
    EverySchedule,
    ScheduleChange,
    ScheduleRecord,
    create,
    delete,
    dispatch,
)
from tickler.core.outcomes import (
    Created,
    Deleted,
    Delivery,
    Listed,
    NotFound,
    Occurrence,
    Outcome,
    ScheduleView,
    ViewState,
    Wait,
)
from tickler.core.state import State

Decision = tuple[tuple[ScheduleChange, ...], Result[Outcome, ScheduleError]]
_OUT_OF_RANGE = error("time_out_of_range", Msg.OUT_OF_RANGE)
# Greater than any creation order: bounds "every key with target <= now".
_AFTER_EVERY_ORDER = 2**63


def decide(state: State, command: Command, now: int) -> Decision:
    """Changes to append (possibly none) and the outcome, for ``command`` at
    ``now``. A rejected command yields no changes. An unusable ``now`` (not a
    safe integer) fails only where the reference reads it: the range rule of
    a new target, and a fixed-rate batch."""
    match command:
        case CreateAfter() | CreateAt() | CreateEvery():
            return _create(state, command, now)
        case ListSchedules():
            views = tuple(view(record, now) for record in state.active)
            return (), Success(Listed(views))
        case DeleteSchedule(id=schedule_id):
            return _delete(state, schedule_id)
        case DeliverDue():
            return _deliver_due(state, now)


def view_state(record: ScheduleRecord, now: int) -> ViewState:
    return "overdue" if now >= parse_instant(record.scheduled_at) else "scheduled"


def view(record: ScheduleRecord, now: int) -> ScheduleView:
    return ScheduleView(record, view_state(record, now))


def future_instant(target: int, now: int) -> str | ScheduleError:
    """The range rule (the clock sample must be usable too), then the
    strictly-future rule."""
    if not is_safe_integer(now) or not is_safe_integer(target) or not in_range(target):
        return _OUT_OF_RANGE
    if target <= now:
        return error("not_future", Msg.NOT_FUTURE)
    return format_instant(target)


def _after(prompt: str, raw: object, schedule_id: str, now: int) -> ScheduleRecord | ScheduleError:
    seconds = safe_integer(raw)
    if seconds is None or seconds <= 0:
        return error("invalid_rule", Msg.AFTER_SECONDS)
    at = future_instant(now + seconds * 1000, now)
    if isinstance(at, ScheduleError):
        return at
    return AfterSchedule(id=schedule_id, prompt=prompt, after_seconds=seconds, scheduled_at=at)


def _at(prompt: str, raw: object, schedule_id: str, now: int) -> ScheduleRecord | ScheduleError:
    target = parse_at(raw)
    at = target if isinstance(target, ScheduleError) else future_instant(target, now)
    if isinstance(at, ScheduleError):
        return at
    return AtSchedule(id=schedule_id, prompt=prompt, scheduled_at=at)


def _every(prompt: str, raw: object, schedule_id: str, now: int) -> ScheduleRecord | ScheduleError:
    seconds = safe_integer(raw)
    if seconds is None:
        return error("invalid_rule", Msg.EVERY_SECONDS)
    if seconds < MIN_EVERY_INTERVAL_SECONDS:
        return error("frequency_too_high", Msg.EVERY_FLOOR)
    at = future_instant(now + seconds * 1000, now)
    if isinstance(at, ScheduleError):
        return at
    return EverySchedule(id=schedule_id, prompt=prompt, every_seconds=seconds, scheduled_at=at)


def _trimmed_prompt(prompt: object) -> str:
    # Stored as a replay will read it back: surrogate pairs joined.
    return es_trim(join_surrogate_pairs(prompt)) if isinstance(prompt, str) else ""


def _record(command: CreateSchedule, schedule_id: str, now: int) -> ScheduleRecord | ScheduleError:
    """The domain checks, in the reference's order (prompt first)."""
    prompt = _trimmed_prompt(command.prompt)
    if not prompt:
        return error("invalid_prompt", Msg.PROMPT)
    match command:
        case CreateAfter(after_seconds=raw):
            return _after(prompt, raw, schedule_id, now)
        case CreateAt(at=raw):
            return _at(prompt, raw, schedule_id, now)
        case CreateEvery(every_seconds=raw):
            return _every(prompt, raw, schedule_id, now)


def _create(state: State, command: CreateSchedule, now: int) -> Decision:
    record = _record(command, state.seen_ids.allocate(), now)
    if isinstance(record, ScheduleError):
        return (), Failure(record)
    # The view uses the creation sample: a fresh record is never "overdue".
    return (create(record),), Success(Created(view(record, now)))


def _delete(state: State, schedule_id: object) -> Decision:
    if not isinstance(schedule_id, str) or not is_trimmed_nonempty(schedule_id):
        return (), Failure(error("invalid_rule", Msg.DELETE_ID))
    if state.get(schedule_id) is None:
        return (), Success(NotFound(schedule_id))
    return (delete(schedule_id),), Success(Deleted(schedule_id))


def _deliver_due(state: State, now: int) -> Decision:
    """One due one-shot (earliest target, then creation order); else one batch
    of every due fixed-rate record, each at its latest occurrence; else wait."""
    first_one_shot = state.one_shots.first()
    if first_one_shot is not None and first_one_shot[0] <= now:
        record = state.entries[first_one_shot[2]].record
        occurrence = Occurrence(record.id, record.scheduled_at, record.prompt)
        delivery = Delivery(one_shot_framing(occurrence), (occurrence,))
        return (dispatch(record.id),), Success(delivery)
    first_every = state.everies.first()
    if first_every is not None and first_every[0] <= now:
        return _every_batch(state, now)
    return (), Success(Wait(next_target(state)))


def next_target(state: State) -> int | None:
    """The earliest target of any active record (epoch ms), or None: the
    instant ``DeliverDue`` answers ``Wait(next_wake)`` with until then."""
    targets = [key[0] for key in (state.one_shots.first(), state.everies.first()) if key]
    return min(targets) if targets else None


def _every_batch(state: State, now: int) -> Decision:
    if not is_safe_integer(now) or not in_range(now):
        return (), Failure(_OUT_OF_RANGE)
    accepted_at = format_instant(now)
    occurrences: list[Occurrence] = []
    for _, _, schedule_id in state.everies.upto((now, _AFTER_EVERY_ORDER, "")):
        active = state.entries[schedule_id]
        record = active.record
        assert isinstance(record, EverySchedule)
        occurrence, _ = lattice(active.target, record.every_seconds, now)
        occurrences.append(Occurrence(schedule_id, format_instant(occurrence), record.prompt))
    changes = tuple(dispatch(o.id, accepted_at) for o in occurrences)
    delivery = Delivery(every_batch_framing(occurrences), tuple(occurrences), accepted_at)
    return changes, Success(delivery)
