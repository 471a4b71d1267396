"""Instants: integer epoch milliseconds (UTC) and their canonical text.

The canonical form is the reference's ``YYYY-MM-DDTHH:mm:ss.sssZ`` (what
``Date.prototype.toISOString`` gives for years 0001-9999). Fixed width, so
comparing two canonical strings compares the instants. Calendar arithmetic is
proleptic Gregorian, in integers; ``datetime`` is only used to read a
canonical string fast (its calendar is the same), never a clock.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Final, NamedTuple

MIN_INSTANT_MS: Final = -62_135_596_800_000  # 0001-01-01T00:00:00.000Z
MAX_INSTANT_MS: Final = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z
MS_PER_DAY: Final = 86_400_000

# ASCII digits only, as in JavaScript (Python's \d also matches other scripts).
# "$(?!\n)" ends the string in both engines: Python's "$" alone also matches
# before a final newline. The pattern is exported in the JSON Schema too.
CANONICAL_INSTANT_PATTERN: Final = (
    "^(?!0000)[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])"
    "T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9][.][0-9]{3}Z$(?!\n)"
)
_CANONICAL: Final = re.compile(CANONICAL_INSTANT_PATTERN, re.ASCII)
_DAYS_IN_MONTH: Final = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


class CivilTime(NamedTuple):
    """Wall-clock fields of one instant, read as UTC."""

    year: int
    month: int
    day: int
    hour: int
    minute: int
    second: int
    millisecond: int


def is_leap_year(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def days_in_month(year: int, month: int) -> int:
    if month == 2 and is_leap_year(year):
        return 29
    return _DAYS_IN_MONTH[month - 1]


def is_real_date(year: int, month: int, day: int) -> bool:
    """A real proleptic-Gregorian date, with no normalisation."""
    return 1 <= month <= 12 and 1 <= day <= days_in_month(year, month)


def days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 (H. Hinnant's algorithm, proleptic Gregorian)."""
    year -= month <= 2
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146_097 + day_of_era - 719_468


def civil_from_days(days: int) -> tuple[int, int, int]:
    """Inverse of :func:`days_from_civil`."""
    days += 719_468
    era = days // 146_097
    day_of_era = days - era * 146_097
    year_of_era = (
        day_of_era - day_of_era // 1460 + day_of_era // 36_524 - day_of_era // 146_096
    ) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    mp = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * mp + 2) // 5 + 1
    month = mp + (3 if mp < 10 else -9)
    year = year_of_era + era * 400 + (month <= 2)
    return year, month, day


def epoch_ms(t: CivilTime) -> int:
    """Epoch milliseconds of wall fields read as UTC (no validation)."""
    days = days_from_civil(t.year, t.month, t.day)
    return (days * 24 + t.hour) * 3_600_000 + t.minute * 60_000 + t.second * 1000 + t.millisecond


def civil_time(ms: int) -> CivilTime:
    days, rest = divmod(ms, MS_PER_DAY)
    year, month, day = civil_from_days(days)
    hour, rest = divmod(rest, 3_600_000)
    minute, rest = divmod(rest, 60_000)
    second, millisecond = divmod(rest, 1000)
    return CivilTime(year, month, day, hour, minute, second, millisecond)


def in_range(ms: int) -> bool:
    return MIN_INSTANT_MS <= ms <= MAX_INSTANT_MS


@lru_cache(maxsize=4096)
def _day_text(days: int) -> str:
    year, month, day = civil_from_days(days)
    return f"{year:04d}-{month:02d}-{day:02d}T"


def format_instant(ms: int) -> str:
    """The canonical UTC text of an in-range instant."""
    if not in_range(ms):
        raise ValueError(f"instant {ms} is outside years 0001-9999")
    days, rest = divmod(ms, MS_PER_DAY)
    hour, rest = divmod(rest, 3_600_000)
    minute, rest = divmod(rest, 60_000)
    second, millisecond = divmod(rest, 1000)
    return f"{_day_text(days)}{hour:02d}:{minute:02d}:{second:02d}.{millisecond:03d}Z"


def matches_canonical_pattern(text: str) -> bool:
    return _CANONICAL.match(text) is not None


def is_real_canonical(text: str) -> bool:
    """Whether a pattern-matching string names a real calendar day."""
    day = int(text[8:10])
    return day <= 28 or day <= days_in_month(int(text[0:4]), int(text[5:7]))


_EPOCH: Final = datetime(1970, 1, 1)  # noqa: DTZ001 - naive on purpose: the text is UTC
_ONE_MS: Final = timedelta(milliseconds=1)


def parse_instant(text: str) -> int:
    """Epoch milliseconds of a canonical instant string (assumed valid)."""
    return (datetime.fromisoformat(text[:-1]) - _EPOCH) // _ONE_MS
