"""The reference profile over a log that already holds extended events: it
shows those reminders as they are (docs/calendar.md, Profiles) and refuses to add
any, so nothing is misreported and nothing extended is written."""

from __future__ import annotations

import json
from typing import Final

from tickler.core import EMPTY_STATE, ScheduleChange, evolve, handle, parse_instant

NOW: Final = parse_instant("2026-12-07T09:00:00.000Z")


def test_a_reference_listing_shows_an_extended_logs_reminders_as_they_are() -> None:
    state = EMPTY_STATE
    weekdays = {"cron": "0 9 * * 1-5", "time_zone": "Europe/Berlin"}
    calls = [
        ("schedule_create", {"prompt": "stand-up", "calendar": weekdays}),
        ("schedule_create", {"prompt": "stretch", "every_seconds": 3600}),
        ("schedule_update", {"id": "schedule-2", "paused": True}),
    ]
    log: list[ScheduleChange] = []
    for tool, args in calls:
        changes, _ = handle(state, tool, args, NOW)
        for change in changes:
            state = evolve(state, change)
        log.extend(changes)
    assert len(log) == 3
    changes, text = handle(state, "schedule_list", {}, NOW, profile="reference")
    assert changes == ()
    listed = json.loads(text)
    assert [(r["kind"], r["state"]) for r in listed] == [
        ("calendar", "scheduled"),
        ("every", "paused"),
    ]
    assert len(listed[0]["nextOccurrences"]) == 3
    assert "nextOccurrences" not in listed[1]  # the reference shows no fixed-rate previews
    # Nothing extended is added in the reference profile.
    again = {"prompt": "x", "calendar": {"cron": "0 9 * * *", "time_zone": "UTC"}}
    changes, refused = handle(state, "schedule_create", again, NOW, profile="reference")
    assert changes == ()
    assert json.loads(refused)["code"] == "invalid_selector"
