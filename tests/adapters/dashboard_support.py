"""A small in-memory read model for the dashboard's rendering, escaping
and token tests (the end-to-end tests read real stores): it answers from
the views it is given, filtered, sorted and cut by the read model's own
shared code."""

from __future__ import annotations

from dataclasses import dataclass, field

from tickler.adapters.read._model import DeliveryView, ReadModel, ReminderView
from tickler.adapters.read._query import Query, latest_first
from tickler.adapters.read._views import ReminderFacts


def reminder(
    session_id: str,
    reminder_id: str,
    prompt: str,
    next_due_ms: int | None,
    kind: str = "at",
    time_zone: str | None = None,
    *,
    outbox: str = "idle",
    failures: int = 0,
    last_delivery_ms: int | None = None,
    last_lateness_ms: int | None = None,
    paused: bool = False,
) -> ReminderFacts:
    """An active reminder due at ``next_due_ms`` (paused: never); its state
    is the core's at each query's ``now``, as the real read model's is."""
    return ReminderFacts(
        session_id=session_id,
        id=reminder_id,
        kind=kind,
        prompt=prompt,
        target=next_due_ms,
        next_due_ms=None if paused else next_due_ms,
        time_zone=time_zone,
        paused=paused,
        outbox=outbox,
        failures=failures,
        last_delivery_ms=last_delivery_ms,
        last_lateness_ms=last_lateness_ms,
    )


def delivery(
    session_id: str,
    key: str,
    due_ms: int,
    delivered_ms: int | None,
    *,
    status: str = "delivered",
    failures: int = 0,
) -> DeliveryView:
    first = key.rpartition("@")[0]
    lateness = None if delivered_ms is None else delivered_ms - due_ms
    return DeliveryView(session_id, key, (first,), due_ms, delivered_ms, lateness, status, failures)


@dataclass
class ListedModel(ReadModel):
    listed: list[ReminderFacts] = field(default_factory=list)
    delivered: list[DeliveryView] = field(default_factory=list)
    extra_sessions: list[str] = field(default_factory=list)
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    calls: int = 0

    def __post_init__(self) -> None:
        super().__init__()

    async def reminders(
        self,
        *,
        now_ms: int,
        due_within_ms: int | None = None,
        failing: bool = False,
        session_id: str | None = None,
        sort: str = "due",
        limit: int | None = None,
    ) -> list[ReminderView]:
        query = Query(now_ms, due_within_ms, failing, sort, limit)
        self.calls += 1
        self.problems = list(self.unreadable)
        views = [
            f.at(now_ms) for f in self.listed if session_id is None or f.session_id == session_id
        ]
        return query.select(views)

    async def deliveries(
        self, *, limit: int = 100, session_id: str | None = None
    ) -> list[DeliveryView]:
        self.calls += 1
        rows = [d for d in self.delivered if session_id is None or d.session_id == session_id]
        return latest_first(rows, limit)

    async def sessions(self) -> list[str]:
        self.calls += 1
        found = {r.session_id for r in self.listed} | {d.session_id for d in self.delivered}
        return sorted(found | set(self.extra_sessions) | {s for s, _ in self.unreadable})
