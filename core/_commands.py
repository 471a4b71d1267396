"""Commands ``decide`` accepts, and ``parse_tool_call``: the shape-only checks
made before a tool call is queued.

A model's tool call is JSON. Every malformed call maps to one of the ten
closed codes, in the reference's order: the selector set, then the prompt,
then ``after_seconds`` / ``every_seconds``. ``at`` is only checked inside
``decide`` (after the log is read), as in the reference. Where the
reference's argument schema would answer first (a missing or non-string
prompt, a non-number delay), the same closed code the domain would give is
used instead of a registry error.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Final, TypeAlias

import msgspec
from msgspec import UNSET
from returns.pipeline import is_successful
from returns.result import Failure, Result, Success

from tickler.core._errors import INTERNAL_ERROR, Msg, ScheduleError, error
from tickler.core._profile import DEFAULT_PROFILE, Profile
from tickler.core._rules import (
    Breach,
    after_seconds_rule,
    count_rule,
    every_interval_rule,
    id_breach,
    paused_rule,
    request_id_breach,
    snooze_rule,
    tool_error,
    tool_prompt,
)
from tickler.core._when import SELECTORS as WHEN_SELECTORS
from tickler.core._when import lift_when
from tickler.core.timing import parse_at
from tickler.core.wire import holds_lossy_number, is_json_number


class CreateAfter(msgspec.Struct, frozen=True):
    prompt: str
    after_seconds: int
    request_id: str | None = None
    # a recurring series' end (extended profile; None: not sent), judged
    # by ``decide``: ``until`` as ``at`` is sent, ``count`` a number
    until: object = None
    count: object = None


class CreateAt(msgspec.Struct, frozen=True):
    """``at`` is the raw JSON value: a string or a local ``{date, time,
    time_zone}`` object, validated by ``decide``."""

    prompt: str
    at: object
    request_id: str | None = None
    # a recurring series' end (extended profile; None: not sent), judged
    # by ``decide``: ``until`` as ``at`` is sent, ``count`` a number
    until: object = None
    count: object = None


class CreateEvery(msgspec.Struct, frozen=True):
    prompt: str
    every_seconds: int
    request_id: str | None = None
    # a recurring series' end (extended profile; None: not sent), judged
    # by ``decide``: ``until`` as ``at`` is sent, ``count`` a number
    until: object = None
    count: object = None


class CreateCalendar(msgspec.Struct, frozen=True):
    """``calendar`` is the raw JSON value (``{cron, time_zone, dst_gap?,
    dst_overlap?}``), validated by ``decide`` (extended profile only)."""

    prompt: str
    calendar: object
    request_id: str | None = None
    # a recurring series' end (extended profile; None: not sent), judged
    # by ``decide``: ``until`` as ``at`` is sent, ``count`` a number
    until: object = None
    count: object = None


class ListSchedules(msgspec.Struct, frozen=True):
    pass


class UpdateSchedule(msgspec.Struct, frozen=True, kw_only=True):
    """``schedule_update`` (extended profile): each member UNSET when not
    given; the values are judged again by ``decide``. At most one of the
    selectors (``after_seconds``, ``at``, ``every_seconds``, ``calendar``:
    reschedule in place, judged as ``schedule_create`` judges them), and
    not beside ``snooze_seconds``."""

    id: str
    prompt: object = msgspec.UNSET
    paused: object = msgspec.UNSET
    snooze_seconds: object = msgspec.UNSET
    # An operator's action (never a tool call's): who made it, and "deliver
    # now" (the next occurrence moved to now).
    by: str | None = None
    due_now: bool = False
    after_seconds: object = msgspec.UNSET
    at: object = msgspec.UNSET
    every_seconds: object = msgspec.UNSET
    calendar: object = msgspec.UNSET
    # a series' new end: ``until`` as create takes it, ``count`` the
    # occurrences still to come; ``NO_END`` ("none") removes that bound
    until: object = msgspec.UNSET
    count: object = msgspec.UNSET

    @property
    def selectors(self) -> tuple[str, ...]:
        """The selectors given (a reschedule when there is one)."""
        return tuple(name for name in RESCHEDULE_SELECTORS if getattr(self, name) is not UNSET)

    def new_selector(self, prompt: str) -> CreateSchedule | None:
        """The create whose record a reschedule takes (with ``prompt``), or
        None without a selector."""
        selectors = self.selectors
        if len(selectors) != 1:
            return None
        value = getattr(self, selectors[0])
        return _CREATE_OF[selectors[0]](prompt, value)


class DeleteSchedule(msgspec.Struct, frozen=True):
    """``schedule_delete``; ``by`` names the operator of an operator's cancel."""

    id: str
    by: str | None = None


class DeliverDue(msgspec.Struct, frozen=True):
    """Deliver what is due at ``now``, or say when to look again."""


CreateSchedule: TypeAlias = CreateAfter | CreateAt | CreateEvery | CreateCalendar
_SELECTOR_OF: Final[dict[type, str]] = {
    CreateAfter: "after_seconds",
    CreateAt: "at",
    CreateEvery: "every_seconds",
    CreateCalendar: "calendar",
}
ToolCommand: TypeAlias = CreateSchedule | ListSchedules | DeleteSchedule | UpdateSchedule
Command: TypeAlias = ToolCommand | DeliverDue

CREATE: Final = "schedule_create"
LIST: Final = "schedule_list"
DELETE: Final = "schedule_delete"
UPDATE: Final = "schedule_update"
_SELECTORS: Final = ("after_seconds", "at", "every_seconds")
_CREATE_KEYS: Final = frozenset({"prompt", *_SELECTORS})
_EXTENDED_SELECTORS: Final = WHEN_SELECTORS  # (*_SELECTORS, "calendar")
RESCHEDULE_SELECTORS: Final = _EXTENDED_SELECTORS
NO_END: Final = "none"
"""``schedule_update``'s ``until`` or ``count`` that removes that bound (a
strict tool schema sends null for "unchanged")."""
_UPDATE_CHANGES: Final = (
    "prompt",
    "paused",
    "snooze_seconds",
    *RESCHEDULE_SELECTORS,
    "until",
    "count",
)
_UPDATE_KEYS: Final = frozenset({"id", *_UPDATE_CHANGES})
_CREATE_OF: Final[dict[str, type[CreateSchedule]]] = {
    "after_seconds": CreateAfter,
    "at": CreateAt,
    "every_seconds": CreateEvery,
    "calendar": CreateCalendar,
}
_END_MEMBERS: Final = ("until", "count")
_EXTENDED_CREATE_KEYS: Final = frozenset(
    {"prompt", "request_id", *_EXTENDED_SELECTORS, *_END_MEMBERS}
)


# Arguments holding a number JSON cannot carry (-0.0, an infinity such as
# 1e400, NaN) anywhere are refused by the reference's registry before the
# tool runs (they are not lossless JSON), so nothing changes. tickler answers
# a closed code instead: schedule_create the code of a value of the wrong
# JSON type at that place (see _parse_create and ``decide``'s ``at`` rules),
# schedule_delete the code of arguments of the wrong type, and
# schedule_list, which has no input error of its own, ``invalid_rule`` with
# a message of ours (the reference's answer there is not a closed code).
LIST_LOSSY_NUMBER: Final = (
    "schedule_list arguments must be JSON: -0, NaN and infinities are not JSON numbers."
)
LIST_NOT_OBJECT: Final = "schedule_list arguments must be a JSON object; send {}."
_LOSSY_ARGUMENTS: Final = {
    LIST: error("invalid_rule", LIST_LOSSY_NUMBER),
    DELETE: error("invalid_rule", Msg.DELETE_ID),
}


def parse_tool_call(
    name: str, args: object, *, profile: Profile = DEFAULT_PROFILE
) -> Result[ToolCommand, ScheduleError]:
    """Validate a tool call's shape; never raises. ``args`` None means ``{}``.

    In the extended profile a member whose value is null is absent (strict
    tool schemas make every field required and nullable), and a create's or
    an update's ``when`` is lifted to its flat selector first (``lift_when``)."""
    arguments: object = {} if args is None else args
    if profile == "extended" and isinstance(arguments, Mapping):
        extended = _extended_arguments(name, arguments)
        if not is_successful(extended):
            return Failure(extended.failure())
        arguments = extended.unwrap()
    if name in _LOSSY_ARGUMENTS and holds_lossy_number(arguments):
        return Failure(_LOSSY_ARGUMENTS[name])
    if name == CREATE:
        if profile == "extended":
            return _parse_create(arguments, _EXTENDED_SELECTORS, _EXTENDED_CREATE_KEYS)
        return _parse_create(arguments)
    if name == LIST:
        # The reference's registry refuses arguments that are not an object
        # (its parameter root is an object); keys in one are ignored.
        if not isinstance(arguments, Mapping):
            return Failure(error("invalid_rule", LIST_NOT_OBJECT))
        return Success(ListSchedules())
    if name == DELETE:
        return _parse_delete(arguments)
    if name == UPDATE and profile == "extended":
        return parse_update(arguments)
    return Failure(INTERNAL_ERROR)


def parse_update(args: object) -> Result[ToolCommand, ScheduleError]:  # noqa: C901, PLR0912 - per member
    """``schedule_update``: the key set, then id, prompt, paused,
    snooze_seconds and a new selector by the rulebook's rules (nulls
    already dropped)."""
    shape = error("invalid_selector", Msg.UPDATE)
    if not isinstance(args, Mapping):
        return Failure(shape)
    if holds_lossy_number(args):
        return Failure(error("invalid_rule", Msg.SNOOZE_SECONDS))
    keys = args.keys()
    if not keys <= _UPDATE_KEYS or not any(key in keys for key in _UPDATE_CHANGES):
        return Failure(shape)
    selectors = [key for key in RESCHEDULE_SELECTORS if key in keys]
    if len(selectors) > 1 or (selectors and "snooze_seconds" in keys):
        return Failure(shape)
    schedule_id = args.get("id")
    if id_breach(schedule_id) is not None:
        return Failure(error("invalid_rule", Msg.UPDATE_ID))
    assert isinstance(schedule_id, str)
    command = UpdateSchedule(id=schedule_id)
    if "prompt" in keys:
        if isinstance(tool_prompt(args["prompt"]), Breach):
            return Failure(tool_error(Breach.PROMPT))
        command = msgspec.structs.replace(command, prompt=args["prompt"])
    if "paused" in keys:
        paused = paused_rule(args["paused"])
        if isinstance(paused, Breach):
            return Failure(tool_error(paused))
        command = msgspec.structs.replace(command, paused=paused)
    if "snooze_seconds" in keys:
        value = args["snooze_seconds"]
        seconds = snooze_rule(value if is_json_number(value) else None)
        if isinstance(seconds, Breach):
            return Failure(tool_error(seconds))
        command = msgspec.structs.replace(command, snooze_seconds=seconds)
    ends = {key: args[key] for key in ("until", "count") if key in keys}
    if ends:
        command = msgspec.structs.replace(command, **ends)
    if selectors:
        return _with_selector(command, selectors[0], args[selectors[0]])
    return Success(command)


def _with_selector(
    command: UpdateSchedule, selector: str, value: object
) -> Result[ToolCommand, ScheduleError]:
    """A reschedule's selector, judged by create's pre-queue rules (the
    prompt was judged already)."""
    parsed = _parse_selector("-", selector, value)
    if not is_successful(parsed):
        return parsed
    judged = getattr(parsed.unwrap(), selector)
    return Success(msgspec.structs.replace(command, **{selector: judged}))


# No selector's value nests this deep (``calendar`` and a local ``at`` are
# flat objects): a deeper one is refused, never digested (a JSON encoder
# would recurse through it).
_MAX_DIGEST_DEPTH: Final = 32


def _nested_deeper_than(value: object, limit: int) -> bool:
    """Whether objects and arrays nest more than ``limit`` levels in
    ``value`` (walked without recursion)."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children: Iterable[object] = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth == limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def arguments_digest(command: CreateSchedule) -> str | None:
    """The SHA-256 (hex) of a create's arguments but its request id: the
    selector's name, the prompt and the selector's value as sent, in
    canonical JSON. A retry with the same request id must match it. None
    for a selector value nested deeper than any selector's can be: it
    matches no logged create, and its own checks refuse it."""
    selector, value = _SELECTOR_OF[type(command)], getattr(command, _SELECTOR_OF[type(command)])
    if any(
        _nested_deeper_than(v, _MAX_DIGEST_DEPTH) for v in (value, command.until, command.count)
    ):
        return None
    digested: list[object] = [selector, command.prompt, value]
    if command.until is not None or command.count is not None:  # (else the digest as before)
        digested.append(
            {"until": _judged_until(command.until), "count": _judged_count(command.count)}
        )
    text = json.dumps(digested, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _judged_until(until: object) -> object:
    """An ``until`` string as the instant it names (epoch ms), so a retry
    that writes the same instant otherwise (``Z`` or ``+00:00``, with or
    without milliseconds) is the same request; a local object, or a value
    that names no instant, as sent."""
    if isinstance(until, str):
        read = parse_at(until, profile="extended")
        return read if isinstance(read, int) else until
    return until


def _judged_count(count: object) -> object:
    """A ``count`` as the whole number it is (``3.0`` is ``3``), else as sent."""
    read = count_rule(count)
    return count if isinstance(read, Breach) else read


def _extended_arguments(
    name: str, arguments: Mapping[str, object]
) -> Result[Mapping[str, object], ScheduleError]:
    """Nulls dropped, and a create's or an update's ``when`` lifted (its
    value's nulls dropped after, as a top-level selector's are)."""
    kept = _without_nulls(arguments)
    if name not in (CREATE, UPDATE):
        return Success(kept)
    return lift_when(kept).map(_without_nulls)


def _without_nulls(arguments: Mapping[str, object]) -> dict[str, object]:
    """The members that are not null, and so for a ``calendar`` or a local
    ``until`` object's."""
    kept = {key: value for key, value in arguments.items() if value is not None}
    for nested in ("calendar", "until"):
        value = kept.get(nested)
        if isinstance(value, Mapping):
            kept[nested] = {key: item for key, item in value.items() if item is not None}
    return kept


def _parse_create(
    args: object,
    selectors: tuple[str, ...] = _SELECTORS,
    allowed: frozenset[str] = _CREATE_KEYS,
) -> Result[ToolCommand, ScheduleError]:
    """The pre-queue checks, in the reference's order: the selector set (a
    shape), then the prompt and the interval rules (the rulebook's)."""
    wrong = error(
        "invalid_selector", Msg.SELECTOR if selectors is _SELECTORS else Msg.SELECTOR_EXTENDED
    )
    if not isinstance(args, Mapping):
        return Failure(wrong)
    present = [key for key in selectors if key in args]
    if not args.keys() <= allowed or len(present) != 1:
        return Failure(wrong)
    prompt = args.get("prompt")
    if not isinstance(prompt, str) or isinstance(tool_prompt(prompt), Breach):
        return Failure(tool_error(Breach.PROMPT))
    request_id = args.get("request_id")
    if "request_id" in args and request_id_breach(request_id) is not None:
        return Failure(tool_error(Breach.REQUEST_ID))
    parsed = _parse_selector(prompt, present[0], args[present[0]])
    if not is_successful(parsed):
        return parsed
    members = {key: args[key] for key in ("request_id", *_END_MEMBERS) if key in args}
    return Success(msgspec.structs.replace(parsed.unwrap(), **members)) if members else parsed


def _parse_selector(
    prompt: str, selector: str, value: object
) -> Result[ToolCommand, ScheduleError]:
    if selector == "at":
        return Success(CreateAt(prompt, value))
    if selector == "calendar":
        return Success(CreateCalendar(prompt, value))
    # -0.0, NaN and infinities are not JSON numbers: the wrong type, like "30".
    number = value if is_json_number(value) else None
    if selector == "after_seconds":
        seconds = after_seconds_rule(number)
        if isinstance(seconds, Breach):
            return Failure(tool_error(seconds))
        return Success(CreateAfter(prompt, seconds))
    interval = every_interval_rule(number)
    if isinstance(interval, Breach):
        return Failure(tool_error(interval))
    return Success(CreateEvery(prompt, interval))


def _parse_delete(args: object) -> Result[ToolCommand, ScheduleError]:
    schedule_id = args.get("id") if isinstance(args, Mapping) else None
    breach = id_breach(schedule_id)
    if breach is not None:
        return Failure(tool_error(breach))
    assert isinstance(schedule_id, str)
    return Success(DeleteSchedule(schedule_id))
