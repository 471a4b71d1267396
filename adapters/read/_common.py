"""What the store readers share between the rows they fetch and the answers
they give, so that every store answers alike: a session's rows folded into
its summary (SQLite and PostgreSQL fetch the same three kinds of rows), the
reason a session is left out, and the reminders and deliveries answers
gathered from the summaries (every reader)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

import msgspec

from tickler.adapters.read._query import latest_first
from tickler.adapters.read._views import (
    DeliveryView,
    ReminderView,
    SessionRows,
    Summary,
    summarize,
)
from tickler.core import SessionEvent, SessionHeader, event
from tickler.shell import Snapshot

_HEADER: Final = msgspec.json.Decoder(SessionHeader)
Row = tuple[Any, ...]


def snapshots_by_session(rows: Iterable[Row]) -> dict[str, Snapshot]:
    """Snapshot rows ``(session id, through, data)`` by session."""
    return {str(r[0]): Snapshot(int(r[1]), bytes(r[2])) for r in rows}


def events_by_session(rows: Iterable[Row]) -> dict[str, list[SessionEvent]]:
    """Event rows ``(session id, seq, type, time, data)`` by session, in
    the rows' order."""
    found: dict[str, list[SessionEvent]] = {}
    for session_id, seq, kind, at, data in rows:
        found.setdefault(str(session_id), []).append(event(kind, int(seq), int(at), bytes(data)))
    return found


@dataclass(frozen=True, slots=True)
class FetchedRows:
    """The rows one read fetched for its sessions, by session id: the
    snapshots, the events after them and the delivery history."""

    snapshots: dict[str, Snapshot]
    events: dict[str, list[SessionEvent]]
    history: dict[str, list[SessionEvent]]

    def summary(self, session_id: str, header: bytes, failures: int = 0) -> Summary:
        """That session's summary; the header is decoded here, so that a
        damaged one is that session's problem alone (see :func:`problem`)."""
        return summarize(
            SessionRows(
                _HEADER.decode(header),
                self.snapshots.get(session_id),
                self.events.get(session_id, []),
                self.history.get(session_id, []),
                failures,
            )
        )


def problem(exc: Exception) -> str:
    """Why a session was left out of an answer (``ReadModel.problems``)."""
    return f"{type(exc).__name__}: {exc}"


def reminders_of(summaries: Iterable[Summary], now_ms: int) -> list[ReminderView]:
    """Every reminder of ``summaries`` at ``now_ms`` (each in the core's
    state then), before the query's ``select``."""
    return [facts.at(now_ms) for s in summaries for facts in s.reminders]


def deliveries_of(summaries: Iterable[Summary], limit: int) -> list[DeliveryView]:
    """The deliveries answer: every delivery of ``summaries``, waiting
    ones first, then the latest delivered, at most ``limit``."""
    return latest_first([d for s in summaries for d in s.deliveries], limit)
