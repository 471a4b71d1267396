"""Replay equals incremental state with operator actions among the tool
calls: random interleavings of creates, pauses, resumes, snoozes, "deliver
now" and cancels by an operator, a model's own updates and deletes, and
deliveries, as ``decide`` makes them. ``fold`` of the log, the state
evolved change by change, ``check_log`` and a snapshot image agree."""

from __future__ import annotations

from typing import Any, Final

from hypothesis import given
from hypothesis import strategies as st
from returns.pipeline import is_successful

from tickler.core import (
    EMPTY_STATE,
    SCHEDULE_CHANGE,
    Command,
    DeleteSchedule,
    DeliverDue,
    ScheduleChange,
    UpdateSchedule,
    check_log,
    decide,
    encode_change,
    evolve,
    fold,
    parse_instant,
    parse_tool_call,
)
from tickler.core._snapshot import decode_state, encode_state
from tickler.core.wire._session import event

T0: Final = parse_instant("2026-03-20T12:00:00.000Z")
_IDS = st.sampled_from([f"schedule-{n}" for n in range(1, 5)])
_BY = st.sampled_from(["ana", "ops team", "bo"])


def _create() -> st.SearchStrategy[Command]:
    selector = st.one_of(
        st.integers(1, 86_400).map(lambda s: {"after_seconds": s}),
        st.integers(300, 86_400).map(lambda s: {"every_seconds": s}),
        st.just({"calendar": {"cron": "*/20 * * * *", "time_zone": "Europe/Berlin"}}),
    )
    return selector.map(
        lambda s: parse_tool_call(
            "schedule_create", {"prompt": "p", **s}, profile="extended"
        ).unwrap()
    )


def _operator() -> st.SearchStrategy[Command]:
    return st.one_of(
        st.builds(lambda i, b, p: UpdateSchedule(id=i, paused=p, by=b), _IDS, _BY, st.booleans()),
        st.builds(
            lambda i, b, s: UpdateSchedule(id=i, snooze_seconds=s, by=b),
            _IDS,
            _BY,
            st.integers(1, 86_400),
        ),
        st.builds(lambda i, b: UpdateSchedule(id=i, due_now=True, by=b), _IDS, _BY),
        st.builds(lambda i, b: DeleteSchedule(i, by=b), _IDS, _BY),
    )


_STEP: Final = st.one_of(
    _create(),
    _operator(),
    st.builds(lambda i, p: UpdateSchedule(id=i, paused=p), _IDS, st.booleans()),
    _IDS.map(DeleteSchedule),
    st.just(DeliverDue()),
)


@given(st.lists(st.tuples(_STEP, st.integers(0, 86_400_000)), max_size=30))
def test_operator_actions_replay_to_the_state_evolved_step_by_step(
    steps: list[tuple[Any, int]],
) -> None:
    state, now = EMPTY_STATE, T0
    log: list[ScheduleChange] = []
    for command, pause in steps:
        now += pause
        changes, _ = decide(state, command, now)
        for change in changes:
            state = evolve(state, change)
            log.append(change)
    events = [event(SCHEDULE_CHANGE, seq, 0, encode_change(c)) for seq, c in enumerate(log)]
    assert fold(events) == state
    checked = check_log(events)
    assert is_successful(checked)
    assert checked.unwrap() == state
    assert decode_state(encode_state(state)) == state
