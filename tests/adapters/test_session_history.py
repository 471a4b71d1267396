"""The dashboard's session view tells the stories of the reminders a
schedule change named most recently, at most ``MAX_REMINDERS`` of them:
each story reads the whole log, so telling every reminder of a session
holding thousands took minutes (quadratic in the reminders)."""

from __future__ import annotations

import pytest

import tickler.adapters.cli._why as why
from tickler.adapters._session_history import MAX_REMINDERS, history
from tickler.core import (
    EMPTY_STATE,
    SCHEDULE_CHANGE,
    SessionEvent,
    encode_change,
    evolve,
    handle,
    parse_instant,
    parse_session_jsonl,
)
from tickler.core.wire._session import event
from tickler.testing import session_file

T0 = parse_instant("2026-12-07T08:00:00.000Z")


def _session(reminders: int, renamed: list[int]) -> bytes:
    """``reminders`` one-shots created in order, then the ones in
    ``renamed`` (by number, 1-based) given a new prompt, in that order."""
    state, events = EMPTY_STATE, list[SessionEvent]()
    calls = [
        ("schedule_create", {"prompt": f"r{n}", "after_seconds": 3600}) for n in range(reminders)
    ]
    calls += [("schedule_update", {"id": f"schedule-{n}", "prompt": "again"}) for n in renamed]
    for tool, args in calls:
        changes, _ = handle(state, tool, args, T0)
        for change in changes:
            state = evolve(state, change)
            events.append(event(SCHEDULE_CHANGE, len(events), T0, encode_change(change)))
    return session_file(events, session_id="s1", created_at=T0)


def test_at_most_max_reminders_stories_are_told_the_latest_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    told: list[str] = []
    story = why.reminder_story

    def counted(parsed: object, schedule_id: str, now_ms: int) -> why.Story:
        told.append(schedule_id)
        return story(parsed, schedule_id, now_ms)  # type: ignore[arg-type]

    monkeypatch.setattr(why, "reminder_story", counted)
    total = MAX_REMINDERS + 20
    parsed = parse_session_jsonl(_session(total, renamed=[3, 1]))
    shown = history(parsed, T0)
    assert (shown.told, shown.created) == (MAX_REMINDERS, total)
    # the latest named: the two renamed last, then the latest created
    latest_created = [f"schedule-{n}" for n in range(total - MAX_REMINDERS + 3, total + 1)]
    assert sorted(told) == sorted([*latest_created, "schedule-3", "schedule-1"])
    assert {step.reminder_id for step in shown.steps} == set(told)
    assert [s.reminder_id for s in shown.steps if s.event == "updated"] == [
        "schedule-3",
        "schedule-1",
    ]


def test_a_small_session_is_told_whole() -> None:
    parsed = parse_session_jsonl(_session(3, renamed=[]))
    shown = history(parsed, T0)
    assert (shown.told, shown.created) == (3, 3)
    assert [s.reminder_id for s in shown.steps if s.event == "created"] == [
        "schedule-1",
        "schedule-2",
        "schedule-3",
    ]
