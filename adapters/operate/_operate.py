"""Operator actions on one reminder: pause, resume, snooze, cancel and
"deliver now", over a JSONL store directory, an SQLite store file or a
PostgreSQL DSN (``tickler pause ...`` and the dashboard's buttons).

Each action goes through the session's lock or lease, never around it:
the session is opened as a live process opens it (``store.open``), so a
session a worker is delivering is waited for, up to ``wait_s``; one a live
process holds (or a worker still holds at the end of the wait) is reported
with its holder. The change is the one ``decide`` makes for the matching
tool call, naming the operator (``by``; see
:func:`~tickler.shell._operate.operate`). In the reference profile (v1
events only) a cancel is the plain v1 delete, which cannot name the
operator (``Done.recorded_by`` is False), and the other actions are
refused.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from returns.pipeline import is_successful

from tickler.core import (
    DEFAULT_PROFILE,
    CorruptScheduleLog,
    DeleteSchedule,
    NotFound,
    Profile,
    ToolCommand,
    Updated,
    UpdateSchedule,
    encode_change,
)
from tickler.shell import Operated, SessionLocked, SessionLog, SessionStore, StoreError, operate

Action = Literal["pause", "resume", "snooze", "cancel", "deliver-now"]
ACTIONS: Final[tuple[Action, ...]] = ("pause", "resume", "snooze", "cancel", "deliver-now")
DEFAULT_WAIT_S: Final = 5.0
"""How long an action waits for a session a worker is delivering."""
_RETRY_S: Final = 0.05  # PostgreSQL: how often a held lease is asked for again


class OperatorError(Exception):
    """An action that cannot be done, in one line (unknown session or
    reminder, a done reminder, a session held too long, a bad store)."""


@dataclass(frozen=True)
class Done:
    """An action done: ``changed`` False when there was nothing to change
    (a pause of a paused reminder); ``events`` the changes logged, as
    logged; ``recorded_by`` whether they name the operator."""

    session_id: str
    reminder_id: str
    action: Action
    by: str
    changed: bool
    recorded_by: bool
    events: tuple[str, ...]
    state: str | None  # the reminder's tool state after, None once cancelled
    next_due: str | None

    def as_json(self) -> dict[str, object]:
        return {
            "sessionId": self.session_id,
            "id": self.reminder_id,
            "action": self.action,
            "by": self.by,
            "changed": self.changed,
            "recordedBy": self.recorded_by,
            "events": list(self.events),
            "state": self.state,
            "nextDue": self.next_due,
        }


def command_for(
    action: Action, reminder_id: str, by: str, snooze_seconds: int | None = None
) -> ToolCommand:
    """The command ``decide`` judges for ``action``."""
    if action == "cancel":
        return DeleteSchedule(reminder_id, by=by)
    if action == "snooze":
        if snooze_seconds is None:
            raise OperatorError("snooze needs a duration (30m, 1h, 2d)")
        return UpdateSchedule(id=reminder_id, snooze_seconds=snooze_seconds, by=by)
    if action == "deliver-now":
        return UpdateSchedule(id=reminder_id, due_now=True, by=by)
    return UpdateSchedule(id=reminder_id, paused=action == "pause", by=by)


def open_store(source: str, *, schema: str, wait_s: float) -> SessionStore:
    """The store ``source`` names: a PostgreSQL DSN, a JSONL store
    directory or an SQLite store file (never made here). OperatorError
    for anything else or a DSN that does not parse."""
    from tickler.adapters.read._model import is_dsn, is_sqlite_file

    path = Path(source)
    try:
        if is_dsn(source):
            from tickler.adapters.stores._postgres import PostgresStore

            return PostgresStore(source, schema=schema)
        from tickler.adapters.stores import JsonlStore, SqliteStore

        if path.is_dir():
            return JsonlStore(path, lock_wait_s=wait_s)
        if path.is_file() and is_sqlite_file(path):
            return SqliteStore(path, lock_wait_s=wait_s)
    except (ValueError, StoreError) as exc:
        raise OperatorError(str(exc)) from None
    if path.exists():
        raise OperatorError(f"{source}: not a JSONL store directory nor an SQLite store file")
    raise OperatorError(f"{source}: no such directory or SQLite file (nor a postgresql:// DSN)")


@dataclass(frozen=True)
class Operator:
    """Actions on the sessions of one store (``source``, ``schema``), each
    opening the store for just that action (the dashboard's buttons)."""

    source: str
    schema: str = "tickler"
    default_by: str = "operator"
    wait_s: float = DEFAULT_WAIT_S
    profile: Profile = DEFAULT_PROFILE

    async def act(
        self,
        session_id: str,
        action: Action,
        reminder_id: str,
        by: str,
        snooze_seconds: int | None = None,
    ) -> Done:
        from tickler.adapters.read._model import is_dsn

        command = command_for(action, reminder_id, by, snooze_seconds)
        if is_dsn(self.source):  # its pool belongs to this event loop
            store = open_store(self.source, schema=self.schema, wait_s=self.wait_s)
        else:  # an embedded store's opening reads files: not on the event loop
            store = await asyncio.to_thread(
                open_store, self.source, schema=self.schema, wait_s=self.wait_s
            )
        try:
            return await act(
                store, session_id, command, action, by, wait_s=self.wait_s, profile=self.profile
            )
        finally:
            await store.close()


async def act(
    store: SessionStore,
    session_id: str,
    command: ToolCommand,
    action: Action,
    by: str,
    *,
    wait_s: float = DEFAULT_WAIT_S,
    profile: Profile = DEFAULT_PROFILE,
    now_ms: Callable[[], int] = lambda: time.time_ns() // 1_000_000,
) -> Done:
    """Do ``action`` (``command``) on a session of ``store``, holding the
    session's lock or lease for just that; see the module docstring."""
    if profile == "reference" and action != "cancel":
        raise OperatorError(
            f"{action} needs the extended profile: the reference profile's v1 events "
            "cannot record it (only cancel, as a plain v1 delete)"
        )
    if not await _exists(store, session_id):
        raise OperatorError(f"no session {session_id!r} in this store")
    log = await _open(store, session_id, wait_s)
    try:
        operated = await operate(log, command, now_ms(), profile=profile)
    except CorruptScheduleLog as exc:
        raise OperatorError(f"session {session_id!r}: its log is corrupt: {exc}") from None
    finally:
        await log.close()
    return _done(operated, session_id, command, action, by)


def _done(
    operated: Operated, session_id: str, command: ToolCommand, action: Action, by: str
) -> Done:
    reminder_id = command.id if isinstance(command, UpdateSchedule | DeleteSchedule) else ""
    if not is_successful(operated.result):
        raise OperatorError(f"{action} {reminder_id}: {operated.result.failure().message}")
    outcome = operated.result.unwrap()
    if isinstance(outcome, NotFound):
        if reminder_id in operated.before.seen_ids:
            raise OperatorError(
                f"reminder {reminder_id!r} of session {session_id!r} is done "
                "(delivered, deleted or cancelled)"
            )
        raise OperatorError(f"session {session_id!r} has no reminder {reminder_id!r}")
    events = tuple(encode_change(c).decode() for c in operated.changes)
    view = outcome.view if isinstance(outcome, Updated) else None
    return Done(
        session_id,
        reminder_id,
        action,
        by,
        changed=bool(operated.changes),
        recorded_by=all(isinstance(getattr(c, "by", None), str) for c in operated.changes),
        events=events,
        state=None if view is None else view.state,
        next_due=None if view is None else view.record.scheduled_at,
    )


async def _exists(store: SessionStore, session_id: str) -> bool:
    """Whether the session exists (opening would make it)."""
    from tickler.adapters.stores import JsonlStore
    from tickler.shell import validate_session_id

    try:
        validate_session_id(session_id)
    except StoreError as exc:
        raise OperatorError(str(exc)) from None
    try:
        if isinstance(store, JsonlStore):
            return (store.directory / f"{session_id}.jsonl").is_file()
        return session_id in await asyncio.to_thread(store.session_ids)
    except StoreError as exc:
        raise OperatorError(str(exc)) from None


async def _open(store: SessionStore, session_id: str, wait_s: float) -> SessionLog:
    """The session, held; waited for (bounded) while a worker delivers it."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            return await store.open(session_id, created_at=0)
        except SessionLocked:
            holder = await _holder(store, session_id)
            live = holder is not None and holder.startswith("live:")  # an embedded store's
            if live or time.monotonic() >= deadline or not _leased(store):
                raise OperatorError(_held_text(session_id, holder, wait_s, live=live)) from None
            await asyncio.sleep(_RETRY_S)
        except StoreError as exc:
            raise OperatorError(str(exc)) from None


def _leased(store: SessionStore) -> bool:
    """PostgreSQL's open does not wait for a lease; the embedded stores
    wait for a worker themselves (their ``lock_wait_s``)."""
    from tickler.adapters.stores import JsonlStore, SqliteStore

    return not isinstance(store, JsonlStore | SqliteStore)


def _held_text(session_id: str, holder: str | None, wait_s: float, *, live: bool) -> str:
    who = f"held by {holder}" if holder else "held by another process"
    if live:
        return f"session {session_id!r} is {who} (a live process): try again once it is closed"
    return f"session {session_id!r} is still {who} after {wait_s:g} s: try again, or --wait longer"


async def _holder(store: SessionStore, session_id: str) -> str | None:
    """Who holds the session, as its store records it (best effort)."""
    from tickler.adapters.stores import JsonlStore, SqliteStore
    from tickler.adapters.stores import _wakes as wakes

    try:
        if isinstance(store, JsonlStore | SqliteStore):
            return await store.index_read(wakes.holder_of, session_id)
        lease_holder = getattr(store, "lease_holder", None)
        if lease_holder is not None:
            held: str | None = await asyncio.to_thread(lease_holder, session_id)
            return held
    except StoreError:
        return None
    return None
