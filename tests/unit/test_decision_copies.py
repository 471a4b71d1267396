"""A Decision's copies keep its state right: ``_replace`` evolves again when
the changes differ, ``_make`` (which cannot know the state before) refuses."""

from __future__ import annotations

import pytest
from returns.result import Success

from tickler.core import EMPTY_STATE, Decision, decide, fold_changes, parse_tool_call

NOW = 1_800_000_000_000


def _created() -> Decision:
    command = parse_tool_call("schedule_create", {"prompt": "stretch", "after_seconds": 60})
    return decide(EMPTY_STATE, command.unwrap(), NOW)


def test_replace_keeps_the_state_of_the_same_changes() -> None:
    decided = _created()
    copy = decided._replace(result=Success(None))
    assert copy.state == decided.state
    assert copy.result == Success(None)


def test_replace_with_other_changes_evolves_them() -> None:
    decided = _created()
    emptied = decided._replace(changes=())
    assert emptied.state == EMPTY_STATE
    again = emptied._replace(changes=decided.changes)
    assert again.state == fold_changes(decided.changes, EMPTY_STATE) == decided.state


def test_replace_refuses_an_unknown_member() -> None:
    with pytest.raises(TypeError):
        _created()._replace(state=EMPTY_STATE)


def test_make_is_refused() -> None:
    with pytest.raises(TypeError, match="with its state"):
        Decision._make(((), Success(None)))
