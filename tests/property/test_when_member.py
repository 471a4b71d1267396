"""The ``when`` member, for any JSON value: a create or an update holding
it gets a closed error or a command, never an exception; a command only
from an object holding exactly one selector, and then the same command
(and the same answer) as the flat call; ``handle`` never answers
``internal_error`` for it."""

from __future__ import annotations

import json
from typing import Any, Final

from hypothesis import given
from hypothesis import strategies as st
from returns.pipeline import is_successful

from tickler.core import (
    EMPTY_STATE,
    ERROR_CODES,
    State,
    fold_changes,
    handle,
    parse_instant,
    parse_tool_call,
)
from tickler.testing.strategies import json_values, texts

NOW: Final = parse_instant("2026-12-07T12:00:00Z")
SELECTORS: Final = ("after_seconds", "at", "every_seconds", "calendar")
# One reminder, schedule-1, so an update finds it.
STATE: Final[State] = fold_changes(
    handle(EMPTY_STATE, "schedule_create", {"prompt": "x", "after_seconds": 60}, NOW)[0]
)
TOOLS: Final = st.sampled_from(["schedule_create", "schedule_update"])

# Values that are often right for their selector, beside any JSON value.
LIKELY: Final = st.one_of(
    st.integers(-5, 100_000),
    st.just("2026-12-08T09:00:00Z"),
    st.just({"date": "2026-12-08", "time": "09:00", "time_zone": "Europe/Berlin"}),
    st.just({"cron": "0 9 * * 1-5", "time_zone": "Europe/Berlin", "dst_gap": None}),
)
WHEN_OBJECTS: Final = st.dictionaries(
    st.sampled_from(SELECTORS) | texts, LIKELY | json_values, max_size=3
)
ONE_SELECTOR: Final = st.builds(lambda k, v: {k: v}, st.sampled_from(SELECTORS), LIKELY)
WHENS: Final = st.one_of(json_values, WHEN_OBJECTS, ONE_SELECTOR)
FLAT: Final[st.SearchStrategy[dict[str, Any]]] = st.just({}) | st.dictionaries(
    st.sampled_from(SELECTORS), LIKELY | st.none(), max_size=2
)


def _arguments(tool: str, when: object, flat: dict[str, Any]) -> dict[str, Any]:
    base: dict[str, Any] = {"prompt": "tea"} if tool == "schedule_create" else {"id": "schedule-1"}
    return {**base, **flat, "when": when}


@given(TOOLS, WHENS, FLAT)
def test_any_when_is_a_closed_error_or_a_command(
    tool: str, when: object, flat: dict[str, Any]
) -> None:
    args = _arguments(tool, when, flat)
    parsed = parse_tool_call(tool, args)
    if not is_successful(parsed):
        assert parsed.failure().code in ERROR_CODES
    elif when is not None:
        chosen = {k: v for k, v in when.items() if v is not None} if isinstance(when, dict) else {}
        assert len(chosen) == 1, (args, parsed)
        assert set(chosen) <= set(SELECTORS), (args, parsed)
        assert not any(flat.get(selector) is not None for selector in SELECTORS), args
    answer = json.loads(handle(STATE, tool, args, NOW)[1])
    assert not (isinstance(answer, dict) and answer.get("code") == "internal_error"), args


@given(TOOLS, st.sampled_from(SELECTORS), LIKELY | json_values)
def test_one_selector_in_when_answers_as_the_flat_call(
    tool: str, selector: str, value: object
) -> None:
    if value is None:
        return  # a null selector is absent: nothing is chosen in either form
    union = _arguments(tool, {selector: value}, {})
    flat = {k: v for k, v in union.items() if k != "when"} | {selector: value}
    assert parse_tool_call(tool, union) == parse_tool_call(tool, flat)
    assert handle(STATE, tool, union, NOW) == handle(STATE, tool, flat, NOW)
