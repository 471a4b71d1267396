"""``fold`` and ``decide`` compose: what ``decide`` returns is what the
replay reads. The state a decision carries is its changes evolved from the
state it was made on (``fold_changes``), and the log with the changes
appended folds to that same state; the replay test a user writes is three
lines (the first test)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from returns.pipeline import is_successful

from tickler.core import (
    Command,
    DeliverDue,
    decide,
    fold,
    fold_changes,
    parse_tool_call,
)
from tickler.testing.strategies import (
    MS_PER_DAY,
    ToolCall,
    ValidLog,
    session_logs,
    tool_calls,
)

# A tool call (any: valid or not) or a delivery check, some time after the log.
_LATER = st.integers(0, 40 * MS_PER_DAY)


def _command(call: ToolCall | None) -> Command | None:
    if call is None:
        return DeliverDue()
    parsed = parse_tool_call(call.name, call.arguments, profile="extended")
    return parsed.unwrap() if is_successful(parsed) else None


@given(session_logs(), st.none() | tool_calls(profile="extended"), _LATER)
def test_the_state_a_decision_carries_is_its_changes_folded(
    log: ValidLog, call: ToolCall | None, later: int
) -> None:
    command = _command(call)
    if command is None:
        return  # refused before the rules: no decision to compose
    state = fold(log.events, log.seed_length)
    d = decide(state, command, log.now + later, profile="extended")
    assert fold_changes(d.changes, state) == d.state


@given(session_logs(), st.data())
def test_the_log_with_a_decisions_changes_folds_to_its_state(
    log: ValidLog, data: st.DataObject
) -> None:
    """Several decisions in a row, each appended to the log as the shell
    appends it: the whole log folds to the last decision's state, and so
    does the log folded once and resumed from an earlier state."""
    state = fold(log.events, log.seed_length)
    before, start = state, len(log.events)
    now = log.now
    for _ in range(data.draw(st.integers(1, 4))):
        now += data.draw(_LATER)
        ids = [record.id for record in state.active]
        command = _command(data.draw(st.none() | tool_calls(profile="extended", ids=ids)))
        if command is None:
            continue
        changes, result = d = decide(state, command, now, profile="extended")
        assert changes == d.changes
        assert result == d.result
        log = log.append(d.changes, now)
        state = d.state
    assert fold(log.events, log.seed_length) == state
    assert fold(log.events[start:], 0, before) == state
