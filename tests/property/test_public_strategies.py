"""The strategies ``tickler.testing.strategies`` gives users hold what they
promise: valid logs replay (and equal the state evolved change by change),
damaged logs are refused at the paired index with the paired reason, every
tool call gets a success or one of the ten closed errors, and a seed
replays the same draws."""

from __future__ import annotations

import json
from typing import Final

import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st
from returns.pipeline import is_successful

from tickler.core import (
    EMPTY_STATE,
    ERROR_CODES,
    SCHEDULE_CHANGE,
    CorruptScheduleLog,
    Profile,
    check_log,
    decide,
    encode_change,
    fold,
    handle,
    parse_instant,
    parse_tool_call,
    render,
)
from tickler.testing import replay
from tickler.testing.strategies import (
    DamagedLog,
    ToolCall,
    ValidLog,
    damaged_logs,
    session_logs,
    tool_calls,
)

PROFILES: Final[tuple[Profile, ...]] = ("reference", "extended")
_NOW: Final = 1_800_000_000_000  # 2027-01-15: after every drawn session's last instant
_NAMES: Final = {
    "reference": {"schedule_create", "schedule_list", "schedule_delete"},
    "extended": {"schedule_create", "schedule_list", "schedule_delete", "schedule_update"},
}


@pytest.mark.parametrize("profile", PROFILES)
def test_a_drawn_session_log_replays_to_the_state_evolved_change_by_change(
    profile: Profile,
) -> None:
    @given(session_logs(profile=profile))
    def check(log: ValidLog) -> None:
        evolved = log.state()
        assert fold(log.events, log.seed_length) == evolved
        assert check_log(log.events, log.seed_length).unwrap() == evolved
        assert replay(log.events, log.seed_length).unwrap() == evolved

    check()


# Daylight-saving changes of 2026 (UTC): Europe, New York, Lord Howe.
TRANSITIONS: Final = tuple(
    parse_instant(text)
    for text in (
        "2026-03-29T01:00:00.000Z",
        "2026-10-25T01:00:00.000Z",
        "2026-03-08T07:00:00.000Z",
        "2026-11-01T06:00:00.000Z",
        "2026-04-04T15:00:00.000Z",
        "2026-10-03T15:30:00.000Z",
    )
)


def test_session_logs_hold_every_kind_of_reminder_and_event() -> None:
    """Over the derandomized draws, the logs are not all alike: creates of
    each kind, updates, deletes, dispatches, request ids, a seed prefix,
    sessions that cross a daylight-saving change, series' ends, reschedules
    and operators' changes."""
    seen: set[str] = set()

    @settings(max_examples=150)  # the rarer kinds (reschedules, operators) come up a few times
    @given(session_logs())
    def collect(log: ValidLog) -> None:
        seen.add("seed" if log.seed_length else "no seed")
        for change in log.changes:
            value = json.loads(encode_change(change))
            operation = value["operation"]
            seen.add(operation)
            if operation == "create":
                seen.add(value["schedule"]["kind"])
                seen.update({"request id"} if "requestId" in value else set())
            seen.update(member for member in ("until", "count", "by") if member in value)
            seen.update({"reschedule"} if operation == "update" and "schedule" in value else set())
        owned = [e.time for e in log.events[log.seed_length :] if e.type == SCHEDULE_CHANGE]
        if owned and any(owned[0] < at < owned[-1] for at in TRANSITIONS):
            seen.add("daylight-saving change")

    collect()
    wanted = {"seed", "create", "delete", "dispatch", "update", "after", "every", "at"}
    wanted |= {"calendar", "request id", "daylight-saving change"}
    wanted |= {"until", "count", "by", "reschedule"}  # series' ends, operators, moves
    assert wanted <= seen, wanted - seen


@given(damaged_logs())
def test_a_damaged_log_is_refused_at_its_index_with_its_reason(case: DamagedLog) -> None:
    assert is_successful(replay(case.valid, case.seed_length))
    result = replay(case.events, case.seed_length)
    assert not is_successful(result)
    assert (result.failure().index, result.failure().reason) == (case.index, case.reason)
    with pytest.raises(CorruptScheduleLog) as raised:
        fold(case.events, case.seed_length)
    assert (raised.value.index, raised.value.reason) == (case.index, case.reason)


@pytest.mark.parametrize("profile", PROFILES)
def test_every_drawn_tool_call_gets_a_success_or_a_closed_error(profile: Profile) -> None:
    answers: set[str] = set()

    @settings(max_examples=100)
    @given(st.data())
    def check(data: st.DataObject) -> None:
        log = data.draw(session_logs(profile=profile, max_steps=8))
        state = log.state()
        ids = [record.id for record in state.active]
        call: ToolCall = data.draw(tool_calls(profile=profile, now=_NOW, ids=ids))
        changes, text = handle(state, call.name, call.arguments, _NOW, profile=profile)
        # What handle returns, the fold reads: the longer log replays to
        # the state evolved by the new changes.
        longer = log.append(changes, _NOW)
        assert replay(longer.events, longer.seed_length).unwrap() == longer.state()
        assert longer.changes[len(log.changes) :] == changes
        answer = json.loads(text)
        if isinstance(answer, dict) and "code" in answer and "message" in answer:
            assert answer["code"] in ERROR_CODES
            answers.add(answer["code"])
        else:
            answers.add("success")
        # Without handle's safety net: a known tool never faults.
        parsed = parse_tool_call(call.name, call.arguments, profile=profile)
        if is_successful(parsed):
            _, result = decide(state, parsed.unwrap(), _NOW, profile=profile)
            assert json.loads(render(result)) == answer
        elif call.name in _NAMES[profile]:
            assert parsed.failure().code != "internal_error", call

    check()
    # The draws reach successes and the shape errors, not one answer only.
    assert {"success", "invalid_selector", "invalid_rule"} <= answers, answers


@pytest.mark.parametrize("profile", PROFILES)
def test_drawn_tool_calls_reach_every_kind_of_answer(profile: Profile) -> None:
    """Inside the schemas and beyond them: successes, each shape error, a
    time in the past, an unknown tool."""
    answers: set[str] = set()

    @settings(max_examples=400)
    @given(tool_calls(profile=profile, now=_NOW))
    def collect(call: ToolCall) -> None:
        _, text = handle(EMPTY_STATE, call.name, call.arguments, _NOW, profile=profile)
        answer = json.loads(text)
        answers.add(answer.get("code", "success") if isinstance(answer, dict) else "success")

    collect()
    wanted = {"success", "schedule_not_found", "invalid_prompt", "invalid_selector"}
    wanted |= {"invalid_rule", "not_future", "internal_error"}
    assert wanted <= answers, wanted - answers


def test_a_seed_replays_the_same_draws() -> None:
    """No wall clock and no global random in the strategies: two runs with
    one seed draw the same logs and calls."""

    def run() -> list[object]:
        drawn: list[object] = []

        @seed(20261207)
        @settings(max_examples=15, derandomize=False, database=None)
        @given(session_logs(), damaged_logs(), tool_calls(profile="extended"))
        def record(log: ValidLog, damaged: DamagedLog, call: ToolCall) -> None:
            events = [(e.type, e.seq, e.time, bytes(e.data)) for e in log.events]
            drawn.append((events, damaged.index, damaged.reason, repr(call)))

        record()
        return drawn

    first = run()
    assert len(first) == 15
    assert run() == first
