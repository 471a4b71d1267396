"""The read model's walk of an embedded store's wake index (JSONL directory,
SQLite file): ``tickler reminders --limit N`` and the dashboard read only
the sessions their answer needs, and give the answer a read of every
session gives.

The index (:mod:`tickler.adapters.stores._wakes`) keeps per session its
wake: the earliest instant it needs a process. What the walk relies on,
for a row it calls *exact*:

* a session's reminders are each due at or after its wake, or due never
  (paused), unless a follow-up waits in its outbox; its wake is then the
  instant the follow-up was put there (the waiting reminder was due
  earlier), or, its hand-over having failed, the retry (counted in
  ``failures``). So a row whose ``failures`` is not 0, or whose wake has
  passed (at or before the query's ``now``, and the wall clock's) in a
  session that holds a follow-up record (the store tells, without reading
  it whole), is no bound on its reminders: that session is always read.
* a session without a wake holds no reminder but paused ones (due never,
  listed last).

A row is exact while nobody holds the session (``holder`` NULL: a holder's
wake is a hint), its wake is known (not ``DUE_NOW``: a holder that let go
without one, or died, or a log changed behind the index), no worker set
it aside as unreadable, and (JSONL) its file's size is the one the row
was written at. Every other session (no row, held, wake unknown, set
aside, changed behind the index) is read, as a full read would.

Sessions are read in this order, a page at a time: those always read,
then those with a wake in wake order, stopping once ``limit`` reminders
are sure to lead whatever the sessions not read yet hold (each of theirs is
due at or after the next wake); then, short of ``limit``, the sessions
without a wake that may hold a paused reminder, in id order.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from tickler.adapters.read._query import Query
from tickler.adapters.read._views import ReminderFacts, Summary
from tickler.adapters.stores._wakes import DUE_NOW, WakeRow

PAGE: Final = 500
"""Sessions read at most per step of a walk."""
Load = Callable[[Sequence[str]], list[Summary]]
"""Reads these sessions (a session that cannot be read is the reader's
problem to note, and left out)."""
Paused = Callable[[Sequence[str]], set[str]]
"""Which of these sessions (all without a wake) may hold a paused reminder."""


@dataclass(frozen=True, slots=True)
class Plan:
    """A store's sessions as its index tells them."""

    read: list[str]  # always read: their wake bounds nothing (see the module docstring)
    timed: list[tuple[int, str]]  # (exact wake, session id), the earliest first
    quiet: list[str]  # exact, no wake: paused reminders or none; by id


def plan_of(
    ids: Iterable[str],
    rows: Mapping[str, WakeRow],
    cutoff_ms: int,
    *,
    fresh: Callable[[WakeRow], bool] = lambda row: True,
    never_sent: Callable[[list[str]], set[str]] = lambda ids: set(),
) -> Plan:
    """Sort the sessions ``ids`` (every one the store holds) by their rows
    in the index. ``cutoff_ms``: a wake at or before it has passed (the
    later of the query's ``now`` and the wall clock). ``fresh``: whether
    the row was written for the session as it is now (JSONL: its size).
    ``never_sent``: which of these sessions (their wake passed) hold no
    follow-up record at all, so no waiting one: their wake is their
    soonest reminder's, a bound like any other."""
    read: list[str] = []
    timed: list[tuple[int, str]] = []
    quiet: list[str] = []
    passed: list[tuple[int, str]] = []
    for session_id in ids:
        row = rows.get(session_id)
        exact = (
            row is not None
            and row.holder is None
            and row.set_aside is None
            and row.failures == 0
            and row.next_due_at != DUE_NOW  # "look again": its wake is not known
            and fresh(row)
        )
        if not exact or row is None:
            read.append(session_id)
        elif row.next_due_at is None:
            quiet.append(session_id)
        elif row.next_due_at > cutoff_ms:
            timed.append((row.next_due_at, session_id))
        else:
            passed.append((row.next_due_at, session_id))
    if passed:
        bounded = never_sent([session_id for _, session_id in passed])
        for wake, session_id in passed:
            if session_id in bounded:
                timed.append((wake, session_id))
            else:
                read.append(session_id)
    timed.sort()
    quiet.sort()
    return Plan(read, timed, quiet)


class _Lead:
    """The reminders found so far, counted as they surely lead the sort
    whatever the sessions not read yet hold: each of theirs is due at or
    after a bound (which only rises as the walk goes on; None: due never),
    fails nothing and, in the walk by id, is in a session after the last
    one read."""

    def __init__(self, query: Query) -> None:
        self.query = query
        self.found: list[ReminderFacts] = []
        self._ahead = 0  # due before the bound so far, or failing (sort by failures)
        self._due: list[int] = []  # a heap of the others' due instants
        self._never: list[str] = []  # the sessions of those due never

    def add(self, facts: list[ReminderFacts]) -> None:
        query = self.query
        self.found += facts
        for fact in facts:
            if not query.within(fact):
                continue
            if query.sort == "failures" and fact.failures > 0:
                self._ahead += 1
            elif fact.next_due_ms is not None:
                heapq.heappush(self._due, fact.next_due_ms)
            else:
                self._never.append(fact.session_id)

    def settled(self, bound: int | None, through: str | None = None) -> bool:
        """Whether ``limit`` of them lead, the sessions not read yet holding
        nothing due before ``bound`` and (``through``) none before it by id.
        Once they do, only those are kept (the others sort after them)."""
        if self.query.limit is None:
            return False
        while self._due and (bound is None or self._due[0] < bound):
            heapq.heappop(self._due)
            self._ahead += 1
        count = self._ahead
        if through is not None:
            count += sum(1 for session_id in self._never if session_id <= through)
        if count < self.query.limit:
            return False
        self.found = [fact for fact in self.found if self.query.leads(fact, bound, through)]
        return True


def _facts(summaries: Iterable[Summary]) -> list[ReminderFacts]:
    return [fact for summary in summaries for fact in summary.reminders]


def walk(plan: Plan, query: Query, load: Load, paused: Paused) -> list[ReminderFacts]:
    """The reminders of the sessions ``query`` needs read: among them, the
    answer a read of every session gives (after ``select``)."""
    if query.failing:  # a failing follow-up waits in an outbox: always read
        return _facts(load(plan.read))
    horizon = query.horizon
    timed = [(wake, sid) for wake, sid in plan.timed if horizon is None or wake <= horizon]
    if query.sort == "session":
        return _by_id(plan, timed, query, load, paused)
    lead = _Lead(query)
    lead.add(_facts(load(plan.read)))
    position = 0
    limit = query.limit
    # Each session holds a reminder due at or after its wake: about
    # ``limit`` sessions are often enough; the pages grow if not.
    size = PAGE if limit is None else min(PAGE, max(16, limit + limit // 4))
    while position < len(timed):
        page = timed[position : position + size]
        position += len(page)
        lead.add(_facts(load([sid for _, sid in page])))
        if position < len(timed) and lead.settled(timed[position][0]):
            return lead.found
        size = min(PAGE, size * 2)
    if horizon is not None or lead.settled(None):
        return lead.found  # paused reminders are due never: none is within a horizon
    for start in range(0, len(plan.quiet), PAGE):
        page_ids = plan.quiet[start : start + PAGE]
        holding = paused(page_ids)
        lead.add(_facts(load([sid for sid in page_ids if sid in holding])))
        if lead.settled(None, page_ids[-1]):
            break
    return lead.found


def _by_id(
    plan: Plan, timed: list[tuple[int, str]], query: Query, load: Load, paused: Paused
) -> list[ReminderFacts]:
    """``--sort session``: every session that may hold a matching reminder,
    in id order, until ``limit`` match (the sessions after hold none that
    sorts before them)."""
    quiet = plan.quiet if query.horizon is None else []
    ids = sorted([*plan.read, *(sid for _, sid in timed), *quiet])
    quiet_ids = set(quiet)
    lead = _Lead(query)
    for start in range(0, len(ids), PAGE):
        page_ids = ids[start : start + PAGE]
        holding = paused([sid for sid in page_ids if sid in quiet_ids])
        lead.add(_facts(load([sid for sid in page_ids if sid not in quiet_ids or sid in holding])))
        if lead.settled(None, page_ids[-1]):
            break
    return lead.found
