"""Every golden vector under specs/vectors/ is a passing test.

One test per line of every file (the test id is ``<file>:<case>``); texts are
compared byte for byte. The file formats are described in
specs/vectors/README.md.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import msgspec
import pytest
from returns.pipeline import is_successful

from tickler.core import (
    EMPTY_STATE,
    CorruptScheduleLog,
    CreateAt,
    CreateChange,
    Created,
    DeliverDue,
    Delivery,
    EverySchedule,
    ScheduleChange,
    SessionEvent,
    State,
    Wait,
    change_json,
    check_log,
    decide,
    decode_change,
    evolve,
    fold,
    handle,
    resolve_every_occurrence,
    tool_catalog,
)
from tickler.core._model import CalendarSchedule, ScheduleRecord

VECTORS = Path(__file__).resolve().parents[2] / "specs" / "vectors"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_SURROGATE = re.compile("[\\ud800-\\udfff]")

OUTPUT_SCHEMAS = {tool["name"]: tool["output_schema"] for tool in tool_catalog(profile="reference")}

Case = dict[str, Any]


def _load(name: str) -> list[Case]:
    lines = (VECTORS / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _cases(name: str) -> Any:
    return [
        pytest.param(case, id=f"{name.removesuffix('.jsonl')}:{case['case']}")
        for case in _load(name)
    ]


def canonical(value: object) -> str:
    """What JSON.stringify writes: compact, in the value's own key order,
    non-ASCII kept, a lone surrogate as a lower-case escape. (Strings read from
    JSON hold surrogate pairs as one character, so any surrogate left is lone.)"""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def epoch_ms(instant: str) -> int:
    """Epoch milliseconds of a canonical UTC instant, by plain datetime arithmetic."""
    parsed = datetime.fromisoformat(instant.replace("Z", "+00:00"))
    return (parsed - _EPOCH) // timedelta(milliseconds=1)


def now_of(case: Case) -> int:
    return epoch_ms(case["now"]) if "now" in case else int(case["now_ms"])


def events(items: Iterable[Case]) -> list[SessionEvent]:
    """Session events numbered from 0; ``data`` is written as ASCII JSON."""
    return [
        SessionEvent(
            type=item["type"], seq=seq, time=1, data=msgspec.Raw(json.dumps(item["data"]).encode())
        )
        for seq, item in enumerate(items)
    ]


def state_of(log: Iterable[object]) -> State:
    return fold(events({"type": "schedule/change", "data": change} for change in log))


def record_json(record: ScheduleRecord) -> str:
    """The record's own text, cut from the text of its create change."""
    assert not isinstance(record, CalendarSchedule)  # the vectors are v1
    text = change_json(CreateChange(version=1, schedule=record))
    head = '{"version":1,"operation":"create","schedule":'
    assert text.startswith(head)
    assert text.endswith("}")
    return text[len(head) : -1]


def assert_state(state: State, expect: Case) -> None:
    assert [record_json(r) for r in state.active] == [canonical(r) for r in expect["active"]]
    seen = list(state.seen_ids)
    assert len(seen) == len(expect["seen_ids"])
    assert set(seen) == set(expect["seen_ids"])


def assert_changes(changes: Iterable[ScheduleChange], expected: list[object]) -> None:
    assert [change_json(c) for c in changes] == [canonical(c) for c in expected]


# ------------------------------------------------------------------ the files

FILES = sorted(path.name for path in VECTORS.glob("*.jsonl"))


def test_every_vector_file_is_run() -> None:
    assert FILES == [
        "allocate.jsonl",
        "at.jsonl",
        "decode.jsonl",
        "deliver.jsonl",
        "fold.jsonl",
        "invariant.jsonl",
        "occurrence.jsonl",
        "tools.jsonl",
    ]


@pytest.mark.parametrize("name", FILES)
def test_vector_file_is_well_formed(name: str) -> None:
    cases = _load(name)
    assert cases
    names = [case["case"] for case in cases]
    assert len(names) == len(set(names)), "case names must be unique"
    for case in cases:
        assert list(case)[:2] == ["case", "source"]
        assert isinstance(case["source"], str)
        assert case["source"]
        assert isinstance(case["expect"], dict)


# --------------------------------------------------------------------- decode


@pytest.mark.parametrize("case", _cases("decode.jsonl"))
def test_decode(case: Case) -> None:
    raw = case["payload_json"] if "payload_json" in case else json.dumps(case["payload"])
    expect = case["expect"]
    if "reason" in expect:
        with pytest.raises(CorruptScheduleLog) as caught:
            decode_change(raw.encode())
        assert caught.value.reason == expect["reason"]
        return
    decoded = decode_change(raw.encode())
    assert change_json(decoded) == canonical(expect["change"])


# ----------------------------------------------------------------------- fold


@pytest.mark.parametrize("case", _cases("fold.jsonl"))
def test_fold(case: Case) -> None:
    log, expect = events(case["events"]), case["expect"]
    if "reason" in expect:
        with pytest.raises(CorruptScheduleLog) as caught:
            fold(log, case["seed_length"])
        assert (caught.value.reason, caught.value.index) == (expect["reason"], expect["index"])
        return
    assert_state(fold(log, case["seed_length"]), expect)


@pytest.mark.parametrize("case", _cases("fold.jsonl"))
def test_evolve_agrees_with_fold(case: Case) -> None:
    """The incremental path (one ``evolve`` per change) gives the same state
    and the same reason, for the owned suffix."""
    seed, expect = case["seed_length"], case["expect"]
    if expect.get("index", 0) is None:
        return  # a seed length outside the log: nothing to evolve
    owned = [e for e in case["events"][int(seed) :] if e["type"] == "schedule/change"]
    if "reason" in expect:
        with pytest.raises(CorruptScheduleLog) as caught:
            _evolve_all(owned)
        assert caught.value.reason == expect["reason"]
        return
    assert_state(_evolve_all(owned), expect)


def _evolve_all(owned: Iterable[Case]) -> State:
    state = EMPTY_STATE
    for item in owned:
        state = evolve(state, decode_change(json.dumps(item["data"]).encode()))
    return state


@pytest.mark.parametrize("case", _cases("invariant.jsonl"))
def test_check_log(case: Case) -> None:
    everything = events([*case["events"], *case["candidates"]])
    given, candidates = everything[: len(case["events"])], everything[len(case["events"]) :]
    result = check_log(given, case["seed_length"], candidates)
    expect = case["expect"]
    if "reason" in expect:
        assert not is_successful(result)
        failure = result.failure()
        assert (failure.reason, failure.index) == (expect["reason"], expect["index"])
        return
    assert is_successful(result)
    assert_state(result.unwrap(), expect)


@pytest.mark.parametrize("case", _cases("allocate.jsonl"))
def test_allocate(case: Case) -> None:
    state = fold(events(case["events"]), case["seed_length"])
    now = epoch_ms("2026-08-05T12:00:00.000Z")
    changes, output = handle(
        state, "schedule_create", {"prompt": "x", "after_seconds": 60}, now, profile="reference"
    )
    record = {
        "id": case["expect"]["id"],
        "kind": "after",
        "prompt": "x",
        "afterSeconds": 60,
        "scheduledAt": "2026-08-05T12:01:00.000Z",
    }
    assert_changes(changes, [{"version": 1, "operation": "create", "schedule": record}])
    view = {**record, "state": "scheduled", "deliveryMode": "session-local"}
    assert output == canonical(view)


# ---------------------------------------------------------------- fixed rate


@pytest.mark.parametrize("case", _cases("occurrence.jsonl"))
def test_occurrence(case: Case) -> None:
    raw = case["record"]
    record = EverySchedule(
        id=raw["id"],
        prompt=raw["prompt"],
        every_seconds=raw["everySeconds"],
        scheduled_at=raw["scheduledAt"],
    )
    if "decision" in case:
        decision: Any = epoch_ms(case["decision"])
    else:
        decision = float("nan") if case["decision_ms"] is None else case["decision_ms"]
    expect = case["expect"]
    if "reason" in expect:
        with pytest.raises(CorruptScheduleLog) as caught:
            resolve_every_occurrence(record, decision)
        assert caught.value.reason == expect["reason"]
        return
    result = resolve_every_occurrence(record, decision)
    assert result.occurrence_at == expect["occurrenceAt"]
    assert result.next_scheduled_at == expect.get("nextScheduledAt")


# ------------------------------------------------------------------- at rules


@pytest.mark.parametrize("case", _cases("at.jsonl"))
def test_at(case: Case) -> None:
    # The reference's rules and texts (the extended profile also takes HH:mm).
    changes, result = decide(
        EMPTY_STATE, CreateAt("x", case["at"]), now_of(case), profile="reference"
    )
    expect = case["expect"]
    if "code" in expect:
        assert changes == ()
        assert not is_successful(result)
        failure = result.failure()
        assert (failure.code, failure.message) == (expect["code"], expect["message"])
        assert (failure.operation, failure.id) == (None, None)
        return
    assert is_successful(result)
    outcome = result.unwrap()
    assert isinstance(outcome, Created)
    assert outcome.view.record.scheduled_at == expect["scheduledAt"]
    record = {"id": "schedule-1", "kind": "at", "prompt": "x", "scheduledAt": expect["scheduledAt"]}
    assert_changes(changes, [{"version": 1, "operation": "create", "schedule": record}])


# ---------------------------------------------------------------------- tools


@pytest.mark.parametrize("case", _cases("tools.jsonl"))
def test_tool(case: Case) -> None:
    state = state_of(case["log"])
    changes, output = handle(
        state, case["tool"], case.get("args"), now_of(case), profile="reference"
    )
    assert output == case["expect"]["output"]
    assert_changes(changes, case["expect"]["changes"])
    jsonschema.validate(json.loads(output), OUTPUT_SCHEMAS[case["tool"]])


# -------------------------------------------------------------------- deliver


@pytest.mark.parametrize("case", _cases("deliver.jsonl"))
def test_deliver(case: Case) -> None:
    changes, result = decide(state_of(case["log"]), DeliverDue(), now_of(case))
    assert is_successful(result)
    outcome, expect = result.unwrap(), case["expect"]
    if "wait" in expect:
        assert changes == ()
        assert outcome == Wait(expect["wait"])
        return
    assert isinstance(outcome, Delivery)
    assert outcome.text == expect["text"]
    assert_changes(changes, expect["changes"])
    occurrences = [
        {"id": o.id, "occurrence_at": o.occurrence_at, "prompt": o.prompt}
        for o in outcome.occurrences
    ]
    assert occurrences == expect["occurrences"]
    assert outcome.accepted_at == expect["accepted_at"]
