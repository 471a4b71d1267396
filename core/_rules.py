"""The rulebook: every rule of a schedule record and of the log, once.

Each rule is one function that judges a value and returns the closed
:class:`Breach` it commits, or None (a rule that also yields a value, such as
an instant's epoch ms, returns the value or the breach). Every path that
applies a rule calls the function here and nowhere else is the rule written:

* the exact decoder (:mod:`tickler.core._codec`) and its fast twin
  (:mod:`tickler.core._wire`), for each field of a logged record;
* the replay, :func:`~tickler.core._state.evolve` and the fold's fast path
  (:mod:`tickler.core._state`), for records and for the log's transitions
  (ids never reused, deletes and dispatches of active ids, the fixed-rate
  lattice); the invariant checker :func:`~tickler.core._check.check_log` is
  the fold;
* ``decide`` and ``parse_tool_call``, for a model's tool call;
* every view of a reminder (the tools' list, ``tickler inspect`` and
  ``inspect --why``, ``tickler reminders``, the read model, the dashboard),
  for its state (:func:`standing_rule`: the same "due" ``decide`` delivers).

What a path shows for a breach is looked up, not written beside the rule:
the log's corrupt reason (:func:`log_reason`, the reference's exact texts)
or the tool's closed error (:func:`tool_error`, the reference's codes and
messages). A message may differ by path; a rule cannot.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Container
from datetime import UTC, datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Final, NamedTuple

from tickler.core._errors import Msg, ScheduleError, error
from tickler.core._model import (
    MAX_EVERY_SECONDS,
    MIN_EVERY_INTERVAL_SECONDS,
    RECURRING,
    AfterSchedule,
    AtSchedule,
    CalendarSchedule,
    EverySchedule,
    ScheduleRecord,
    SeriesEnd,
)
from tickler.core.timing import (
    MAX_INSTANT_MS,
    MIN_INSTANT_MS,
    CalendarRule,
    CatchUp,
    catch_up,
    count_occurrences,
    is_real_canonical,
    matches_canonical_pattern,
    next_occurrence,
    parse_calendar,
    parse_instant,
)
from tickler.core.wire import (
    ES_WHITESPACE,
    MAX_SAFE_INTEGER,
    es_trim,
    join_surrogate_pairs,
    js_string,
    safe_integer,
)

if TYPE_CHECKING:
    from typing_extensions import TypeIs


class Breach(enum.Enum):
    """Why a value breaks a rule: closed, one member per rule's verdict."""

    # a record's fields (reference order: prompt, seconds, id, scheduledAt)
    PROMPT = "prompt"  # stored: empty or not trimmed; tool: empty after trimming
    AFTER_SECONDS = "after_seconds"  # not a positive safe integer
    EVERY_NOT_INTEGER = "every_not_integer"  # not a safe integer
    EVERY_TOO_FREQUENT = "every_too_frequent"  # below MIN_EVERY_INTERVAL_SECONDS
    EVERY_TOO_LONG = "every_too_long"  # its milliseconds are not a safe integer
    ID = "id"  # not a non-empty string without surrounding whitespace
    INSTANT_SHAPE = "instant_shape"  # not YYYY-MM-DDTHH:mm:ss.sssZ (years 0001-9999)
    INSTANT_NOT_REAL = "instant_not_real"  # the shape, but no such day (02-30)
    # the log's transitions
    ID_REUSED = "id_reused"  # a create of an id ever created before
    DELETE_INACTIVE = "delete_inactive"  # a delete of an id that is not active
    DISPATCH_INACTIVE = "dispatch_inactive"  # a dispatch of an id that is not active
    ONE_SHOT_ACCEPTED_AT = "one_shot_accepted_at"  # a one-shot dispatch with acceptedAt
    EVERY_NO_ACCEPTED_AT = "every_no_accepted_at"  # a fixed-rate dispatch without it
    ACCEPTED_OUT_OF_RANGE = "accepted_out_of_range"  # acceptedAt outside years 0001-9999
    INTERVAL_NOT_POSITIVE = "interval_not_positive"  # the lattice's step in ms
    DISPATCH_PRECEDES = "dispatch_precedes"  # acceptedAt before the record's target
    # calendar records (v2)
    CALENDAR_RULE = "calendar_rule"  # cron, timeZone, dstGap or dstOverlap not valid
    CALENDAR_OFF_RULE = "calendar_off_rule"  # scheduledAt is not an occurrence of the rule
    CALENDAR_NO_ACCEPTED_AT = "calendar_no_accepted_at"  # a calendar dispatch without it
    # idempotent creates (v2)
    REQUEST_ID = "request_id"  # not a trimmed non-empty string of at most 200 characters
    ARGS_DIGEST = "args_digest"  # not 64 lowercase hex digits
    REQUEST_REUSED = "request_reused"  # a logged create of a request id created before
    REQUEST_OTHER_ARGS = "request_other_args"  # a tool call: the id, other arguments
    # updates in place (v2)
    UPDATE_INACTIVE = "update_inactive"  # an update of an id that is not active
    DISPATCH_PAUSED = "dispatch_paused"  # a dispatch of a paused reminder
    PAUSED_NOT_BOOLEAN = "paused_not_boolean"  # paused is not true or false
    SNOOZE_SECONDS = "snooze_seconds"  # not a safe integer of at least 1
    # operator actions (v2)
    OPERATOR = "operator"  # by: not a trimmed non-empty string of at most 200 characters
    # a series' end (v2)
    COUNT = "count"  # not a safe integer of at least 1
    END_ONE_SHOT = "end_one_shot"  # until or count on a one-shot
    UNTIL_BEFORE = "until_before"  # until before the series' next occurrence
    RESCHEDULE_ID = "reschedule_id"  # a rescheduled record whose id is not the updated one
    RESCHEDULE_KEYS = "reschedule_keys"  # prompt or scheduledAt beside a new record
    # a new target (tool calls)
    OUT_OF_RANGE = "out_of_range"  # not an instant of years 0001-9999, or an unusable now
    NOT_FUTURE = "not_future"  # not strictly after now


def is_breach(verdict: object) -> TypeIs[Breach]:
    """Whether a rule's verdict is a breach. (By its type: ``isinstance``
    against an enum goes through the metaclass's instance check, several
    times slower, and replay asks it several times of every change.)"""
    return type(verdict) is Breach


# -- texts --------------------------------------------------------------------


def is_stored_text(value: object) -> bool:
    """A non-empty string equal to its ECMAScript ``trim()``: what a logged
    id and prompt must be."""
    return type(value) is str and value != "" and value.strip(ES_WHITESPACE) == value


def prompt_breach(prompt: object) -> Breach | None:
    """A logged prompt: non-empty and already trimmed."""
    return None if is_stored_text(prompt) else Breach.PROMPT


def id_breach(schedule_id: object) -> Breach | None:
    """An id, logged or given to ``schedule_delete``: non-empty, no
    surrounding whitespace."""
    return None if is_stored_text(schedule_id) else Breach.ID


MAX_OPERATOR_LENGTH: Final = 200


def operator_breach(by: object) -> Breach | None:
    """The operator a change names (``by``): non-empty, already trimmed, at
    most 200 characters."""
    if is_stored_text(by) and len(str(by)) <= MAX_OPERATOR_LENGTH:
        return None
    return Breach.OPERATOR


def tool_prompt(prompt: object) -> str | Breach:
    """A model's prompt as it is stored: trimmed (and each surrogate pair
    written as its one character, as a replay reads it back), or the breach
    when nothing is left."""
    if not isinstance(prompt, str):
        return Breach.PROMPT
    stored = es_trim(join_surrogate_pairs(prompt))
    return stored if stored else Breach.PROMPT


# -- numbers ------------------------------------------------------------------


def after_seconds_rule(seconds: object) -> int | Breach:
    """``afterSeconds`` / ``after_seconds``: a positive safe integer."""
    value = seconds if type(seconds) is int else safe_integer(seconds)
    return value if value is not None and 0 < value <= MAX_SAFE_INTEGER else Breach.AFTER_SECONDS


def every_interval_rule(seconds: object) -> int | Breach:
    """``every_seconds`` as a model gives it: a safe integer, then at least
    the floor (a negative one is too frequent, as in the reference)."""
    value = safe_integer(seconds)
    if value is None:
        return Breach.EVERY_NOT_INTEGER
    if value < MIN_EVERY_INTERVAL_SECONDS:
        return Breach.EVERY_TOO_FREQUENT
    return value


def every_seconds_rule(seconds: object) -> int | Breach:
    """``everySeconds`` as logged: the interval rule, and its milliseconds a
    safe integer too."""
    value = every_interval_rule(seconds)
    if isinstance(value, int) and value > MAX_EVERY_SECONDS:
        return Breach.EVERY_TOO_LONG
    return value


# -- instants -----------------------------------------------------------------

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)


def instant_rule(text: object) -> int | Breach:
    """The epoch ms of a canonical UTC instant (``YYYY-MM-DDTHH:mm:ss.sssZ``
    naming a real day of years 0001-9999), or its breach: the shape first,
    then the calendar."""
    # The usual case, in C: the fixed shape by slicing, the digits and the
    # calendar by fromisoformat (year 0, hour 24, second 60 and 30 February
    # fail there). What it refuses is judged by the pattern and the calendar.
    if type(text) is str and len(text) == 24 and text[4:20:3] == "--T::." and text[23] == "Z":
        try:
            if text.isascii():
                # (the whole text, its "Z" read as UTC, is quicker to read
                # than a slice of it; the fields' sum, not ``// timedelta``:
                # that division goes through microseconds as big integers)
                since = datetime.fromisoformat(text) - _EPOCH
                return since.days * 86_400_000 + since.seconds * 1000 + since.microseconds // 1000
        except ValueError:
            pass
    if not isinstance(text, str) or not matches_canonical_pattern(text):
        return Breach.INSTANT_SHAPE
    if not is_real_canonical(text):
        return Breach.INSTANT_NOT_REAL
    return parse_instant(text)


def is_due(target: int, now: int) -> bool:
    """A record is due (and a listed one "overdue") once ``now`` reaches its
    target."""
    return target <= now


class DueNext(enum.Enum):
    """What a delivery check delivers (:func:`due_rule`)."""

    ONE_SHOT = "one-shot"  # the first due one-shot, alone
    BATCH = "batch"  # every due recurring record, in one batch


def due_rule(first_one_shot: int | None, first_recurring: int | None, now: int) -> DueNext | None:
    """The due order, from the earliest target of the one-shots and of the
    recurring records that are not paused (each kind ordered by target, then
    creation order): the first one-shot alone once it is due, before any
    recurring record; else, once the first recurring one is due, every due
    recurring record in one batch (each at its latest occurrence); else
    nothing: wait until the earlier of the two targets."""
    if first_one_shot is not None and is_due(first_one_shot, now):
        return DueNext.ONE_SHOT
    if first_recurring is not None and is_due(first_recurring, now):
        return DueNext.BATCH
    return None


class ReminderState(enum.StrEnum):
    """What one reminder is doing at ``now``: closed, and the one word every
    view shows for it (``tickler inspect``, ``inspect --why``, ``tickler
    reminders``, the read model and the dashboard). :func:`standing_rule`
    says which."""

    SCHEDULED = "scheduled"  # active, its next occurrence still ahead
    DUE = "due"  # active, its time has come, not yet dispatched: overdue
    PAUSED = "paused"  # active and paused: no next occurrence until resumed
    DELIVERING = "delivering"  # a follow-up of it waits in the outbox, not yet taken
    FAILING = "failing"  # that follow-up's hand-overs failed (it is retried)
    ENDED = "ended"  # not active (delivered one-shot, deleted, series done), nothing waits


class Standing(NamedTuple):
    """A reminder's state at ``now``, its next occurrence (epoch ms; None
    while paused or once it is no longer active) and, when that occurrence's
    time has come, how long ago (else None)."""

    state: ReminderState
    next_due: int | None
    overdue_ms: int | None


def standing_rule(
    target: int | None,
    now: int,
    *,
    paused: bool = False,
    waiting: bool = False,
    failures: int = 0,
) -> Standing:
    """A reminder's :class:`Standing` from what every view knows of it:
    ``target``, its next occurrence while it is active (None once it is
    not: a one-shot dispatched, deleted, a series past year 9999);
    ``paused``; ``waiting``, a follow-up of it is in the outbox, not yet
    taken by its host; ``failures``, the failed hand-overs of that follow-up.

    What is in flight comes first: a follow-up already dispatched is handed
    over (and retried) paused or not, and the runtime hands it over before
    it dispatches anything else. Then ended, paused, and due (:func:`is_due`,
    the rule ``decide`` delivers by) or scheduled. A paused reminder keeps
    its target (a resume keeps it while it is ahead) but has no next
    occurrence and is never overdue."""
    next_due = None if target is None or paused else target
    overdue_ms = None if next_due is None or not is_due(next_due, now) else now - next_due
    if waiting:
        state = ReminderState.FAILING if failures > 0 else ReminderState.DELIVERING
    elif target is None:
        state = ReminderState.ENDED
    elif paused:
        state = ReminderState.PAUSED
    else:
        state = ReminderState.SCHEDULED if overdue_ms is None else ReminderState.DUE
    return Standing(state, next_due, overdue_ms)


def target_breach(target: int, now: int) -> Breach | None:
    """A new target: representable (and so must the clock sample be), then
    strictly after ``now``."""
    if safe_integer(now) is None or safe_integer(target) is None:
        return Breach.OUT_OF_RANGE
    if not MIN_INSTANT_MS <= target <= MAX_INSTANT_MS:
        return Breach.OUT_OF_RANGE
    if target <= now:
        return Breach.NOT_FUTURE
    return None


# -- records ------------------------------------------------------------------


def fields_rule(
    kind: str, prompt: object, seconds: object, schedule_id: object, scheduled_at: object
) -> tuple[int, int] | Breach:
    """:func:`record_rule` of the record of ``kind`` these values make, as
    they were read (``seconds`` is ignored for an ``at`` record): its
    interval as an int (0 for ``at``) and its target in epoch ms, or the
    first breach."""
    intervaled = _INTERVALED.get(kind)
    if intervaled is None:
        unjudged: ScheduleRecord = AtSchedule(schedule_id, prompt, scheduled_at)  # type: ignore[arg-type]
    else:
        unjudged = intervaled[0](schedule_id, prompt, seconds, scheduled_at)
    target = record_rule(unjudged)
    if not isinstance(target, int):
        return target
    interval = 0 if intervaled is None else intervaled[1](seconds)
    assert isinstance(interval, int)  # record_rule judged it
    return interval, target


# Per kind with an interval: the record built from values as they were read
# (a Struct's constructor checks no types: record_rule judges them), and the
# interval's rule (its value as an int: 1.0 is 1).
_INTERVALED: Final[
    dict[str, tuple[Callable[..., ScheduleRecord], Callable[[object], int | Breach]]]
] = {
    "after": (AfterSchedule, after_seconds_rule),
    "every": (EverySchedule, every_seconds_rule),
}


@lru_cache(maxsize=1024)
def _logged_calendar(cron: str, time_zone: str, gap: str, overlap: str) -> CalendarRule | None:
    rule = parse_calendar(
        {"cron": cron, "time_zone": time_zone, "dst_gap": gap, "dst_overlap": overlap}
    )
    # The log keeps the zone's canonical spelling (what a create wrote).
    return rule if isinstance(rule, CalendarRule) and rule.time_zone == time_zone else None


def calendar_fields_rule(
    cron: object, time_zone: object, dst_gap: object, dst_overlap: object
) -> CalendarRule | Breach:
    """A logged calendar rule: the ``calendar`` selector's rules
    (:func:`tickler.core.timing.parse_calendar`), the zone in its
    canonical spelling and both DST policies explicit."""
    if not all(isinstance(v, str) for v in (cron, time_zone, dst_gap, dst_overlap)):
        return Breach.CALENDAR_RULE
    assert isinstance(cron, str) and isinstance(time_zone, str)  # noqa: PT018
    assert isinstance(dst_gap, str) and isinstance(dst_overlap, str)  # noqa: PT018
    rule = _logged_calendar(cron, time_zone, dst_gap, dst_overlap)
    return Breach.CALENDAR_RULE if rule is None else rule


def calendar_record_rule(  # noqa: PLR0917 - the fields, in order
    prompt: object,
    cron: object,
    time_zone: object,
    dst_gap: object,
    dst_overlap: object,
    schedule_id: object,
    scheduled_at: object,
) -> tuple[CalendarRule, int] | Breach:
    """Every rule of a logged calendar record, in order (prompt, rule, id,
    scheduledAt, then scheduledAt an occurrence of the rule): the rule and
    its target in epoch ms, or the first breach."""
    if not is_stored_text(prompt):
        return Breach.PROMPT
    rule = calendar_fields_rule(cron, time_zone, dst_gap, dst_overlap)
    if is_breach(rule):
        return rule
    if not is_stored_text(schedule_id):
        return Breach.ID
    target = instant_rule(scheduled_at)
    if is_breach(target):
        return target
    if catch_up(rule, target, target) is None:
        return Breach.CALENDAR_OFF_RULE
    return rule, target


def tool_calendar(value: object) -> CalendarRule | ScheduleError:
    """A model's ``calendar`` selector: the closed error names what to send."""
    return parse_calendar(value)


def calendar_step_rule(rule: CalendarRule, target: int, accepted_ms: int) -> CatchUp | Breach:
    """A calendar dispatch accepted at ``accepted_ms`` for a record whose next
    occurrence was ``target``: latest-only catch-up (the occurrence
    delivered, how many it stands for, the next target), or the breach. A
    snoozed target need not be on the rule: it is an occurrence of its own,
    and the rule's occurrences after it still count."""
    if safe_integer(accepted_ms) is None or not MIN_INSTANT_MS <= accepted_ms <= MAX_INSTANT_MS:
        return Breach.ACCEPTED_OUT_OF_RANGE
    if accepted_ms < target:
        return Breach.DISPATCH_PRECEDES
    step = catch_up(rule, target, accepted_ms)
    if step is None:  # a snoozed target, and no occurrence of the rule since
        return CatchUp(target, 0, next_occurrence(rule, accepted_ms))
    if step.occurrence != target and not is_occurrence(rule, target):
        return step._replace(skipped=step.skipped + 1)  # the snoozed one too
    return step


MAX_REQUEST_ID_LENGTH: Final = 200
_HEX: Final = frozenset("0123456789abcdef")


def request_id_breach(request_id: object) -> Breach | None:
    """A ``request_id``: non-empty, no surrounding whitespace, at most 200
    characters."""
    if not is_stored_text(request_id):
        return Breach.REQUEST_ID
    assert isinstance(request_id, str)
    return Breach.REQUEST_ID if len(request_id) > MAX_REQUEST_ID_LENGTH else None


def args_digest_breach(digest: object) -> Breach | None:
    ok = isinstance(digest, str) and len(digest) == 64 and set(digest) <= _HEX
    return None if ok else Breach.ARGS_DIGEST


def request_reuse_breach(seen: Container[str], request_id: str) -> Breach | None:
    """A request id names one create for the life of the log."""
    return Breach.REQUEST_REUSED if request_id in seen else None


def is_occurrence(rule: CalendarRule, instant: int) -> bool:
    return count_occurrences(rule, instant - 1, instant) == 1


def paused_rule(paused: object) -> bool | Breach:
    return paused if type(paused) is bool else Breach.PAUSED_NOT_BOOLEAN


def snooze_rule(seconds: object) -> int | Breach:
    """``snooze_seconds``: a safe integer of at least 1 (any reminder: a
    recurring one keeps its later occurrences, see :func:`continuation_rule`)."""
    value = seconds if type(seconds) is int else safe_integer(seconds)
    if value is None or not 1 <= value <= MAX_SAFE_INTEGER:
        return Breach.SNOOZE_SECONDS
    return value


def reschedule_rule(
    schedule_id: str, record: ScheduleRecord, *, prompt: bool, scheduled_at: bool
) -> int | Breach:
    """A reminder rescheduled in place to ``record`` (an update's
    ``schedule``): a record of its own by every rule a create's record
    keeps (:func:`record_rule`), with the updated reminder's id, and not
    beside a ``prompt`` or ``scheduledAt`` member (the record holds both):
    its new target in epoch ms, or the first breach."""
    if prompt or scheduled_at:
        return Breach.RESCHEDULE_KEYS
    target = record_rule(record)
    if is_breach(target):
        return target
    return target if record.id == schedule_id else Breach.RESCHEDULE_ID


def record_rule(record: ScheduleRecord) -> int | Breach:
    """Every field rule of a record, in the reference's order (prompt,
    interval, id, scheduledAt; a calendar record's: see
    :func:`calendar_record_rule`): its target in epoch ms, or the first
    breach. (One function, each field's rule called once from it: replay
    asks this of every create.)"""
    if type(record) is CalendarSchedule:
        calendar = calendar_record_rule(
            record.prompt,
            record.cron,
            record.time_zone,
            record.dst_gap,
            record.dst_overlap,
            record.id,
            record.scheduled_at,
        )
        return calendar if is_breach(calendar) else calendar[1]
    if not is_stored_text(record.prompt):
        return Breach.PROMPT
    if type(record) is AfterSchedule:
        interval = after_seconds_rule(record.after_seconds)
    elif type(record) is EverySchedule:
        interval = every_seconds_rule(record.every_seconds)
    else:
        interval = 0
    # (a verdict told from a breach by ``isinstance(..., int)``: quicker
    # than a call, and a Breach is no int)
    if not isinstance(interval, int):
        return interval
    if not is_stored_text(record.id):
        return Breach.ID
    return instant_rule(record.scheduled_at)


# -- the log's transitions ----------------------------------------------------


ID_PREFIX: Final = "schedule-"


def allocation_rule(seen: Container[str], count: int) -> str:
    """The id a create allocates (the reference's rule): ``schedule-N``
    for the least N from ``count + 1`` upwards (``count``: how many ids
    ``seen`` holds) that is not in ``seen``."""
    n = count + 1
    while f"{ID_PREFIX}{n}" in seen:
        n += 1
    return f"{ID_PREFIX}{n}"


def reuse_breach(seen: Container[str], schedule_id: str) -> Breach | None:
    """Ids are never reused: a create of any id created before."""
    return Breach.ID_REUSED if schedule_id in seen else None


def dispatch_form_breach(record: ScheduleRecord, has_accepted_at: bool) -> Breach | None:
    """A one-shot is dispatched without ``acceptedAt``, a fixed-rate record
    with it."""
    if type(record) is EverySchedule:
        return None if has_accepted_at else Breach.EVERY_NO_ACCEPTED_AT
    if type(record) is CalendarSchedule:
        return None if has_accepted_at else Breach.CALENDAR_NO_ACCEPTED_AT
    return Breach.ONE_SHOT_ACCEPTED_AT if has_accepted_at else None


def lattice_rule(target: int, every_seconds: int, accepted_ms: int) -> CatchUp | Breach:
    """The fixed-rate lattice ``target + k * interval`` at a dispatch
    accepted at ``accepted_ms``: the latest point ``<= accepted_ms`` (the
    occurrence delivered), the ``k`` earlier points it stands for, and the
    point after it (the record's next target, None past year 9999: the
    series ends), or the breach."""
    interval = every_seconds * 1000
    # (an int needs only its bounds, not the safe-integer call: replay asks
    # this of every fixed-rate dispatch)
    if (type(accepted_ms) is not int and safe_integer(accepted_ms) is None) or not (
        MIN_INSTANT_MS <= accepted_ms <= MAX_INSTANT_MS
    ):
        return Breach.ACCEPTED_OUT_OF_RANGE
    if (type(interval) is not int and safe_integer(interval) is None) or not (
        0 < interval <= MAX_SAFE_INTEGER
    ):
        return Breach.INTERVAL_NOT_POSITIVE
    if accepted_ms < target:
        return Breach.DISPATCH_PRECEDES
    skipped = (accepted_ms - target) // interval
    occurrence = target + skipped * interval
    following = occurrence + interval
    return CatchUp(occurrence, skipped, following if following <= MAX_INSTANT_MS else None)


# -- a recurring series: where it continues ------------------------------------
#
# A recurring record's pending target is followed by the rule's next point
# after it ("natural"), unless a snooze moved the target: a snooze moves one
# occurrence and leaves the later ones where they were, so the series then
# continues at a rule point kept apart (``State.lattices``, the
# "continuation"). Every path calls these rules: decide, evolve, the fold,
# the snapshot's check, the previews and ``inspect --why``.

END_OF_SERIES: Final = MAX_INSTANT_MS + 1
"""A continuation past year 9999: the series ends after its target."""


def _record_calendar(record: CalendarSchedule) -> CalendarRule | Breach:
    return calendar_fields_rule(record.cron, record.time_zone, record.dst_gap, record.dst_overlap)


def _point_after(record: ScheduleRecord, rule: CalendarRule | None, phase: int, after: int) -> int:
    """The rule's first point strictly after ``after`` (a fixed-rate lattice
    through ``phase``), END_OF_SERIES when it is past year 9999."""
    if rule is not None:
        found = next_occurrence(rule, after)
        return END_OF_SERIES if found is None else found
    assert isinstance(record, EverySchedule)
    interval = record.every_seconds * 1000
    point = phase + ((after - phase) // interval + 1) * interval
    return point if point <= MAX_INSTANT_MS else END_OF_SERIES


def _natural_next(record: ScheduleRecord, rule: CalendarRule | None, target: int) -> int:
    """What follows ``target`` when nothing is kept apart: the rule's next
    point after it (a fixed-rate target: one interval on)."""
    return _point_after(record, rule, target, target)


def continuation_rule(
    record: ScheduleRecord, target: int, continuation: int | None, moved: int
) -> int | Breach | None:
    """A recurring record's target ``target`` (followed by ``continuation``,
    None: its natural next) moved to ``moved`` by a snooze or a resume: the
    rule point its series continues at after ``moved``, or None when that is
    the natural next. The later occurrences stay where they were: the series
    never continues before the point that followed the old target, nor at or
    before ``moved`` (a snooze past some occurrences passes over them). Derived
    on every path from the logged target alone, so the log need not carry
    it. A one-shot has no series: None."""
    if not isinstance(record, RECURRING):
        return None
    rule = _record_calendar(record) if isinstance(record, CalendarSchedule) else None
    if is_breach(rule):
        return rule
    before = _natural_next(record, rule, target) if continuation is None else continuation
    phase = target if continuation is None else continuation
    following = max(before, _point_after(record, rule, phase, moved))
    return None if following == _natural_next(record, rule, moved) else following


def is_continuation(record: ScheduleRecord, target: int, continuation: int) -> bool:
    """A continuation kept apart (a snapshot's) is one :func:`continuation_rule`
    could have made: of a recurring record, after its target, not its natural
    next, and a point of its rule (or the end of the series)."""
    if not isinstance(record, RECURRING) or not target < continuation <= END_OF_SERIES:
        return False
    rule = _record_calendar(record) if isinstance(record, CalendarSchedule) else None
    if is_breach(rule) or continuation == _natural_next(record, rule, target):
        return False
    return rule is None or continuation == END_OF_SERIES or is_occurrence(rule, continuation)


def series_step(
    record: ScheduleRecord, target: int, continuation: int | None, accepted_ms: int
) -> CatchUp | Breach:
    """A dispatch of a recurring record, accepted at ``accepted_ms``, whose
    next occurrence was ``target`` (followed by ``continuation``): latest-only
    catch-up, the occurrence delivered (the latest due), how many more it
    stands for, and the next target (None past year 9999: the series ends),
    or the breach."""
    if continuation is None and type(record) is EverySchedule:  # the usual case, first
        return lattice_rule(target, record.every_seconds, accepted_ms)
    rule = _record_calendar(record) if isinstance(record, CalendarSchedule) else None
    if is_breach(rule):
        return rule
    if continuation is None:
        assert rule is not None  # a recurring record, not fixed-rate: a calendar one
        return calendar_step_rule(rule, target, accepted_ms)
    # A snoozed target, then where its series continues.
    if safe_integer(accepted_ms) is None or not MIN_INSTANT_MS <= accepted_ms <= MAX_INSTANT_MS:
        return Breach.ACCEPTED_OUT_OF_RANGE
    if accepted_ms < target:
        return Breach.DISPATCH_PRECEDES
    if accepted_ms < continuation:
        return CatchUp(target, 0, None if continuation == END_OF_SERIES else continuation)
    if rule is not None:
        step = catch_up(rule, continuation, accepted_ms)
        assert step is not None  # the continuation is an occurrence, and due
        return step._replace(skipped=step.skipped + 1)  # the snoozed target too
    assert isinstance(record, EverySchedule)
    step_ = lattice_rule(continuation, record.every_seconds, accepted_ms)
    if is_breach(step_):
        return step_
    return step_._replace(skipped=step_.skipped + 1)  # the snoozed target too


def _nth_point(record: ScheduleRecord, target: int, continuation: int | None, n: int) -> int:
    """The ``n``-th occurrence of a series from its target (the first), for
    an ``n`` whose points all lie before year 10000."""
    if n == 1:
        return target
    rule = _record_calendar(record) if isinstance(record, CalendarSchedule) else None
    assert not is_breach(rule)  # judged when it was created
    point = _natural_next(record, rule, target) if continuation is None else continuation
    if rule is None:  # a fixed-rate lattice: no need to walk it
        assert isinstance(record, EverySchedule)
        return point + (n - 2) * record.every_seconds * 1000
    return _nth_occurrence_from(rule, point, n - 1)


def _nth_occurrence_from(rule: CalendarRule, first: int, n: int) -> int:
    """The ``n``-th occurrence of ``rule`` counted from ``first`` (itself an
    occurrence, the first): the earliest instant by which ``n`` have come,
    found by counting (a gallop, then a bisection), not by walking every
    point: a count of a million costs a few dozen counts, not a million
    steps."""
    span = 60_000
    while count_occurrences(rule, first - 1, min(first + span, MAX_INSTANT_MS)) < n:
        if first + span >= MAX_INSTANT_MS:
            raise AssertionError("fewer occurrences before year 10000 than counted")
        span *= 2
    low, high = first, min(first + span, MAX_INSTANT_MS)  # count(first - 1, high) >= n
    while low < high:
        middle = (low + high) // 2
        if count_occurrences(rule, first - 1, middle) >= n:
            high = middle
        else:
            low = middle + 1
    return low


def bounded_step(
    record: ScheduleRecord,
    target: int,
    continuation: int | None,
    end: SeriesEnd | None,
    accepted_ms: int,
) -> tuple[CatchUp, SeriesEnd | None] | Breach:
    """:func:`series_step` of a series that may end (``end``): latest-only
    catch-up among its occurrences up to ``until`` and within ``remaining``
    (a catch-up counts every occurrence it stands for), the next target
    None once the series is over, and the end that is left. A target moved
    past ``until`` (a snooze or resume) is delivered once, then it ends."""
    if end is None:
        step = series_step(record, target, continuation, accepted_ms)
        return (step, None) if isinstance(step, tuple) else step  # (not a breach, quicker)
    if safe_integer(accepted_ms) is None or not MIN_INSTANT_MS <= accepted_ms <= MAX_INSTANT_MS:
        return Breach.ACCEPTED_OUT_OF_RANGE
    until, remaining = end
    at = accepted_ms if until is None or accepted_ms <= until else max(until, target)
    step = series_step(record, target, continuation, at)
    if is_breach(step):
        return step
    if remaining is not None and step.skipped + 1 >= remaining:
        last = _nth_point(record, target, continuation, remaining)
        return CatchUp(last, remaining - 1, None), SeriesEnd(until, 0)
    following = step.next
    if following is not None and until is not None and following > until:
        following = None
    left = None if remaining is None else remaining - step.skipped - 1
    return CatchUp(step.occurrence, step.skipped, following), SeriesEnd(until, left)


def count_rule(count: object) -> int | Breach:
    """``count``: a safe integer of at least 1."""
    value = count if type(count) is int else safe_integer(count)
    return value if value is not None and 1 <= value <= MAX_SAFE_INTEGER else Breach.COUNT


def end_rule(
    record: ScheduleRecord, target: int, until: int | None, count: object
) -> Breach | None:
    """A series' end, set at a create or changed in place: only a recurring
    record has one; ``count`` (occurrences, the next included) at least 1;
    ``until`` (epoch ms, judged as an instant already) not before the next
    occurrence ``target``, so the series has one left."""
    if until is None and count is None:
        return None
    if not isinstance(record, RECURRING):
        return Breach.END_ONE_SHOT
    if count is not None and is_breach(count_rule(count)):
        return Breach.COUNT
    return Breach.UNTIL_BEFORE if until is not None and until < target else None


def resumed_target(record: ScheduleRecord, target: int, continuation: int | None, now: int) -> int:
    """A reminder resumed at ``now``: a target still ahead stays; a recurring
    one past its target waits for its series' first point after ``now`` (what
    fell due while paused is not replayed), or keeps its target when the
    series has none before year 9999. A one-shot keeps its instant."""
    if target > now or not isinstance(record, RECURRING):
        return target
    if continuation is not None and continuation > now:
        return continuation if continuation <= MAX_INSTANT_MS else target
    rule = _record_calendar(record) if isinstance(record, CalendarSchedule) else None
    assert not is_breach(rule)  # judged when it was created
    phase = target if continuation is None else continuation  # a point of the rule
    following = _point_after(record, rule, phase, now)
    return target if following == END_OF_SERIES else following


def series_points(
    record: ScheduleRecord,
    target: int,
    continuation: int | None,
    count: int,
    end: SeriesEnd | None = None,
) -> tuple[int, ...]:
    """The next ``count`` occurrences of a recurring record from its target
    (then from its continuation), fewer where the series ends (before year
    10000, or at its ``end``): what a preview shows, paused or not."""
    rule = _record_calendar(record) if isinstance(record, CalendarSchedule) else None
    assert not is_breach(rule)  # judged when it was created
    until = None if end is None else end.until
    if end is not None and end.remaining is not None:
        count = min(count, end.remaining)
    points = [target]
    following = _natural_next(record, rule, target) if continuation is None else continuation
    while (
        len(points) < count and following != END_OF_SERIES and (until is None or following <= until)
    ):
        points.append(following)
        following = _natural_next(record, rule, following)
    return tuple(points)


# -- what each path shows -----------------------------------------------------


class Reason:
    """The reference's exact corrupt-log reasons (section (c))."""

    PAYLOAD: Final = "schedule/change payload must be an object"
    VERSION: Final = "schedule/change version must be 1"
    OPERATION: Final = "schedule/change operation must be create, delete, or dispatch"
    CREATE_KEYS: Final = "schedule create must contain exactly version, operation, and schedule"
    DELETE_KEYS: Final = "schedule delete must contain exactly version, operation, and id"
    DISPATCH_KEYS: Final = "schedule dispatch must contain id and optional acceptedAt only"
    RECORD: Final = "schedule record must be an object"
    KIND: Final = 'v1 schedule kind must be "after", "at", or "every"'
    AFTER_KEYS: Final = (
        "after schedule must contain exactly id, kind, prompt, afterSeconds, and scheduledAt"
    )
    AT_KEYS: Final = "at schedule must contain exactly id, kind, prompt, and scheduledAt"
    EVERY_KEYS: Final = (
        "every schedule must contain exactly id, kind, prompt, everySeconds, and scheduledAt"
    )
    UPDATE_KEYS: Final = (
        "schedule update must contain version, operation, id, and at least one of prompt, "
        "paused, scheduledAt, and schedule"
    )
    PAUSED: Final = "schedule update paused must be true or false"
    REQUEST_KEYS: Final = (
        "schedule create version 2 may contain requestId only together with argsDigest"
    )
    V2_CREATE_KEYS: Final = (
        "schedule create version 2 must contain exactly version, operation, and schedule"
    )
    CALENDAR_KEYS: Final = (
        "calendar schedule must contain exactly id, kind, prompt, cron, timeZone, dstGap, "
        "dstOverlap, and scheduledAt"
    )
    V2_DELETE_KEYS: Final = (
        "schedule delete version 2 must contain exactly version, operation, id, and by"
    )
    NOT_JSON: Final = "schedule/change payload is not valid JSON"
    SEED_OUT_OF_LOG: Final = "schedule seedLength must be within the supplied event log"


_LOG_REASONS: Final[dict[Breach, str]] = {
    Breach.AFTER_SECONDS: "afterSeconds must be a positive safe integer",
    Breach.EVERY_NOT_INTEGER: "everySeconds must be a safe integer of at least 300",
    Breach.EVERY_TOO_FREQUENT: "everySeconds must be a safe integer of at least 300",
    Breach.EVERY_TOO_LONG: "everySeconds must be a safe integer of at least 300",
    Breach.ID: "schedule id must be a non-empty string without surrounding whitespace",
    Breach.INSTANT_SHAPE: "scheduledAt must be a canonical four-digit-year RFC 3339 UTC instant",
    Breach.INSTANT_NOT_REAL: "scheduledAt is not a real UTC calendar instant",
    Breach.ONE_SHOT_ACCEPTED_AT: "one-shot dispatch must not contain acceptedAt",
    Breach.EVERY_NO_ACCEPTED_AT: "every dispatch must contain acceptedAt",
    Breach.ACCEPTED_OUT_OF_RANGE: (
        "every acceptedAt must be a representable four-digit-year instant"
    ),
    Breach.INTERVAL_NOT_POSITIVE: "every interval milliseconds must be a positive safe integer",
    Breach.DISPATCH_PRECEDES: "every dispatch cannot precede the active scheduledAt",
    Breach.CALENDAR_RULE: (
        "calendar schedule must have a valid cron, a canonical IANA timeZone, "
        "dstGap shift or skip, and dstOverlap first or both"
    ),
    Breach.CALENDAR_OFF_RULE: "calendar scheduledAt must be an occurrence of its rule",
    Breach.CALENDAR_NO_ACCEPTED_AT: "calendar dispatch must contain acceptedAt",
    Breach.PAUSED_NOT_BOOLEAN: "schedule update paused must be true or false",
    Breach.RESCHEDULE_ID: "schedule update schedule must keep the updated id",
    Breach.COUNT: "schedule count must be a safe integer of at least 1",
    Breach.END_ONE_SHOT: "schedule until and count apply to every and calendar schedules only",
    Breach.UNTIL_BEFORE: "schedule until must not precede the active scheduledAt",
    Breach.RESCHEDULE_KEYS: (
        "schedule update with schedule must not contain prompt or scheduledAt"
    ),
    Breach.REQUEST_ID: (
        "schedule create requestId must be a non-empty string without surrounding "
        "whitespace, at most 200 characters"
    ),
    Breach.ARGS_DIGEST: "schedule create argsDigest must be 64 lowercase hex digits",
    Breach.OPERATOR: (
        "schedule change by must be a non-empty string without surrounding whitespace, "
        "at most 200 characters"
    ),
}


def log_reason(breach: Breach, *, kind: str = "", schedule_id: str = "") -> str:
    """The reference's corrupt-log reason for ``breach``: ``kind`` names the
    record of a prompt breach, ``schedule_id`` the id of a transition's."""
    if breach is Breach.PROMPT:
        return f"{kind} prompt must be non-empty and already trimmed"
    if breach is Breach.ID_REUSED:
        return f"schedule id {js_string(schedule_id)} was reused"
    if breach is Breach.DELETE_INACTIVE:
        return f"schedule delete targets inactive id {js_string(schedule_id)}"
    if breach is Breach.DISPATCH_INACTIVE:
        return f"schedule dispatch targets inactive id {js_string(schedule_id)}"
    if breach is Breach.REQUEST_REUSED:
        return f"schedule requestId {js_string(schedule_id)} was reused"
    if breach is Breach.UPDATE_INACTIVE:
        return f"schedule update targets inactive id {js_string(schedule_id)}"
    if breach is Breach.DISPATCH_PAUSED:
        return f"schedule dispatch targets paused id {js_string(schedule_id)}"
    if breach is Breach.DISPATCH_PRECEDES and kind == "calendar":
        return "calendar dispatch cannot precede the active scheduledAt"
    return _LOG_REASONS[breach]


_TOOL_ERRORS: Final[dict[Breach, ScheduleError]] = {
    Breach.PROMPT: error("invalid_prompt", Msg.PROMPT),
    Breach.AFTER_SECONDS: error("invalid_rule", Msg.AFTER_SECONDS),
    Breach.EVERY_NOT_INTEGER: error("invalid_rule", Msg.EVERY_SECONDS),
    Breach.EVERY_TOO_FREQUENT: error("frequency_too_high", Msg.EVERY_FLOOR),
    Breach.ID: error("invalid_rule", Msg.DELETE_ID),
    Breach.OUT_OF_RANGE: error("time_out_of_range", Msg.OUT_OF_RANGE),
    # a delivery decision at a clock outside years 0001-9999
    Breach.ACCEPTED_OUT_OF_RANGE: error("time_out_of_range", Msg.OUT_OF_RANGE),
    Breach.NOT_FUTURE: error("not_future", Msg.NOT_FUTURE),
    Breach.PAUSED_NOT_BOOLEAN: error("invalid_rule", Msg.PAUSED),
    Breach.SNOOZE_SECONDS: error("invalid_rule", Msg.SNOOZE_SECONDS),
    Breach.REQUEST_ID: error("invalid_rule", Msg.REQUEST_ID),
    Breach.REQUEST_OTHER_ARGS: error("invalid_rule", Msg.REQUEST_OTHER_ARGS),
    Breach.OPERATOR: error("invalid_rule", Msg.OPERATOR),
    Breach.COUNT: error("invalid_rule", Msg.COUNT),
    Breach.END_ONE_SHOT: error("invalid_rule", Msg.END_ONE_SHOT),
    Breach.UNTIL_BEFORE: error("invalid_rule", Msg.UNTIL_BEFORE),
}


def tool_error(breach: Breach) -> ScheduleError:
    """The closed tool error a model sees for ``breach`` (the rules a tool
    call can break; the others are the log's)."""
    return _TOOL_ERRORS[breach]


__all__ = [
    "END_OF_SERIES",
    "ID_PREFIX",
    "Breach",
    "DueNext",
    "Reason",
    "ReminderState",
    "Standing",
    "after_seconds_rule",
    "allocation_rule",
    "args_digest_breach",
    "bounded_step",
    "calendar_fields_rule",
    "calendar_record_rule",
    "calendar_step_rule",
    "continuation_rule",
    "count_rule",
    "dispatch_form_breach",
    "due_rule",
    "end_rule",
    "every_interval_rule",
    "every_seconds_rule",
    "fields_rule",
    "id_breach",
    "instant_rule",
    "is_breach",
    "is_continuation",
    "is_due",
    "is_occurrence",
    "is_stored_text",
    "lattice_rule",
    "log_reason",
    "paused_rule",
    "prompt_breach",
    "record_rule",
    "request_id_breach",
    "request_reuse_breach",
    "reschedule_rule",
    "resumed_target",
    "reuse_breach",
    "series_points",
    "series_step",
    "snooze_rule",
    "standing_rule",
    "target_breach",
    "tool_calendar",
    "tool_error",
    "tool_prompt",
]
