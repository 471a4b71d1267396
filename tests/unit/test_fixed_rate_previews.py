"""Fixed-rate previews: in the extended profile every answer that shows an
``every_seconds`` reminder lists its next three occurrences on its lattice
(``scheduledAt``, then one interval apart), in UTC and as the UTC wall time
with its offset; the reference profile's texts have no such field."""

from __future__ import annotations

import json
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest

from tickler.core import Profile, handle, tool_catalog
from tickler.core._commands import DeliverDue
from tickler.core._decide import decide
from tickler.core._state import EMPTY_STATE, State, evolve
from tickler.core.timing._instant import format_instant, parse_instant

NOW = 1_796_634_000_000  # 2026-12-07T09:00:00.000Z
HOUR = 3600


def _call(
    state: State, tool: str, args: dict[str, Any], now: int = NOW, profile: Profile = "extended"
) -> tuple[State, str]:
    changes, text = handle(state, tool, args, now, profile=profile)
    for change in changes:
        state = evolve(state, change)
    return state, text


def _lattice(scheduled_at: str, every_seconds: int) -> list[dict[str, str]]:
    """The expected previews, built from the instant arithmetic alone."""
    target = parse_instant(scheduled_at)
    points = [target + k * every_seconds * 1000 for k in range(3)]
    return [
        {"utc": format_instant(at), "local": format_instant(at)[:19] + "+00:00"} for at in points
    ]


def _output_schema(tool: str) -> dict[str, Any]:
    (entry,) = [t for t in tool_catalog(profile="extended") if t["name"] == tool]
    schema: dict[str, Any] = entry["output_schema"]
    return schema


@pytest.mark.parametrize("every_seconds", [300, HOUR, 86_400, 7 * 86_400 + 13])
def test_create_shows_the_next_three_points_of_the_lattice(every_seconds: int) -> None:
    _, text = _call(EMPTY_STATE, "schedule_create", {"prompt": "p", "every_seconds": every_seconds})
    view = json.loads(text)
    assert view["scheduledAt"] == format_instant(NOW + every_seconds * 1000)
    assert view["nextOccurrences"] == _lattice(view["scheduledAt"], every_seconds)
    assert list(view)[-1] == "nextOccurrences"  # after deliveryMode, like a calendar view
    jsonschema.validate(view, _output_schema("schedule_create"))


def test_an_exact_text_for_an_hourly_reminder() -> None:
    _, text = _call(EMPTY_STATE, "schedule_create", {"prompt": "p", "every_seconds": HOUR})
    assert text == (
        '{"id":"schedule-1","kind":"every","prompt":"p","everySeconds":3600,'
        '"scheduledAt":"2026-12-07T10:00:00.000Z","state":"scheduled",'
        '"deliveryMode":"session-local","nextOccurrences":['
        '{"utc":"2026-12-07T10:00:00.000Z","local":"2026-12-07T10:00:00+00:00"},'
        '{"utc":"2026-12-07T11:00:00.000Z","local":"2026-12-07T11:00:00+00:00"},'
        '{"utc":"2026-12-07T12:00:00.000Z","local":"2026-12-07T12:00:00+00:00"}]}'
    )


def test_the_reference_profile_shows_no_previews() -> None:
    state, text = _call(
        EMPTY_STATE, "schedule_create", {"prompt": "p", "every_seconds": HOUR}, profile="reference"
    )
    assert text == (
        '{"id":"schedule-1","kind":"every","prompt":"p","everySeconds":3600,'
        '"scheduledAt":"2026-12-07T10:00:00.000Z","state":"scheduled",'
        '"deliveryMode":"session-local"}'
    )
    _, listed = _call(state, "schedule_list", {}, profile="reference")
    assert "nextOccurrences" not in listed
    _, extended = _call(state, "schedule_list", {})
    assert json.loads(extended)[0]["nextOccurrences"] == _lattice("2026-12-07T10:00:00.000Z", HOUR)


def test_list_follows_the_target_after_a_delivery_and_one_shots_show_none() -> None:
    state, _ = _call(EMPTY_STATE, "schedule_create", {"prompt": "p", "every_seconds": HOUR})
    state, _ = _call(state, "schedule_create", {"prompt": "q", "after_seconds": 60})
    # Fires late, two and a half intervals in: the next target is the lattice's.
    late = NOW + 3 * HOUR * 1000 + 30 * 60 * 1000
    state, _ = _call(state, "schedule_create", {"prompt": "tick", "after_seconds": 600}, late)
    for _ in range(3):  # the one-shots, one per turn, then the fixed-rate batch
        changes, _ = decide(state, DeliverDue(), late)
        for change in changes:
            state = evolve(state, change)
    assert decide(state, DeliverDue(), late)[0] == ()  # nothing more is due
    _, text = _call(state, "schedule_list", {}, late)
    views = {v["prompt"]: v for v in json.loads(text)}
    assert "nextOccurrences" not in views["tick"]
    every = views["p"]
    assert every["scheduledAt"] == format_instant(NOW + 4 * HOUR * 1000)
    assert every["nextOccurrences"] == _lattice(every["scheduledAt"], HOUR)
    jsonschema.validate(json.loads(text), _output_schema("schedule_list"))


def test_a_paused_reminder_shows_its_lattice_from_its_target() -> None:
    state, _ = _call(EMPTY_STATE, "schedule_create", {"prompt": "p", "every_seconds": HOUR})
    _, text = _call(state, "schedule_update", {"id": "schedule-1", "paused": True})
    view = json.loads(text)
    assert view["state"] == "paused"
    assert view["nextOccurrences"] == _lattice("2026-12-07T10:00:00.000Z", HOUR)
    jsonschema.validate(view, _output_schema("schedule_update"))


def test_a_series_ending_past_year_9999_shows_fewer() -> None:
    seven_thousand_years = 7000 * 365 * 86_400
    _, text = _call(
        EMPTY_STATE, "schedule_create", {"prompt": "p", "every_seconds": seven_thousand_years}
    )
    view = json.loads(text)
    assert [p["utc"] for p in view["nextOccurrences"]] == [view["scheduledAt"]]
    jsonschema.validate(view, _output_schema("schedule_create"))
