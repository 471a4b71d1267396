"""(f) Ids are never reused, and ``schedule-N`` is allocated as the reference does.

Allocation (reference section (b)): with S every id ever created in the
owned suffix, N starts at |S| + 1 and skips every ``schedule-N`` already in
S. Foreign ids in the log (``custom``, ``schedule-01``, ...) count in |S|
but are never mistaken for allocated ones.
"""

from __future__ import annotations

import json
import random
from typing import Final

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tickler.core import (
    AtSchedule,
    CreateChange,
    DeliverDue,
    State,
    decide,
    evolve,
    fold_changes,
    handle,
)
from tickler.testing.strategies import (
    FOREIGN_ID_SHAPES,
    MS_PER_DAY,
    REFERENCE_NOW,
    SCHEDULE_IDS,
    trimmed_texts,
    valid_create_arguments,
    valid_logs,
)

from .oracles import allocate

# Mostly allocated-looking ids, so allocation has gaps to skip.
LOG_IDS: Final = st.one_of(
    st.integers(1, 12).map(lambda n: f"schedule-{n}"),
    st.sampled_from(FOREIGN_ID_SHAPES),
    SCHEDULE_IDS,
)
PROBES: Final = st.one_of(LOG_IDS, st.integers(0, 60).map(lambda n: f"schedule-{n}"), trimmed_texts)


@st.composite
def logged_sessions(draw: st.DrawFn) -> tuple[State, list[str]]:
    """A valid log with foreign and allocated-looking ids, some finished.
    Returns its state and every id it created."""
    steps, book = draw(valid_logs(max_steps=16, ids=LOG_IDS))
    return fold_changes(step.change for step in steps), list(book.seen)


@given(logged_sessions(), st.data())
def test_creates_allocate_the_reference_id_and_never_a_seen_one(
    session: tuple[State, list[str]], data: st.DataObject
) -> None:
    state, seen = session
    now = REFERENCE_NOW
    for _ in range(data.draw(st.integers(1, 6), label="creates")):
        args = data.draw(valid_create_arguments(now), label="args")
        changes, text = handle(state, "schedule_create", args, now)
        out = json.loads(text)
        if "code" in out:
            continue
        (change,) = changes
        assert isinstance(change, CreateChange)
        assert change.schedule.id == out["id"] == allocate(seen)
        assert change.schedule.id not in seen
        seen.append(change.schedule.id)
        state = evolve(state, change)
        if data.draw(st.booleans(), label="finish it"):
            # Delete or deliver it: a finished id stays taken.
            if data.draw(st.booleans(), label="delete"):
                changes, _ = handle(state, "schedule_delete", {"id": change.schedule.id}, now)
            else:
                changes, _ = decide(state, DeliverDue(), now + 400 * MS_PER_DAY * 365)
            state = fold_changes(changes, state)


@given(logged_sessions(), st.lists(PROBES, max_size=12))
def test_the_seen_set_is_exactly_the_created_ids(
    session: tuple[State, list[str]], probes: list[str]
) -> None:
    state, seen = session
    assert set(state.seen_ids) == set(seen)
    assert len(state.seen_ids) == len(seen)
    for probe in [*probes, *seen]:
        assert (probe in state.seen_ids) == (probe in seen), probe


@given(st.lists(LOG_IDS, unique=True, max_size=14), st.randoms(use_true_random=False))
def test_the_seen_set_does_not_depend_on_creation_order(ids: list[str], rng: random.Random) -> None:
    """Two logs creating the same ids in different orders have equal seen
    sets (State equality relies on it), and allocate the same next id."""
    shuffled = ids[:]
    rng.shuffle(shuffled)
    states = [
        fold_changes(
            CreateChange(
                version=1,
                schedule=AtSchedule(id=i, prompt="p", scheduled_at="2026-08-05T12:00:00.000Z"),
            )
            for i in order
        )
        for order in (ids, shuffled)
    ]
    assert states[0].seen_ids == states[1].seen_ids
    assert hash(states[0].seen_ids) == hash(states[1].seen_ids)
    assert _allocated(states[0]) == _allocated(states[1]) == allocate(ids)


def _allocated(state: State) -> str:
    changes, _ = handle(state, "schedule_create", {"prompt": "p", "after_seconds": 60}, 0)
    (change,) = changes
    assert isinstance(change, CreateChange)
    return change.schedule.id


@given(st.permutations([f"schedule-{n}" for n in range(1, 9)]), st.data())
def test_ids_created_in_any_order_fold_and_evolve_alike(
    order: list[str], data: st.DataObject
) -> None:
    """Allocated-looking ids logged out of order (another writer, a merge):
    the fold and change-by-change evolve reach the same state, seen ids in
    the same canonical form, and each id is refused once more after."""
    from tickler.core import SCHEDULE_CHANGE, CorruptScheduleLog, encode_change, fold
    from tickler.core.wire._session import event

    target = "2026-08-05T12:05:00.000Z"
    changes = [
        CreateChange(version=1, schedule=AtSchedule(schedule_id, "p", target))
        for schedule_id in order
    ]
    events = [
        event(SCHEDULE_CHANGE, seq, 0, encode_change(change)) for seq, change in enumerate(changes)
    ]
    evolved = fold_changes(changes)
    folded = fold(events)
    assert folded == evolved
    assert folded.seen_ids.contiguous == evolved.seen_ids.contiguous == len(order)
    again = data.draw(st.sampled_from(order), label="again")
    reuse = CreateChange(version=1, schedule=AtSchedule(again, "p", target))
    reason = f'schedule id "{again}" was reused'
    with pytest.raises(CorruptScheduleLog) as evolving:
        evolve(evolved, reuse)
    assert evolving.value.reason == reason
    with pytest.raises(CorruptScheduleLog) as folding:
        fold([*events, event(SCHEDULE_CHANGE, len(events), 0, encode_change(reuse))])
    assert folding.value.reason == reason
