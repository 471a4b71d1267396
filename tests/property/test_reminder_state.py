"""The state every view shows agrees with what the runtime does: for any
session of tool calls and deliveries (calendar, fixed-rate and one-shot
reminders, paused, resumed, snoozed, deleted) and any later instant,
``decide(state, DeliverDue(), now)``, asked until it waits, delivers
exactly the reminders ``reminder_standing`` calls due, each once; and the
wait it then answers is the earliest next due the views show."""

from __future__ import annotations

from typing import Any, Final

from hypothesis import given
from hypothesis import strategies as st

from tickler.core import (
    EMPTY_STATE,
    DeliverDue,
    Delivery,
    ReminderState,
    State,
    Wait,
    decide,
    fold_changes,
    handle,
    parse_instant,
    reminder_standing,
)

T0: Final = parse_instant("2026-03-20T12:00:00.000Z")  # a week before Europe's spring change
MINUTE: Final = 60_000

_IDS = st.sampled_from([f"schedule-{n}" for n in range(1, 6)])
_CALENDAR = st.fixed_dictionaries(
    {
        "cron": st.sampled_from(["0 9 * * 1-5", "30 2 * * *", "*/20 * * * *", "@daily"]),
        "time_zone": st.sampled_from(["Europe/Berlin", "America/New_York", "UTC"]),
    }
)
_CREATE = st.tuples(
    st.one_of(
        _CALENDAR.map(lambda c: {"calendar": c}),
        st.integers(1, 3 * 86_400).map(lambda s: {"after_seconds": s}),
        st.integers(300, 86_400).map(lambda s: {"every_seconds": s}),
    ),
    st.sampled_from(["a", "b"]),
).map(lambda t: ("schedule_create", {"prompt": t[1], **t[0]}))
_UPDATE = st.tuples(
    _IDS,
    st.fixed_dictionaries(
        {},
        optional={"paused": st.booleans(), "snooze_seconds": st.integers(1, 2 * 86_400)},
    ).filter(bool),
).map(lambda t: ("schedule_update", {"id": t[0], **t[1]}))
_STEP: st.SearchStrategy[tuple[str, dict[str, Any]]] = st.one_of(
    _CREATE,
    _CREATE,
    _UPDATE,
    _IDS.map(lambda i: ("schedule_delete", {"id": i})),
    st.just(("deliver", {})),
)


def _session(steps: list[tuple[tuple[str, dict[str, Any]], int]]) -> tuple[State, int]:
    state, now = EMPTY_STATE, T0
    for (tool, args), pause in steps:
        now += pause // MINUTE * MINUTE + 17  # off whole minutes too
        if tool == "deliver":
            changes, _ = decide(state, DeliverDue(), now)
        else:
            changes, _ = handle(state, tool, args, now)
        state = fold_changes(changes, state)
    return state, now


@given(
    st.lists(st.tuples(_STEP, st.integers(0, 2 * 86_400_000)), max_size=25),
    st.integers(0, 4 * 86_400_000),
    st.none() | st.tuples(st.integers(0, 9), st.sampled_from([-1, 0, 1])),
)
def test_decide_delivers_exactly_the_reminders_the_views_call_due(
    steps: list[tuple[tuple[str, dict[str, Any]], int]],
    later: int,
    at_target: tuple[int, int] | None,
) -> None:
    """``at_target``: ``now`` a millisecond before, at or after the target
    of one of the reminders (the boundary of "due"), else ``later`` after
    the session's last step."""
    state, last = _session(steps)
    now = last + later
    targets = sorted(entry.target for entry in state.entries.values())
    if at_target is not None and targets:
        pick, offset = at_target
        now = max(last, targets[pick % len(targets)] + offset)
    shown = {r.id: reminder_standing(state, r.id, now) for r in state.active}
    due = {i for i, standing in shown.items() if standing.state is ReminderState.DUE}
    delivered: list[str] = []
    outcome: object = None
    # Each answer delivers at least one reminder, each at most once: bounded.
    for _ in range(len(state.active) + 1):
        changes, result = decide(state, DeliverDue(), now)
        outcome = result.unwrap()
        if not isinstance(outcome, Delivery):
            break
        delivered += [o.id for o in outcome.occurrences]
        state = fold_changes(changes, state)
    assert isinstance(outcome, Wait), "still delivering after every reminder was"
    assert sorted(delivered) == sorted(due)
    assert len(delivered) == len(set(delivered))
    # Then nothing is due, and the wait is the earliest next due shown.
    after = [reminder_standing(state, r.id, now) for r in state.active]
    assert not any(s.state is ReminderState.DUE for s in after)
    nexts = [s.next_due for s in after if s.next_due is not None]
    assert outcome.next_wake == (min(nexts) if nexts else None)
    for record in state.active:
        standing = reminder_standing(state, record.id, now)
        paused = standing.state is ReminderState.PAUSED
        assert paused == state.is_paused(record.id)
        assert (standing.next_due is None) == paused
