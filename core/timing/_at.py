"""The ``at`` selector: an offset instant string, or local fields in a zone.

Each function returns the target in epoch milliseconds or the closed error
the reference gives, checked in the reference's order. The extended profile
also takes a local ``time`` without seconds (``HH:mm``, as people and models
write it: ``09:00`` is 09:00:00), and its shape error names the field, the
value and an example; the reference profile keeps the reference's rule and
text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Final, TypeAlias

from tickler.core._errors import Msg, ScheduleError, error, shown
from tickler.core._profile import DEFAULT_PROFILE, Profile
from tickler.core.timing._instant import (
    MAX_INSTANT_MS,
    MIN_INSTANT_MS,
    CivilTime,
    civil_time,
    epoch_ms,
    is_real_date,
)
from tickler.core.timing._zones import resolve_zone, utc_offset_ms

_OFFSET_INSTANT: Final = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,3}))?"
    r"(?:(Z)|([+-])(\d{2}):(\d{2}))",
    re.ASCII,
)
_LOCAL_DATE: Final = re.compile(r"(\d{4})-(\d{2})-(\d{2})", re.ASCII)
_LOCAL_TIME: Final = re.compile(r"(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,3}))?", re.ASCII)
# The extended profile's: seconds optional (``09:00`` is ``09:00:00``).
_LOCAL_TIME_EXTENDED: Final = re.compile(r"(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?", re.ASCII)
_LOCAL_KEYS: Final = frozenset({"date", "time", "time_zone"})
_SAMPLE_DELTAS_MS: Final = (-172_800_000, -86_400_000, 0, 86_400_000, 172_800_000)

_OffsetAt: TypeAlias = Callable[[int], int]
_LOCAL_EXAMPLE: Final = '{"date": "2026-12-08", "time": "09:00", "time_zone": "Europe/Berlin"}'


class LocalAtMsg:
    """The extended profile's shape errors of a local ``at``: the field at
    fault, its value, and an example (the reference profile answers
    :attr:`Msg.LOCAL_SHAPE`)."""

    @staticmethod
    def date(value: str) -> str:
        return f"Local at date {shown(value)} must be YYYY-MM-DD, e.g. {_LOCAL_EXAMPLE}."

    @staticmethod
    def time(value: str) -> str:
        return (
            f"Local at time {shown(value)} must be HH:mm or HH:mm:ss (24-hour, optional "
            f"1-3 digit milliseconds), e.g. {_LOCAL_EXAMPLE}."
        )


def _millis(fraction: str | None) -> int:
    return 0 if fraction is None else int(fraction.ljust(3, "0"))


def _civil(fields: tuple[str | None, ...], fraction: str | None) -> CivilTime:
    year, month, day, hour, minute, second = (0 if f is None else int(f) for f in fields)
    return CivilTime(year, month, day, hour, minute, second, _millis(fraction))


def _clock_out_of_range(t: CivilTime) -> bool:
    return t.year == 0 or t.hour > 23 or t.minute > 59 or t.second > 59


def parse_offset_at(text: str) -> int | ScheduleError:
    """A strict RFC 3339 instant with ``Z`` or a ``±HH:MM`` offset."""
    match = _OFFSET_INSTANT.fullmatch(text)
    if match is None:
        return error("invalid_rule", Msg.AT_SHAPE)
    groups = match.groups()
    wall = _civil(groups[0:6], groups[6])
    if _clock_out_of_range(wall) or not is_real_date(wall.year, wall.month, wall.day):
        return error("invalid_rule", Msg.AT_REAL)
    local = epoch_ms(wall)
    if groups[7] == "Z":
        return local
    sign, hours, minutes = groups[8], int(groups[9]), int(groups[10])
    if hours > 23 or minutes > 59 or (sign == "-" and hours == 0 and minutes == 0):
        return error("invalid_rule", Msg.AT_OFFSET)
    offset = (hours * 60 + minutes) * 60_000
    return local - offset if sign == "+" else local + offset


def _local_shape(date: str, time: str, profile: Profile) -> ScheduleError:
    """The shape error: the reference's text, or the extended profile's,
    which names the field at fault and its value."""
    if profile == "reference":
        return error("invalid_rule", Msg.LOCAL_SHAPE)
    if _LOCAL_DATE.fullmatch(date) is None:
        return error("invalid_rule", LocalAtMsg.date(date))
    return error("invalid_rule", LocalAtMsg.time(time))


def parse_local_at(
    value: Mapping[str, object], *, profile: Profile = DEFAULT_PROFILE
) -> int | ScheduleError:
    """Local ``{date, time, time_zone}``: overlap takes the earlier instant,
    a gap is rejected."""
    if value.keys() != _LOCAL_KEYS:
        return error("invalid_rule", Msg.LOCAL_KEYS)
    date, time, zone_name = value["date"], value["time"], value["time_zone"]
    if not isinstance(date, str) or not isinstance(time, str):
        return error("invalid_rule", Msg.LOCAL_STRINGS)
    if not isinstance(zone_name, str):
        return error("invalid_time_zone", Msg.ZONE_STRING)
    date_match = _LOCAL_DATE.fullmatch(date)
    time_pattern = _LOCAL_TIME if profile == "reference" else _LOCAL_TIME_EXTENDED
    time_match = time_pattern.fullmatch(time)
    if date_match is None or time_match is None:
        return _local_shape(date, time, profile)
    wall = _civil(date_match.groups() + time_match.groups()[0:3], time_match.group(4))
    if _clock_out_of_range(wall):
        return error("invalid_rule", Msg.LOCAL_REAL)
    if not is_real_date(wall.year, wall.month, wall.day):
        return error("invalid_rule", Msg.AT_REAL)
    zone = resolve_zone(zone_name)
    if zone is None:
        return error("invalid_time_zone", Msg.ZONE)
    return _resolve_local(wall, lambda ms: utc_offset_ms(zone, ms))


def _resolve_local(wall: CivilTime, offset_at: _OffsetAt) -> int | ScheduleError:
    """The reference's resolution: sample the zone's offsets two days either
    side of the wall time, keep each candidate that reads back as the same
    wall time, take the earliest."""
    naive = epoch_ms(wall)
    offsets = dict.fromkeys(
        offset_at(min(MAX_INSTANT_MS, max(MIN_INSTANT_MS, naive + delta)))
        for delta in _SAMPLE_DELTAS_MS
    )
    candidates: list[int] = []
    out_of_range = False
    for offset in offsets:
        candidate = naive - offset
        if not MIN_INSTANT_MS <= candidate <= MAX_INSTANT_MS:
            out_of_range = True
        elif civil_time(candidate + offset_at(candidate)) == wall:
            candidates.append(candidate)
    if candidates:
        return min(candidates)
    if out_of_range:
        return error("time_out_of_range", Msg.OUT_OF_RANGE)
    return error("invalid_rule", Msg.LOCAL_GAP)


def parse_at(value: object, *, profile: Profile = DEFAULT_PROFILE) -> int | ScheduleError:
    """Either form of ``at``, as the domain layer validates it."""
    if isinstance(value, str):
        return parse_offset_at(value)
    if isinstance(value, Mapping):
        return parse_local_at(value, profile=profile)
    return error("invalid_rule", Msg.AT_KIND)
