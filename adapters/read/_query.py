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
    """The key :meth:`Query.select` sorts by (see :data:`SORTS`)."""

    def due(view: Ranked) -> tuple[bool, int]:
        return view.next_due_ms is None, view.next_due_ms or 0

    if sort == "session":
        return lambda v: (v.session_id, *due(v), v.id)
    if sort == "failures":
        return lambda v: (-v.failures, *due(v), v.session_id, v.id)
    return lambda v: (*due(v), v.session_id, v.id)


@dataclass(frozen=True, slots=True)
class Query:
    """One reminders query (see :meth:`ReadModel.reminders`), the read
    model's one filter: which reminders it keeps (due within a horizon,
    failing), how it sorts them and where it cuts. Every store's reader
    answers through it, whichever sessions it reads; checked when made."""

    now_ms: int
    due_within_ms: int | None = None
    failing: bool = False
    sort: str = "due"
    limit: int | None = None

    def __post_init__(self) -> None:
        if self.sort not in SORTS:
            raise ValueError(f"unknown sort {self.sort!r}: use one of {', '.join(SORTS)}")
        if self.limit is not None and self.limit < 0:
            raise ValueError("limit must be 0 or more")
        if self.due_within_ms is not None and self.due_within_ms < 0:
            raise ValueError("due_within_ms must be 0 or more")

    @property
    def horizon(self) -> int | None:
        """The last instant a reminder kept may be due at (None: any)."""
        return None if self.due_within_ms is None else self.now_ms + self.due_within_ms

    def within(self, view: Ranked) -> bool:
        """Due at or before the horizon (overdue included), when there is one."""
        if self.due_within_ms is None:
            return True
        return view.next_due_ms is not None and view.next_due_ms <= self.now_ms + self.due_within_ms

    def matches(self, view: Ranked) -> bool:
        """Kept by the query: within the horizon and, when ``failing``, failing."""
        if self.failing and view.outbox != "failing":
            return False
        return self.within(view)

    def select(self, views: Iterable[R]) -> list[R]:
        """Filter, sort and cut, in memory (views, or the facts they are made
        from: see :class:`Ranked`)."""
        chosen = [v for v in views if self.matches(v)]
        chosen.sort(key=sort_key(self.sort))
        return chosen if self.limit is None else chosen[: self.limit]

    def leads(self, view: Ranked, bound: int | None, through: str | None = None) -> bool:
        """Whether ``view`` (of a query that is not ``failing``) surely sorts
        ahead of every reminder of the sessions not read yet, each of which
        fails nothing and is due at or after ``bound`` (None: due never, and
        then, when ``through`` is given, in a session after it by id): it is
        within the horizon and failing (sorted by failures), or due before
        ``bound``, or due never in a session at or before ``through``."""
        if not self.within(view):
            return False
        if self.sort == "failures" and view.failures > 0:
            return True
        due = view.next_due_ms
        if due is not None:
            return bound is None or due < bound
        return through is not None and view.session_id <= through


def latest_first(rows: Iterable[DeliveryView], limit: int) -> list[DeliveryView]:
    """Outbox rows first (the oldest due first), then the latest delivered."""
    every = list(rows)
    waiting = [r for r in every if r.delivered_ms is None]
    waiting.sort(key=lambda r: (r.due_ms, r.session_id, r.occurrence_key))
    done = [r for r in every if r.delivered_ms is not None]
    done.sort(key=lambda r: (-(r.delivered_ms or 0), r.session_id, r.occurrence_key))
    return (waiting + done)[:limit]
