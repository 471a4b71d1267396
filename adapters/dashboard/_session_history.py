"""One session's whole story, for the dashboard's session view: every
reminder it ever created, each step of each (created, paused or cancelled
by an operator, made due, delivered ...), as ``tickler inspect --why``
tells it, in log order. Read-only: the session file, or the session's rows
on a read-only connection; no lock, no lease."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tickler.adapters.read._model import is_dsn
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
MAX_REMINDERS = 50
"""The reminders whose stories a session view tells: those a schedule
change named most recently (a delivery's dispatch included). Each story
reads the whole log, so a view of every reminder of a session holding
thousands would take minutes."""


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


@dataclass(frozen=True)
class SessionHistory:
    steps: list[HistoryStep]  # in log order, the latest MAX_STEPS
    told: int  # the reminders whose stories they are
    created: int  # the reminders the session ever created


def history(parsed: ParsedSession, now_ms: int) -> SessionHistory:
    """Every step of the :data:`MAX_REMINDERS` reminders a schedule change
    named most recently, in log order (the latest :data:`MAX_STEPS`).
    Raises CorruptScheduleLog."""
    from tickler.adapters.cli._why import reminder_story
    from tickler.core import parse_instant

    created: list[str] = []
    last_named: dict[str, int] = {}  # id -> index of the last change naming it
    for index, event in enumerate(parsed.events[parsed.header.owned_from :]):
        if event.type == SCHEDULE_CHANGE:
            change = decode_change(event.data)
            if isinstance(change, CreateChange | CreateChangeV2):
                created.append(change.schedule.id)
                last_named[change.schedule.id] = index
            elif change.id in last_named:
                last_named[change.id] = index
    told = sorted(created, key=last_named.__getitem__)[-MAX_REMINDERS:]
    steps = [
        HistoryStep(step.at, parse_instant(step.at), rid, step.event, step.text, step.by)
        for rid in told
        for step in reminder_story(parsed, rid, now_ms).steps
    ]
    steps.sort(key=lambda s: s.at_ms)  # stable: a reminder's steps keep their order
    return SessionHistory(steps[-MAX_STEPS:], len(told), len(created))
