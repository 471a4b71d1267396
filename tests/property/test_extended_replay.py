"""Replay equals incremental state for logs with the extended events:
sessions of random tool calls (calendar creates, updates, request ids,
deletes) and deliveries at random times across daylight-saving changes, as
``handle`` and ``decide`` produce them
(:func:`tickler.testing.strategies.session_logs`). ``fold`` of the log, the
state evolved change by change, a snapshot image of it, and the answers
``check_log`` gives all agree."""

from __future__ import annotations

from hypothesis import given
from returns.pipeline import is_successful

from tickler.core import SCHEDULE_CHANGE, check_log, encode_change, fold
from tickler.core._session import event
from tickler.core._snapshot import decode_state, encode_state
from tickler.testing.strategies import ValidLog, session_logs


@given(session_logs(profile="extended"))
def test_fold_of_the_log_equals_the_state_evolved_change_by_change(log: ValidLog) -> None:
    state = log.state()
    assert fold(log.events, log.seed_length) == state
    # the changes alone, as a fresh log of nothing else
    alone = [event(SCHEDULE_CHANGE, seq, 0, encode_change(c)) for seq, c in enumerate(log.changes)]
    assert fold(alone) == state
    checked = check_log(log.events, log.seed_length)
    assert is_successful(checked)
    assert checked.unwrap() == state
    assert decode_state(encode_state(state)) == state
