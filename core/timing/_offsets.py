"""A zone's UTC offset as a timeline of transitions, from the pinned TZif data.

``zoneinfo`` answers "which offset at this instant" but not "when does the
offset change next", which the calendar engine needs. This reads the same
pinned TZif bytes (see :mod:`tickler.core.timing._zones`) and gives, for every
instant, the offset ``ZoneInfo.fromutc`` gives (a test checks all zones):
the explicit 64-bit transitions; before the first one, the first
standard-time type; after the last one, the POSIX TZ footer, evaluated per
UTC year exactly as zoneinfo evaluates it. Instants and offsets are integer
milliseconds; transitions that keep the offset (a new abbreviation only)
are dropped.
"""

from __future__ import annotations

import re
import struct
from bisect import bisect_right
from collections.abc import Iterator
from functools import lru_cache
from typing import Final, NamedTuple

from tickler.core.timing._instant import MS_PER_DAY, civil_from_days, days_from_civil, days_in_month
from tickler.core.timing._instant import is_leap_year as _is_leap
from tickler.core.timing._zones import tzif_bytes

_HEADER: Final = struct.Struct(">4sc15x6l")
_TYPE: Final = struct.Struct(">lbB")
_TZ_OFFSET: Final = r"[+-]?\d{1,3}(?::\d{2}(?::\d{2})?)?"
_TZ_NAME: Final = r"[^<0-9:.+,-]+|<[A-Za-z0-9+-]+>"
_FOOTER: Final = re.compile(
    rf"(?:{_TZ_NAME})(?P<std>{_TZ_OFFSET})"
    rf"(?:(?:{_TZ_NAME})(?P<dst>{_TZ_OFFSET})?,(?P<start>[^,]+),(?P<end>[^,]+))?",
    re.ASCII,
)
_DAY_RULE: Final = re.compile(
    rf"(?:M(?P<m>\d{{1,2}})\.(?P<w>\d)\.(?P<d>\d)|(?P<j>J)?(?P<n>\d{{1,3}}))(?:/(?P<t>{_TZ_OFFSET}))?",
    re.ASCII,
)
_DEFAULT_RULE_TIME_S: Final = 7200


class Transition(NamedTuple):
    """The offset changes at ``at`` (epoch ms, the first instant of the new
    offset) from ``before`` to ``after`` (offsets in ms)."""

    at: int
    before: int
    after: int


class _DayRule(NamedTuple):
    """One POSIX TZ date rule: ``Mm.w.d``, ``Jn`` (1-365, no leap day) or
    ``n`` (0-365), at ``seconds`` local time (may be negative or past 24h)."""

    kind: str
    month: int
    week: int
    weekday: int
    number: int
    seconds: int

    def local_day(self, year: int) -> int:
        """Days since 1970-01-01 of the rule's local date in ``year``."""
        if self.kind == "M":
            first = days_from_civil(year, self.month, 1)
            day = (self.weekday - (first + 4) % 7) % 7 + 1 + (self.week - 1) * 7
            if day > days_in_month(year, self.month):
                day -= 7
            return first + day - 1
        jan1 = days_from_civil(year, 1, 1)
        if self.kind == "J":
            return jan1 + self.number - 1 + (self.number >= 60 and _is_leap(year))
        return jan1 + self.number


class _Footer(NamedTuple):
    """A footer with daylight saving time: offsets (ms) and the two rules."""

    std: int
    dst: int
    start: _DayRule
    end: _DayRule


def _seconds(text: str) -> int:
    sign = -1 if text.startswith("-") else 1
    parts = [int(p) for p in text.lstrip("+-").split(":")]
    parts += [0] * (3 - len(parts))
    return sign * (parts[0] * 3600 + parts[1] * 60 + parts[2])


def _day_rule(text: str) -> _DayRule:
    match = _DAY_RULE.fullmatch(text)
    if match is None:
        raise ValueError(f"unsupported TZ footer date rule {text!r}")
    time = match["t"]
    seconds = _DEFAULT_RULE_TIME_S if time is None else _seconds(time)
    if match["m"] is not None:
        return _DayRule("M", int(match["m"]), int(match["w"]), int(match["d"]), 0, seconds)
    return _DayRule("J" if match["j"] else "n", 0, 0, 0, int(match["n"]), seconds)


def _parse_footer(text: str) -> _Footer | int | None:
    """A DST footer, a fixed offset (ms), or None when there is no footer."""
    if not text:
        return None
    match = _FOOTER.fullmatch(text)
    if match is None:
        raise ValueError(f"unsupported TZ footer {text!r}")
    std = -_seconds(match["std"]) * 1000
    if match["start"] is None:
        return std
    dst = std + 3_600_000 if match["dst"] is None else -_seconds(match["dst"]) * 1000
    return _Footer(std, dst, _day_rule(match["start"]), _day_rule(match["end"]))


def _start_end_s(footer: _Footer, year: int) -> tuple[int, int]:
    """zoneinfo's DST start and end of ``year`` as UTC epoch seconds."""
    start = footer.start.local_day(year) * 86_400 + footer.start.seconds - footer.std // 1000
    end = footer.end.local_day(year) * 86_400 + footer.end.seconds - footer.dst // 1000
    return start, end


def _utc_year(ms: int) -> int:
    return civil_from_days(ms // MS_PER_DAY)[0]


def footer_offset(footer: _Footer, ms: int) -> int:
    """The footer's offset at an instant, evaluated in its UTC year as
    ``ZoneInfo.fromutc`` does (whole seconds)."""
    ts = ms // 1000
    start, end = _start_end_s(footer, _utc_year(ms))
    is_dst = start <= ts < end if start < end else not end <= ts < start
    return footer.dst if is_dst else footer.std


@lru_cache(maxsize=8192)
def footer_year(footer: _Footer, year: int) -> tuple[Transition, ...]:
    """The footer's offset changes inside UTC year ``year``, in order
    (including one at 1 January 00:00 UTC if the per-year evaluation jumps
    there)."""
    first = days_from_civil(year, 1, 1) * MS_PER_DAY
    after_last = days_from_civil(year + 1, 1, 1) * MS_PER_DAY
    points = {first}
    points.update(s * 1000 for s in _start_end_s(footer, year) if first <= s * 1000 < after_last)
    changes = []
    for point in sorted(points):
        before, after = footer_offset(footer, point - 1000), footer_offset(footer, point)
        if before != after:
            changes.append(Transition(point, before, after))
    return tuple(changes)


@lru_cache(maxsize=64)
def _footer_changes(footer: _Footer) -> bool:
    """Whether the footer ever changes the offset (it is periodic in 400 years)."""
    return any(footer_year(footer, year) for year in range(2000, 2400))


class Timeline:
    """The UTC offset of one zone at every instant, and its changes."""

    __slots__ = ("_at", "_years", "explicit", "footer", "initial", "tail_from")

    def __init__(
        self,
        initial: int,
        explicit: tuple[Transition, ...],
        footer: _Footer | None,
        tail_from: int | None,
    ) -> None:
        self.initial = initial
        """The offset before the first transition (or always, with none)."""
        self.explicit = explicit
        """The listed changes, and where the footer takes over, if it differs."""
        self.footer = footer
        """The DST footer that rules from ``tail_from`` on, if any."""
        self.tail_from = tail_from
        """The footer rules from this instant on (None: always); its own
        changes count strictly after it (a change at it is the explicit join)."""
        self._at = tuple(t.at for t in explicit)
        self._years: dict[int, tuple[Transition, ...]] = {}

    def in_tail(self, ms: int) -> bool:
        return self.footer is not None and (self.tail_from is None or ms >= self.tail_from)

    def offset_at(self, ms: int) -> int:
        if self.footer is not None and self.in_tail(ms):
            return footer_offset(self.footer, ms)
        index = bisect_right(self._at, ms)
        return self.explicit[index - 1].after if index else self.initial

    def tail_year(self, year: int) -> tuple[Transition, ...]:
        """The footer's changes in one UTC year that are in force (after
        ``tail_from``); memoised."""
        changes = self._years.get(year)
        if changes is None:
            changes = () if self.footer is None else footer_year(self.footer, year)
            if self.tail_from is not None:
                changes = tuple(t for t in changes if t.at > self.tail_from)
            self._years[year] = changes
        return changes

    def around(self, ms: int) -> tuple[Transition | None, Transition | None, int]:
        """The last change at or before ``ms``, the first after it, and the
        offset at ``ms``: what :meth:`previous_change`, :meth:`next_change`
        and :meth:`offset_at` give, in one lookup for the common case."""
        if self.footer is not None and self.in_tail(ms):
            year = _utc_year(ms)
            previous = following = None
            for change in (
                *self.tail_year(year - 1),
                *self.tail_year(year),
                *self.tail_year(year + 1),
            ):
                if change.at <= ms:
                    previous = change
                elif following is None:
                    following = change
            if previous is None:
                previous = self.previous_change(ms)
            if following is None:
                following = self.next_change(ms)
        else:
            index = bisect_right(self._at, ms)
            previous = self.explicit[index - 1] if index else None
            following = self.explicit[index] if index < len(self.explicit) else self.next_change(ms)
        offset = previous.after if previous is not None else self.offset_at(ms)
        return previous, following, offset

    def next_change(self, ms: int) -> Transition | None:
        """The first change strictly after ``ms``."""
        index = bisect_right(self._at, ms)
        if index < len(self.explicit):
            return self.explicit[index]
        if self.footer is None or not _footer_changes(self.footer):
            return None
        year = _utc_year(ms if self.tail_from is None else max(ms, self.tail_from))
        while True:
            for change in self.tail_year(year):
                if change.at > ms:
                    return change
            year += 1

    def previous_change(self, ms: int) -> Transition | None:
        """The last change at or before ``ms``."""
        if self.footer is not None and self.in_tail(ms) and _footer_changes(self.footer):
            year = _utc_year(ms)
            floor = None if self.tail_from is None else _utc_year(self.tail_from)
            while floor is None or year >= floor:
                for change in reversed(self.tail_year(year)):
                    if change.at <= ms:
                        return change
                year -= 1
        index = bisect_right(self._at, ms)
        return self.explicit[index - 1] if index else None

    def changes(self, after: int, until: int) -> Iterator[Transition]:
        """The changes in ``(after, until]``, in order."""
        change = self.next_change(after)
        while change is not None and change.at <= until:
            yield change
            change = self.next_change(change.at)


def _read_tzif(data: bytes) -> tuple[list[int], list[int], list[tuple[int, int]], str]:
    """Transition instants (s), their type indices, the types (offset s,
    is_dst) and the footer, from the 64-bit part of a version 2+ TZif file."""
    magic, version, isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt = _HEADER.unpack_from(
        data, 0
    )
    if magic != b"TZif" or version == b"\x00":
        raise ValueError("not a version 2+ TZif file")
    offset = _HEADER.size + timecnt * 5 + typecnt * 6 + charcnt + leapcnt * 8 + isstdcnt + isutcnt
    _, _, isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt = _HEADER.unpack_from(data, offset)
    offset += _HEADER.size
    times = list(struct.unpack_from(f">{timecnt}q", data, offset))
    offset += timecnt * 8
    indices = list(data[offset : offset + timecnt])
    offset += timecnt
    types = []
    for _ in range(typecnt):
        utoff, is_dst, _abbr = _TYPE.unpack_from(data, offset)
        types.append((utoff, is_dst))
        offset += _TYPE.size
    offset += charcnt + leapcnt * 12 + isstdcnt + isutcnt
    footer = data[offset:].split(b"\n")[1].decode("ascii")
    return times, indices, types, footer


def timeline_from_tzif(data: bytes) -> Timeline:
    """The timeline ``ZoneInfo.from_file`` would follow for these bytes."""
    times, indices, types, footer_text = _read_tzif(data)
    offsets = [types[i][0] * 1000 for i in indices]
    standard = [off for off, is_dst in types if not is_dst]
    if standard:
        initial = standard[0] * 1000
    elif offsets:
        initial = offsets[0]
    else:
        initial = types[-1][0] * 1000
    footer = _parse_footer(footer_text)
    if footer is None:
        footer = offsets[-1] if offsets else types[-1][0] * 1000
    explicit: list[Transition] = []
    current = initial
    for at, offset in zip(times, offsets, strict=True):
        if offset != current:
            explicit.append(Transition(at * 1000, current, offset))
            current = offset
    if not times:
        if isinstance(footer, int):
            return Timeline(footer, (), None, None)
        return Timeline(initial, (), footer, None)
    # zoneinfo reads whole seconds: the footer rules from the second after the last change.
    following = times[-1] * 1000 + 1000
    tail_offset = footer if isinstance(footer, int) else footer_offset(footer, following)
    if tail_offset != current:
        explicit.append(Transition(following, current, tail_offset))
    if isinstance(footer, int):
        return Timeline(initial, tuple(explicit), None, None)
    return Timeline(initial, tuple(explicit), footer, following)


@lru_cache(maxsize=256)
def zone_timeline(key: str) -> Timeline:
    """The timeline of a zone key as :func:`~tickler.core.timing._zones.resolve_zone`
    gives it (canonical spelling)."""
    return timeline_from_tzif(tzif_bytes(key))
