"""(e) Fixed-rate arithmetic: the creation-anchored lattice, latest-only.

The lattice property is the reference's own (section (h), item 6); the
batch properties check ``decide(DeliverDue)`` on fixed-rate records against
an independent computation of due records, occurrences and framing text.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from returns.pipeline import is_successful

from tickler.core import (
    CorruptScheduleLog,
    CreateChange,
    DeleteChange,
    DeliverDue,
    Delivery,
    DispatchChange,
    EverySchedule,
    ScheduleChange,
    State,
    Wait,
    decide,
    fold_changes,
    resolve_every_occurrence,
)
from tickler.testing.strategies import (
    MAX_MS,
    MIN_MS,
    MS_PER_DAY,
    SCHEDULE_IDS,
    draw_fresh_id,
    iso,
    ms_from_iso,
    trimmed_texts,
)

from .oracles import BATCH_HEAD, batch_text


def _every(target: int, seconds: int, schedule_id: str = "schedule-1") -> EverySchedule:
    return EverySchedule(
        id=schedule_id, prompt="p", every_seconds=seconds, scheduled_at=iso(target)
    )


@st.composite
def lattice_points(draw: st.DrawFn) -> tuple[int, int, int, int]:
    """(s, k, r, T) with the next point T + (k+1)*I still representable."""
    seconds = draw(st.integers(300, 86_400))
    interval = seconds * 1000
    k = draw(st.integers(0, 10_000))
    r = draw(st.one_of(st.integers(0, interval - 1), st.sampled_from([0, interval - 1])))
    hi = MAX_MS - (k + 1) * interval
    target = draw(st.one_of(st.integers(MIN_MS, hi), st.sampled_from([MIN_MS, hi])))
    return seconds, k, r, target


@given(lattice_points())
def test_a_decision_resolves_to_the_latest_lattice_point(point: tuple[int, int, int, int]) -> None:
    seconds, k, r, target = point
    interval = seconds * 1000
    decision = target + k * interval + r
    resolved = resolve_every_occurrence(_every(target, seconds), decision)
    assert resolved.occurrence_at == iso(target + k * interval)
    assert resolved.next_scheduled_at == iso(target + (k + 1) * interval)


@given(lattice_points())
def test_replaying_a_dispatch_moves_the_target_to_the_next_point(
    point: tuple[int, int, int, int],
) -> None:
    seconds, k, r, target = point
    interval = seconds * 1000
    record = _every(target, seconds)
    accepted = iso(target + k * interval + r)
    state = fold_changes(
        [
            CreateChange(version=1, schedule=record),
            DispatchChange(version=1, id=record.id, accepted_at=accepted),
        ]
    )
    assert state.active == (_every(target + (k + 1) * interval, seconds),)


@st.composite
def last_points(draw: st.DrawFn) -> tuple[int, int, int, int]:
    """(s, k, r, T) where the point after the decision is past year 9999."""
    seconds = draw(st.integers(300, 86_400))
    interval = seconds * 1000
    k = draw(st.integers(0, 10_000))
    r = draw(st.integers(0, interval - 1))
    # T + k*I + r <= MAX < T + (k+1)*I
    target = MAX_MS - k * interval - r - draw(st.integers(0, interval - r - 1))
    return seconds, k, r, target


@given(last_points())
def test_a_series_ends_at_the_last_representable_point(point: tuple[int, int, int, int]) -> None:
    seconds, k, r, target = point
    interval = seconds * 1000
    record = _every(target, seconds)
    decision = target + k * interval + r
    resolved = resolve_every_occurrence(record, decision)
    assert resolved == (iso(target + k * interval), None)
    state = fold_changes(
        [
            CreateChange(version=1, schedule=record),
            DispatchChange(version=1, id=record.id, accepted_at=iso(decision)),
        ]
    )
    assert state.active == ()
    assert record.id in state.seen_ids


@given(lattice_points(), st.integers(1, 10**12))
def test_a_decision_before_the_target_is_refused(
    point: tuple[int, int, int, int], early: int
) -> None:
    seconds, _, _, target = point
    decision = target - early
    with pytest.raises(CorruptScheduleLog) as raised:
        resolve_every_occurrence(_every(target, seconds), decision)
    if decision >= MIN_MS:
        assert raised.value.reason == "every dispatch cannot precede the active scheduledAt"
    else:
        assert raised.value.reason == (
            "every acceptedAt must be a representable four-digit-year instant"
        )


# --- a batch of due fixed-rate records ----------------------------------------------


@st.composite
def every_sessions(draw: st.DrawFn) -> tuple[State, list[EverySchedule], int]:
    """Fixed-rate records only, targets clustered around ``now`` (ties
    likely); some deleted. Returns the state, the active records in
    creation order, and now."""
    now = draw(st.integers(MIN_MS + 20 * MS_PER_DAY, MAX_MS))
    nearby = st.one_of(
        st.sampled_from([-MS_PER_DAY, -3_600_000, -1, 0, 1, 3_600_000]).map(lambda d: now + d),
        st.integers(now - 20 * MS_PER_DAY, now + MS_PER_DAY),
    ).map(lambda t: min(t, MAX_MS))
    changes: list[ScheduleChange] = []
    active: dict[str, EverySchedule] = {}
    seen: list[str] = []
    for _ in range(draw(st.integers(0, 8))):
        record = EverySchedule(
            id=draw_fresh_id(draw, seen, SCHEDULE_IDS),
            prompt=draw(trimmed_texts),
            every_seconds=draw(st.one_of(st.integers(300, 3 * 86_400), st.just(300))),
            scheduled_at=iso(draw(nearby)),
        )
        changes.append(CreateChange(version=1, schedule=record))
        active[record.id] = record
        seen.append(record.id)
        if draw(st.integers(0, 5)) == 0:
            changes.append(DeleteChange(version=1, id=record.id))
            del active[record.id]
    return fold_changes(changes), list(active.values()), now


def _occurrence(record: EverySchedule, now: int) -> int:
    target = ms_from_iso(record.scheduled_at)
    interval = record.every_seconds * 1000
    return target + (now - target) // interval * interval


def _due_in_batch_order(records: list[EverySchedule], now: int) -> list[EverySchedule]:
    """Due records by (stored target, creation order)."""
    ordered = sorted(enumerate(records), key=lambda pair: (pair[1].scheduled_at, pair[0]))
    return [record for _, record in ordered if ms_from_iso(record.scheduled_at) <= now]


@given(every_sessions())
def test_one_latest_occurrence_per_due_record_in_one_batch(
    session: tuple[State, list[EverySchedule], int],
) -> None:
    state, records, now = session
    due = _due_in_batch_order(records, now)
    changes, result = decide(state, DeliverDue(), now)
    assert is_successful(result)
    outcome = result.unwrap()
    if not due:
        assert changes == ()
        targets = [ms_from_iso(r.scheduled_at) for r in records]
        assert outcome == Wait(min(targets) if targets else None)
        return
    assert isinstance(outcome, Delivery)
    accepted_at = iso(now)
    assert outcome.accepted_at == accepted_at
    assert changes == tuple(
        DispatchChange(version=1, id=r.id, accepted_at=accepted_at) for r in due
    )
    expected = [(r.id, iso(_occurrence(r, now)), r.prompt) for r in due]
    assert [(o.id, o.occurrence_at, o.prompt) for o in outcome.occurrences] == expected
    assert outcome.text == batch_text(expected)
    listed = json.loads(outcome.text.removeprefix(BATCH_HEAD))
    assert [item["schedule_id"] for item in listed] == [r.id for r in due]


@given(every_sessions())
def test_after_a_batch_nothing_is_due_until_the_next_point(
    session: tuple[State, list[EverySchedule], int],
) -> None:
    """Latest-only: the missed points are skipped, not queued."""
    state, records, now = session
    changes, _ = decide(state, DeliverDue(), now)
    after = fold_changes(changes, state)
    again, result = decide(after, DeliverDue(), now)
    assert again == ()
    expected: list[EverySchedule] = []
    for record in records:
        if ms_from_iso(record.scheduled_at) > now:
            expected.append(record)
            continue
        following = _occurrence(record, now) + record.every_seconds * 1000
        if following <= MAX_MS:
            expected.append(
                EverySchedule(
                    id=record.id,
                    prompt=record.prompt,
                    every_seconds=record.every_seconds,
                    scheduled_at=iso(following),
                )
            )
    # Positions are kept: a dispatched record stays where it was created.
    assert after.active == tuple(expected)
    targets = [ms_from_iso(r.scheduled_at) for r in expected]
    assert result.unwrap() == Wait(min(targets) if targets else None)
    assert all(t > now for t in targets)
