"""``check_session``: every invariant a session's events are held to, as
``tickler check`` reports them and the runtime faults on them."""

from __future__ import annotations

from collections.abc import Sequence

from returns.pipeline import is_successful
from returns.result import Failure, Result

from tickler.core import CorruptScheduleLog, SessionEvent, State, check_log
from tickler.shell._pending import pending_work


def check_session(
    events: Sequence[SessionEvent], seed_length: int = 0
) -> Result[State, CorruptScheduleLog]:
    """The schedule log (the core's ``check_log``), then tickler's own
    records in the owned suffix (outbox, acknowledgements, turns), a
    malformed one of which faults the runtime too. A failure's ``index`` is
    the event's position (for tickler's records, its ``seq``: the same in a
    session file)."""
    result = check_log(events, seed_length)
    if not is_successful(result):
        return result
    try:
        pending_work(events[seed_length:])
    except CorruptScheduleLog as exc:
        return Failure(exc)
    return result
