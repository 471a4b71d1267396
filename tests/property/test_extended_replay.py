"""Replay equals incremental state for logs with the extended events:
sessions of random tool calls (calendar creates, updates, reschedules
to a new selector, series ends by until and count, request ids, deletes)
and deliveries at random times,
as ``handle`` and ``decide`` produce them. ``fold`` of the log (its fast
path and the exact one), the state evolved change by change, a snapshot
image of it, and the answers ``check_log`` gives all agree."""

from __future__ import annotations

import json
from typing import Any, Final

from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]
from returns.pipeline import is_successful

from tickler.core import (
    EMPTY_STATE,
    SCHEDULE_CHANGE,
    DeliverDue,
    ScheduleChange,
    check_log,
    decide,
    encode_change,
    evolve,
    fold,
    handle,
    parse_instant,
)
from tickler.core._schema import change_schema, change_schema_v2
from tickler.core._snapshot import decode_state, encode_state
from tickler.core.wire._session import event

# The generated contracts of specs/: every change decide makes fits its version's.
_SCHEMAS: Final = {
    1: Draft202012Validator(change_schema()),
    2: Draft202012Validator(change_schema_v2()),
}

T0: Final = parse_instant("2026-03-20T12:00:00.000Z")  # a week before Europe's spring change
MINUTE: Final = 60_000

_CRONS = st.sampled_from(
    [
        *("0 9 * * 1-5", "30 2 * * *", "*/20 * * * *", "@daily", "0 1 * * 0"),
        # the month-dependent forms, logged as sent (Europe changes on 29 March 2026)
        *("30 2 * * 0L", "30 2 L,15W * sun#5", "0 9 LW * *", "@midnight", "0 2 * 3,4 Lsun"),
    ]
)
_ZONES = st.sampled_from(["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "UTC"])
_IDS = st.sampled_from([f"schedule-{n}" for n in range(1, 6)])
_REQUESTS = st.none() | st.sampled_from(["r1", "r2"])


def _calendar() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"cron": _CRONS, "time_zone": _ZONES},
        optional={
            "dst_gap": st.sampled_from(["shift", "skip"]),
            "dst_overlap": st.sampled_from(["first", "both"]),
        },
    )


# A series' end: instants and local times around Europe's change on 29
# March (02:30 there does not exist: refused), and counts.
_UNTILS = st.sampled_from(
    [
        "2026-03-21T00:00:00Z",
        "2026-03-29T03:00:00+02:00",
        "2026-04-05T00:00:00Z",
        {"date": "2026-03-29", "time": "02:30"},
        {"date": "2026-03-30", "time": "09:00"},
        {"date": "2026-03-29", "time": "09:00", "time_zone": "America/New_York"},
    ]
)


def _end(removable: bool) -> st.SearchStrategy[dict[str, Any]]:
    """Some of ``until`` and ``count`` (``"none"`` too, in an update)."""
    until: st.SearchStrategy[object] = _UNTILS
    count: st.SearchStrategy[object] = st.integers(0, 6)
    if removable:
        until, count = until | st.just("none"), count | st.just("none")
    return st.fixed_dictionaries({}, optional={"until": until, "count": count})


def _create() -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    selector = st.one_of(
        _calendar().map(lambda c: {"calendar": c}),
        st.integers(1, 3 * 86_400).map(lambda s: {"after_seconds": s}),
        st.integers(300, 86_400).map(lambda s: {"every_seconds": s}),
    )
    return st.tuples(selector, st.sampled_from(["a", "b"]), _REQUESTS, _end(False)).map(
        lambda t: (
            "schedule_create",
            {"prompt": t[1], **t[0], **({} if t[2] is None else {"request_id": t[2]}), **t[3]},
        )
    )


def _update() -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    members = st.fixed_dictionaries(
        {},
        optional={
            "prompt": st.sampled_from(["c", "d"]),
            "paused": st.booleans(),
            "snooze_seconds": st.integers(1, 2 * 86_400),
        },
    )
    return (
        st.tuples(_IDS, members, _end(True))
        .filter(lambda t: bool(t[1] or t[2]))
        .map(lambda t: ("schedule_update", {"id": t[0], **t[1], **t[2]}))
    )


def _reschedule() -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    """A new selector in place (some refused: an ``at`` already past, an
    interval too short), now and then with a prompt or a pause."""
    selector = st.one_of(
        _calendar().map(lambda c: {"calendar": c}),
        st.integers(0, 3 * 86_400).map(lambda s: {"after_seconds": s}),
        st.integers(299, 86_400).map(lambda s: {"every_seconds": s}),
        st.sampled_from(
            ["2026-03-21T09:00:00Z", "2026-03-29T01:30:00+01:00", "2026-04-02T12:00:00.5Z"]
        ).map(lambda at: {"at": at}),
    )
    extra = st.fixed_dictionaries(
        {}, optional={"prompt": st.sampled_from(["e", "f"]), "paused": st.booleans()}
    )
    return st.tuples(_IDS, selector, extra, _end(True)).map(
        lambda t: ("schedule_update", {"id": t[0], **t[1], **t[2], **t[3]})
    )


_STEP = st.one_of(
    _create(),
    _update(),
    _reschedule(),
    _IDS.map(lambda i: ("schedule_delete", {"id": i})),
    st.just(("deliver", {})),
)


@given(st.lists(st.tuples(_STEP, st.integers(0, 2 * 86_400_000)), max_size=30))
def test_fold_of_the_log_equals_the_state_evolved_change_by_change(
    steps: list[tuple[tuple[str, dict[str, Any]], int]],
) -> None:
    state, now = EMPTY_STATE, T0
    log: list[ScheduleChange] = []
    for (tool, args), pause in steps:
        now += pause // MINUTE * MINUTE + 17  # off whole minutes too
        if tool == "deliver":
            changes, _ = decide(state, DeliverDue(), now)
        else:
            changes, _ = handle(state, tool, args, now)
        for change in changes:
            state = evolve(state, change)
            log.append(change)
    events = [event(SCHEDULE_CHANGE, seq, 0, encode_change(c)) for seq, c in enumerate(log)]
    assert fold(events) == state
    checked = check_log(events)
    assert is_successful(checked)
    assert checked.unwrap() == state
    assert decode_state(encode_state(state)) == state
    for change in log:
        payload = json.loads(encode_change(change))
        assert _SCHEMAS[payload["version"]].is_valid(payload), payload
