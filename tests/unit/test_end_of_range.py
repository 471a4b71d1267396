"""A series' last point may be one of the range's last instants: the last
(9999-12-31T23:59:59.999Z) and the one before are occurrences like any
other, not the mark "the series ends" (one ms past the range, where no
instant is)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tickler.core import (
    EMPTY_STATE,
    SCHEDULE_CHANGE,
    DeliverDue,
    Delivery,
    ScheduleChange,
    State,
    decide,
    encode_change,
    event,
    evolve,
    fold,
    handle,
    parse_instant,
)


class _Session:
    def __init__(self) -> None:
        self.state: State = EMPTY_STATE
        self.log: list[ScheduleChange] = []

    def call(self, tool: str, args: dict[str, Any], now: int) -> Any:
        changes, answer = handle(self.state, tool, args, now)
        self._apply(changes)
        return json.loads(answer)

    def deliver(self, now: int) -> list[str]:
        changes, result = decide(self.state, DeliverDue(), now)
        self._apply(changes)
        outcome = result.unwrap()
        assert isinstance(outcome, Delivery)
        return [o.occurrence_at for o in outcome.occurrences]

    def _apply(self, changes: tuple[ScheduleChange, ...]) -> None:
        for change in changes:
            self.state = evolve(self.state, change)
        self.log.extend(changes)
        events = [event(SCHEDULE_CHANGE, n, 0, encode_change(c)) for n, c in enumerate(self.log)]
        assert fold(events) == self.state


@pytest.mark.parametrize("ms", ["998", "999"])
def test_a_fixed_rate_series_delivers_at_the_ranges_last_instants(ms: str) -> None:
    """Every 5 minutes from 23:54:59 on the last day of year 9999: the next
    point, 23:59:59, is in the range, so the series continues to it and
    ends after it."""
    session = _Session()
    first, last = f"9999-12-31T23:54:59.{ms}Z", f"9999-12-31T23:59:59.{ms}Z"
    created = session.call(
        "schedule_create",
        {"prompt": "last", "every_seconds": 300},
        parse_instant(f"9999-12-31T23:49:59.{ms}Z"),
    )
    assert [o["utc"] for o in created["nextOccurrences"]] == [first, last]
    assert session.deliver(parse_instant(first)) == [first]
    [listed] = session.call("schedule_list", {}, parse_instant(first))
    assert listed["scheduledAt"] == last
    assert session.deliver(parse_instant(last)) == [last]
    assert session.call("schedule_list", {}, parse_instant(last)) == []
