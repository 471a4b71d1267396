"""``replay``: a log checked the way ``tickler check`` checks one."""

from __future__ import annotations

from collections.abc import Iterable

from returns.result import Result

from tickler.core import CorruptScheduleLog, ParsedSession, SessionEvent, State
from tickler.shell import check_session


def replay(
    log: ParsedSession | Iterable[SessionEvent], seed_length: int | None = None
) -> Result[State, CorruptScheduleLog]:
    """The state a log replays to, or why ``tickler check`` calls it
    corrupt: the same checker (the schedule log, then tickler's own
    outbox and turn records after the seed prefix).

    ``log`` is a parsed session file (:func:`tickler.core.parse_session_jsonl`;
    its header gives the seed length) or a session's events, the first
    ``seed_length`` (default 0) the parent's. A failure's ``index`` is the
    offending event's position, its ``reason`` the reference's exact text.
    """
    if isinstance(log, ParsedSession):
        owned_from = log.header.owned_from if seed_length is None else seed_length
        return check_session(log.events, owned_from)
    return check_session(tuple(log), 0 if seed_length is None else seed_length)
