"""A reminder's state, the one rule every view shows (``standing_rule``):
each state from the facts, the precedence between them, and the same rule
read from a state the tools made (``reminder_standing``)."""

from __future__ import annotations

import json
from typing import Final

import pytest

from tickler.core import (
    EMPTY_STATE,
    DeliverDue,
    Delivery,
    ReminderState,
    Standing,
    State,
    decide,
    fold_changes,
    handle,
    parse_instant,
    reminder_standing,
    standing_rule,
)

NOW: Final = parse_instant("2026-08-05T12:00:00.000Z")
MINUTE: Final = 60_000

SCHEDULED, DUE, PAUSED = ReminderState.SCHEDULED, ReminderState.DUE, ReminderState.PAUSED
DELIVERING, FAILING, ENDED = ReminderState.DELIVERING, ReminderState.FAILING, ReminderState.ENDED


@pytest.mark.parametrize(
    ("target", "facts", "expected"),
    [
        # active, not paused, nothing in the outbox: scheduled, or due
        (NOW + 1, {}, Standing(SCHEDULED, NOW + 1, None)),
        (NOW, {}, Standing(DUE, NOW, 0)),  # its instant has come: due, overdue by 0
        (NOW - 5 * MINUTE, {}, Standing(DUE, NOW - 5 * MINUTE, 5 * MINUTE)),
        # paused: no next occurrence, never overdue, whether its target passed or not
        (NOW + MINUTE, {"paused": True}, Standing(PAUSED, None, None)),
        (NOW - MINUTE, {"paused": True}, Standing(PAUSED, None, None)),
        # no longer active (a one-shot dispatched, deleted, a series done)
        (None, {}, Standing(ENDED, None, None)),
        (None, {"failures": 3}, Standing(ENDED, None, None)),  # nothing waits: none count
        # a follow-up of it in the outbox: delivering; failing once a hand-over failed
        (None, {"waiting": True}, Standing(DELIVERING, None, None)),
        (None, {"waiting": True, "failures": 1}, Standing(FAILING, None, None)),
        (NOW + MINUTE, {"waiting": True}, Standing(DELIVERING, NOW + MINUTE, None)),
        (NOW + MINUTE, {"waiting": True, "failures": 2}, Standing(FAILING, NOW + MINUTE, None)),
        # in flight comes first: its next occurrence waits behind the outbox,
        # overdue; a paused one's follow-up already dispatched is still handed over
        (NOW - MINUTE, {"waiting": True}, Standing(DELIVERING, NOW - MINUTE, MINUTE)),
        (NOW - MINUTE, {"waiting": True, "paused": True}, Standing(DELIVERING, None, None)),
        (
            NOW + MINUTE,
            {"waiting": True, "paused": True, "failures": 1},
            Standing(FAILING, None, None),
        ),
    ],
)
def test_each_state_from_the_facts(
    target: int | None, facts: dict[str, object], expected: Standing
) -> None:
    assert standing_rule(target, NOW, **facts) == expected  # type: ignore[arg-type]


def test_the_states_are_closed_and_are_the_words_every_view_shows() -> None:
    assert [s.value for s in ReminderState] == [
        "scheduled",
        "due",
        "paused",
        "delivering",
        "failing",
        "ended",
    ]
    assert isinstance(ReminderState.PAUSED, str)  # JSON and text show the word
    assert f"{ReminderState.PAUSED}" == "paused"


def _tool(state: State, tool: str, args: dict[str, object], now: int) -> State:
    changes, _ = handle(state, tool, args, now)
    return fold_changes(changes, state)


def test_from_the_state_the_tools_made() -> None:
    """Created, due, paused (its target passes: still paused), resumed,
    dispatched (a one-shot ends; with its follow-up waiting it is
    delivering), deleted."""
    state = _tool(EMPTY_STATE, "schedule_create", {"prompt": "p", "after_seconds": 60}, NOW)
    state = _tool(state, "schedule_create", {"prompt": "q", "every_seconds": 300}, NOW)
    one, every = (record.id for record in state.active)
    assert reminder_standing(state, one, NOW) == Standing(SCHEDULED, NOW + MINUTE, None)
    assert reminder_standing(state, one, NOW + 2 * MINUTE) == Standing(DUE, NOW + MINUTE, MINUTE)
    paused = _tool(state, "schedule_update", {"id": one, "paused": True}, NOW + 1)
    assert reminder_standing(paused, one, NOW + 1) == Standing(PAUSED, None, None)
    assert reminder_standing(paused, one, NOW + 9 * MINUTE) == Standing(PAUSED, None, None)
    resumed = _tool(paused, "schedule_update", {"id": one, "paused": False}, NOW + 2)
    assert reminder_standing(resumed, one, NOW + 2).state is SCHEDULED
    changes, result = decide(state, DeliverDue(), NOW + MINUTE)
    assert isinstance(result.unwrap(), Delivery)
    sent = fold_changes(changes, state)
    assert reminder_standing(sent, one, NOW + MINUTE) == Standing(ENDED, None, None)
    waiting = reminder_standing(sent, one, NOW + MINUTE, waiting=True)
    assert waiting == Standing(DELIVERING, None, None)
    assert reminder_standing(sent, one, NOW + MINUTE, waiting=True, failures=1).state is FAILING
    gone = _tool(state, "schedule_delete", {"id": every}, NOW + 1)
    assert reminder_standing(gone, every, NOW + 1).state is ENDED
    assert reminder_standing(state, "schedule-99", NOW).state is ENDED  # never created


def test_the_tools_list_shows_the_same_rule_in_the_v1_words() -> None:
    """schedule_list says "overdue" for due (the v1 contract's word)."""
    state = _tool(EMPTY_STATE, "schedule_create", {"prompt": "p", "after_seconds": 60}, NOW)
    state = _tool(state, "schedule_create", {"prompt": "q", "after_seconds": 600}, NOW)
    state = _tool(state, "schedule_create", {"prompt": "r", "after_seconds": 60}, NOW)
    state = _tool(state, "schedule_update", {"id": "schedule-3", "paused": True}, NOW)
    changes, listed = handle(state, "schedule_list", {}, NOW + 2 * MINUTE)
    assert changes == ()
    words = [view["state"] for view in json.loads(listed)]
    assert words == ["overdue", "scheduled", "paused"]
    for record, word in zip(state.active, words, strict=True):
        shown = reminder_standing(state, record.id, NOW + 2 * MINUTE).state
        assert {"overdue": DUE, "scheduled": SCHEDULED, "paused": PAUSED}[word] is shown
