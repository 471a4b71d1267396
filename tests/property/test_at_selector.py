"""The ``at`` selector resolves to the instant an independent reading gives.

Offset strings are checked against plain arithmetic; local date/time objects
in real IANA zones against ``zoneinfo`` on the same pinned tzdata (overlap:
the earlier instant; gap: "does not exist"), which is a different algorithm
from the reference's offset sampling that the core implements.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from typing import Final

from hypothesis import given
from hypothesis import strategies as st

from tickler.core import EMPTY_STATE, handle
from tickler.testing.strategies import (
    EPOCH,
    MAX_MS,
    MIN_MS,
    MS_PER_DAY,
    Json,
    iso,
    load_zone,
    ms_of,
    zone_names,
)

AREA_LOCATION: Final = re.compile(r"[A-Za-z][A-Za-z0-9_+.-]*(?:/[A-Za-z0-9_+.-]+)+", re.ASCII)
ZONES: Final = sorted(z for z in zone_names() if z == "UTC" or AREA_LOCATION.fullmatch(z))
NOT_FUTURE: Final = {
    "code": "not_future",
    "message": "The scheduled time must be strictly in the future.",
}
OUT_OF_RANGE: Final = {
    "code": "time_out_of_range",
    "message": (
        "The scheduled time must be representable as a four-digit-year RFC 3339 UTC instant."
    ),
}
GAP: Final = {
    "code": "invalid_rule",
    "message": "The local at time does not exist in the selected time zone.",
}


def _create_at(at: Json, now: int) -> Json:
    _, text = handle(
        EMPTY_STATE, "schedule_create", {"prompt": "p", "at": at}, now, profile="reference"
    )
    return json.loads(text)


def _expect(target: int, now: int) -> Json:
    """The range rule, then the strictly-future rule, then the stored target."""
    if not MIN_MS <= target <= MAX_MS:
        return OUT_OF_RANGE
    if target <= now:
        return NOT_FUTURE
    return iso(target)


def _outcome(out: Json) -> Json:
    return out.get("scheduledAt", out)


@given(
    wall=st.integers(MIN_MS, MAX_MS),
    offset=st.integers(-(23 * 60 + 59), 23 * 60 + 59),
    digits=st.integers(0, 3),
    zulu=st.booleans(),
    lead=st.one_of(st.integers(-MS_PER_DAY, MS_PER_DAY), st.sampled_from([-1, 0, 1])),
)
def test_an_offset_string_is_its_wall_time_minus_its_offset(
    wall: int, offset: int, digits: int, zulu: bool, lead: int
) -> None:
    text = iso(wall)[: 20 + digits] if digits else iso(wall)[:19]
    truncated = ms_of(datetime.fromisoformat(text + "+00:00"))
    if zulu:
        offset = 0
        text += "Z"
    else:
        sign = "-" if offset < 0 else "+"
        text += f"{sign}{abs(offset) // 60:02d}:{abs(offset) % 60:02d}"
    if text.endswith("-00:00"):
        return  # "unknown local offset": refused, checked elsewhere
    target = truncated - offset * 60_000
    now = min(max(target - lead, MIN_MS), MAX_MS)
    assert _outcome(_create_at(text, now)) == _expect(target, now)


def _local_candidates(wall: datetime, zone_name: str) -> list[int]:
    """Instants whose reading in the zone is exactly ``wall``."""
    zone = load_zone(zone_name)
    found = []
    for fold in (0, 1):
        moment = wall.replace(tzinfo=zone, fold=fold)
        instant = ms_of(moment.astimezone(UTC))
        back = (EPOCH + timedelta(milliseconds=instant)).astimezone(zone)
        if back.replace(tzinfo=None) == wall:
            found.append(instant)
    return found


@st.composite
def local_walls(draw: st.DrawFn) -> tuple[datetime, str]:
    """A zone and a wall time in it, often right at one of its transitions."""
    zone_name = draw(st.sampled_from(ZONES))
    instant = draw(
        st.one_of(
            st.integers(
                ms_of(datetime(1850, 1, 1, tzinfo=UTC)), ms_of(datetime(2200, 1, 1, tzinfo=UTC))
            ),
            st.integers(
                ms_of(datetime(1970, 1, 1, tzinfo=UTC)), ms_of(datetime(2040, 1, 1, tzinfo=UTC))
            ),
        )
    )
    local = (EPOCH + timedelta(milliseconds=instant)).astimezone(load_zone(zone_name))
    # Nudge by up to two hours either way, to land in gaps and overlaps.
    nudge = draw(st.one_of(st.just(0), st.integers(-2, 2).map(lambda h: h * 3_600_000)))
    wall = local.replace(tzinfo=None) + timedelta(milliseconds=nudge)
    wall = wall.replace(microsecond=wall.microsecond // 1000 * 1000)
    return wall, zone_name


@given(local_walls(), st.one_of(st.integers(1, 40 * MS_PER_DAY), st.integers(-MS_PER_DAY, 0)))
def test_a_local_time_resolves_like_zoneinfo_earlier_on_overlap(
    case: tuple[datetime, str], lead: int
) -> None:
    wall, zone_name = case
    candidates = _local_candidates(wall, zone_name)
    at = {
        "date": f"{wall.year:04d}-{wall.month:02d}-{wall.day:02d}",
        "time": wall.strftime("%H:%M:%S.") + f"{wall.microsecond // 1000:03d}",
        "time_zone": zone_name,
    }
    if not candidates:
        assert _create_at(at, ms_of(datetime(1, 1, 2, tzinfo=UTC))) == GAP
        return
    target = min(candidates)
    now = target - lead
    assert _outcome(_create_at(at, now)) == _expect(target, now)
    # Any letter case names the same zone.
    at["time_zone"] = zone_name.swapcase()
    expected = _expect(target, now)
    if zone_name.swapcase() != "utc":
        assert _outcome(_create_at(at, now)) == expected
