"""Zone offset timelines read from the pinned TZif files agree with zoneinfo.

The calendar engine needs the instants where a zone's offset changes, which
zoneinfo does not expose; :mod:`tickler.core.timing._offsets` reads them from the
same pinned bytes. Here every zone of the pinned tzdata is compared with
``ZoneInfo`` (the offsets the ``at`` selector uses) at each change, on
either side of it, and on a grid of instants over years 1-9999.
"""

from __future__ import annotations

import struct
from datetime import UTC, datetime, timedelta
from importlib import resources
from io import BytesIO
from itertools import pairwise
from typing import Final
from zoneinfo import ZoneInfo

import pytest

from tickler.core.timing._instant import MAX_INSTANT_MS, MIN_INSTANT_MS
from tickler.core.timing._offsets import Timeline, timeline_from_tzif, zone_timeline
from tickler.core.timing._zones import tzif_bytes

ZONES: Final = tuple(resources.files("tzdata").joinpath("zones").read_text().split())
EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
DAY: Final = 86_400_000
GRID_STEP: Final = 397 * DAY + 3_600_123  # not a whole number of days or years


def zoneinfo_offset(zone: ZoneInfo, ms: int) -> int:
    offset = (EPOCH + timedelta(milliseconds=ms)).astimezone(zone).utcoffset()
    assert offset is not None
    return offset // timedelta(milliseconds=1)


def probes(timeline: Timeline) -> list[int]:
    points = list(range(MIN_INSTANT_MS + DAY, MAX_INSTANT_MS - DAY, GRID_STEP * 37))
    points += range(
        (datetime(1900, 1, 1, tzinfo=UTC) - EPOCH) // timedelta(milliseconds=1),
        (datetime(2100, 1, 1, tzinfo=UTC) - EPOCH) // timedelta(milliseconds=1),
        GRID_STEP,
    )
    changes = list(timeline.explicit)
    for year in (2025, 2026, 2037, 2038, 2099, 2100, 2400, 9998):
        changes += timeline.tail_year(year)
    for change in changes:
        points += (change.at - 1, change.at)
    return [p for p in points if MIN_INSTANT_MS + DAY <= p <= MAX_INSTANT_MS - DAY]


@pytest.mark.parametrize("chunk", range(4))
def test_every_zone_has_zoneinfos_offsets(chunk: int) -> None:
    for key in ZONES[chunk::4]:
        timeline = zone_timeline(key)
        with BytesIO(tzif_bytes(key)) as data:
            zone = ZoneInfo.from_file(data, key=key)
        wrong = [
            (ms, timeline.offset_at(ms), zoneinfo_offset(zone, ms))
            for ms in probes(timeline)
            if timeline.offset_at(ms) != zoneinfo_offset(zone, ms)
        ]
        assert not wrong, (key, wrong[:3])
        for ms in probes(timeline)[::7]:
            assert timeline.around(ms) == (
                timeline.previous_change(ms),
                timeline.next_change(ms),
                timeline.offset_at(ms),
            ), (key, ms)


def test_changes_are_found_in_both_directions() -> None:
    timeline = zone_timeline("Europe/Berlin")
    spring = (datetime(2026, 3, 29, 1, tzinfo=UTC) - EPOCH) // timedelta(milliseconds=1)
    change = timeline.next_change(spring - 1)
    assert change is not None
    assert (change.at, change.before, change.after) == (spring, 3_600_000, 7_200_000)
    assert timeline.previous_change(spring) == change
    assert timeline.previous_change(spring - 1) != change
    assert timeline.next_change(spring) != change
    assert list(timeline.changes(spring - 1, spring)) == [change]
    assert zone_timeline("UTC").next_change(0) is None
    assert zone_timeline("Asia/Tokyo").next_change(spring) is None


def test_the_pinned_data_keeps_the_engines_assumptions() -> None:
    """What :mod:`tickler.core.timing._calendar` relies on: no zone changes its offset
    twice within two days, no change moves the clock by more than a day, and
    every footer rule is of the ``Mm.w.d`` form zoneinfo and this reader
    agree on (a tzdata update that breaks one fails here)."""
    for key in ZONES:
        timeline = zone_timeline(key)
        changes = list(timeline.explicit)
        if timeline.footer is not None:
            assert timeline.footer.start.kind == timeline.footer.end.kind == "M", key
            changes += timeline.tail_year(2030) + timeline.tail_year(2031)
        changes.sort()
        for change in changes:
            assert abs(change.after - change.before) <= DAY, (key, change)
        for earlier, later in pairwise(changes):
            assert later.at - earlier.at > 2 * DAY, (key, earlier, later)


def _tzif(footer: str) -> bytes:
    """A version 2 TZif file with no transitions, one UTC type, and a footer."""
    header = b"TZif2" + b"\0" * 15 + struct.pack(">6l", 0, 0, 0, 0, 1, 4)
    block = header + struct.pack(">lbB", 0, 0, 0) + b"UTC\0"
    return block + block + b"\n" + footer.encode() + b"\n"


@pytest.mark.parametrize(
    "footer",
    [
        "EST5EDT,M3.2.0,M11.1.0",
        "<+1030>-10:30<+11>-11,M10.1.0,M4.1.0",
        "<-03>3<-02>,M3.5.0/-2,M10.5.0/-1",
        "AAA-13BBB,M9.5.0/2:45,M4.1.0/3:45",
        "<+0545>-5:45",
    ],
)
def test_a_footer_alone_reads_like_zoneinfo(footer: str) -> None:
    data = _tzif(footer)
    timeline = timeline_from_tzif(data)
    with BytesIO(data) as stream:
        zone = ZoneInfo.from_file(stream)
    start = (datetime(2026, 1, 1, tzinfo=UTC) - EPOCH) // timedelta(milliseconds=1)
    points = list(range(start - 400 * DAY, start + 800 * DAY, 3_600_000))
    assert [timeline.offset_at(p) for p in points] == [zoneinfo_offset(zone, p) for p in points]
