"""The due decision: one-shots first, one per delivery, then one fixed-rate
batch, then a wait until the earliest remaining target.

A runtime that wakes at ``now`` calls ``decide(state, DeliverDue(), now)``
until it is told to wait; the sequence of deliveries is checked against an
independent reading of the rules (reference section (g), "Due decision").
"""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st
from returns.pipeline import is_successful

from tickler.core import (
    DeliverDue,
    Delivery,
    DispatchChange,
    EverySchedule,
    ScheduleRecord,
    State,
    Wait,
    decide,
    fold_changes,
)
from tickler.testing.strategies import MAX_MS, MIN_MS, MS_PER_DAY, iso, ms_from_iso, valid_logs

from .oracles import batch_text, big_log, fewer_examples, one_shot_text


@st.composite
def sessions(draw: st.DrawFn) -> tuple[State, list[ScheduleRecord], int]:
    """A valid session whose targets cluster around ``now`` (ties likely).
    Returns the state, the model's active records in creation order, and now."""
    now = draw(st.integers(MIN_MS + 30 * MS_PER_DAY, MAX_MS))
    nearby = st.one_of(
        st.sampled_from([-MS_PER_DAY, -60_000, -1, 0, 1, 60_000]).map(lambda d: now + d),
        st.integers(now - 20 * MS_PER_DAY, now + MS_PER_DAY),
    ).map(lambda t: min(t, MAX_MS))
    steps, book = draw(valid_logs(max_steps=12, targets=nearby))
    state = fold_changes(step.change for step in steps)
    return state, list(book.active.values()), now


def _in_due_order(records: list[ScheduleRecord]) -> list[ScheduleRecord]:
    ordered = sorted(enumerate(records), key=lambda pair: (pair[1].scheduled_at, pair[0]))
    return [record for _, record in ordered]


def _drain(state: State, now: int, limit: int) -> tuple[list[Delivery], Wait, State]:
    deliveries: list[Delivery] = []
    for _ in range(limit):
        changes, result = decide(state, DeliverDue(), now)
        assert is_successful(result)
        outcome = result.unwrap()
        if isinstance(outcome, Wait):
            assert changes == ()
            return deliveries, outcome, state
        assert isinstance(outcome, Delivery)
        state = fold_changes(changes, state)
        deliveries.append(outcome)
        if outcome.accepted_at is None:
            (occurrence,) = outcome.occurrences
            assert changes == (DispatchChange(version=1, id=occurrence.id),)
    raise AssertionError("delivery did not settle")


@given(sessions())
def test_one_shots_one_per_delivery_then_one_batch_then_a_wait(
    session: tuple[State, list[ScheduleRecord], int],
) -> None:
    state, records, now = session
    assert state.active == tuple(records)
    due = [r for r in _in_due_order(records) if ms_from_iso(r.scheduled_at) <= now]
    one_shots = [r for r in due if not isinstance(r, EverySchedule)]
    everies = [r for r in due if isinstance(r, EverySchedule)]

    deliveries, wait, final = _drain(state, now, limit=len(records) + 2)

    assert len(deliveries) == len(one_shots) + (1 if everies else 0)
    for delivery, record in zip(deliveries, one_shots, strict=False):
        assert delivery.accepted_at is None
        assert [(o.id, o.occurrence_at, o.prompt) for o in delivery.occurrences] == [
            (record.id, record.scheduled_at, record.prompt)
        ]
        assert delivery.text == one_shot_text(record)
    if everies:
        batch = deliveries[-1]
        assert batch.accepted_at == iso(now)
        assert [o.id for o in batch.occurrences] == [r.id for r in everies]
        expected = [(o.id, o.occurrence_at, o.prompt) for o in batch.occurrences]
        assert batch.text == batch_text(expected)

    remaining = [ms_from_iso(r.scheduled_at) for r in final.active]
    assert all(target > now for target in remaining)
    assert wait == Wait(min(remaining) if remaining else None)


@given(sessions())
def test_the_wait_is_the_earliest_active_target(
    session: tuple[State, list[ScheduleRecord], int],
) -> None:
    state, records, now = session
    targets = [ms_from_iso(r.scheduled_at) for r in records]
    changes, result = decide(state, DeliverDue(), now)
    outcome = result.unwrap()
    if targets and min(targets) <= now:
        assert isinstance(outcome, Delivery)
        assert changes
    else:
        assert changes == ()
        assert outcome == Wait(min(targets) if targets else None)


@fewer_examples(10)
@given(st.integers(300, 1_500), st.integers(0, 2**32), st.integers(MIN_MS, MAX_MS - MS_PER_DAY))
def test_a_large_backlog_is_delivered_in_order(creates: int, seed: int, now: int) -> None:
    """Hundreds of due records: the due index spans several chunks."""
    changes, book = big_log(random.Random(seed), creates, now)
    state = fold_changes(changes)
    records = list(book.active.values())
    due = [r for r in _in_due_order(records) if ms_from_iso(r.scheduled_at) <= now]
    one_shots = [r for r in due if not isinstance(r, EverySchedule)]
    everies = [r.id for r in due if isinstance(r, EverySchedule)]

    deliveries, wait, final = _drain(state, now, limit=len(records) + 2)

    delivered = [d.occurrences[0].id for d in deliveries if d.accepted_at is None]
    assert delivered == [r.id for r in one_shots]
    batches = [d for d in deliveries if d.accepted_at is not None]
    assert [[o.id for o in b.occurrences] for b in batches] == ([everies] if everies else [])
    remaining = [ms_from_iso(r.scheduled_at) for r in final.active]
    assert wait == Wait(min(remaining) if remaining else None)
