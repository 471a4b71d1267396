"""Calendar rules: hand-picked vectors for the cron reading, the DST policy,
catch-up counts and the closed errors."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Final

import pytest

from tickler.core._errors import Msg, ScheduleError
from tickler.core.timing._calendar import (
    CalendarMsg,
    CalendarRule,
    CatchUp,
    catch_up,
    count_occurrences,
    latest_occurrence_at_or_before,
    local_time_text,
    next_occurrence,
    next_occurrences,
    parse_calendar,
)
from tickler.core.timing._cron import CronMsg
from tickler.core.timing._instant import MAX_INSTANT_MS, format_instant, parse_instant

HOUR: Final = 3_600_000


def rule(cron: str, time_zone: str = "UTC", **policy: str) -> CalendarRule:
    parsed = parse_calendar({"cron": cron, "time_zone": time_zone, **policy})
    assert isinstance(parsed, CalendarRule), parsed
    return parsed


def upcoming(calendar: CalendarRule, after: str, count: int = 4) -> list[str]:
    """The next occurrences as ``UTC instant = local wall time``."""
    return [
        f"{format_instant(at)} = {local_time_text(calendar.time_zone, at)}"
        for at in next_occurrences(calendar, parse_instant(after), count)
    ]


# --- the DST policy ------------------------------------------------------------


def test_berlin_spring_forward_shifts_a_missing_minute_to_the_end_of_the_gap() -> None:
    assert upcoming(rule("30 2 * * *", "Europe/Berlin"), "2026-03-28T00:00:00.000Z", 3) == [
        "2026-03-28T01:30:00.000Z = 2026-03-28T02:30:00+01:00",
        "2026-03-29T01:00:00.000Z = 2026-03-29T03:00:00+02:00",
        "2026-03-30T00:30:00.000Z = 2026-03-30T02:30:00+02:00",
    ]


def test_berlin_spring_forward_skips_a_missing_minute_when_asked() -> None:
    calendar = rule("30 2 * * *", "Europe/Berlin", dst_gap="skip")
    assert upcoming(calendar, "2026-03-28T00:00:00.000Z", 2) == [
        "2026-03-28T01:30:00.000Z = 2026-03-28T02:30:00+01:00",
        "2026-03-30T00:30:00.000Z = 2026-03-30T02:30:00+02:00",
    ]


def test_berlin_fall_back_fires_a_repeated_minute_once_by_default() -> None:
    assert upcoming(rule("30 2 * * *", "Europe/Berlin"), "2026-10-24T12:00:00.000Z", 2) == [
        "2026-10-25T00:30:00.000Z = 2026-10-25T02:30:00+02:00",
        "2026-10-26T01:30:00.000Z = 2026-10-26T02:30:00+01:00",
    ]


def test_berlin_fall_back_fires_a_repeated_minute_twice_with_both() -> None:
    calendar = rule("30 2 * * *", "Europe/Berlin", dst_overlap="both")
    assert upcoming(calendar, "2026-10-24T12:00:00.000Z", 3) == [
        "2026-10-25T00:30:00.000Z = 2026-10-25T02:30:00+02:00",
        "2026-10-25T01:30:00.000Z = 2026-10-25T02:30:00+01:00",
        "2026-10-26T01:30:00.000Z = 2026-10-26T02:30:00+01:00",
    ]


def test_new_york_gap_and_overlap() -> None:
    assert upcoming(rule("30 2 * * *", "America/New_York"), "2026-03-07T12:00:00.000Z", 2) == [
        "2026-03-08T07:00:00.000Z = 2026-03-08T03:00:00-04:00",
        "2026-03-09T06:30:00.000Z = 2026-03-09T02:30:00-04:00",
    ]
    both = rule("30 1 * * *", "America/New_York", dst_overlap="both")
    assert upcoming(both, "2026-10-31T12:00:00.000Z", 3) == [
        "2026-11-01T05:30:00.000Z = 2026-11-01T01:30:00-04:00",
        "2026-11-01T06:30:00.000Z = 2026-11-01T01:30:00-05:00",
        "2026-11-02T06:30:00.000Z = 2026-11-02T01:30:00-05:00",
    ]


def test_several_minutes_in_one_gap_fire_once_and_equal_instants_are_one() -> None:
    # 02:00, 02:15, 02:30 and 02:45 do not exist; the shifted occurrence is
    # 03:00 local, which the rule also matches: one occurrence.
    calendar = rule("*/15 2,3 * * *", "Europe/Berlin")
    assert upcoming(calendar, "2026-03-29T00:30:00.000Z", 3) == [
        "2026-03-29T01:00:00.000Z = 2026-03-29T03:00:00+02:00",
        "2026-03-29T01:15:00.000Z = 2026-03-29T03:15:00+02:00",
        "2026-03-29T01:30:00.000Z = 2026-03-29T03:30:00+02:00",
    ]
    gap_only = rule("*/15 2 * * *", "Europe/Berlin")
    assert upcoming(gap_only, "2026-03-29T00:30:00.000Z", 2) == [
        "2026-03-29T01:00:00.000Z = 2026-03-29T03:00:00+02:00",
        "2026-03-30T00:00:00.000Z = 2026-03-30T02:00:00+02:00",
    ]


def test_lord_howe_half_hour_changes() -> None:
    """Australia/Lord_Howe moves its clocks by 30 minutes."""
    assert upcoming(rule("15 2 * * *", "Australia/Lord_Howe"), "2026-10-03T00:00:00.000Z", 2) == [
        "2026-10-03T15:30:00.000Z = 2026-10-04T02:30:00+11:00",
        "2026-10-04T15:15:00.000Z = 2026-10-05T02:15:00+11:00",
    ]
    skip = rule("15 2 * * *", "Australia/Lord_Howe", dst_gap="skip")
    assert upcoming(skip, "2026-10-03T00:00:00.000Z", 1) == [
        "2026-10-04T15:15:00.000Z = 2026-10-05T02:15:00+11:00"
    ]
    assert upcoming(rule("45 1 * * *", "Australia/Lord_Howe"), "2026-04-04T12:00:00.000Z", 2) == [
        "2026-04-04T14:45:00.000Z = 2026-04-05T01:45:00+11:00",
        "2026-04-05T15:15:00.000Z = 2026-04-06T01:45:00+10:30",
    ]
    both = rule("45 1 * * *", "Australia/Lord_Howe", dst_overlap="both")
    assert upcoming(both, "2026-04-04T12:00:00.000Z", 2) == [
        "2026-04-04T14:45:00.000Z = 2026-04-05T01:45:00+11:00",
        "2026-04-04T15:15:00.000Z = 2026-04-05T01:45:00+10:30",
    ]


def test_apia_missing_day_fires_once_at_its_end_or_not_at_all() -> None:
    """Pacific/Apia went from 2011-12-29T24:00-10:00 to 2011-12-31T00:00+14:00."""
    assert upcoming(rule("0 12 * * *", "Pacific/Apia"), "2011-12-29T00:00:00.000Z", 3) == [
        "2011-12-29T22:00:00.000Z = 2011-12-29T12:00:00-10:00",
        "2011-12-30T10:00:00.000Z = 2011-12-31T00:00:00+14:00",
        "2011-12-30T22:00:00.000Z = 2011-12-31T12:00:00+14:00",
    ]
    skip = rule("0 12 * * *", "Pacific/Apia", dst_gap="skip")
    assert upcoming(skip, "2011-12-29T00:00:00.000Z", 2) == [
        "2011-12-29T22:00:00.000Z = 2011-12-29T12:00:00-10:00",
        "2011-12-30T22:00:00.000Z = 2011-12-31T12:00:00+14:00",
    ]
    # Every hour of the missing day falls in the one gap: one shifted occurrence.
    hourly = rule("@hourly", "Pacific/Apia")
    missing_day = (
        parse_instant("2011-12-30T09:00:00.000Z"),
        parse_instant("2011-12-30T10:00:00.000Z"),
    )
    assert count_occurrences(hourly, *missing_day) == 1


def test_kiritimati_skipped_new_years_eve_1994() -> None:
    assert upcoming(rule("0 0 * * *", "Pacific/Kiritimati"), "1994-12-30T00:00:00.000Z", 2) == [
        "1994-12-30T10:00:00.000Z = 1994-12-30T00:00:00-10:00",
        "1994-12-31T10:00:00.000Z = 1995-01-01T00:00:00+14:00",
    ]


def test_occurrences_are_strictly_after_the_given_instant() -> None:
    calendar = rule("0 9 * * *", "Europe/Berlin")
    at = parse_instant("2026-12-07T08:00:00.000Z")
    assert next_occurrence(calendar, at - 1) == at
    assert next_occurrence(calendar, at) == at + 24 * HOUR


def test_no_occurrence_past_year_9999() -> None:
    yearly = rule("@yearly", "America/New_York")
    last = parse_instant("9999-01-01T05:00:00.000Z")
    assert next_occurrence(yearly, last - 1) == last
    assert next_occurrence(yearly, last) is None
    assert next_occurrences(yearly, last - 1, 3) == (last,)
    late = rule("0 23 31 12 *", "America/New_York")  # 9999-12-31T23:00-05:00 is year 10000 in UTC
    assert next_occurrence(late, parse_instant("9999-12-30T00:00:00.000Z")) is None
    early = rule("59 18 31 12 *", "America/New_York")
    assert (
        next_occurrence(early, parse_instant("9999-12-30T00:00:00.000Z")) == MAX_INSTANT_MS - 59_999
    )


# --- the cron reading ----------------------------------------------------------


@pytest.mark.parametrize(
    ("macro", "fields"),
    [
        ("@hourly", "0 * * * *"),
        ("@daily", "0 0 * * *"),
        ("@weekly", "0 0 * * 0"),
        ("@monthly", "0 0 1 * *"),
        ("@yearly", "0 0 1 1 *"),
        ("@DAILY", "0 0 * * *"),
    ],
)
def test_macros_are_their_five_fields(macro: str, fields: str) -> None:
    assert rule(macro).fields == rule(fields).fields


def test_macros_fire_where_they_say() -> None:
    after = "2026-12-02T12:34:00.000Z"  # a Wednesday
    assert upcoming(rule("@hourly"), after, 1) == [
        "2026-12-02T13:00:00.000Z = 2026-12-02T13:00:00+00:00"
    ]
    assert upcoming(rule("@daily"), after, 1) == [
        "2026-12-03T00:00:00.000Z = 2026-12-03T00:00:00+00:00"
    ]
    assert upcoming(rule("@weekly"), after, 1) == [
        "2026-12-06T00:00:00.000Z = 2026-12-06T00:00:00+00:00"
    ]
    assert upcoming(rule("@monthly"), after, 1) == [
        "2027-01-01T00:00:00.000Z = 2027-01-01T00:00:00+00:00"
    ]
    assert upcoming(rule("@yearly"), after, 1) == [
        "2027-01-01T00:00:00.000Z = 2027-01-01T00:00:00+00:00"
    ]


def test_names_lists_ranges_and_steps() -> None:
    calendar = rule("5-59/20 8-18/5 * JAN,jul Mon-Wed")
    assert calendar.fields.minutes == (5, 25, 45)
    assert calendar.fields.hours == (8, 13, 18)
    assert calendar.fields.months == (1, 7)
    assert calendar.fields.weekdays == (1, 2, 3)
    assert upcoming(calendar, "2026-07-01T18:50:00.000Z", 2) == [
        "2026-07-06T08:05:00.000Z = 2026-07-06T08:05:00+00:00",
        "2026-07-06T08:25:00.000Z = 2026-07-06T08:25:00+00:00",
    ]


@pytest.mark.parametrize("sunday", ["0", "7", "sun", "SUN", "7-7", "6-7/1"])
def test_zero_and_seven_are_both_sunday(sunday: str) -> None:
    fields = rule(f"0 9 * * {sunday}").fields.weekdays
    assert 0 in fields
    assert fields == ((0,) if "6" not in sunday else (0, 6))


def test_both_day_fields_restricted_match_either_as_vixie_cron() -> None:
    # The 13th, or any Friday.
    assert upcoming(rule("0 9 13 * 5"), "2026-02-01T00:00:00.000Z", 5) == [
        f"2026-{day}T09:00:00.000Z = 2026-{day}T09:00:00+00:00"
        for day in ("02-06", "02-13", "02-20", "02-27", "03-06")
    ]
    assert upcoming(rule("0 9 14 * 5"), "2026-02-01T00:00:00.000Z", 3) == [
        f"2026-{day}T09:00:00.000Z = 2026-{day}T09:00:00+00:00"
        for day in ("02-06", "02-13", "02-14")
    ]


def test_a_day_field_starting_with_a_star_makes_both_required() -> None:
    # Odd days that are Fridays.
    assert upcoming(rule("0 9 */2 * 5"), "2026-02-01T00:00:00.000Z", 3) == [
        f"2026-{day}T09:00:00.000Z = 2026-{day}T09:00:00+00:00"
        for day in ("02-13", "02-27", "03-13")
    ]
    assert rule("0 9 */2 * 5").fields.day_or is False
    assert rule("0 9 1-31 * 5").fields.day_or is True


def test_a_rule_that_matches_rarely_is_found_without_a_walk() -> None:
    # 29 February on a Monday: 2016, 2044, 2072, ...
    leap_monday = rule("0 0 29 2 *", "UTC")
    assert format_instant(
        next_occurrence(leap_monday, parse_instant("2097-03-01T00:00:00.000Z")) or 0
    ) == ("2104-02-29T00:00:00.000Z")
    and_monday = rule("0 0 */28 2 1")  # the 1st or 29th of February, on a Monday
    assert upcoming(and_monday, "2026-01-01T00:00:00.000Z", 3) == [
        "2027-02-01T00:00:00.000Z = 2027-02-01T00:00:00+00:00",
        "2038-02-01T00:00:00.000Z = 2038-02-01T00:00:00+00:00",
        "2044-02-01T00:00:00.000Z = 2044-02-01T00:00:00+00:00",
    ]


def test_the_latest_occurrence_of_a_rare_rule_is_found_years_back() -> None:
    new_years_eve = rule("0 0 31 12 *")
    june = parse_instant("2026-06-01T00:00:00.000Z")
    latest = latest_occurrence_at_or_before(new_years_eve, june, 0)
    assert latest == parse_instant("2025-12-31T00:00:00.000Z")
    leap_day = rule("30 23 29 2 *")
    latest = latest_occurrence_at_or_before(leap_day, parse_instant("2103-01-01T00:00:00.000Z"), 0)
    assert latest == parse_instant("2096-02-29T23:30:00.000Z")


# --- catch-up and counts -------------------------------------------------------


def test_a_ten_year_gap_is_one_delivery_with_the_number_skipped() -> None:
    """Berlin, hourly: every UTC hour is an occurrence (the spring gap's
    shifted occurrence is the 03:00 one), except that ``first`` drops the
    repeated hour of each autumn."""
    target = parse_instant("2026-01-01T00:00:00.000Z")
    now = parse_instant("2036-01-01T00:30:00.000Z")
    latest = parse_instant("2036-01-01T00:00:00.000Z")
    hours = (latest - target) // HOUR + 1
    first = catch_up(rule("0 * * * *", "Europe/Berlin"), target, now)
    assert first == CatchUp(latest, hours - 10 - 1, latest + HOUR)
    both = catch_up(rule("0 * * * *", "Europe/Berlin", dst_overlap="both"), target, now)
    assert both == CatchUp(latest, hours - 1, latest + HOUR)


def test_catch_up_when_nothing_is_due_yet() -> None:
    calendar = rule("0 9 * * *")
    target = parse_instant("2026-12-07T09:00:00.000Z")
    assert catch_up(calendar, target, target - 1) is None
    assert catch_up(calendar, target, target) == CatchUp(target, 0, target + 24 * HOUR)


def test_latest_occurrence_and_counts_over_centuries() -> None:
    calendar = rule("0 9 * * 1-5", "Europe/Berlin")
    start = parse_instant("2026-01-01T00:00:00.000Z")
    end = parse_instant("2826-01-01T00:00:00.000Z")
    weekdays = sum(
        1
        for day in range(0, (end - start) // (24 * HOUR))
        if (datetime(2026, 1, 1, tzinfo=UTC) + timedelta(days=day)).isoweekday() <= 5
    )
    assert count_occurrences(calendar, start, end) == weekdays
    latest = latest_occurrence_at_or_before(calendar, end, start)
    assert latest is not None
    assert local_time_text(calendar.time_zone, latest) == "2825-12-31T09:00:00+01:00"
    assert latest_occurrence_at_or_before(calendar, end, latest + 1) is None


def test_counting_an_empty_span() -> None:
    calendar = rule("* * * * *")
    assert count_occurrences(calendar, 5 * HOUR, 5 * HOUR) == 0
    assert count_occurrences(calendar, 5 * HOUR, 4 * HOUR) == 0
    assert count_occurrences(calendar, 5 * HOUR, 5 * HOUR + 60_000) == 1


# --- the selector value and its errors -------------------------------------------


def test_a_valid_selector_keeps_the_canonical_zone_and_explicit_policies() -> None:
    calendar = rule("0 9 * * 1-5", "europe/berlin")
    assert calendar.time_zone == "Europe/Berlin"
    assert calendar.as_json() == {
        "cron": "0 9 * * 1-5",
        "time_zone": "Europe/Berlin",
        "dst_gap": "shift",
        "dst_overlap": "first",
    }
    assert rule("@daily", "US/Eastern").time_zone == "US/Eastern"  # links are accepted


def test_local_time_text() -> None:
    assert local_time_text("Europe/Berlin", parse_instant("2026-12-07T08:00:00.000Z")) == (
        "2026-12-07T09:00:00+01:00"
    )
    assert local_time_text("America/St_Johns", parse_instant("2026-01-01T00:00:00.000Z")) == (
        "2025-12-31T20:30:00-03:30"
    )
    assert local_time_text("Pacific/Chatham", parse_instant("2026-01-01T00:00:00.000Z")) == (
        "2026-01-01T13:45:00+13:45"
    )
    assert local_time_text("Africa/Monrovia", 0) == "1969-12-31T23:15:30-00:44:30"
    assert local_time_text("UTC", 1) == "1970-01-01T00:00:00.001+00:00"


DAILY: Final = {"cron": "0 9 * * *", "time_zone": "UTC"}


def invalid(value: object) -> ScheduleError:
    result = parse_calendar(value)
    assert isinstance(result, ScheduleError), result
    return result


MINUTE_USE: Final = "*, a number 0-59, a range like 0-30, a list like 0,30 or a step like */15"
HOUR_USE: Final = "*, a number 0-23, a range like 8-18, a list like 9,17 or a step like 8-18/2"
DAY_USE: Final = (
    "*, a number 1-31, a range like 1-15, a list like 1,15, a step like */2, "
    "L (the last day), LW (the last weekday) or 15W (the weekday nearest the 15th)"
)
MONTH_USE: Final = (
    "*, a number 1-12 or a name jan-dec, a range like jan-mar, a list like 1,7 or a step like */3"
)
WEEKDAY_USE: Final = (
    "*, a number 0-7 (0 and 7 are Sunday) or a name sun-sat, a range like mon-fri, "
    "a list like sat,sun, a step like */2, 5L (the last Friday) or 1#1 (the first Monday)"
)


@pytest.mark.parametrize(
    ("cron", "message"),
    [
        ("0 9 * *", CronMsg.shape("0 9 * *")),
        ("0 9 * * * *", CronMsg.shape("0 9 * * * *")),
        (" 0 9 * * *", CronMsg.shape(" 0 9 * * *")),
        ("", CronMsg.shape("")),
        ("@every", CronMsg.macro("@every")),
        ("61 * * * *", f'calendar cron minute "61" is out of range: use {MINUTE_USE}.'),
        ("60 9 * * *", f'calendar cron minute "60" is out of range: use {MINUTE_USE}.'),
        ("0,30,75 9 * * *", f'calendar cron minute "75" is out of range: use {MINUTE_USE}.'),
        (
            "0/15 9 * * *",
            'calendar cron minute "0/15" has a step without a range (write a-b/n or */n): '
            f"use {MINUTE_USE}.",
        ),
        (
            "*/0 9 * * *",
            f'calendar cron minute "*/0" has a step out of range (1-60): use {MINUTE_USE}.',
        ),
        (
            "*/61 9 * * *",
            f'calendar cron minute "*/61" has a step out of range (1-60): use {MINUTE_USE}.',
        ),
        ("0 24 * * *", f'calendar cron hour "24" is out of range: use {HOUR_USE}.'),
        ("0 5-3 * * *", f'calendar cron hour "5-3" is a range from high to low: use {HOUR_USE}.'),
        ("0 9 0 * *", f'calendar cron day-of-month "0" is out of range: use {DAY_USE}.'),
        ("0 9 32 * *", f'calendar cron day-of-month "32" is out of range: use {DAY_USE}.'),
        ("0 9 LL * *", f'calendar cron day-of-month "LL" is not a number: use {DAY_USE}.'),
        ("0 9 1,,15 * *", f'calendar cron day-of-month "" is not valid: use {DAY_USE}.'),
        ("0 9 * 13 *", f'calendar cron month "13" is out of range: use {MONTH_USE}.'),
        ("0 9 * foo *", f'calendar cron month "foo" is not a number or a name: use {MONTH_USE}.'),
        ("0 9 * * 8", f'calendar cron day-of-week "8" is out of range: use {WEEKDAY_USE}.'),
        (
            "0 9 * * fri-mon",
            f'calendar cron day-of-week "fri-mon" is a range from high to low: use {WEEKDAY_USE}.',
        ),
        ("0 9 ? * *", f'calendar cron day-of-month "?" is not valid: use {DAY_USE}.'),
        ("0 9 * * \u0661", f'calendar cron day-of-week "\\u0661" is not valid: use {WEEKDAY_USE}.'),
        ("0 0 30 2 *", CronMsg.never("0 0 30 2 *")),
        ("0 0 31 4,6,9,11 *", CronMsg.never("0 0 31 4,6,9,11 *")),
        ("0 0 30,31 feb *", CronMsg.never("0 0 30,31 feb *")),
    ],
)
def test_invalid_cron_names_the_field_the_value_and_what_to_send(cron: str, message: str) -> None:
    assert invalid({"cron": cron, "time_zone": "UTC"}) == ScheduleError("invalid_rule", message)


def test_a_refused_cron_text_is_named_in_its_message() -> None:
    assert CronMsg.shape("0 9 * *") == (
        'calendar cron "0 9 * *" is not five fields separated by spaces: send '
        '"minute hour day-of-month month day-of-week" (e.g. "0 9 * * 1-5") '
        "or one of @hourly, @daily, @weekly, @monthly, @yearly."
    )
    assert CronMsg.never("0 0 30 2 *") == (
        'calendar cron "0 0 30 2 *" never matches a real date (e.g. February 30): '
        'choose a day-of-month that exists in the chosen months, e.g. "0 9 28 2 *".'
    )


LONG: Final = "1" * 5000  # past Python's 4,300-digit int() limit
SHOWN_LONG: Final = '"11111111111111111111"... (5,000 characters)'


@pytest.mark.parametrize(
    ("cron", "field", "item", "problem"),
    [
        (f"{LONG} * * * *", "minute", SHOWN_LONG, "is out of range"),
        (f"0 {LONG} * * *", "hour", SHOWN_LONG, "is out of range"),
        (f"0 9 {LONG} * *", "day-of-month", SHOWN_LONG, "is out of range"),
        (f"0 9 * {LONG} *", "month", SHOWN_LONG, "is out of range"),
        (f"0 9 * * {LONG}", "day-of-week", SHOWN_LONG, "is out of range"),
        (
            f"*/{LONG} * * * *",
            "minute",
            '"*/111111111111111111"... (5,002 characters)',
            "has a step out of range (1-60)",
        ),
        (
            f"0 1-{LONG} * * *",
            "hour",
            '"1-111111111111111111"... (5,002 characters)',
            "is out of range",
        ),
        (
            f"0 9 1-5/{LONG} * *",
            "day-of-month",
            '"1-5/1111111111111111"... (5,004 characters)',
            "has a step out of range (1-31)",
        ),
    ],
)
def test_a_number_of_thousands_of_digits_is_refused_by_name(
    cron: str, field: str, item: str, problem: str
) -> None:
    """Issue 25, item 3: Python's int() refuses more than 4,300 digits; the
    value is judged without it, and shown cut short."""
    message = invalid({"cron": cron, "time_zone": "UTC"}).message
    assert message.startswith(f"calendar cron {field} {item} {problem}: use ")


def test_leading_zeros_do_not_count_against_a_value() -> None:
    assert rule("0" * 5000 + "5 9 * * *").fields.minutes == (5,)
    assert rule("*/" + "0" * 5000 + "15 9 * * *").fields.minutes == (0, 15, 30, 45)


def test_rare_but_real_dates_are_accepted() -> None:
    assert rule("0 0 29 2 *").fields.days == (29,)
    assert rule("0 0 31 1-3 *").fields.months == (1, 2, 3)
    assert rule("0 0 30 2 1").fields.day_or is True  # February 30 or any Monday in February


@pytest.mark.parametrize(
    ("value", "code", "message"),
    [
        ("0 9 * * *", "invalid_rule", CalendarMsg.KIND),
        (["0 9 * * *", "UTC"], "invalid_rule", CalendarMsg.KIND),
        (None, "invalid_rule", CalendarMsg.KIND),
        ({"cron": "0 9 * * *"}, "invalid_rule", CalendarMsg.KEYS),
        ({"time_zone": "UTC"}, "invalid_rule", CalendarMsg.KEYS),
        ({**DAILY, "tz": "UTC"}, "invalid_rule", CalendarMsg.KEYS),
        ({"cron": 9, "time_zone": "UTC"}, "invalid_rule", CalendarMsg.CRON_STRING),
        ({"cron": "0 9 * * *", "time_zone": 1}, "invalid_time_zone", Msg.ZONE_STRING),
        ({"cron": "0 9 * * *", "time_zone": "Mars/Olympus"}, "invalid_time_zone", Msg.ZONE),
        ({"cron": "0 9 * * *", "time_zone": " UTC"}, "invalid_time_zone", Msg.ZONE),
        ({**DAILY, "dst_gap": "later"}, "invalid_rule", CalendarMsg.DST_GAP),
        ({**DAILY, "dst_gap": None}, "invalid_rule", CalendarMsg.DST_GAP),
        ({**DAILY, "dst_overlap": "last"}, "invalid_rule", CalendarMsg.DST_OVERLAP),
        ({**DAILY, "dst_overlap": ["first"]}, "invalid_rule", CalendarMsg.DST_OVERLAP),
        # The order of the checks: keys, then cron, then zone, then policies.
        (
            {"cron": "bad", "time_zone": "Mars", "dst_gap": "x"},
            "invalid_rule",
            CronMsg.shape("bad"),
        ),
        ({**DAILY, "time_zone": "Mars/Olympus", "dst_gap": "x"}, "invalid_time_zone", Msg.ZONE),
    ],
)  # fmt: skip
def test_invalid_selector_values(value: object, code: str, message: str) -> None:
    assert invalid(value) == ScheduleError(code, message)  # type: ignore[arg-type]
