"""Snoozing a fixed-rate reminder: the next occurrence moves to now + N,
later ones stay on the interval counted from its creation (the lattice).
The log keeps only the snoozed target; every path derives the lattice point
after it the same way (decide, evolve, fold, a snapshot)."""

from __future__ import annotations

import json
from typing import Any, Final

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tickler.core import (
    EMPTY_STATE,
    SCHEDULE_CHANGE,
    DeliverDue,
    Delivery,
    State,
    Wait,
    decide,
    encode_change,
    evolve,
    fold,
    format_instant,
    handle,
    parse_instant,
)
from tickler.core._snapshot import SnapshotError, decode_state, encode_state
from tickler.core.wire._session import event

HOUR: Final = 3_600_000
T9: Final = parse_instant("2026-12-07T09:00:00.000Z")


def _run(state: State, tool: str, args: dict[str, Any], now: int) -> tuple[State, Any]:
    changes, answer = handle(state, tool, args, now)
    for change in changes:
        state = evolve(state, change)
    return state, json.loads(answer)


def _deliver(state: State, now: int) -> tuple[State, Delivery]:
    changes, result = decide(state, DeliverDue(), now)
    delivery = result.unwrap()
    assert isinstance(delivery, Delivery)
    for change in changes:
        state = evolve(state, change)
    return state, delivery


def _hourly() -> State:
    """An hourly reminder created at 09:00: due 10:00, 11:00, ..."""
    state, created = _run(
        EMPTY_STATE, "schedule_create", {"prompt": "stretch", "every_seconds": 3600}, T9
    )
    assert created["scheduledAt"] == "2026-12-07T10:00:00.000Z"
    return state


def test_the_readme_example_fires_at_the_snoozed_time_then_back_on_the_hour() -> None:
    state = _hourly()
    now = T9 + 55 * 60_000  # 09:55
    state, snoozed = _run(
        state, "schedule_update", {"id": "schedule-1", "snooze_seconds": 1800}, now
    )
    assert snoozed["scheduledAt"] == "2026-12-07T10:25:00.000Z"
    assert [o["utc"] for o in snoozed["nextOccurrences"]] == [
        "2026-12-07T10:25:00.000Z",
        "2026-12-07T11:00:00.000Z",
        "2026-12-07T12:00:00.000Z",
    ]
    assert state.lattice("schedule-1") == T9 + 2 * HOUR
    # Nothing is due at 10:00 (the snooze passed over it).
    _, waited = decide(state, DeliverDue(), T9 + HOUR)
    assert waited.unwrap() == Wait(T9 + HOUR + 25 * 60_000)
    state, first = _deliver(state, T9 + HOUR + 25 * 60_000)
    assert [o.occurrence_at for o in first.occurrences] == ["2026-12-07T10:25:00.000Z"]
    assert first.skipped == (0,)
    assert state.lattice("schedule-1") is None  # back on the lattice
    assert state.get("schedule-1").scheduled_at == "2026-12-07T11:00:00.000Z"  # type: ignore[union-attr]
    state, second = _deliver(state, T9 + 2 * HOUR)
    assert [o.occurrence_at for o in second.occurrences] == ["2026-12-07T11:00:00.000Z"]


def test_a_late_delivery_after_a_snooze_gets_the_latest_lattice_point() -> None:
    state = _hourly()
    state, _ = _run(state, "schedule_update", {"id": "schedule-1", "snooze_seconds": 600}, T9)
    # Down from 09:10 until 12:30: 09:10 (10:00 snoozed), 11:00, 12:00 fell due.
    state, late = _deliver(state, T9 + 3 * HOUR + 30 * 60_000)
    assert [o.occurrence_at for o in late.occurrences] == ["2026-12-07T12:00:00.000Z"]
    assert late.skipped == (2,)
    assert state.get("schedule-1").scheduled_at == "2026-12-07T13:00:00.000Z"  # type: ignore[union-attr]


def test_a_snooze_onto_the_lattice_leaves_no_lattice_apart() -> None:
    state = _hourly()
    state, answer = _run(
        state, "schedule_update", {"id": "schedule-1", "snooze_seconds": 2 * 3600}, T9
    )
    assert answer["scheduledAt"] == "2026-12-07T11:00:00.000Z"
    assert state.lattice("schedule-1") is None


def test_a_second_snooze_keeps_the_first_lattice() -> None:
    state = _hourly()
    state, _ = _run(state, "schedule_update", {"id": "schedule-1", "snooze_seconds": 600}, T9)
    state, answer = _run(
        state, "schedule_update", {"id": "schedule-1", "snooze_seconds": 7 * 600}, T9 + 60_000
    )
    assert answer["scheduledAt"] == "2026-12-07T10:11:00.000Z"
    assert state.lattice("schedule-1") == T9 + 2 * HOUR


def test_resuming_a_snoozed_series_after_its_time_waits_for_its_lattice() -> None:
    state = _hourly()
    state, _ = _run(state, "schedule_update", {"id": "schedule-1", "snooze_seconds": 600}, T9)
    state, _ = _run(state, "schedule_update", {"id": "schedule-1", "paused": True}, T9 + 1)
    # Resumed at 09:30: the snoozed 09:10 (10:00 moved) fell due while
    # paused; next is 11:00.
    state, resumed = _run(
        state, "schedule_update", {"id": "schedule-1", "paused": False}, T9 + 30 * 60_000
    )
    assert resumed["scheduledAt"] == "2026-12-07T11:00:00.000Z"
    assert state.lattice("schedule-1") is None
    # Resumed at 12:30 instead: next is 13:00.
    state2 = _hourly()
    state2, _ = _run(state2, "schedule_update", {"id": "schedule-1", "snooze_seconds": 600}, T9)
    state2, _ = _run(state2, "schedule_update", {"id": "schedule-1", "paused": True}, T9 + 1)
    state2, later = _run(
        state2, "schedule_update", {"id": "schedule-1", "paused": False}, T9 + 210 * 60_000
    )
    assert later["scheduledAt"] == "2026-12-07T13:00:00.000Z"


def test_the_lattice_survives_a_snapshot_and_a_replay() -> None:
    state = _hourly()
    changes, _ = handle(state, "schedule_update", {"id": "schedule-1", "snooze_seconds": 600}, T9)
    snoozed = evolve(state, changes[0])
    image = encode_state(snoozed)
    assert json.loads(image)["version"] == 3
    assert json.loads(image)["lattices"] == {"schedule-1": T9 + 2 * HOUR}
    assert decode_state(image) == snoozed
    assert json.loads(encode_state(state))["version"] == 2  # none: older readers still read it
    create_changes, _ = handle(
        EMPTY_STATE, "schedule_create", {"prompt": "stretch", "every_seconds": 3600}, T9
    )
    log = [*create_changes, *changes]
    events = [event(SCHEDULE_CHANGE, n, 0, encode_change(c)) for n, c in enumerate(log)]
    assert fold(events) == snoozed


@pytest.mark.parametrize(
    ("lattices", "why"),
    [
        ({"schedule-1": T9 + 10 * 60_000}, "no point its series continues at"),
        ({"schedule-1": T9 + 10 * 60_000 + HOUR}, "no point its series continues at"),
        ({"schedule-9": T9 + HOUR}, "not an active recurring id"),
    ],
)
def test_a_snapshot_with_a_wrong_lattice_is_refused(lattices: dict[str, int], why: str) -> None:
    state = _hourly()
    changes, _ = handle(state, "schedule_update", {"id": "schedule-1", "snooze_seconds": 600}, T9)
    image = json.loads(encode_state(evolve(state, changes[0])))
    image["lattices"] = lattices
    with pytest.raises(SnapshotError, match=why):
        decode_state(json.dumps(image).encode())


def _series(created: int, interval: int, snoozed: int) -> list[int]:
    """An independent model: the first occurrence moved to the snoozed
    instant, then every later point of the creation lattice that is after
    it (a snooze earlier than the first leaves the second where it was)."""
    first = created + interval
    later = [first + k * interval for k in range(1, 200) if first + k * interval > snoozed]
    return [snoozed, *later]


@given(
    interval_s=st.integers(300, 6 * 3600),
    snooze_at=st.integers(0, 10 * 3600),
    snooze_s=st.integers(1, 12 * 3600),
    waits=st.lists(st.integers(0, 5 * 3600), min_size=1, max_size=6),
)
def test_deliveries_follow_the_snoozed_instant_then_the_creation_lattice(
    interval_s: int, snooze_at: int, snooze_s: int, waits: list[int]
) -> None:
    state, _ = _run(
        EMPTY_STATE, "schedule_create", {"prompt": "p", "every_seconds": interval_s}, T9
    )
    interval = interval_s * 1000
    now = T9 + snooze_at * 1000
    state, _ = _run(state, "schedule_update", {"id": "schedule-1", "snooze_seconds": snooze_s}, now)
    series = _series(T9, interval, now + snooze_s * 1000)
    # What the snooze passed over is gone: points at or before the snoozed
    # instant are not in the model's series, nor is the moved one.
    delivered: list[int] = []
    for wait in waits:
        now += wait * 1000 + 1
        changes, result = decide(state, DeliverDue(), now)
        outcome = result.unwrap()
        for change in changes:
            state = evolve(state, change)
        due = [at for at in series if at <= now and (not delivered or at > delivered[-1])]
        if not due:
            assert not isinstance(outcome, Delivery)
            continue
        assert isinstance(outcome, Delivery)
        assert [o.occurrence_at for o in outcome.occurrences] == [format_instant(due[-1])]
        assert outcome.skipped == (len(due) - 1,)
        delivered.append(due[-1])
