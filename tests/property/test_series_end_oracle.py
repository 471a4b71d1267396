"""A calendar series ended by a local ``until`` near a real DST change,
against the independent enumeration of :mod:`.test_calendar_enumeration`.

The oracle reads ``until`` as that module reads every wall time: the UTC
minutes whose local wall clock shows it, the earliest when it shows twice
(as a local ``at`` resolves), none in a gap (then the create is refused).
The reminder, created through the tools, must deliver exactly the
enumerated occurrences up to that instant, one delivery each, and then be
done; its previews never show more than that."""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import timedelta
from typing import Final

from hypothesis import assume, given
from hypothesis import strategies as st

from tickler.core import EMPTY_STATE, DeliverDue, Delivery, decide, evolve, format_instant, handle

from .test_calendar_enumeration import (
    EXTRA,
    MINUTE,
    NAIVE_EPOCH,
    Case,
    _rule,
    _wall_minute,
    cases,
    enumerate_occurrences,
)

MARGIN_MS: Final = 2 * 60 * MINUTE


def _oracle_until(case: Case, wall: int) -> int | None:
    """The instant a local ``until`` at wall minute ``wall`` names: the
    earliest UTC minute read as it, None in a gap."""
    read_at: defaultdict[int, list[int]] = defaultdict(list)
    start = (case.low - MARGIN_MS) // MINUTE * MINUTE
    for instant in range(start, case.high + EXTRA + MARGIN_MS, MINUTE):
        read_at[_wall_minute(case.zone_key, instant)].append(instant)
    seen = read_at.get(wall)
    return min(seen) if seen else None


@given(case=cases(), pick=st.integers(0, 10**9))
def test_a_local_until_ends_the_series_where_the_enumeration_says(case: Case, pick: int) -> None:
    _rule(case.cron, case.zone_key, case.gap, case.overlap)  # a rule that can match
    now = case.low
    span = case.high - case.low
    wall = _wall_minute(case.zone_key, now + MINUTE + pick % max(1, span))
    local = NAIVE_EPOCH + timedelta(minutes=wall)
    until = {
        "date": local.date().isoformat(),
        "time": local.time().isoformat(timespec="minutes"),
        "time_zone": case.zone_key,
    }
    calendar = {
        "cron": case.cron.text,
        "time_zone": case.zone_key,
        "dst_gap": case.gap,
        "dst_overlap": case.overlap,
    }
    changes, text = handle(
        EMPTY_STATE, "schedule_create", {"prompt": "p", "calendar": calendar, "until": until}, now
    )
    answer = json.loads(text)
    expected_until = _oracle_until(case, wall)
    expected = enumerate_occurrences(
        case.cron, case.zone_key, case.gap, case.overlap, now, case.high + EXTRA
    )
    assume(expected and expected[-1] > (expected_until or 0))  # the window reaches past until
    if expected_until is None or expected_until <= now:  # a gap, or not in the future
        assert "code" in answer
        return
    ended = [u for u in expected if u <= expected_until]
    if not ended:  # nothing before until: refused, nothing would remain
        assert answer["code"] == "invalid_rule"
        return
    assert "code" not in answer, answer
    assert len(answer["nextOccurrences"]) == min(3, len(ended))
    state = EMPTY_STATE
    for change in changes:
        state = evolve(state, change)
    delivered: list[str] = []
    for occurrence in ended:
        changes, result = decide(state, DeliverDue(), occurrence)
        outcome = result.unwrap()
        assert isinstance(outcome, Delivery)
        delivered.append(outcome.occurrences[0].occurrence_at)
        for change in changes:
            state = evolve(state, change)
    assert delivered == [format_instant(u) for u in ended]
    assert state.get("schedule-1") is None  # done after its last occurrence


@given(case=cases(), pick=st.integers(0, 10**9))
def test_a_count_catch_up_delivers_the_nth_enumerated_occurrence(case: Case, pick: int) -> None:
    """A calendar series of ``count`` occurrences, caught up once after
    all of them, delivers the ``count``-th enumerated occurrence (found by
    counting, not by walking each point) and is done."""
    _rule(case.cron, case.zone_key, case.gap, case.overlap)
    now = case.low
    end = case.high + EXTRA
    expected = enumerate_occurrences(case.cron, case.zone_key, case.gap, case.overlap, now, end)
    if not expected:  # a rule this window never meets (the others are many)
        return
    count = 1 + pick % len(expected)
    calendar = {
        "cron": case.cron.text,
        "time_zone": case.zone_key,
        "dst_gap": case.gap,
        "dst_overlap": case.overlap,
    }
    args = {"prompt": "p", "calendar": calendar, "count": count}
    changes, text = handle(EMPTY_STATE, "schedule_create", args, now)
    assert "code" not in json.loads(text), text
    state = EMPTY_STATE
    for change in changes:
        state = evolve(state, change)
    changes, result = decide(state, DeliverDue(), end)
    outcome = result.unwrap()
    assert isinstance(outcome, Delivery)
    [occurrence] = outcome.occurrences
    assert occurrence.occurrence_at == format_instant(expected[count - 1])
    for change in changes:
        state = evolve(state, change)
    assert state.get("schedule-1") is None
