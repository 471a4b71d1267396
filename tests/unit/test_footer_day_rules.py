"""The POSIX TZ footer's other day forms, and each UTC year's changes.

No pinned zone's footer uses the ``Jn`` or ``n`` day forms (a test in
``test_zone_offsets.py`` keeps that so), so the zones alone never reach
them; here footers written for the purpose do. ``Jn`` (1-365, 29 February
never counted) reads as zoneinfo reads it except at ``J59`` in a leap year,
and the zero-based ``n`` one day later than zoneinfo: there the reader
keeps to POSIX, and these tests pin the day it gives.
"""

from __future__ import annotations

import struct
from datetime import UTC, datetime, timedelta
from io import BytesIO
from itertools import pairwise
from typing import Final
from zoneinfo import ZoneInfo

import pytest

from tickler.core.timing._offsets import Timeline, timeline_from_tzif

EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
HOUR: Final = 3_600_000
YEARS: Final = range(2023, 2030)  # leap years 2024 and 2028 among them
STEP: Final = 5 * HOUR


def ms(year: int, month: int, day: int, hour: int = 0) -> int:
    return (datetime(year, month, day, hour, tzinfo=UTC) - EPOCH) // timedelta(milliseconds=1)


def tzif(footer: str) -> bytes:
    """A version 2 TZif file with no transitions, one UTC type, and a footer."""
    header = b"TZif2" + b"\0" * 15 + struct.pack(">6l", 0, 0, 0, 0, 1, 4)
    block = header + struct.pack(">lbB", 0, 0, 0) + b"UTC\0"
    return block + block + b"\n" + footer.encode() + b"\n"


def zoneinfo_offset(zone: ZoneInfo, at: int) -> int:
    offset = (EPOCH + timedelta(milliseconds=at)).astimezone(zone).utcoffset()
    assert offset is not None
    return offset // timedelta(milliseconds=1)


def changes(timeline: Timeline) -> list[tuple[int, int, int]]:
    return [(c.at, c.before, c.after) for year in YEARS for c in timeline.tail_year(year)]


@pytest.mark.parametrize(
    "footer",
    [
        "AAA0BBB,J60,J300",  # 1 March, in leap years too
        "AAA0BBB,J1,J365",  # the year's first and last days
        "EST5EDT,J70/2,J300/2",
        "AAA0BBB,J58/25,J61/-3",  # past midnight, and before it
        "AAA0BBB,J365/24,J60",  # DST starts as a UTC year begins
    ],
)
def test_a_julian_day_footer_reads_like_zoneinfo(footer: str) -> None:
    data = tzif(footer)
    timeline = timeline_from_tzif(data)
    with BytesIO(data) as stream:
        zone = ZoneInfo.from_file(stream)
    points = list(range(ms(YEARS[0], 1, 1), ms(YEARS[-1] + 1, 1, 1), STEP))
    assert [timeline.offset_at(p) for p in points] == [zoneinfo_offset(zone, p) for p in points]
    for at, before, after in changes(timeline):
        assert (zoneinfo_offset(zone, at - 1), zoneinfo_offset(zone, at)) == (before, after)


def test_julian_days_skip_the_leap_day() -> None:
    """``J59`` is 28 February and ``J60`` 1 March in every year (POSIX;
    CPython's zoneinfo moves ``J59`` to 29 February in a leap year)."""
    timeline = timeline_from_tzif(tzif("AAA0BBB,J59,J60/12"))
    assert changes(timeline)[2:6] == [
        (ms(2024, 2, 28, 2), 0, HOUR),
        (ms(2024, 3, 1, 11), HOUR, 0),
        (ms(2025, 2, 28, 2), 0, HOUR),
        (ms(2025, 3, 1, 11), HOUR, 0),
    ]


def test_zero_based_days_count_the_leap_day() -> None:
    """``n`` counts from 0 = 1 January, 29 February included: day 59 is
    1 March in a common year and 29 February in a leap year."""
    timeline = timeline_from_tzif(tzif("AAA0BBB,59,300"))
    assert changes(timeline)[:4] == [
        (ms(2023, 3, 1, 2), 0, HOUR),
        (ms(2023, 10, 28, 1), HOUR, 0),
        (ms(2024, 2, 29, 2), 0, HOUR),
        (ms(2024, 10, 27, 1), HOUR, 0),
    ]


def test_each_years_changes_lie_inside_it() -> None:
    """A change that falls exactly on 1 January 00:00 UTC belongs to the
    year it opens, once: the year before does not list it too (the
    calendar engine sums a 400-year table of these per-year lists)."""
    timeline = timeline_from_tzif(tzif("AAA0BBB,J365/24,J60"))
    for year in YEARS:
        listed = timeline.tail_year(year)
        assert listed[0].at == ms(year, 1, 1), year
        assert all(ms(year, 1, 1) <= c.at < ms(year + 1, 1, 1) for c in listed), (year, listed)
    assert all(a[0] < b[0] for a, b in pairwise(changes(timeline)))
