"""``check_log``: the invariant checker (the reference's ``./invariant``)."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import chain

from returns.result import Failure, Result, Success

from tickler.core._errors import CorruptScheduleLog
from tickler.core._state import State, fold
from tickler.core.wire import SessionEvent


def check_log(
    events: Iterable[SessionEvent],
    seed_length: int = 0,
    candidates: Iterable[SessionEvent] = (),
) -> Result[State, CorruptScheduleLog]:
    """Whether ``events`` followed by ``candidates`` is a valid schedule log.

    Only the owned suffix (after ``seed_length``) is checked; a failure names
    the offending event's index in the combined sequence and the reason.
    """
    try:
        return Success(fold(chain(events, candidates), seed_length))
    except CorruptScheduleLog as exc:
        return Failure(exc)
