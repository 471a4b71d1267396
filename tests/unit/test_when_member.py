"""The extended profile's ``when`` member: one selector in an object, lifted
to the flat arguments before any other check, so a call in either form
gets the same command and the same answer; a malformed ``when`` answers
``invalid_selector`` with a message that says what to send."""

from __future__ import annotations

import json
from typing import Any, Final

import pytest
from returns.pipeline import is_successful
from returns.result import Failure

from tickler.core import EMPTY_STATE, ScheduleError, handle, parse_instant, parse_tool_call
from tickler.core._commands import CreateAfter, CreateAt, CreateCalendar, CreateEvery
from tickler.core._errors import Msg

NOW: Final = parse_instant("2026-12-07T12:00:00Z")
CALENDAR: Final = {"cron": "0 9 * * 1-5", "time_zone": "Europe/Berlin"}
WHEN: Final = ScheduleError("invalid_selector", Msg.WHEN)
TWICE: Final = ScheduleError("invalid_selector", Msg.WHEN_AND_FLAT)

SELECTIONS: Final[list[tuple[str, Any]]] = [
    ("after_seconds", 600),
    ("at", "2026-12-08T09:00:00+01:00"),
    ("at", {"date": "2026-12-08", "time": "09:00", "time_zone": "Europe/Berlin"}),
    ("every_seconds", 3600),
    ("calendar", {**CALENDAR, "dst_gap": None, "dst_overlap": None}),
]


@pytest.mark.parametrize(("selector", "value"), SELECTIONS)
def test_a_create_in_when_answers_exactly_as_the_flat_create(selector: str, value: Any) -> None:
    union = {"prompt": "tea", "when": {selector: value}, "request_id": None}
    flat = {"prompt": "tea", selector: value}
    assert parse_tool_call("schedule_create", union) == parse_tool_call("schedule_create", flat)
    assert handle(EMPTY_STATE, "schedule_create", union, NOW) == handle(
        EMPTY_STATE, "schedule_create", flat, NOW
    )
    changes, text = handle(EMPTY_STATE, "schedule_create", union, NOW)
    assert len(changes) == 1
    assert json.loads(text)["id"] == "schedule-1"


def test_each_selector_in_when_gives_its_command() -> None:
    def parsed(when: object) -> object:
        return parse_tool_call("schedule_create", {"prompt": "tea", "when": when}).unwrap()

    assert parsed({"after_seconds": 600}) == CreateAfter("tea", 600)
    assert parsed({"every_seconds": 3600}) == CreateEvery("tea", 3600)
    assert parsed({"at": "2026-12-08T09:00:00Z"}) == CreateAt("tea", "2026-12-08T09:00:00Z")
    # the calendar's own nulls are dropped as in the flat form
    with_nulls = {**CALENDAR, "dst_gap": None}
    assert parsed({"calendar": with_nulls}) == CreateCalendar("tea", CALENDAR)
    # a null beside the one selector is absent, as everywhere in this profile
    assert parsed({"after_seconds": 600, "at": None}) == CreateAfter("tea", 600)


def test_a_request_id_retry_in_the_other_form_gets_the_first_answer() -> None:
    union = {"prompt": "tea", "when": {"after_seconds": 600}, "request_id": "call-1"}
    changes, first = handle(EMPTY_STATE, "schedule_create", union, NOW)
    from tickler.core import fold_changes

    state = fold_changes(changes)
    flat = {"prompt": "tea", "after_seconds": 600, "request_id": "call-1"}
    again, second = handle(state, "schedule_create", flat, NOW + 1_000)
    assert (again, second) == ((), first)


@pytest.mark.parametrize(
    "when",
    [
        {},
        {"after_seconds": None},
        {"after_seconds": 600, "every_seconds": 3600},  # two variants mixed
        {"after_seconds": 600, "calendar": CALENDAR},
        {"prompt": "tea"},  # a member that is not a selector
        {"after_seconds": 600, "request_id": "x"},
        {"after": 600},
        "after_seconds",
        600,
        True,
        [{"after_seconds": 600}],
        [],
    ],
)
@pytest.mark.parametrize("tool", ["schedule_create", "schedule_update"])
def test_a_malformed_when_is_a_closed_invalid_selector(tool: str, when: object) -> None:
    args = {"prompt": "tea", "when": when, "id": "schedule-1"}
    if tool == "schedule_create":
        del args["id"]
    assert parse_tool_call(tool, args) == Failure(WHEN)
    changes, text = handle(EMPTY_STATE, tool, args, NOW)
    assert changes == ()
    assert json.loads(text) == {"code": "invalid_selector", "message": Msg.WHEN}


@pytest.mark.parametrize("flat", ["after_seconds", "at", "every_seconds", "calendar"])
def test_when_and_a_flat_selector_together_are_refused(flat: str) -> None:
    args = {"prompt": "tea", "when": {"after_seconds": 600}, flat: 900}
    assert parse_tool_call("schedule_create", args) == Failure(TWICE)
    # the same one twice too: the schedule is sent in one place
    same = {"prompt": "tea", "when": {"after_seconds": 600}, "after_seconds": 600}
    assert parse_tool_call("schedule_create", same) == Failure(TWICE)


def test_a_null_when_is_absent_and_the_flat_form_still_answers() -> None:
    args = {"prompt": "tea", "when": None, "after_seconds": 600, "at": None}
    assert parse_tool_call("schedule_create", args).unwrap() == CreateAfter("tea", 600)
    missing = parse_tool_call("schedule_create", {"prompt": "tea", "when": None})
    assert missing == Failure(ScheduleError("invalid_selector", Msg.SELECTOR_EXTENDED))


def test_an_update_lifts_when_before_its_own_checks() -> None:
    """Moving a reminder in place is parsed by schedule_update's own
    checks: lifted, a new schedule (and a series' end beside a recurring
    one) meets them exactly as the flat members do."""
    union = {"id": "schedule-1", "when": {"after_seconds": 600}, "prompt": None}
    flat = {"id": "schedule-1", "after_seconds": 600}
    assert parse_tool_call("schedule_update", union) == parse_tool_call("schedule_update", flat)
    assert is_successful(parse_tool_call("schedule_update", union))
    ended = {"id": "schedule-1", "when": {"every_seconds": 3600, "count": 3, "until": None}}
    flat_ended = {"id": "schedule-1", "every_seconds": 3600, "count": 3}
    assert parse_tool_call("schedule_update", ended) == parse_tool_call(
        "schedule_update", flat_ended
    )
    assert is_successful(parse_tool_call("schedule_update", ended))
    # the end sent twice, in when and beside it, is refused as the schedule is
    twice = {**ended, "count": 4}
    assert parse_tool_call("schedule_update", twice) == Failure(TWICE)
    # a when of ends alone holds no schedule
    ends_only = {"id": "schedule-1", "when": {"count": 3}}
    assert parse_tool_call("schedule_update", ends_only) == Failure(
        ScheduleError("invalid_selector", Msg.WHEN)
    )
    # a null when changes nothing
    paused = parse_tool_call("schedule_update", {"id": "schedule-1", "when": None, "paused": True})
    assert is_successful(paused)


def test_the_reference_profile_knows_no_when() -> None:
    args = {"prompt": "tea", "when": {"after_seconds": 600}}
    assert parse_tool_call("schedule_create", args, profile="reference") == Failure(
        ScheduleError("invalid_selector", Msg.SELECTOR)
    )


@pytest.mark.parametrize("message", [Msg.SELECTOR_EXTENDED, Msg.WHEN, Msg.WHEN_AND_FLAT])
def test_every_example_in_the_messages_is_a_call_that_answers(message: str) -> None:
    """The refusals show the schema's form, and what they show works."""
    examples = _json_examples(message)
    assert examples
    for example in examples:
        args = example if "prompt" in example else {"prompt": "tea", "when": example}
        assert "when" in args
        changes, text = handle(EMPTY_STATE, "schedule_create", args, NOW)
        assert len(changes) == 1, text


def _json_examples(text: str) -> list[dict[str, Any]]:
    """The JSON objects written in ``text``."""
    decoder, found, at = json.JSONDecoder(), [], text.find("{")
    while at != -1:
        value, end = decoder.raw_decode(text, at)
        found.append(value)
        at = text.find("{", end)
    return found
