"""Every call the extended tool schemas allow gets a success or a closed
error, never an exception: calls drawn from each tool's input schema
(:func:`tickler.testing.strategies.schema_arguments`) go through
``parse_tool_call`` and ``decide`` without the pipeline's safety net, and
the rendered answer matches the tool's output schema."""

from __future__ import annotations

import json
from typing import Any, Final

import pytest
from hypothesis import HealthCheck, given, settings
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from returns.pipeline import is_successful

from tickler.core import (
    ERROR_CODES,
    ScheduleChange,
    State,
    decide,
    fold_changes,
    parse_instant,
    parse_tool_call,
    render,
    tool_catalog,
)
from tickler.core._commands import CreateAfter, CreateCalendar, CreateEvery
from tickler.testing.strategies import schema_arguments

NOW: Final = parse_instant("2026-10-24T12:00:00.000Z")
CATALOG: Final = {tool["name"]: tool for tool in tool_catalog(profile="extended")}


def _state() -> State:
    """A session with one reminder of each recurring kind and a one-shot,
    ids schedule-1..3, so updates find something."""
    changes: list[ScheduleChange] = []
    state = fold_changes(())
    for command in (
        CreateAfter("tea", 600),
        CreateEvery("stretch", 3600),
        CreateCalendar("stand-up", {"cron": "0 9 * * 1-5", "time_zone": "Europe/Berlin"}),
    ):
        made, _ = decide(state, command, NOW)
        changes.extend(made)
        state = fold_changes(made, state)
    assert len(changes) == 3
    return state


STATE: Final = _state()


@pytest.mark.parametrize("name", list(CATALOG))
def test_every_call_the_schema_allows_gets_a_success_or_a_closed_error(name: str) -> None:
    tool = CATALOG[name]
    output = Draft202012Validator(tool["output_schema"])

    @settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow])
    @given(schema_arguments(name, "extended", ids=("schedule-1", "schedule-2", "schedule-3")))
    def check(arguments: dict[str, Any]) -> None:
        parsed = parse_tool_call(name, arguments)
        if not is_successful(parsed):
            result: Any = parsed
        else:
            _, result = decide(STATE, parsed.unwrap(), NOW)  # raises on a fault
        text = render(result)
        answer = json.loads(text)
        assert output.is_valid(answer), (arguments, text)
        if isinstance(answer, dict) and "code" in answer and "message" in answer:
            assert answer["code"] in ERROR_CODES
            assert answer["code"] != "internal_error", (arguments, text)

    check()
