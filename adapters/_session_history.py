"""One session's whole story, for the dashboard's session view: every
reminder it ever created, each step of each (created, paused or cancelled
by an operator, made due, delivered ...), as ``tickler inspect --why``
tells it, in log order. Read-only: the session file, or the session's rows
on a read-only connection; no lock, no lease."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tickler.adapters._read_model import is_dsn
from tickler.adapters.stores._files import open_regular
from tickler.core import (
    SCHEDULE_CHANGE,
    CreateChange,
    CreateChangeV2,
    ParsedSession,
    decode_change,
    parse_session_jsonl,
)
from tickler.shell import validate_session_id

MAX_STEPS = 500
"""The latest steps a session view shows."""


@dataclass(frozen=True)
class HistoryStep:
    at: str  # the event's log time (UTC)
    at_ms: int
    reminder_id: str
    event: str  # created, paused, resumed, snoozed, due_now, deleted, due, delivered ...
    text: str
    by: str | None  # the operator, for an operator's change


def read_session(source: str, schema: str, session_id: str) -> ParsedSession | None:
    """The session's whole log, or None when the store has no such session.
    Raises StoreError (InvalidSessionId for a bad id) and ValueError (a
    DSN that does not parse)."""
    validate_session_id(session_id)
    if not is_dsn(source) and Path(source).is_dir():
        path = Path(source) / f"{session_id}.jsonl"
        if not path.is_file():
            return None
        with open_regular(path) as file:  # a FIFO is refused, never waited on
            return parse_session_jsonl(file.read())
    from tickler.adapters.cli._db_sessions import read_sessions

    for found in read_sessions(source, schema, session_id):
        return found.parsed
    return None


def history(parsed: ParsedSession, now_ms: int) -> list[HistoryStep]:
    """Every step of every reminder the session created, in log order
    (the latest :data:`MAX_STEPS`). Raises CorruptScheduleLog."""
    from tickler.adapters.cli._why import reminder_story
    from tickler.core import parse_instant

    ids: list[str] = []
    for event in parsed.events[parsed.header.owned_from :]:
        if event.type == SCHEDULE_CHANGE:
            change = decode_change(event.data)
            if isinstance(change, CreateChange | CreateChangeV2):
                ids.append(change.schedule.id)
    steps = [
        HistoryStep(step.at, parse_instant(step.at), rid, step.event, step.text, step.by)
        for rid in ids
        for step in reminder_story(parsed, rid, now_ms).steps
    ]
    steps.sort(key=lambda s: s.at_ms)  # stable: a reminder's steps keep their order
    return steps[-MAX_STEPS:]
