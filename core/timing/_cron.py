"""Five-field cron rules: parsing, and counting and finding the wall minutes
a rule matches.

Fields are minute, hour, day-of-month, month and day-of-week, each ``*`` or a
comma list of values, ranges ``a-b`` and steps ``*/n`` or ``a-b/n``; months
and weekdays also by English three-letter names (any case); weekday 0 and 7
are both Sunday. The day-of-month also takes ``L`` (the last day), ``LW``
(the last weekday) and ``nW`` (the weekday nearest the nth, within its month:
Quartz's rule; none in a month without an nth); the day-of-week takes ``wL``
(the last weekday w of the month) and ``w#k`` (the kth, 1-5; none in a month
without one); croniter's spellings ``Wn`` and ``Lw`` are read too. ``L-n``
is refused (croniter refuses it). Days follow Vixie cron, whatever the items:
when neither day field starts with ``*``, a day matches if either field
matches, otherwise both must. Macros:
``@hourly``, ``@daily`` (``@midnight``), ``@weekly``, ``@monthly``,
``@yearly`` (``@annually``).

Wall minutes are counted as integers: minutes since 1970-01-01T00:00 of the
local wall clock read as if it were UTC (days are proleptic Gregorian). Which
days of a month match depends only on the weekday of its 1st and its length
(28 kinds of month), and the Gregorian calendar repeats every 400 years
(146,097 days, a whole number of weeks), so counting matched minutes below
any wall minute is O(1) after a small per-rule table, and finding the next or
previous match is O(1) for a rule that matches in the current or next month,
and one step per month or per year without a match otherwise.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from functools import lru_cache
from itertools import accumulate
from typing import Final, Literal, NamedTuple, TypeAlias

import msgspec

from tickler.core._errors import shown
from tickler.core.timing._instant import (
    civil_from_days,
    days_from_civil,
    days_in_month,
    is_leap_year,
)

MINUTES_PER_DAY: Final = 1440
_ITEM: Final = re.compile(r"(?:(\*)|([0-9A-Za-z]+)(?:-([0-9A-Za-z]+))?)(?:/([0-9]+))?", re.ASCII)
# The day fields' own items (any case): nW or Wn, and L-n (refused by name) in
# the day-of-month; wL or Lw, and w#k in the day-of-week.
_NEAREST: Final = re.compile(r"([0-9]+)W|W([0-9]+)", re.ASCII | re.IGNORECASE)
_FROM_LAST: Final = re.compile(r"L-[0-9]+W?", re.ASCII | re.IGNORECASE)
_LAST_OF: Final = re.compile(r"([0-9A-Za-z]+)L|L([0-9A-Za-z]+)", re.ASCII | re.IGNORECASE)
_NTH_OF: Final = re.compile(r"([0-9A-Za-z]+)#([0-9]+)", re.ASCII)
_FIELD_SEPARATOR: Final = re.compile(r"[ \t]+", re.ASCII)
MACROS: Final = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
}
_MONTH_NAMES: Final = {
    name: number
    for number, name in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1
    )
}
_WEEKDAY_NAMES: Final = {
    name: number for number, name in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))
}


class CronMsg:
    """Why a cron text was refused: each message names the text (or the
    field and its value) and says what to send instead."""

    @staticmethod
    def shape(text: str) -> str:
        return (
            f"calendar cron {shown(text)} is not five fields separated by spaces: send "
            '"minute hour day-of-month month day-of-week" (e.g. "0 9 * * 1-5") '
            "or one of @hourly, @daily, @weekly, @monthly, @yearly."
        )

    @staticmethod
    def macro(text: str) -> str:
        return (
            f"calendar cron {shown(text)} is not a macro: send one of @hourly, @daily "
            "(or @midnight), @weekly, @monthly, @yearly (or @annually), or five fields "
            'like "0 9 * * 1-5".'
        )

    @staticmethod
    def reboot(text: str) -> str:
        return (
            f"calendar cron {shown(text)} names no time (a reminder has no reboot): send "
            'five fields like "0 9 * * 1-5" or one of @hourly, @daily, @weekly, @monthly, '
            "@yearly."
        )

    @staticmethod
    def field(name: str, item: str, problem: str, usage: str) -> str:
        return f"calendar cron {name} {shown(item)} {problem}: use {usage}."

    @staticmethod
    def never(text: str) -> str:
        return (
            f"calendar cron {shown(text)} never matches a real date (e.g. February 30): "
            'choose a day-of-month that exists in the chosen months, e.g. "0 9 28 2 *".'
        )


class _Problem:
    """What is wrong with one item of a field (the message's middle)."""

    OUT_OF_RANGE: Final = "is out of range"
    NOT_A_NUMBER: Final = "is not a number"
    NOT_A_NAME: Final = "is not a number or a name"
    BACKWARDS: Final = "is a range from high to low"
    STEP_RANGE: Final = "has a step out of range (1-{span})"
    STEP_ALONE: Final = "has a step without a range (write a-b/n or */n)"
    MALFORMED: Final = "is not valid"
    FROM_LAST: Final = "counts back from the last day, which is not supported"
    NTH_RANGE: Final = "has an occurrence out of range (#1-#5)"
    LAST_ALONE: Final = "is L without a weekday (5L is the last Friday)"


class _Field(NamedTuple):
    name: str
    low: int
    high: int
    names: dict[str, int] | None
    usage: str
    """What the field accepts, with examples (the message's end)."""


_FIELDS: Final = (
    _Field(
        "minute", 0, 59, None,
        "*, a number 0-59, a range like 0-30, a list like 0,30 or a step like */15",
    ),
    _Field(
        "hour", 0, 23, None,
        "*, a number 0-23, a range like 8-18, a list like 9,17 or a step like 8-18/2",
    ),
    _Field(
        "day-of-month", 1, 31, None,
        "*, a number 1-31, a range like 1-15, a list like 1,15, a step like */2, "
        "L (the last day), LW (the last weekday) or 15W (the weekday nearest the 15th)",
    ),
    _Field(
        "month", 1, 12, _MONTH_NAMES,
        "*, a number 1-12 or a name jan-dec, a range like jan-mar, a list like 1,7 "
        "or a step like */3",
    ),
    _Field(
        "day-of-week", 0, 7, _WEEKDAY_NAMES,
        "*, a number 0-7 (0 and 7 are Sunday) or a name sun-sat, a range like mon-fri, "
        "a list like sat,sun, a step like */2, 5L (the last Friday) or 1#1 (the first Monday)",
    ),
)  # fmt: skip
_DAY_OF_MONTH, _DAY_OF_WEEK = _FIELDS[2], _FIELDS[4]


class CronFields(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A parsed cron rule: the matched values of each field, sorted, and the
    day fields' items that depend on the month (empty when none is sent)."""

    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    days: tuple[int, ...]
    """Days of the month, 1-31."""
    months: tuple[int, ...]
    weekdays: tuple[int, ...]
    """0 (Sunday) to 6."""
    day_or: bool
    """Both day fields are restricted (neither starts with ``*``): a day
    matches if either matches (Vixie cron); otherwise both must."""
    last_day: bool = False
    """``L``: the last day of the month."""
    last_workday: bool = False
    """``LW``: the last weekday (Monday to Friday) of the month."""
    nearest_workdays: tuple[int, ...] = ()
    """``nW``: for each n, the weekday nearest the nth in its month."""
    last_weekdays: tuple[int, ...] = ()
    """``wL``: for each w (0 Sunday to 6), the last w of the month."""
    nth_weekdays: tuple[tuple[int, int], ...] = ()
    """``w#k``: for each (w, k), the kth w of the month (k 1-5)."""


_SpecialKind: TypeAlias = Literal["L", "LW", "W", "wL", "#"]


class _Special(NamedTuple):
    """A day field's item that depends on the month: its kind (as written in
    the cron text), the day or weekday, and k of ``w#k``."""

    kind: _SpecialKind
    value: int = 0
    nth: int = 0


def _number(digits: str) -> int | None:
    """The value of an ASCII digit string, or None past 999: beyond every
    field and step (and ``int()`` refuses a string of thousands of digits)."""
    significant = digits.lstrip("0")
    return int(significant or "0") if len(significant) <= 3 else None


def _value(token: str, field: _Field) -> int | str:
    """A value of the field, or the problem with it."""
    if token.isdigit():
        number = _number(token)
    elif field.names is not None:
        number = field.names.get(token.lower())
        if number is None:
            return _Problem.NOT_A_NAME
    else:
        return _Problem.NOT_A_NUMBER
    if number is None or not field.low <= number <= field.high:
        return _Problem.OUT_OF_RANGE
    return number


def _day_of_month_item(item: str) -> _Special | str | None:
    """``L``, ``LW`` or ``nW`` (also ``Wn``), the problem with such an item,
    or None for a plain item."""
    upper = item.upper()
    if upper in ("L", "LW"):
        return _Special("L" if upper == "L" else "LW")
    if _FROM_LAST.fullmatch(item):
        return _Problem.FROM_LAST  # Quartz's L-n: croniter refuses it
    match = _NEAREST.fullmatch(item)
    if match is None:
        return None
    day = _value(match[1] or match[2], _DAY_OF_MONTH)
    return day if isinstance(day, str) else _Special("W", day)


def _day_of_week_item(item: str) -> _Special | str | None:
    """``wL`` (also ``Lw``) or ``w#k``, the problem with such an item, or
    None for a plain item."""
    if "#" in item:
        match = _NTH_OF.fullmatch(item)
        if match is None:
            return _Problem.MALFORMED
        weekday = _value(match[1], _DAY_OF_WEEK)
        if isinstance(weekday, str):
            return weekday
        nth = _number(match[2])
        if nth is None or not 1 <= nth <= 5:
            return _Problem.NTH_RANGE
        return _Special("#", weekday % 7, nth)
    if item in ("L", "l"):
        return _Problem.LAST_ALONE  # Quartz reads it as Saturday, croniter refuses it
    match = _LAST_OF.fullmatch(item)
    if match is None:
        return None
    weekday = _value(match[1] or match[2], _DAY_OF_WEEK)
    return weekday if isinstance(weekday, str) else _Special("wL", weekday % 7)


def _special_item(item: str, field: _Field) -> _Special | str | None:
    if field is _DAY_OF_MONTH:
        return _day_of_month_item(item)
    if field is _DAY_OF_WEEK:
        return _day_of_week_item(item)
    return None


def _parse_item(item: str, field: _Field) -> range | _Special | str:
    """The values one comma-separated item matches (or its month-dependent
    meaning), or the problem with it."""
    special = _special_item(item, field)
    if special is not None:
        return special
    match = _ITEM.fullmatch(item)
    if match is None:
        return _Problem.MALFORMED
    star, first, last, step_text = match.groups()
    if star:
        low, high = field.low, field.high
    else:
        low_value = _value(first, field)
        high_value = low_value if last is None else _value(last, field)
        if isinstance(low_value, str):
            return low_value
        if isinstance(high_value, str):
            return high_value
        if high_value < low_value:
            return _Problem.BACKWARDS
        if step_text is not None and last is None:
            return _Problem.STEP_ALONE  # "a/n" is not Vixie cron: send "a-b/n"
        low, high = low_value, high_value
    span = field.high - field.low + 1
    step = 1 if step_text is None else _number(step_text)
    if step is None or not 1 <= step <= span:
        return _Problem.STEP_RANGE.format(span=span)
    return range(low, high + 1, step)


class _Parsed(NamedTuple):
    values: frozenset[int]
    specials: frozenset[_Special]


def _parse_field(text: str, field: _Field) -> _Parsed | str:
    """The field's values and month-dependent items, or the message naming
    the item at fault."""
    values: set[int] = set()
    specials: set[_Special] = set()
    for item in text.split(","):
        matched = _parse_item(item, field)
        if isinstance(matched, str):
            return CronMsg.field(field.name, item, matched, field.usage)
        if isinstance(matched, _Special):
            specials.add(matched)
        else:
            values.update(matched)
    return _Parsed(frozenset(values), frozenset(specials))


def parse_cron(text: str) -> CronFields | str:
    """The parsed rule, or the :class:`CronMsg` message saying why not (a
    rule that never matches a real date is refused too)."""
    expanded = text
    if text.startswith("@"):
        macro = MACROS.get(text.lower())
        if macro is None:
            return CronMsg.reboot(text) if text.lower() == "@reboot" else CronMsg.macro(text)
        expanded = macro
    parts = _FIELD_SEPARATOR.split(expanded)
    if len(parts) != len(_FIELDS) or not all(parts):
        return CronMsg.shape(text)
    parsed: list[_Parsed] = []
    for part, field in zip(parts, _FIELDS, strict=True):
        values = _parse_field(part, field)
        if isinstance(values, str):
            return values
        parsed.append(values)
    minutes, hours, days, months, weekdays = parsed
    day_kinds = {special.kind for special in days.specials}
    fields = CronFields(
        minutes=tuple(sorted(minutes.values)),
        hours=tuple(sorted(hours.values)),
        days=tuple(sorted(days.values)),
        months=tuple(sorted(months.values)),
        weekdays=tuple(sorted({w % 7 for w in weekdays.values})),
        day_or=not parts[2].startswith("*") and not parts[4].startswith("*"),
        last_day="L" in day_kinds,
        last_workday="LW" in day_kinds,
        nearest_workdays=tuple(sorted(s.value for s in days.specials if s.kind == "W")),
        last_weekdays=tuple(sorted(s.value for s in weekdays.specials if s.kind == "wL")),
        nth_weekdays=tuple(sorted((s.value, s.nth) for s in weekdays.specials if s.kind == "#")),
    )
    if wall_minutes(fields).days_per_cycle == 0:
        return CronMsg.never(text)
    return fields


def _weekday(day: int) -> int:
    """0 (Sunday) to 6 of a day number (1970-01-01 was a Thursday)."""
    return (day + 4) % 7


def _mask(values: tuple[int, ...]) -> int:
    mask = 0
    for value in values:
        mask |= 1 << value
    return mask


def _days_before_month(leap: bool) -> tuple[int, ...]:
    lengths = (31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
    out = [0]
    for length in lengths:
        out.append(out[-1] + length)
    return tuple(out)


_MONTH_STARTS: Final = (_days_before_month(False), _days_before_month(True))
_SATURDAY: Final = 6
_WEEKLY: Final = sum(1 << day for day in range(0, 31, 7))
"""Bits 0, 7, 14, 21 and 28: one weekday's days, shifted to its first."""
_YEAR_KINDS: Final = tuple(
    (is_leap_year(year), _weekday(days_from_civil(year, 1, 1))) for year in range(400)
)
"""Leap or not, and the weekday of 1 January, of each year of the 400-year cycle."""


def _month_kind(first_weekday: int, length: int) -> int:
    """One of 28 kinds of month: the weekday of its 1st and its length."""
    return first_weekday * 4 + length - 28


def _nearest_workday(day: int, first_weekday: int, length: int) -> int:
    """The weekday (Monday to Friday) nearest ``day`` within its month
    (Quartz's ``W``): a Saturday moves to the Friday before, unless it is the
    1st (then the Monday after); a Sunday to the Monday after, unless it is
    the last day (then the Friday before)."""
    weekday = (first_weekday + day - 1) % 7
    if weekday == _SATURDAY:
        return day - 1 if day > 1 else day + 2
    if weekday == 0:
        return day + 1 if day < length else day - 2
    return day


def _days_by_month_kind(fields: CronFields) -> tuple[int, ...]:
    """Per kind of month (:func:`_month_kind`), the days (bits 1-31) the day
    fields match, the month field aside."""
    days = _mask(fields.days)
    out: list[int] = []
    for first_weekday in range(7):
        weekdays = 0
        for weekday in fields.weekdays:
            weekdays |= _WEEKLY << 1 + (weekday - first_weekday) % 7
        out.extend(
            _month_days(fields, first_weekday, length, days, weekdays) for length in range(28, 32)
        )
    return tuple(out)


def _month_days(
    fields: CronFields, first_weekday: int, length: int, days: int, weekdays: int
) -> int:
    """The days (bits 1-31) the day fields match in a month whose 1st falls
    on ``first_weekday`` and that has ``length`` days; ``days`` and
    ``weekdays`` are the days the plain values match (bits, up to 31)."""
    in_month = (2 << length) - 2
    by_day = days & in_month
    if fields.last_day:
        by_day |= 1 << length
    if fields.last_workday:
        by_day |= 1 << _nearest_workday(length, first_weekday, length)
    for day in fields.nearest_workdays:
        if day <= length:  # as the day itself: none in a month without it
            by_day |= 1 << _nearest_workday(day, first_weekday, length)
    by_weekday = weekdays & in_month
    for weekday in fields.last_weekdays:
        first = 1 + (weekday - first_weekday) % 7
        by_weekday |= 1 << first + (length - first) // 7 * 7
    for weekday, nth in fields.nth_weekdays:
        day = 1 + (weekday - first_weekday) % 7 + (nth - 1) * 7
        if day <= length:
            by_weekday |= 1 << day
    return by_day | by_weekday if fields.day_or else by_day & by_weekday


class WallMinutes:
    """Counting and finding the wall minutes one rule matches.

    Built once per rule (a few hundred small steps, cached): per kind of month
    (weekday of its 1st, length), the matched days and the matched days
    before each day of the month; per kind of year (leap, weekday of 1
    January), the matched days before each month; the matched days before
    each year of the 400-year cycle.
    """

    __slots__ = (
        "_before_day_in_month",
        "_before_month",
        "_before_year",
        "_days_in_month",
        "_first_time",
        "_hours",
        "_hours_before",
        "_last_time",
        "_minutes",
        "_minutes_before",
        "_month_mask",
        "days_per_cycle",
        "per_day",
    )

    def __init__(self, fields: CronFields) -> None:
        self._minutes = fields.minutes
        self._hours = fields.hours
        self._minutes_before = tuple(bisect_left(fields.minutes, m) for m in range(61))
        self._hours_before = tuple(bisect_left(fields.hours, h) for h in range(25))
        self.per_day = len(fields.minutes) * len(fields.hours)
        """Matched minutes in a matched day."""
        self._first_time = fields.hours[0] * 60 + fields.minutes[0]
        self._last_time = fields.hours[-1] * 60 + fields.minutes[-1]
        self._month_mask = _mask(fields.months)
        self._days_in_month = _days_by_month_kind(fields)
        """Per kind of month (:func:`_month_kind`), the matched days as bits,
        the month field aside."""
        prefixes: dict[int, tuple[int, ...]] = {}
        for days in self._days_in_month:
            if days not in prefixes:
                prefixes[days] = (0, *accumulate(days >> day & 1 for day in range(32)))
        self._before_day_in_month = tuple(prefixes[days] for days in self._days_in_month)
        """Per kind of month, the matched days before day d (index d, 1-32)."""
        self._before_month = {
            (leap, jan1): self._month_prefix(leap, jan1)
            for leap in (False, True)
            for jan1 in range(7)
        }
        per_year = (self._before_month[kind][12] for kind in _YEAR_KINDS)
        self._before_year = (0, *accumulate(per_year))
        self.days_per_cycle = self._before_year[-1]
        """Matched days in 400 years (0: the rule never matches)."""

    def _month_prefix(self, leap: bool, jan1: int) -> tuple[int, ...]:
        starts = _MONTH_STARTS[leap]
        out = [0]
        for month in range(1, 13):
            count = 0
            if self._month_mask >> month & 1:
                length = starts[month] - starts[month - 1]
                kind = _month_kind((jan1 + starts[month - 1]) % 7, length)
                count = self._before_day_in_month[kind][length + 1]
            out.append(out[-1] + count)
        return tuple(out)

    def day_matches(self, day: int) -> bool:
        year, month, day_of_month = civil_from_days(day)
        if not self._month_mask >> month & 1:
            return False
        kind = _month_kind(_weekday(day - day_of_month + 1), days_in_month(year, month))
        return bool(self._days_in_month[kind] >> day_of_month & 1)

    def days_before(self, day: int) -> int:
        """Matched days before day number ``day``: O(1)."""
        year, month, day_of_month = civil_from_days(day)
        cycles, year_in_cycle = divmod(year, 400)
        jan1 = days_from_civil(year, 1, 1)
        count = cycles * self.days_per_cycle + self._before_year[year_in_cycle]
        count += self._before_month[(is_leap_year(year), _weekday(jan1))][month - 1]
        if self._month_mask >> month & 1:
            kind = _month_kind(_weekday(day - day_of_month + 1), days_in_month(year, month))
            count += self._before_day_in_month[kind][day_of_month]
        return count

    def _times_before(self, time: int) -> int:
        hour, minute = divmod(time, 60)
        count = self._hours_before[hour] * len(self._minutes)
        if hour < 24 and self._hours_before[hour + 1] > self._hours_before[hour]:
            count += self._minutes_before[minute]
        return count

    def before(self, minute: int) -> int:
        """Matched wall minutes before wall minute ``minute``: O(1)."""
        day, time = divmod(minute, MINUTES_PER_DAY)
        count = self.days_before(day) * self.per_day
        if time and self.day_matches(day):
            count += self._times_before(time)
        return count

    def _next_time(self, time: int) -> int | None:
        """The first matched time of day at or after ``time`` (minutes)."""
        hour, minute = divmod(time, 60)
        index = bisect_left(self._hours, hour)
        if index < len(self._hours) and self._hours[index] == hour:
            at = bisect_left(self._minutes, minute)
            if at < len(self._minutes):
                return hour * 60 + self._minutes[at]
            index += 1
        return self._hours[index] * 60 + self._minutes[0] if index < len(self._hours) else None

    def _previous_time(self, time: int) -> int | None:
        """The last matched time of day at or before ``time`` (minutes)."""
        hour, minute = divmod(time, 60)
        index = bisect_right(self._hours, hour) - 1
        if index >= 0 and self._hours[index] == hour:
            at = bisect_right(self._minutes, minute) - 1
            if at >= 0:
                return hour * 60 + self._minutes[at]
            index -= 1
        return self._hours[index] * 60 + self._minutes[-1] if index >= 0 else None

    def _year_days(self, year: int, jan1: int) -> int:
        """Matched days in ``year``, whose 1 January is day ``jan1``."""
        return self._before_month[(is_leap_year(year), _weekday(jan1))][12]

    def _first_in_month(self, first: int, length: int, day_of_month: int) -> int:
        """The first matched day of the month from ``day_of_month`` on (day of
        the month; 32 when none), the month's 1st being day number ``first``,
        its length ``length``, and the month field aside."""
        before = self._before_day_in_month[_month_kind(_weekday(first), length)]
        return bisect_right(before, before[day_of_month]) - 1

    def _last_in_month(self, first: int, length: int, day_of_month: int) -> int:
        """The last matched day of the month up to ``day_of_month`` (0 when none)."""
        before = self._before_day_in_month[_month_kind(_weekday(first), length)]
        return bisect_left(before, before[day_of_month + 1]) - 1 if before[day_of_month + 1] else 0

    def next_day(self, day: int) -> int:
        """The first matched day at or after ``day``: month by month, whole
        years without a match skipped (a matching year comes within 400)."""
        year, month, day_of_month = civil_from_days(day)
        first = day - day_of_month + 1
        while True:
            length = days_in_month(year, month)
            if self._month_mask >> month & 1:
                found = self._first_in_month(first, length, day_of_month)
                if found <= length:
                    return first + found - 1
            first += length
            day_of_month = 1
            if month < 12:
                month += 1
                continue
            year, month = year + 1, 1
            while not self._year_days(year, first):
                first += 365 + is_leap_year(year)
                year += 1

    def previous_day(self, day: int) -> int:
        """The last matched day at or before ``day`` (as :meth:`next_day`)."""
        year, month, day_of_month = civil_from_days(day)
        first = day - day_of_month + 1
        while True:
            if self._month_mask >> month & 1:
                found = self._last_in_month(first, days_in_month(year, month), day_of_month)
                if found:
                    return first + found - 1
            if month > 1:
                month -= 1
                day_of_month = days_in_month(year, month)
                first -= day_of_month
                continue
            year -= 1
            while not self._year_days(year, days_from_civil(year, 1, 1)):
                year -= 1
            month, day_of_month = 12, 31
            first = days_from_civil(year, 12, 1)

    def next_minute(self, minute: int) -> int:
        """The first matched wall minute at or after ``minute``."""
        day, time = divmod(minute, MINUTES_PER_DAY)
        if self.day_matches(day):
            found = self._next_time(time)
            if found is not None:
                return day * MINUTES_PER_DAY + found
        return self.next_day(day + 1) * MINUTES_PER_DAY + self._first_time

    def previous_minute(self, minute: int) -> int:
        """The last matched wall minute at or before ``minute``."""
        day, time = divmod(minute, MINUTES_PER_DAY)
        if self.day_matches(day):
            found = self._previous_time(time)
            if found is not None:
                return day * MINUTES_PER_DAY + found
        return self.previous_day(day - 1) * MINUTES_PER_DAY + self._last_time

    def matches(self, minute: int) -> bool:
        day, time = divmod(minute, MINUTES_PER_DAY)
        return self.day_matches(day) and self._next_time(time) == time


@lru_cache(maxsize=512)
def wall_minutes(fields: CronFields) -> WallMinutes:
    """The (cached) counting tables of one rule."""
    return WallMinutes(fields)
