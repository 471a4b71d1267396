"""``decide``: every rule that turns a command and ``now`` into changes.

Pure: the caller passes the wall-clock sample ``now`` (epoch ms) and appends
the returned changes; nothing here reads a clock or allocates at random.

``decide`` and the replay compose: a :class:`Decision` holds the changes
and the state they lead to, which is what the replay makes of them
(``fold_changes``, or ``fold`` of the log with them appended as
``schedule/change`` events). A replay test is three lines::

    state = fold(history, seed_length)
    d = decide(state, command, now)
    assert fold_changes(d.changes, state) == d.state

The caller appends ``d.changes`` and keeps ``d.state``; it evolves nothing
itself. When the session next needs waking is :func:`next_target`'s one
answer (``DeliverDue`` answers ``Wait`` with it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, NamedTuple, Self

import msgspec
from msgspec import UNSET
from returns.result import Failure, Result, Success

from tickler.core._commands import (
    NO_END,
    Command,
    CreateAfter,
    CreateAt,
    CreateCalendar,
    CreateEvery,
    CreateSchedule,
    DeleteSchedule,
    DeliverDue,
    ListSchedules,
    UpdateSchedule,
    arguments_digest,
)
from tickler.core._errors import INTERNAL_ERROR, Msg, ScheduleError, error
from tickler.core._framing import every_batch_framing, one_shot_framing
from tickler.core._model import (
    RECURRING,
    AfterSchedule,
    AtSchedule,
    CalendarSchedule,
    CreateChangeV2,
    EverySchedule,
    ScheduleChange,
    ScheduleRecord,
    SeriesEnd,
    UpdateChange,
    create,
    delete,
    dispatch,
)
from tickler.core._outcomes import (
    Created,
    Deleted,
    Delivery,
    Listed,
    NotFound,
    Occurrence,
    Outcome,
    ScheduleView,
    Updated,
    ViewState,
    Wait,
)
from tickler.core._profile import DEFAULT_PROFILE, Profile
from tickler.core._rules import (
    Breach,
    DueNext,
    ReminderState,
    Standing,
    after_seconds_rule,
    bounded_step,
    count_rule,
    due_rule,
    end_rule,
    every_interval_rule,
    id_breach,
    operator_breach,
    paused_rule,
    request_id_breach,
    resumed_target,
    snooze_rule,
    standing_rule,
    target_breach,
    tool_calendar,
    tool_error,
    tool_prompt,
)
from tickler.core._state import State, evolve, fold_changes
from tickler.core.timing import format_instant, next_occurrence, parse_at, parse_instant

_Pair = tuple[tuple[ScheduleChange, ...], Result[Outcome, ScheduleError]]


class _Decided(NamedTuple):
    changes: tuple[ScheduleChange, ...]
    result: Result[Outcome, ScheduleError]


class Decision(_Decided):
    """What :func:`decide` returns: the ``changes`` to append (possibly
    none) and the ``result``, unpacked as the pair ``changes, result``; and
    ``state``, the state after the changes (``fold_changes(changes,
    before)``, evolved once, when first read, unless ``decide`` made it
    already). The caller appends the changes and keeps ``state``: it never
    evolves them a second time. Two decisions are equal when their changes
    and results are (as the pair they unpack to); the state is not
    compared."""

    _before: State
    _after: State | None

    def __new__(
        cls,
        changes: tuple[ScheduleChange, ...],
        result: Result[Outcome, ScheduleError],
        before: State,
        after: State | None = None,
    ) -> Decision:
        decided = super().__new__(cls, changes, result)
        decided._before = before
        decided._after = before if not changes else after
        return decided

    def __getnewargs__(self) -> tuple[Any, ...]:
        return (self.changes, self.result, self._before, self._after)

    def _replace(self, **members: Any) -> Decision:
        """A copy with ``members`` changed; its state follows its changes
        (evolved again from the state before when they differ)."""
        changes = members.pop("changes", self.changes)
        result = members.pop("result", self.result)
        if members:
            raise TypeError(f"Decision has no members {sorted(members)}")
        after = self._after if changes == self.changes else None
        return Decision(changes, result, self._before, after)

    @classmethod
    def _make(cls, iterable: Iterable[Any]) -> Self:  # type: ignore[override]  # refuses
        """Refused: a decision needs the state it was decided on."""
        raise TypeError("a Decision is made with its state: Decision(changes, result, before)")

    @property
    def state(self) -> State:
        """The state after :attr:`changes` (the one before when none)."""
        if self._after is None:
            self._after = fold_changes(self.changes, self._before)
        return self._after


# Greater than any creation order: bounds "every key with target <= now".
_AFTER_EVERY_ORDER = 2**63


def decide(
    state: State, command: Command, now: int, *, profile: Profile = DEFAULT_PROFILE
) -> Decision:
    """Changes to append (possibly none) and the outcome, for ``command`` at
    ``now``. A rejected command yields no changes. An unusable ``now`` (not a
    safe integer) fails only where the reference reads it: the range rule of
    a new target, and a fixed-rate batch. Every rule is the rulebook's
    (:mod:`tickler.core._rules`); a command built by hand is judged as fully
    as one from :func:`~tickler.core._commands.parse_tool_call`. The
    ``reference`` profile refuses what only the extended profile offers;
    the extended one marks its views to show fixed-rate previews."""
    decided = _decide(state, command, now, profile)
    changes, result = decided
    after = decided._after if isinstance(decided, Decision) else None
    if profile == "extended":
        result = result.map(_with_previews)
    return Decision(changes, result, state, after)


def _with_previews(outcome: Outcome) -> Outcome:
    """The extended profile's views: each shows its next occurrences."""
    match outcome:
        case Created(view=shown):
            return Created(msgspec.structs.replace(shown, previews=True))
        case Updated(view=shown):
            return Updated(msgspec.structs.replace(shown, previews=True))
        case Listed(views=views):
            return Listed(tuple(msgspec.structs.replace(v, previews=True) for v in views))
        case _:
            return outcome


def _decide(state: State, command: Command, now: int, profile: Profile) -> _Pair:
    match command:
        case CreateCalendar() if profile == "reference":
            return (), Failure(error("invalid_selector", Msg.SELECTOR))
        case CreateAfter() | CreateAt() | CreateEvery() if profile == "reference" and (
            command.request_id is not None or command.until is not None or command.count is not None
        ):
            return (), Failure(error("invalid_selector", Msg.SELECTOR))
        case CreateAfter() | CreateAt() | CreateEvery() | CreateCalendar():
            return _create(state, command, now, profile)
        case ListSchedules():
            views = tuple(_view(state, record, now) for record in state.active)
            return (), Success(Listed(views))
        case UpdateSchedule() if profile == "reference":
            return (), Failure(INTERNAL_ERROR)  # no such tool in the v1 contract
        case UpdateSchedule():
            return _update(state, command, now)
        case DeleteSchedule():
            return _delete(state, command, profile)
        case DeliverDue():
            return _deliver_due(state, now)


def _view(state: State, record: ScheduleRecord, now: int) -> ScheduleView:
    shown = _TOOL_STATES[reminder_standing(state, record.id, now).state]
    return ScheduleView(record, shown, lattice=state.lattice(record.id), end=state.end(record.id))


# What a tool calls the states of an active reminder (the v1 word for due).
_TOOL_STATES: Final[dict[ReminderState, ViewState]] = {
    ReminderState.SCHEDULED: "scheduled",
    ReminderState.DUE: "overdue",
    ReminderState.PAUSED: "paused",
}


def reminder_standing(
    state: State, schedule_id: str, now: int, *, waiting: bool = False, failures: int = 0
) -> Standing:
    """The :class:`~tickler.core._rules.Standing` of ``schedule_id`` in
    ``state`` at ``now`` (:func:`~tickler.core._rules.standing_rule`): its
    target and whether it is paused come from ``state``; what its outbox
    holds (``waiting``: a follow-up of it not yet taken; ``failures``: that
    follow-up's failed hand-overs) from the caller, which reads the outbox.
    An id that is not active has ended, unless a follow-up of it waits."""
    active = state.entries.get(schedule_id)
    return standing_rule(
        None if active is None else active.target,
        now,
        paused=state.is_paused(schedule_id),
        waiting=waiting,
        failures=failures,
    )


def _update(state: State, command: UpdateSchedule, now: int) -> _Pair:  # noqa: C901, PLR0912, PLR0915
    """Judge every member (the rulebook's rules, as the parser did), then
    the change: only what differs is logged; nothing differing logs nothing."""
    if id_breach(command.id) is not None:
        return (), Failure(error("invalid_rule", Msg.UPDATE_ID))
    if command.by is not None and operator_breach(command.by) is not None:
        return (), Failure(tool_error(Breach.OPERATOR))
    active = state.entries.get(command.id)
    if active is None:
        return (), Success(NotFound(command.id, "update"))
    record, target = active.record, active.target
    was_paused = state.is_paused(command.id)
    prompt: str | None = None
    if command.prompt is not UNSET:
        stored = tool_prompt(command.prompt)
        if isinstance(stored, Breach):
            return (), Failure(tool_error(stored))
        prompt = stored
    paused = was_paused
    if command.paused is not UNSET:
        read = paused_rule(command.paused)
        if isinstance(read, Breach):
            return (), Failure(tool_error(read))
        paused = read
    rescheduled: ScheduleRecord | None = None
    if command.selectors:
        # create's rules for the new selector, written once (``_record``)
        new = command.new_selector(record.prompt if prompt is None else prompt)
        if new is None or command.snooze_seconds is not UNSET:
            return (), Failure(error("invalid_selector", Msg.UPDATE))
        made = _record(new, command.id, now, "extended")
        if isinstance(made, ScheduleError):
            return (), Failure(made)
        rescheduled, target = made, parse_instant(made.scheduled_at)
    elif command.snooze_seconds is not UNSET:
        seconds = snooze_rule(command.snooze_seconds)
        if isinstance(seconds, Breach):
            return (), Failure(tool_error(seconds))
        breach = target_breach(now + seconds * 1000, now)
        if breach is not None:
            return (), Failure(tool_error(breach))
        target = now + seconds * 1000
    elif command.due_now:
        if paused:
            return (), Failure(error("invalid_rule", Msg.DELIVER_PAUSED))
        if target_breach(now + 1, now) is not None:  # an unusable clock sample
            return (), Failure(tool_error(Breach.OUT_OF_RANGE))
        target = min(target, now)  # one already due stays as it is
    elif was_paused and not paused:
        target = resumed_target(record, target, state.lattice(command.id), now)
    end = _changed_end(state.end(command.id), command, rescheduled, record, target, now)
    if isinstance(end, ScheduleError):
        return (), Failure(end)
    if (  # a resume never brings back a series that ended while it was paused
        rescheduled is None
        and was_paused
        and not paused
        and end is not None
        and end.until is not None
        and target > end.until
    ):
        return (), Failure(error("invalid_rule", Msg.RESUMED_PAST_UNTIL))
    change = _end_members(UpdateChange(id=command.id), command, state.end(command.id), end)
    if rescheduled is not None:
        # the new record holds the prompt and the target
        if rescheduled != record or state.lattice(command.id) is not None:
            change = msgspec.structs.replace(change, schedule=rescheduled)
        prompt, target = None, active.target
    if prompt is not None and prompt != record.prompt:
        change = msgspec.structs.replace(change, prompt=prompt)
    if paused != was_paused:
        change = msgspec.structs.replace(change, paused=paused)
    if target != active.target:
        change = msgspec.structs.replace(change, scheduled_at=format_instant(target))
    if change == UpdateChange(id=command.id):
        return (), Success(Updated(_view(state, record, now)))
    if command.by is not None:
        change = msgspec.structs.replace(change, by=command.by)
    updated = evolve(state, change)
    changed = updated.get(command.id)
    assert changed is not None
    return Decision((change,), Success(Updated(_view(updated, changed, now))), state, updated)


def _end_members(
    change: UpdateChange, command: UpdateSchedule, old: SeriesEnd | None, new: SeriesEnd | None
) -> UpdateChange:
    """``change`` with each bound of the end that was sent and differs (null:
    removed)."""
    old_until, old_count = old if old is not None else (None, None)
    new_until, new_count = new if new is not None else (None, None)
    if command.until is not UNSET and new_until != old_until:
        until_text = None if new_until is None else format_instant(new_until)
        change = msgspec.structs.replace(change, until=until_text)
    if command.count is not UNSET and new_count != old_count:
        change = msgspec.structs.replace(change, count=new_count)
    return change


def _changed_end(  # noqa: PLR0917 - the end, the command, the reminder as it will be
    end: SeriesEnd | None,
    command: UpdateSchedule,
    rescheduled: ScheduleRecord | None,
    record: ScheduleRecord,
    target: int,
    now: int,
) -> SeriesEnd | ScheduleError | None:
    """A series' end after ``command``: each bound sent replaces the old one
    (``NO_END`` removes it), judged as a create judges it, with the record
    (``rescheduled``, else ``record``) and target as they will be; a new
    one-shot record drops the end. Unchanged when neither is sent nor a
    new record."""
    sent = command.until is not UNSET or command.count is not UNSET
    if rescheduled is None and not sent:
        return end
    record = record if rescheduled is None else rescheduled
    until, remaining = end if end is not None else (None, None)
    if command.until is not UNSET:
        read = None if command.until == NO_END else _tool_until(command.until, record, now)
        if isinstance(read, ScheduleError):
            return read
        until = read
    if command.count is not UNSET:
        count = None if command.count == NO_END else count_rule(command.count)
        if isinstance(count, Breach):
            return tool_error(count)
        remaining = count
    if not sent and not isinstance(record, RECURRING):
        return None
    breach = end_rule(record, target, until, remaining)
    if breach is not None:
        return tool_error(breach)
    return None if until is None and remaining is None else SeriesEnd(until, remaining)


def _tool_until(value: object, record: ScheduleRecord, now: int) -> int | ScheduleError:
    """``until`` as a model sends it: what ``at`` takes (a calendar
    reminder's local object may leave out its zone: the rule's), in range
    and in the future; an error says it is about ``until``."""
    if isinstance(record, CalendarSchedule) and isinstance(value, Mapping):
        value = {"time_zone": record.time_zone, **value}
    read = parse_at(value, profile="extended")
    if isinstance(read, int):
        breach = target_breach(read, now)
        read = read if breach is None else tool_error(breach)
    if isinstance(read, ScheduleError):
        return ScheduleError(read.code, f"until: {read.message}")
    return read


def _created_end(
    command: CreateSchedule, record: ScheduleRecord, now: int
) -> SeriesEnd | ScheduleError | None:
    """A create's ``until`` and ``count``, judged (the rulebook's ``end_rule``)."""
    if command.until is None and command.count is None:
        return None
    if not isinstance(record, RECURRING):
        return tool_error(Breach.END_ONE_SHOT)
    until = None if command.until is None else _tool_until(command.until, record, now)
    if isinstance(until, ScheduleError):
        return until
    count = None if command.count is None else count_rule(command.count)
    if isinstance(count, Breach):
        return tool_error(count)
    breach = end_rule(record, parse_instant(record.scheduled_at), until, count)
    return tool_error(breach) if breach is not None else SeriesEnd(until, count)


def view_state(record: ScheduleRecord, now: int) -> ViewState:
    """A record's tool state at ``now``, not paused (a fresh or logged one)."""
    return _TOOL_STATES[standing_rule(parse_instant(record.scheduled_at), now).state]


def view(record: ScheduleRecord, now: int) -> ScheduleView:
    return ScheduleView(record, view_state(record, now))


def future_instant(target: int, now: int) -> str | ScheduleError:
    """The range rule (the clock sample must be usable too), then the
    strictly-future rule."""
    breach = target_breach(target, now)
    return tool_error(breach) if breach is not None else format_instant(target)


def _after(prompt: str, raw: object, schedule_id: str, now: int) -> ScheduleRecord | ScheduleError:
    seconds = after_seconds_rule(raw)
    if isinstance(seconds, Breach):
        return tool_error(seconds)
    at = future_instant(now + seconds * 1000, now)
    if isinstance(at, ScheduleError):
        return at
    return AfterSchedule(id=schedule_id, prompt=prompt, after_seconds=seconds, scheduled_at=at)


def _at(
    prompt: str, raw: object, schedule_id: str, now: int, profile: Profile
) -> ScheduleRecord | ScheduleError:
    target = parse_at(raw, profile=profile)
    at = target if isinstance(target, ScheduleError) else future_instant(target, now)
    if isinstance(at, ScheduleError):
        return at
    return AtSchedule(id=schedule_id, prompt=prompt, scheduled_at=at)


def _every(prompt: str, raw: object, schedule_id: str, now: int) -> ScheduleRecord | ScheduleError:
    seconds = every_interval_rule(raw)
    if isinstance(seconds, Breach):
        return tool_error(seconds)
    at = future_instant(now + seconds * 1000, now)
    if isinstance(at, ScheduleError):
        return at
    return EverySchedule(id=schedule_id, prompt=prompt, every_seconds=seconds, scheduled_at=at)


def _calendar(
    prompt: str, raw: object, schedule_id: str, now: int
) -> ScheduleRecord | ScheduleError:
    """The rule (the rulebook's), then its first occurrence strictly after
    ``now``, which must be representable."""
    rule = tool_calendar(raw)
    if isinstance(rule, ScheduleError):
        return rule
    first = next_occurrence(rule, now)
    at = tool_error(Breach.OUT_OF_RANGE) if first is None else future_instant(first, now)
    if isinstance(at, ScheduleError):
        return at
    return CalendarSchedule(
        schedule_id, prompt, rule.cron, rule.time_zone, rule.dst_gap, rule.dst_overlap, at
    )


def _record(
    command: CreateSchedule, schedule_id: str, now: int, profile: Profile
) -> ScheduleRecord | ScheduleError:
    """The domain checks, in the reference's order (prompt first)."""
    prompt = tool_prompt(command.prompt)
    if isinstance(prompt, Breach):
        return tool_error(prompt)
    match command:
        case CreateAfter(after_seconds=raw):
            return _after(prompt, raw, schedule_id, now)
        case CreateAt(at=raw):
            return _at(prompt, raw, schedule_id, now, profile)
        case CreateEvery(every_seconds=raw):
            return _every(prompt, raw, schedule_id, now)
        case CreateCalendar(calendar=raw):
            return _calendar(prompt, raw, schedule_id, now)


def _create(state: State, command: CreateSchedule, now: int, profile: Profile) -> _Pair:
    request: tuple[str, str] | None = None
    if command.request_id is not None:
        if request_id_breach(command.request_id) is not None:
            return (), Failure(tool_error(Breach.REQUEST_ID))
        digest = arguments_digest(command)
        earlier = state.requests.get(command.request_id)
        if earlier is not None:
            if earlier.args_digest != digest:
                return (), Failure(tool_error(Breach.REQUEST_OTHER_ARGS))
            # The first answer again, from the logged create: a fresh record
            # was "scheduled" at its creation.
            return (), Success(Created(_first_view(earlier)))
        request = None if digest is None else (command.request_id, digest)
    record = _record(command, state.seen_ids.allocate(), now, profile)
    if isinstance(record, ScheduleError):
        return (), Failure(record)
    end = _created_end(command, record, now)
    if isinstance(end, ScheduleError):
        return (), Failure(end)
    assert command.request_id is None or request is not None  # a deep value is refused
    until, count = (None, None) if end is None else end
    made = create(record, request, None if until is None else format_instant(until), count)
    # The view uses the creation sample: a fresh record is never "overdue".
    shown = msgspec.structs.replace(view(record, now), end=end)
    return (made,), Success(Created(shown))


def _first_view(earlier: CreateChangeV2) -> ScheduleView:
    """A logged create's answer, as it was given."""
    end = None
    if earlier.until is not None or earlier.count is not None:
        until = None if earlier.until is None else parse_instant(earlier.until)
        end = SeriesEnd(until, earlier.count)
    return ScheduleView(earlier.schedule, "scheduled", end=end)


def _delete(state: State, command: DeleteSchedule, profile: Profile) -> _Pair:
    """A delete; an operator's names them (version 2), except in the
    reference profile, whose version-1 delete cannot: there it is the plain
    delete, and the caller says the name was not recorded."""
    schedule_id: object = command.id
    breach = id_breach(schedule_id)
    if breach is not None:
        return (), Failure(tool_error(breach))
    assert isinstance(schedule_id, str)
    if command.by is not None and operator_breach(command.by) is not None:
        return (), Failure(tool_error(Breach.OPERATOR))
    if state.get(schedule_id) is None:
        return (), Success(NotFound(schedule_id))
    by = command.by if profile == "extended" else None
    return (delete(schedule_id, by),), Success(Deleted(schedule_id))


def _deliver_due(state: State, now: int) -> _Pair:
    """The rulebook's due order (:func:`~tickler.core._rules.due_rule`):
    one due one-shot (earliest target, then creation order); else one batch
    of every due recurring record, each at its latest occurrence; else
    wait."""
    first_one_shot, first_every = state.one_shots.first(), state.everies.first()
    match due_rule(
        None if first_one_shot is None else first_one_shot[0],
        None if first_every is None else first_every[0],
        now,
    ):
        case DueNext.ONE_SHOT:
            assert first_one_shot is not None
            record = state.entries[first_one_shot[2]].record
            occurrence = Occurrence(record.id, record.scheduled_at, record.prompt)
            delivery = Delivery(one_shot_framing(occurrence), (occurrence,))
            return (dispatch(record.id),), Success(delivery)
        case DueNext.BATCH:
            return _every_batch(state, now)
        case None:
            return (), Success(Wait(next_target(state)))


def next_target(state: State) -> int | None:
    """The earliest target of any active record (epoch ms), or None: the
    instant ``DeliverDue`` answers ``Wait(next_wake)`` with until then. The
    core's one answer to "when is the next wake"; the shell's wake (its
    timer, wake index and snapshot hint) is this, or ``now`` while its
    outbox holds a follow-up."""
    targets = [key[0] for key in (state.one_shots.first(), state.everies.first()) if key]
    return min(targets) if targets else None


def _every_batch(state: State, now: int) -> _Pair:
    occurrences: list[Occurrence] = []
    skipped: list[int] = []
    for _, _, schedule_id in state.everies.upto((now, _AFTER_EVERY_ORDER, "")):
        active = state.entries[schedule_id]
        record = active.record
        bounded = bounded_step(
            record, active.target, state.lattice(schedule_id), state.end(schedule_id), now
        )
        if isinstance(bounded, Breach):  # the clock is outside years 0001-9999
            return (), Failure(tool_error(bounded))
        step = bounded[0]
        occurrences.append(Occurrence(schedule_id, format_instant(step.occurrence), record.prompt))
        skipped.append(step.skipped)
    accepted_at = format_instant(now)
    changes = tuple(dispatch(o.id, accepted_at) for o in occurrences)
    delivery = Delivery(
        every_batch_framing(occurrences), tuple(occurrences), accepted_at, tuple(skipped)
    )
    return changes, Success(delivery)
