"""``tickler check`` of an embedded store's wake index (see
:mod:`tickler.adapters.stores._wakes`): the index may be earlier than a
session's log says (a worker then looks and finds nothing due: safe), never
later. A row that nobody holds and that says a session is due later than
its log does, or no row for a session whose log has something pending,
would keep a running worker from waking it: that is reported, with the
session, both instants and the remedy (a worker that starts compares every
session file with the index and looks at the changed ones again). A
session held by a live process is skipped: its row is a hint until it
closes. The index is read-only here; a missing one is nothing to report
(no process of this version opened the store yet)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from contextlib import closing
from pathlib import Path

from tickler.adapters.stores import _wakes as wakes
from tickler.adapters.stores._wake_file import FILE_NAME
from tickler.core import ParsedSession, check_log, format_instant, next_target
from tickler.shell import pending_work

REMEDY = "a worker that starts looks at it again (tickler worker --store)"


def log_wake(parsed: ParsedSession, now_ms: int) -> tuple[int | None, bool]:
    """When the session next needs a process, by its log, and whether a
    follow-up waits in its outbox (then it is due ``now``, or at the end of
    a worker's backoff after a failed hand-over: any instant is right, but
    none)."""
    owned = parsed.events[parsed.header.owned_from :]
    if pending_work(owned).deliveries:
        return now_ms, True
    state = check_log(parsed.events, parsed.header.owned_from).unwrap()
    return next_target(state), False


def behind(row: wakes.WakeRow | None, due: int | None, *, outbox: bool = False) -> str | None:
    """Why ``row`` is later than a log due at ``due`` (None: it is not)."""
    if due is None or (row is not None and row.holder is not None):
        return None
    if row is None:
        return f"the wake index has no row for it, but its log is due at {format_instant(due)}"
    if row.next_due_at is None or (row.next_due_at > due and not outbox):
        said = "nothing" if row.next_due_at is None else format_instant(row.next_due_at)
        return f"the wake index says {said}, but its log is due at {format_instant(due)}"
    return None


def index_rows(database: Path) -> dict[str, wakes.WakeRow] | None:
    """The rows of the index in ``database`` (read-only), or None when there
    is no index there. Raises sqlite3.DatabaseError for a damaged one."""
    if not database.is_file():
        return None
    uri = f"{database.resolve().as_uri()}?mode=ro"
    with closing(sqlite3.connect(uri, uri=True, isolation_level=None)) as conn:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
        if "wakes" not in tables:
            return None
        return {row.session_id: row for row in wakes.rows(conn)}


def jsonl_index(store: Path) -> Path:
    return store / FILE_NAME


def problems(
    rows: Mapping[str, wakes.WakeRow], sessions: Iterable[tuple[str, ParsedSession]], now_ms: int
) -> list[tuple[str, str]]:
    """(session, why) for each session the index is behind."""
    found = []
    for session_id, parsed in sessions:
        due, outbox = log_wake(parsed, now_ms)
        why = behind(rows.get(session_id), due, outbox=outbox)
        if why is not None:
            found.append((session_id, f"{why}: {REMEDY}"))
    return found
