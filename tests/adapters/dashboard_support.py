"""A small in-memory stand-in for a store's read model, for the dashboard's
rendering, escaping and token tests (the end-to-end test reads real
stores). It answers the queries the page makes from lists it is given,
filtering and sorting as the read model documents."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Reminder:
    session_id: str
    id: str
    prompt: str
    next_due_ms: int | None
    kind: str = "at"
    time_zone: str | None = None
    paused: bool = False
    outbox: str = "idle"
    failures: int = 0
    last_delivery_ms: int | None = None
    last_lateness_ms: int | None = None


@dataclass(frozen=True, slots=True)
class Delivery:
    session_id: str
    occurrence_key: str
    reminder_ids: tuple[str, ...]
    due_ms: int
    delivered_ms: int | None
    lateness_ms: int | None
    status: str = "delivered"
    failures: int = 0


@dataclass
class ListedModel:
    listed: list[Reminder] = field(default_factory=list)
    delivered: list[Delivery] = field(default_factory=list)
    extra_sessions: list[str] = field(default_factory=list)
    queries: list[dict[str, object]] = field(default_factory=list)

    async def reminders(
        self,
        *,
        now_ms: int,
        due_within_ms: int | None = None,
        failing: bool = False,
        session_id: str | None = None,
        sort: str = "due",
        limit: int | None = None,
    ) -> Sequence[Reminder]:
        self.queries.append({"now_ms": now_ms, "failing": failing, "sort": sort, "limit": limit})
        rows = [
            r
            for r in self.listed
            if (not failing or r.outbox == "failing")
            and (session_id is None or r.session_id == session_id)
            and (
                due_within_ms is None
                or (r.next_due_ms is not None and r.next_due_ms <= now_ms + due_within_ms)
            )
        ]
        assert sort == "due"
        rows.sort(key=lambda r: (r.next_due_ms is None, r.next_due_ms or 0, r.session_id, r.id))
        return rows if limit is None else rows[:limit]

    async def deliveries(
        self, *, limit: int = 100, session_id: str | None = None
    ) -> Sequence[Delivery]:
        rows = [d for d in self.delivered if session_id is None or d.session_id == session_id]
        return rows[:limit]

    async def sessions(self) -> Sequence[str]:
        found = {r.session_id for r in self.listed} | {d.session_id for d in self.delivered}
        return sorted(found | set(self.extra_sessions))
