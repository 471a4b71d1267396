"""The read model over the embedded stores: a JSONL directory and an SQLite
file (:mod:`tickler.adapters.read._sqlite`). Every call runs off the event
loop; a session's summary is kept between calls and read again only once
its log changed (a dashboard refreshes).

* A query cut by ``limit`` or ``due_within`` walks the store's wake index
  (:mod:`tickler.adapters.read._walk`) and reads only the sessions its
  answer needs; without an index it reads every session.
* JSONL: each ``<session>.jsonl`` is read whole, without its lock, as
  ``tickler check`` reads it; a torn final line (a writer mid-append) is
  left out. A file whose size and modification time did not move since
  the last call is not read again. The index is ``.wake.db``, opened
  read-only; its row is exact for a file of the size it was written at.
"""

from __future__ import annotations

import os
import threading
from abc import abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Final, Protocol, TypeVar

from tickler.adapters._off_loop import off_loop
from tickler.adapters.read._common import deliveries_of, problem
from tickler.adapters.read._index import jsonl_rows, passed_ms
from tickler.adapters.read._query import Overview, Query, ReadModel
from tickler.adapters.read._views import (
    HISTORY_TYPES,
    DeliveryView,
    ReminderFacts,
    ReminderView,
    SessionRows,
    Summary,
    summarize,
)
from tickler.adapters.read._walk import Plan, plan_of, walk
from tickler.adapters.stores._files import open_regular
from tickler.core import parse_session_jsonl
from tickler.shell import is_valid_session_id

T = TypeVar("T")
PAUSED: Final = b'"paused":true'
"""How the log writes a pause (no JSON string holds it unescaped): a session
file without it holds no paused reminder."""
SENT: Final = b'"tickler/followup"'
"""How the log writes a follow-up record's type: a session file without it
has never put a follow-up in its outbox."""


class Round(Protocol):
    """One call's reading of a store, in one worker thread."""

    problems: list[tuple[str, str]]

    def ids(self) -> list[str]:
        """Every session id, sorted."""

    def only(self, session_id: str) -> list[str]:
        """``[session_id]`` when the store holds it, else ``[]``."""

    def read(self, ids: Sequence[str]) -> dict[str, Summary]:
        """The summaries of ``ids`` by id; one that cannot be read is a
        problem, and left out."""

    def load(self, ids: Sequence[str]) -> list[Summary]:
        """The summaries of ``ids`` (see :meth:`read`)."""

    def plan(self, cutoff_ms: int) -> Plan | None:
        """The sessions as the wake index tells them (None: no index)."""

    def paused(self, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` may hold a paused reminder."""


def read_each(
    ids: Sequence[str], read: Callable[[str], Summary], problems: list[tuple[str, str]]
) -> dict[str, Summary]:
    """Each session's summary by id; a session that cannot be read is a
    problem, and left out."""
    found: dict[str, Summary] = {}
    for session_id in ids:
        try:
            found[session_id] = read(session_id)
        except Exception as exc:  # noqa: BLE001 - that session's problem only
            problems.append((session_id, problem(exc)))
    return found


def _facts(summaries: Sequence[Summary]) -> list[ReminderFacts]:
    return [fact for summary in summaries for fact in summary.reminders]


def cut(facts: list[ReminderFacts], query: Query) -> list[ReminderView]:
    """Filter, sort and cut the facts, then make views of the rows kept (at
    the query's ``now``)."""
    return [fact.at(query.now_ms) for fact in query.select(facts)]


def answer(store: Round, query: Query, session_id: str | None) -> list[ReminderView]:
    """The reminders answer: through the wake index when the query is cut
    (by ``limit`` or a horizon) and the store keeps one, else from every
    session (or the one asked for)."""
    if session_id is not None:
        return cut(_facts(store.load(store.only(session_id))), query)
    plan = None
    if query.limit is not None or query.due_within_ms is not None:
        plan = store.plan(passed_ms(query.now_ms))
    if plan is None:
        return cut(_facts(store.load(store.ids())), query)
    return cut(walk(plan, query, store.load, store.paused), query)


def overview(store: Round, now_ms: int, scan: int, rows: int) -> Overview:
    """The dashboard's read in one pass: every session is read (the
    delivery history and the unreadable ones need it; unchanged ones come
    from the cache), the reminders through the wake index as ``tickler
    reminders`` finds them."""
    ids = store.ids()
    summaries = store.read(ids)
    every = list(summaries.values())

    def kept(wanted: Sequence[str]) -> list[Summary]:
        return [summaries[i] for i in wanted if i in summaries]

    plan = store.plan(passed_ms(now_ms))

    def facts(query: Query) -> list[ReminderFacts]:
        return _facts(every) if plan is None else walk(plan, query, kept, store.paused)

    due = Query(now_ms, None, False, "due", scan)
    first = cut(facts(due), due)
    failing = None
    if len(first) >= scan:
        failing_query = Query(now_ms, None, True, "due", rows)
        failing = cut(facts(failing_query), failing_query)
    return Overview(ids, first, failing, deliveries_of(every, rows), list(store.problems))


class _InMemory(ReadModel):
    """Reads in a worker thread, through a :class:`Round` per call, one call
    at a time (they share the summaries kept). An ABC through
    :class:`ReadModel`: each store says how its sessions are read."""

    def __init__(self) -> None:
        super().__init__()
        self._one_at_a_time = threading.Lock()

    @abstractmethod
    def _round(self) -> AbstractContextManager[Round]:
        """One call's reading of the store."""

    async def _run(self, job: Callable[[Round], T]) -> T:
        def work() -> tuple[T, list[tuple[str, str]]]:
            with self._one_at_a_time, self._round() as store:
                return job(store), store.problems

        result, self.problems = await off_loop(work)  # a daemon thread: Ctrl-C never waits on it
        return result

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
        return await self._run(lambda store: answer(store, query, session_id))

    async def deliveries(
        self, *, limit: int = 100, session_id: str | None = None
    ) -> list[DeliveryView]:
        def job(store: Round) -> list[DeliveryView]:
            ids = store.ids() if session_id is None else store.only(session_id)
            return deliveries_of(store.load(ids), limit)

        return await self._run(job)

    async def sessions(self) -> list[str]:
        return await self._run(lambda store: store.ids())

    async def overview(self, *, now_ms: int, scan: int, rows: int) -> Overview:
        return await self._run(lambda store: overview(store, now_ms, scan, rows))


Stamp = tuple[int, int]  # a file's size and modification time (ns)


class JsonlReadModel(_InMemory):
    """A session file is parsed again only when its size or modification
    time moved since the last call (a dashboard refreshes)."""

    def __init__(self, directory: Path) -> None:
        super().__init__()
        self.directory = directory
        self._cache: dict[str, tuple[Stamp, int, Summary]] = {}
        self.refused: list[tuple[str, str]] = []  # the last listing's non-files

    def _path(self, session_id: str) -> Path:
        return self.directory / f"{session_id}.jsonl"

    def _listing(self) -> dict[str, Stamp]:
        """Each session file's id and stamp, in one read of the directory.
        A FIFO, socket or device named like a session file is left out, and
        kept in ``refused`` with why (never opened for reading: a FIFO's
        read would wait for a writer)."""
        found: dict[str, Stamp] = {}
        self.refused = []
        with os.scandir(self.directory) as entries:
            for entry in entries:
                name = entry.name
                if not name.endswith(".jsonl") or not is_valid_session_id(name[:-6]):
                    continue
                try:
                    if not entry.is_file():
                        if not entry.is_dir():
                            self.refused.append((name[:-6], _not_regular(Path(entry.path))))
                        continue
                    info = entry.stat()
                except OSError:
                    continue
                found[name[:-6]] = (info.st_size, info.st_mtime_ns)
        return found

    @contextmanager
    def _round(self) -> Iterator[Round]:
        yield _JsonlRound(self)

    def summary(self, session_id: str, stamp: Stamp | None = None, failures: int = 0) -> Summary:
        """The session's summary: the cached one while its file's stamp
        (``stamp``, as listed, else taken now) and the failed hand-overs its
        wake index row counts (``failures``, as a failure index keeps them:
        the log records the 1st, 2nd, 4th ...) have not moved."""
        kept = self.cached(session_id, stamp, failures)
        if kept is not None:
            return kept
        with open_regular(self._path(session_id)) as file:  # a FIFO is refused, never waited on
            info = os.fstat(file.fileno())
            stamp = (info.st_size, info.st_mtime_ns)
            kept = self.cached(session_id, stamp, failures)
            if kept is not None:
                return kept
            data = file.read()
        parsed = parse_session_jsonl(data)
        owned = parsed.events[parsed.header.owned_from :]
        history = [e for e in owned if e.type in HISTORY_TYPES]
        rows = SessionRows(parsed.header, None, parsed.events, history, failures)
        summary = summarize(rows)
        self._cache[session_id] = (stamp, failures, summary)
        return summary

    def cached(self, session_id: str, stamp: Stamp | None, failures: int = 0) -> Summary | None:
        """The kept summary while the file's stamp (and its row's failure
        count) have not moved."""
        found = self._cache.get(session_id)
        if stamp is None or found is None or found[:2] != (stamp, failures):
            return None
        return found[2]

    def holds_none(self, session_id: str, marker: bytes) -> bool:
        """Whether the session's file surely holds no ``marker`` (without
        parsing it: a file that cannot be read may hold anything)."""
        try:
            with open_regular(self._path(session_id)) as file:
                return marker not in file.read()
        except OSError:
            return False

    def may_hold_paused(self, session_id: str, stamp: Stamp | None) -> bool:
        cached = self.cached(session_id, stamp)
        if cached is not None:
            return any(fact.paused for fact in cached.reminders)
        return not self.holds_none(session_id, PAUSED)

    def forget_others(self, kept: dict[str, Stamp]) -> None:
        """Drop the summaries of sessions no longer in the directory."""
        for session_id in [k for k in self._cache if k not in kept]:
            del self._cache[session_id]


class _JsonlRound:
    def __init__(self, model: JsonlReadModel) -> None:
        self.model = model
        self.problems: list[tuple[str, str]] = []
        self._listed: dict[str, Stamp] | None = None
        self._counts: dict[str, int] | None = None

    def _listing(self) -> dict[str, Stamp]:
        if self._listed is None:
            self._listed = self.model._listing()
            self.problems += self.model.refused  # a FIFO named like a session: reported
            self.model.forget_others(self._listed)
        return self._listed

    def ids(self) -> list[str]:
        return sorted(self._listing())

    def only(self, session_id: str) -> list[str]:
        return [session_id] if self.model._path(session_id).is_file() else []

    def read(self, ids: Sequence[str]) -> dict[str, Summary]:
        stamps = self._listed or {}
        counts = self._failures()
        return read_each(
            ids, lambda i: self.model.summary(i, stamps.get(i), counts.get(i, 0)), self.problems
        )

    def _failures(self) -> dict[str, int]:
        """The failed hand-overs each wake index row counts (a row a process
        holds is left out: its count is written at its close)."""
        if self._counts is None:
            rows = jsonl_rows(self.model.directory) or {}
            self._counts = {
                sid: row.failures
                for sid, row in rows.items()
                if row.holder is None and row.failures
            }
        return self._counts

    def load(self, ids: Sequence[str]) -> list[Summary]:
        return list(self.read(ids).values())

    def plan(self, cutoff_ms: int) -> Plan | None:
        rows = jsonl_rows(self.model.directory)
        if rows is None:
            return None
        listed = self._listing()
        return plan_of(
            sorted(listed),
            rows,
            cutoff_ms,
            fresh=lambda row: row.size == listed[row.session_id][0],
            never_sent=lambda ids: {i for i in ids if self._waits_nothing(i)},
        )

    def _waits_nothing(self, session_id: str) -> bool:
        """Whether no follow-up waits in the session's outbox: as its kept
        summary says (its file unchanged), else when its file holds no
        follow-up record at all."""
        stamp = (self._listed or {}).get(session_id)
        cached = self.model.cached(session_id, stamp, self._failures().get(session_id, 0))
        if cached is not None:
            return all(row.delivered_ms is not None for row in cached.deliveries)
        return self.model.holds_none(session_id, SENT)

    def paused(self, ids: Sequence[str]) -> set[str]:
        stamps = self._listed or {}
        return {i for i in ids if self.model.may_hold_paused(i, stamps.get(i))}


def _not_regular(path: Path) -> str:
    """Why ``path`` (no regular file) is no session file, as opening it says."""
    try:
        with open_regular(path):
            return f"{path}: not a regular file"
    except Exception as exc:  # noqa: BLE001 - its reason is the answer
        return problem(exc)
