"""What an active reminder costs a process that holds many sessions: its
entry in the state is not tracked by the garbage collector (a full pass
walks every tracked object, so a runtime holding 100,000 reminders would
walk 100,000 entries each time), and it is no larger than its three
fields need. Entries still sort as tuples of their fields did (creation
order first), which ``active`` and snapshots rely on."""

from __future__ import annotations

import gc
import json
import sys
from typing import Final

import pytest

from tickler.core import (
    EMPTY_STATE,
    SCHEDULE_CHANGE,
    DeliverDue,
    ScheduleChange,
    State,
    decide,
    encode_change,
    fold,
    fold_changes,
    handle,
    parse_instant,
)
from tickler.core._snapshot import SnapshotError, decode_state, encode_state
from tickler.core._state import Entry
from tickler.testing.strategies import EventLog

NOW: Final = parse_instant("2026-08-05T12:00:00.000Z")


def _made_by_the_tools() -> tuple[State, list[ScheduleChange]]:
    """Three reminders (two one-shots and an every), the first one-shot
    and the every dispatched (it ends; the every's entry moves on); the
    changes that made them."""
    state = EMPTY_STATE
    made: list[ScheduleChange] = []
    for args in (
        {"prompt": "a", "after_seconds": 60},
        {"prompt": "b", "every_seconds": 300},
        {"prompt": "d", "after_seconds": 3_600},
    ):
        changes, _ = handle(state, "schedule_create", args, NOW)
        made += changes
        state = fold_changes(changes, state)
    for at in (NOW + 60_000, NOW + 300_000):
        changes, _ = decide(state, DeliverDue(), at)
        made += changes
        state = fold_changes(changes, state)
    return state, made


def test_an_entry_is_not_tracked_by_the_collector() -> None:
    live, changes = _made_by_the_tools()
    log = EventLog()
    for change in changes:
        log.append(SCHEDULE_CHANGE, encode_change(change))
    replayed = fold(log.events)
    assert replayed == live
    assert len(live.entries) == 2
    for state in (live, replayed):  # made by evolve, and by the replay's own book
        for entry in state.entries.values():
            assert not gc.is_tracked(entry), entry


def test_an_entry_holds_its_fields_and_no_more() -> None:
    state, _ = _made_by_the_tools()
    for entry in state.entries.values():
        # An object header and three references (40 bytes); a tuple of
        # three, as a NamedTuple is, takes 64 with the collector's header.
        assert sys.getsizeof(entry) <= 40


def test_entries_sort_by_creation_order_first() -> None:
    state, _ = _made_by_the_tools()
    ordered = sorted(state.entries.values())
    assert [e.order for e in ordered] == sorted(e.order for e in state.entries.values())
    assert [record.id for record in state.active] == [e.record.id for e in ordered]
    first = ordered[0]
    assert Entry(first.order, first.record, first.target) == first
    assert Entry(first.order, first.record, first.target + 1) > first
    assert Entry(first.order - 1, ordered[-1].record, first.target + 1) < first


def test_a_snapshot_with_two_rows_of_one_creation_order_is_refused() -> None:
    # Two entries of one order would compare their records when sorted
    # (a TypeError in every list); the snapshot is refused instead, and the
    # log is replayed.
    state, _ = _made_by_the_tools()
    image = json.loads(encode_state(state))
    assert decode_state(json.dumps(image).encode()) == state
    first, second = image["rows"][:2]
    second[0] = first[0]
    with pytest.raises(SnapshotError, match="duplicate creation orders"):
        decode_state(json.dumps(image).encode())
