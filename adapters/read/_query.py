"""The read model's interface, and the filtering and sorting every store's
reader shares."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final, Protocol, TypeVar

from tickler.adapters.read._views import DeliveryView, ReminderView

SORTS: Final = ("due", "session", "failures")
"""``due``: the soonest first (none last); ``session``: by session, then
due; ``failures``: the most failed hand-overs first, then due."""


@dataclass(frozen=True, slots=True)
class Overview:
    """What the dashboard reads for one page (see :meth:`ReadModel.overview`)."""

    sessions: list[str]
    reminders: list[ReminderView]  # the first ``scan`` by due time
    failing: list[ReminderView] | None  # None: every reminder is in ``reminders``
    deliveries: list[DeliveryView]
    problems: list[tuple[str, str]]


class ReadModel(ABC):
    """Every session of one store, read-only. ``problems`` lists the
    sessions the last call could not read, as ``(session id, reason)``:
    they are left out of its answer, never repaired."""

    def __init__(self) -> None:
        self.problems: list[tuple[str, str]] = []

    @abstractmethod
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
        """The reminders of every session (or of ``session_id``): due at or
        before ``now_ms + due_within_ms`` (overdue ones included) when
        given, only those whose follow-up is failing when ``failing``,
        sorted by ``sort`` (one of :data:`SORTS`), at most ``limit``."""

    @abstractmethod
    async def deliveries(
        self, *, limit: int = 100, session_id: str | None = None
    ) -> list[DeliveryView]:
        """The follow-ups still in an outbox (pending or failing), then the
        latest delivered, the latest first; at most ``limit``."""

    @abstractmethod
    async def sessions(self) -> list[str]:
        """Every session id, sorted."""

    async def overview(self, *, now_ms: int, scan: int, rows: int) -> Overview:
        """The dashboard's read: every session id, the first ``scan``
        reminders by due time, the failing ones (at most ``rows``, asked
        for only when there were more than ``scan``), the deliveries answer
        (at most ``rows``) and the sessions that could not be read. A store
        may answer it in one pass."""
        ids = await self.sessions()
        due = await self.reminders(now_ms=now_ms, sort="due", limit=scan)
        problems = list(self.problems)
        failing = None
        if len(due) >= scan:
            failing = await self.reminders(now_ms=now_ms, failing=True, limit=rows)
        deliveries = await self.deliveries(limit=rows)
        return Overview(ids, due, failing, deliveries, problems)


def check_query(sort: str, limit: int | None, due_within_ms: int | None) -> None:
    if sort not in SORTS:
        raise ValueError(f"unknown sort {sort!r}: use one of {', '.join(SORTS)}")
    if limit is not None and limit < 0:
        raise ValueError("limit must be 0 or more")
    if due_within_ms is not None and due_within_ms < 0:
        raise ValueError("due_within_ms must be 0 or more")


class Ranked(Protocol):
    """What filtering and sorting look at: a :class:`ReminderView`, or the
    :class:`~tickler.adapters.read._views.ReminderFacts` it is made from
    (none of these depends on the query's ``now``), so a reader can cut
    first and make views of the rows kept only."""

    @property
    def session_id(self) -> str: ...
    @property
    def id(self) -> str: ...
    @property
    def next_due_ms(self) -> int | None: ...
    @property
    def outbox(self) -> str: ...
    @property
    def failures(self) -> int: ...


R = TypeVar("R", bound=Ranked)


def sort_key(sort: str) -> Callable[[Ranked], tuple[object, ...]]:
    """The key :func:`select` sorts by (see :data:`SORTS`)."""

    def due(view: Ranked) -> tuple[bool, int]:
        return view.next_due_ms is None, view.next_due_ms or 0

    if sort == "session":
        return lambda v: (v.session_id, *due(v), v.id)
    if sort == "failures":
        return lambda v: (-v.failures, *due(v), v.session_id, v.id)
    return lambda v: (*due(v), v.session_id, v.id)


def matches(view: Ranked, now_ms: int, due_within_ms: int | None, failing: bool) -> bool:
    if failing and view.outbox != "failing":
        return False
    if due_within_ms is not None:
        return view.next_due_ms is not None and view.next_due_ms <= now_ms + due_within_ms
    return True


def select(
    views: Iterable[R],
    *,
    now_ms: int,
    due_within_ms: int | None,
    failing: bool,
    sort: str,
    limit: int | None,
) -> list[R]:
    """Filter, sort and cut, in memory (views, or the facts they are made
    from: see :class:`Ranked`)."""
    chosen = [v for v in views if matches(v, now_ms, due_within_ms, failing)]
    chosen.sort(key=sort_key(sort))
    return chosen if limit is None else chosen[:limit]


def latest_first(rows: Iterable[DeliveryView], limit: int) -> list[DeliveryView]:
    """Outbox rows first (the oldest due first), then the latest delivered."""
    every = list(rows)
    waiting = [r for r in every if r.delivered_ms is None]
    waiting.sort(key=lambda r: (r.due_ms, r.session_id, r.occurrence_key))
    done = [r for r in every if r.delivered_ms is not None]
    done.sort(key=lambda r: (-(r.delivered_ms or 0), r.session_id, r.occurrence_key))
    return (waiting + done)[:limit]
