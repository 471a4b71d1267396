"""The cron dialect beyond plain values: ``L``, ``W``, ``#``, the macros'
other names, and how the two day fields combine with them; each form with
hand-checked dates, and each malformed form with its closed message."""

from __future__ import annotations

import json
from typing import Final

import pytest

from tickler.core import EMPTY_STATE, SCHEDULE_CHANGE, State, encode_change, fold, handle
from tickler.core._errors import ScheduleError, shown
from tickler.core.timing._calendar import (
    CalendarRule,
    count_occurrences,
    latest_occurrence_at_or_before,
    next_occurrences,
    parse_calendar,
)
from tickler.core.timing._cron import CronMsg
from tickler.core.timing._instant import format_instant, parse_instant
from tickler.core.wire._session import event


def rule(cron: str, time_zone: str = "UTC") -> CalendarRule:
    parsed = parse_calendar({"cron": cron, "time_zone": time_zone})
    assert isinstance(parsed, CalendarRule), parsed
    return parsed


def days(cron: str, after: str = "2026-01-01T00:00:00Z", count: int = 6) -> list[str]:
    """The dates (UTC) of the next occurrences."""
    found = next_occurrences(rule(cron), parse_instant(after), count)
    return [format_instant(at)[:10] for at in found]


def invalid(cron: str) -> str:
    result = parse_calendar({"cron": cron, "time_zone": "UTC"})
    assert isinstance(result, ScheduleError), result
    assert result.code == "invalid_rule"
    return result.message


# --- day of month: L, LW, nW ------------------------------------------------------


def test_l_is_the_last_day_of_each_month_leap_years_included() -> None:
    assert days("0 9 L * *", count=4) == ["2026-01-31", "2026-02-28", "2026-03-31", "2026-04-30"]
    assert days("0 9 L 2 *", count=3) == ["2026-02-28", "2027-02-28", "2028-02-29"]
    assert days("0 9 l 2 *", count=1) == ["2026-02-28"]  # any case


def test_l_joins_a_list_of_days() -> None:
    assert days("0 9 1,15,L * *", count=4) == [
        "2026-01-01",
        "2026-01-15",
        "2026-01-31",
        "2026-02-01",
    ]


def test_lw_is_the_last_weekday_of_each_month() -> None:
    # 2026: Jan 31 is a Saturday, May 31 a Sunday, Feb 28 a Saturday.
    assert days("0 9 LW * *", count=5) == [
        "2026-01-30",
        "2026-02-27",
        "2026-03-31",
        "2026-04-30",
        "2026-05-29",
    ]


def test_w_is_the_nearest_weekday_within_the_month() -> None:
    # The 15th: Thu 15 Jan; Sun 15 Feb -> Mon 16; Sun 15 Mar -> Mon 16;
    # Sat 15 Aug -> Fri 14.
    assert days("0 9 15W * *", count=8) == [
        "2026-01-15",
        "2026-02-16",
        "2026-03-16",
        "2026-04-15",
        "2026-05-15",
        "2026-06-15",
        "2026-07-15",
        "2026-08-14",
    ]


def test_w_never_crosses_into_another_month() -> None:
    # Sat 1 Aug 2026: not Fri 31 Jul but Mon 3 Aug. Sun 31 May 2026: not Mon
    # 1 Jun but Fri 29 May.
    assert days("0 9 1W 8 *", count=1) == ["2026-08-03"]
    assert days("0 9 31W 5 *", count=1) == ["2026-05-29"]


def test_w_on_a_day_the_month_lacks_has_no_occurrence_that_month() -> None:
    # As 31 itself: April, June, September, November and February have none.
    assert days("0 9 31W * *", count=4) == ["2026-01-30", "2026-03-31", "2026-05-29", "2026-07-31"]
    assert invalid("0 9 30W 2 *") == CronMsg.never("0 9 30W 2 *")


def test_w_items_join_a_list() -> None:
    assert days("0 9 1W,15W * *", "2026-02-01T00:00:00Z", 4) == [
        "2026-02-02",
        "2026-02-16",
        "2026-03-02",
        "2026-03-16",
    ]


@pytest.mark.parametrize(("spelling", "same_as"), [("W15", "15W"), ("15w", "15W"), ("lw", "LW")])
def test_w_spellings(spelling: str, same_as: str) -> None:
    assert rule(f"0 9 {spelling} * *").fields == rule(f"0 9 {same_as} * *").fields


# --- day of week: nL, n#k -------------------------------------------------------------


def test_a_weekday_then_l_is_its_last_in_the_month() -> None:
    assert days("0 9 * * 5L", count=4) == ["2026-01-30", "2026-02-27", "2026-03-27", "2026-04-24"]


@pytest.mark.parametrize("spelling", ["friL", "FRIl", "L5", "Lfri", "5l"])
def test_last_weekday_spellings(spelling: str) -> None:
    assert rule(f"0 9 * * {spelling}").fields == rule("0 9 * * 5L").fields


def test_seven_and_zero_are_sunday_with_l_and_hash() -> None:
    # The last Sunday of March and October: Europe's clock changes.
    assert days("0 1 * 3,10 7L", count=3) == ["2026-03-29", "2026-10-25", "2027-03-28"]
    assert rule("0 1 * * 7L").fields == rule("0 1 * * 0L").fields
    assert rule("0 1 * * 7#2").fields == rule("0 1 * * sun#2").fields


def test_hash_is_the_nth_weekday_of_the_month() -> None:
    assert days("0 9 * * 1#1", count=4) == ["2026-01-05", "2026-02-02", "2026-03-02", "2026-04-06"]
    assert days("0 9 * * mon#1") == days("0 9 * * 1#1")
    # The second Sunday of March and the first of November: US clock changes.
    assert days("0 2 * 3 0#2", count=2) == ["2026-03-08", "2027-03-14"]
    assert days("0 2 * nov SUN#1", count=2) == ["2026-11-01", "2027-11-07"]


def test_a_fifth_weekday_fires_only_in_months_that_have_one() -> None:
    assert days("0 9 * * 1#5", count=4) == ["2026-03-30", "2026-06-29", "2026-08-31", "2026-11-30"]
    # February has a fifth Monday only in a leap year starting on a Monday.
    assert days("0 9 * 2 1#5", count=2) == ["2044-02-29", "2072-02-29"]


def test_hash_and_l_items_join_a_list() -> None:
    assert days("0 9 * * 1#1,5L", count=4) == [
        "2026-01-05",
        "2026-01-30",
        "2026-02-02",
        "2026-02-27",
    ]
    assert days("0 9 * * 1#1,3", "2026-01-01T00:00:00Z", 3) == [
        "2026-01-05",
        "2026-01-07",
        "2026-01-14",
    ]


# --- the two day fields together ------------------------------------------------------


def test_both_day_fields_restricted_match_either_whatever_their_form() -> None:
    # The last day of the month, or any Friday (Vixie cron's OR).
    assert days("0 9 L * 5", count=6) == [
        "2026-01-02",
        "2026-01-09",
        "2026-01-16",
        "2026-01-23",
        "2026-01-30",
        "2026-01-31",
    ]
    # The 1st, or the first Monday.
    assert days("0 9 1 * 1#1", count=4) == ["2026-01-01", "2026-01-05", "2026-02-01", "2026-02-02"]
    # The weekday nearest the 15th, or the last Friday.
    assert days("0 9 15W * 5L", count=4) == ["2026-01-15", "2026-01-30", "2026-02-16", "2026-02-27"]
    assert rule("0 9 15W * 5L").fields.day_or is True


def test_a_day_field_starting_with_a_star_makes_both_required_with_new_forms() -> None:
    # Odd days that are the last Friday of their month.
    assert days("0 9 */2 * 5L", count=3) == ["2026-02-27", "2026-03-27", "2026-05-29"]
    assert rule("0 9 */2 * 5L").fields.day_or is False


# --- macros -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("macro", "same_as"),
    [("@annually", "@yearly"), ("@ANNUALLY", "0 0 1 1 *"), ("@midnight", "@daily")],
)
def test_macro_aliases(macro: str, same_as: str) -> None:
    assert rule(macro).fields == rule(same_as).fields
    assert rule(macro).cron == macro  # kept as sent


def test_reboot_and_unknown_macros_are_refused_by_name() -> None:
    assert invalid("@reboot") == CronMsg.reboot("@reboot")
    assert CronMsg.reboot("@reboot") == (
        'calendar cron "@reboot" names no time (a reminder has no reboot): send five fields '
        'like "0 9 * * 1-5" or one of @hourly, @daily, @weekly, @monthly, @yearly.'
    )
    assert invalid("@yearlyy") == CronMsg.macro("@yearlyy")
    assert CronMsg.macro("@yearlyy") == (
        'calendar cron "@yearlyy" is not a macro: send one of @hourly, @daily (or @midnight), '
        '@weekly, @monthly, @yearly (or @annually), or five fields like "0 9 * * 1-5".'
    )
    assert invalid("@daily 9") == CronMsg.macro("@daily 9")


# --- malformed forms ------------------------------------------------------------------


DAY_USE: Final = (
    "*, a number 1-31, a range like 1-15, a list like 1,15, a step like */2, "
    "L (the last day), LW (the last weekday) or 15W (the weekday nearest the 15th)"
)
WEEKDAY_USE: Final = (
    "*, a number 0-7 (0 and 7 are Sunday) or a name sun-sat, a range like mon-fri, "
    "a list like sat,sun, a step like */2, 5L (the last Friday) or 1#1 (the first Monday)"
)
MINUTE_USE: Final = "*, a number 0-59, a range like 0-30, a list like 0,30 or a step like */15"
HOUR_USE: Final = "*, a number 0-23, a range like 8-18, a list like 9,17 or a step like 8-18/2"
MONTH_USE: Final = (
    "*, a number 1-12 or a name jan-dec, a range like jan-mar, a list like 1,7 or a step like */3"
)
NTH_RANGE: Final = "has an occurrence out of range (#1-#5)"
LAST_ALONE: Final = "is L without a weekday (5L is the last Friday)"


@pytest.mark.parametrize(
    ("cron", "field", "item", "problem", "usage"),
    [
        ("L 9 * * *", "minute", "L", "is not a number", MINUTE_USE),
        ("0 L * * *", "hour", "L", "is not a number", HOUR_USE),
        ("0 9 * L *", "month", "L", "is not a number or a name", MONTH_USE),
        ("0 9 * 1#1 *", "month", "1#1", "is not valid", MONTH_USE),
        ("0 9 32W * *", "day-of-month", "32W", "is out of range", DAY_USE),
        ("0 9 0W * *", "day-of-month", "0W", "is out of range", DAY_USE),
        ("0 9 W * *", "day-of-month", "W", "is not a number", DAY_USE),
        ("0 9 1-5W * *", "day-of-month", "1-5W", "is not a number", DAY_USE),
        ("0 9 LW/2 * *", "day-of-month", "LW/2", "is not a number", DAY_USE),
        (
            "0 9 L-3 * *",
            "day-of-month",
            "L-3",
            "counts back from the last day, which is not supported",
            DAY_USE,
        ),
        (
            "0 9 L-1W * *",
            "day-of-month",
            "L-1W",
            "counts back from the last day, which is not supported",
            DAY_USE,
        ),
        ("0 9 5L * *", "day-of-month", "5L", "is not a number", DAY_USE),
        ("0 9 1#1 * *", "day-of-month", "1#1", "is not valid", DAY_USE),
        ("0 9 * * 1#6", "day-of-week", "1#6", NTH_RANGE, WEEKDAY_USE),
        ("0 9 * * 1#0", "day-of-week", "1#0", NTH_RANGE, WEEKDAY_USE),
        ("0 9 * * 8#1", "day-of-week", "8#1", "is out of range", WEEKDAY_USE),
        ("0 9 * * 8L", "day-of-week", "8L", "is out of range", WEEKDAY_USE),
        ("0 9 * * L", "day-of-week", "L", LAST_ALONE, WEEKDAY_USE),
        ("0 9 * * foo#1", "day-of-week", "foo#1", "is not a number or a name", WEEKDAY_USE),
        ("0 9 * * 1-5#1", "day-of-week", "1-5#1", "is not valid", WEEKDAY_USE),
        ("0 9 * * #1", "day-of-week", "#1", "is not valid", WEEKDAY_USE),
        ("0 9 * * 1#", "day-of-week", "1#", "is not valid", WEEKDAY_USE),
        ("0 9 * * 1#1/2", "day-of-week", "1#1/2", "is not valid", WEEKDAY_USE),
        ("0 9 * * 5L/2", "day-of-week", "5L/2", "is not a number or a name", WEEKDAY_USE),
        ("0 9 * * 15W", "day-of-week", "15W", "is not a number or a name", WEEKDAY_USE),
        ("0 9 * * MON-FOO", "day-of-week", "MON-FOO", "is not a number or a name", WEEKDAY_USE),
        ("0 9 * * \u0661L", "day-of-week", "\u0661L", "is not valid", WEEKDAY_USE),
        ("0 9 \u0661W * *", "day-of-month", "\u0661W", "is not valid", DAY_USE),
    ],
)  # fmt: skip
def test_malformed_forms_name_the_field_the_value_and_what_to_send(
    cron: str, field: str, item: str, problem: str, usage: str
) -> None:
    assert invalid(cron) == f"calendar cron {field} {shown(item)} {problem}: use {usage}."


LONG: Final = "1" * 5000


@pytest.mark.parametrize(
    ("cron", "field", "item", "problem"),
    [
        (f"0 9 {LONG}W * *", "day-of-month", f"{LONG}W", "is out of range"),
        (f"0 9 W{LONG} * *", "day-of-month", f"W{LONG}", "is out of range"),
        (
            f"0 9 L-{LONG} * *",
            "day-of-month",
            f"L-{LONG}",
            "counts back from the last day, which is not supported",
        ),
        (f"0 9 * * {LONG}L", "day-of-week", f"{LONG}L", "is out of range"),
        (f"0 9 * * L{LONG}", "day-of-week", f"L{LONG}", "is out of range"),
        (f"0 9 * * {LONG}#1", "day-of-week", f"{LONG}#1", "is out of range"),
        (
            f"0 9 * * 1#{LONG}",
            "day-of-week",
            f"1#{LONG}",
            "has an occurrence out of range (#1-#5)",
        ),
        (f"@{LONG}", "", "", ""),
    ],
)
def test_a_new_form_of_any_length_is_refused_by_name(
    cron: str, field: str, item: str, problem: str
) -> None:
    message = invalid(cron)
    if not field:
        assert message == CronMsg.macro(cron)
        assert len(message) < 300
        return
    assert message.startswith(f"calendar cron {field} {shown(item)} {problem}: use ")
    assert len(message) < 400


def test_leading_zeros_in_new_forms() -> None:
    assert rule("0 9 015W * *").fields == rule("0 9 15W * *").fields
    assert rule("0 9 * * 01#01").fields == rule("0 9 * * 1#1").fields


# --- searches stay per month -------------------------------------------------------------


def test_rare_new_forms_are_found_far_ahead_and_back_and_counted() -> None:
    # A fifth Sunday in February: 2032, 2060, 2088 (then 2128: 2100 is not leap).
    fifth = rule("0 12 * feb 0#5")
    found = next_occurrences(fifth, parse_instant("2033-01-01T00:00:00Z"), 3)
    assert [format_instant(at)[:10] for at in found] == ["2060-02-29", "2088-02-29", "2128-02-29"]
    latest = latest_occurrence_at_or_before(
        fifth, parse_instant("2127-12-31T00:00:00Z"), parse_instant("2000-01-01T00:00:00Z")
    )
    assert latest == parse_instant("2088-02-29T12:00:00Z")
    # Last days over 400 years: one per month.
    last = rule("0 0 L * *")
    start, end = parse_instant("2000-01-01T00:00:00Z"), parse_instant("2400-01-01T00:00:00Z")
    assert count_occurrences(last, start, end) == 400 * 12
    # Nearest weekdays of the 15th over 400 years: one per month.
    assert count_occurrences(rule("0 0 15W * *"), start, end) == 400 * 12


# --- the log -------------------------------------------------------------------------------


def _replayed(lines: list[bytes]) -> State:
    return fold([event(SCHEDULE_CHANGE, seq, 0, line) for seq, line in enumerate(lines)])


def test_a_new_form_is_logged_as_sent_and_replays_to_the_same_answers() -> None:
    now = parse_instant("2026-03-20T12:00:00Z")
    # 02:30 on the last Sunday of March: Berlin's clocks skip it, so it
    # shifts past the gap.
    calendar = {"cron": "30 2 * MAR Lsun", "time_zone": "Europe/Berlin"}
    changes, created = handle(
        EMPTY_STATE, "schedule_create", {"prompt": "p", "calendar": calendar}, now
    )
    lines = [encode_change(change) for change in changes]
    assert b'"cron":"30 2 * MAR Lsun"' in lines[0]
    listed = json.loads(handle(_replayed(lines), "schedule_list", {}, now)[1])
    assert listed == [json.loads(created)]
    assert [o["local"] for o in listed[0]["nextOccurrences"]] == [
        "2026-03-29T03:00:00+02:00",
        "2027-03-28T03:00:00+02:00",
        "2028-03-26T03:00:00+02:00",
    ]


def test_a_log_line_of_a_plain_rule_replays_as_before() -> None:
    line = (
        b'{"version":2,"operation":"create","schedule":{"id":"schedule-1","kind":"calendar",'
        b'"prompt":"p","cron":"0 9 13 * fri","timeZone":"UTC","dstGap":"shift",'
        b'"dstOverlap":"first","scheduledAt":"2026-02-06T09:00:00.000Z"}}'
    )
    listed = json.loads(
        handle(_replayed([line]), "schedule_list", {}, parse_instant("2026-02-01T00:00:00Z"))[1]
    )
    # Vixie's OR, as ever: the 13th, or any Friday.
    assert [o["utc"][:10] for o in listed[0]["nextOccurrences"]] == [
        "2026-02-06",
        "2026-02-13",
        "2026-02-20",
    ]
