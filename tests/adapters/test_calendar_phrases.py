"""The offline model's recurring calendar phrases -> schedule_create arguments."""

from __future__ import annotations

import pytest

from tickler.adapters.offline._calendar_phrases import calendar_request
from tickler.core import parse_calendar

BERLIN = "Europe/Berlin"


@pytest.mark.parametrize(
    ("text", "cron", "prompt"),
    [
        ("every weekday at 9", "0 9 * * 1-5", "every weekday at 9"),
        ("every weekday at 9 to write stand-up notes", "0 9 * * 1-5", "write stand-up notes"),
        ("remind me every weekday at 9 to stretch", "0 9 * * 1-5", "stretch"),
        ("every day at 9:30 drink water", "30 9 * * *", "drink water"),
        ("Every Monday at 8am: plan the week", "0 8 * * 1", "plan the week"),
        ("every monday at 8 a.m. plan", "0 8 * * 1", "plan"),
        ("on weekdays at 17:00 to log hours", "0 17 * * 1-5", "log hours"),
        ("every weekend at noon", "0 12 * * 0,6", "every weekend at noon"),
        ("every day at midnight to back up", "0 0 * * *", "back up"),
        ("every day at 12am to back up", "0 0 * * *", "back up"),
        ("every day at 12pm lunch", "0 12 * * *", "lunch"),
        ("every day at 7:45 pm walk", "45 19 * * *", "walk"),
        ("every Monday and Thursday at 18:15 gym", "15 18 * * 1,4", "gym"),
        ("every Mon, Wed and Fri at 7 run", "0 7 * * 1,3,5", "run"),
        ("on Sundays at 10 call mum", "0 10 * * 0", "call mum"),
        ("remind me daily at 6 to meditate", "0 6 * * *", "meditate"),
        ("every day at 9 amazing things happen", "0 9 * * *", "amazing things happen"),
    ],
)
def test_phrase_becomes_a_cron_rule_in_the_users_zone(text: str, cron: str, prompt: str) -> None:
    args = calendar_request(text, BERLIN)
    assert args == {"prompt": prompt, "calendar": {"cron": cron, "time_zone": BERLIN}}
    # every rule the phrases produce is one the core accepts
    assert not hasattr(parse_calendar(args["calendar"]), "code")


def test_a_zone_after_the_time_wins_over_the_users_zone() -> None:
    args = calendar_request("every weekday at 9 America/New_York stand-up", BERLIN)
    assert args == {
        "prompt": "stand-up",
        "calendar": {"cron": "0 9 * * 1-5", "time_zone": "America/New_York"},
    }


@pytest.mark.parametrize(
    "text",
    [
        "every hour",  # no clock time: fixed-rate, not a calendar rule
        "every 2 hours to stretch",
        "every 5 minutes drink water",
        "remind me at 09:00 Europe/Berlin to call Anna",
        "every day at 25 nope",
        "every day at 9:75",
        "every day at 13pm",
        "every fortnight at 9",
        "every daily at 9",
        "list",
    ],
)
def test_other_text_is_not_a_calendar_phrase(text: str) -> None:
    assert calendar_request(text, BERLIN) is None
