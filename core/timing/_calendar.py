"""Calendar rules: a cron rule in an IANA zone, with an explicit DST policy.

For each local wall minute the cron rule matches:

* it occurs once: it fires at that instant;
* it occurs twice (the clock is set back): ``dst_overlap="first"`` (default)
  fires at the earlier instant only, ``"both"`` at both;
* it does not occur (the clock jumps forward): ``dst_gap="shift"`` (default)
  fires once at the first instant after the gap (once per gap, however many
  matched minutes fell into it), ``"skip"`` does not fire.

Two matches at the same instant are one occurrence. Instants are epoch
milliseconds (UTC); zone data is the pinned tzdata (:mod:`tickler.core.timing._offsets`).

How: the zone's timeline is a sequence of segments of constant offset; in a
segment, matched wall minutes map one-to-one to instants, so occurrences are
found segment by segment with :class:`~tickler.core.timing._cron.WallMinutes`, and
counted in closed form: the matched wall minutes between the two ends, plus a
correction per offset change in between (gap minutes removed, a shifted
occurrence added, repeated minutes added for ``both``). Offset changes of the
zone's TZ footer repeat every 400 years, so their corrections are summed per
400-year cycle: counting is bounded work whatever the span.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Final, Literal, NamedTuple, TypeAlias

import msgspec

from tickler.core._errors import Msg, ScheduleError, error
from tickler.core.timing._cron import CronFields, WallMinutes, parse_cron, wall_minutes
from tickler.core.timing._instant import (
    MAX_INSTANT_MS,
    MS_PER_DAY,
    civil_from_days,
    civil_time,
    days_from_civil,
)
from tickler.core.timing._offsets import Timeline, Transition, footer_year, zone_timeline
from tickler.core.timing._zones import resolve_zone

DstGap: TypeAlias = Literal["shift", "skip"]
DstOverlap: TypeAlias = Literal["first", "both"]
DST_GAPS: Final[tuple[DstGap, ...]] = ("shift", "skip")
DST_OVERLAPS: Final[tuple[DstOverlap, ...]] = ("first", "both")

_MS_PER_MINUTE: Final = 60_000
_CALENDAR_KEYS: Final = frozenset({"cron", "time_zone", "dst_gap", "dst_overlap"})
_REQUIRED_KEYS: Final = frozenset({"cron", "time_zone"})
# No zone changes its offset twice within two days (a test checks the pinned
# data), and no change exceeds a day: a repeated minute's first instant is
# never more than this before its second.
_EDGE_MS: Final = 2 * MS_PER_DAY
# Spans shorter than this count their offset changes one by one.
_DIRECT_YEARS: Final = 4


class CalendarMsg:
    """Why a ``calendar`` value was refused (``invalid_rule``; the zone
    errors are ``invalid_time_zone`` with the ``at`` selector's messages,
    :attr:`Msg.ZONE_STRING` and :attr:`Msg.ZONE`). Cron texts get
    :class:`tickler.core.timing._cron.CronMsg`'s messages."""

    KIND: Final = (
        "calendar must be an object with cron and time_zone, "
        'e.g. {"cron": "0 9 * * 1-5", "time_zone": "Europe/Berlin"}.'
    )
    KEYS: Final = (
        "calendar must contain cron and time_zone, and may contain dst_gap and "
        "dst_overlap; no other keys."
    )
    CRON_STRING: Final = 'calendar cron must be a string, e.g. "0 9 * * 1-5".'
    DST_GAP: Final = 'calendar dst_gap must be "shift" (the default) or "skip".'
    DST_OVERLAP: Final = 'calendar dst_overlap must be "first" (the default) or "both".'


class CalendarRule(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A validated ``calendar`` selector. ``time_zone`` is the zone's
    canonical spelling; ``fields`` is the parsed ``cron``."""

    cron: str
    time_zone: str
    dst_gap: DstGap
    dst_overlap: DstOverlap
    fields: CronFields

    def as_json(self) -> dict[str, str]:
        """The selector as it would be sent back: canonical zone, both
        policies explicit (what a log or a listing should keep)."""
        return {
            "cron": self.cron,
            "time_zone": self.time_zone,
            "dst_gap": self.dst_gap,
            "dst_overlap": self.dst_overlap,
        }


class CatchUp(NamedTuple):
    """What a wake at ``now`` owes a calendar reminder whose next occurrence
    was ``target``: one delivery for ``occurrence`` (the latest due), the
    number of earlier due occurrences it stands for (``skipped``), and the
    next occurrence after ``now`` (None past year 9999)."""

    occurrence: int
    skipped: int
    next: int | None


def parse_calendar(value: object) -> CalendarRule | ScheduleError:
    """The ``calendar`` selector of ``schedule_create``, checked in this
    order: object, keys, cron, time_zone, dst_gap, dst_overlap."""
    if not isinstance(value, Mapping):
        return error("invalid_rule", CalendarMsg.KIND)
    keys = value.keys()
    if not keys >= _REQUIRED_KEYS or not keys <= _CALENDAR_KEYS:
        return error("invalid_rule", CalendarMsg.KEYS)
    cron = value["cron"]
    if not isinstance(cron, str):
        return error("invalid_rule", CalendarMsg.CRON_STRING)
    fields = parse_cron(cron)
    if isinstance(fields, str):
        return error("invalid_rule", fields)
    zone_name = value["time_zone"]
    if not isinstance(zone_name, str):
        return error("invalid_time_zone", Msg.ZONE_STRING)
    zone = resolve_zone(zone_name)
    if zone is None:
        return error("invalid_time_zone", Msg.ZONE)
    gap = value.get("dst_gap", "shift")
    if gap not in DST_GAPS:
        return error("invalid_rule", CalendarMsg.DST_GAP)
    overlap = value.get("dst_overlap", "first")
    if overlap not in DST_OVERLAPS:
        return error("invalid_rule", CalendarMsg.DST_OVERLAP)
    return CalendarRule(cron, zone.key, gap, overlap, fields)


class _Engine:
    """One rule's matched wall minutes on one zone's timeline, in ms."""

    __slots__ = ("_cycle", "both", "minutes", "shift", "timeline")

    def __init__(self, rule: CalendarRule) -> None:
        self.minutes: WallMinutes = wall_minutes(rule.fields)
        self.timeline: Timeline = zone_timeline(rule.time_zone)
        self.shift = rule.dst_gap == "shift"
        self.both = rule.dst_overlap == "both"
        self._cycle: tuple[int, ...] | None = None

    def below(self, wall: int) -> int:
        """Matched wall minutes strictly before wall time ``wall`` (ms)."""
        return self.minutes.before(-(-wall // _MS_PER_MINUTE))

    def _matched(self, wall: int) -> bool:
        return wall % _MS_PER_MINUTE == 0 and self.minutes.matches(wall // _MS_PER_MINUTE)

    def floor(self, start: Transition | None) -> int | None:
        """The lowest wall time (ms) whose matches the segment beginning at
        ``start`` owns: with ``first``, minutes repeated after a set-back
        belong to the segment before."""
        if start is None:
            return None
        if not self.both and start.before > start.after:
            return start.at + start.before
        return start.at + start.after

    def shifted(self, start: Transition | None) -> bool:
        """Whether a gap-shifted occurrence fires where ``start`` begins."""
        return (
            start is not None
            and self.shift
            and start.after > start.before
            and self.below(start.at + start.after) > self.below(start.at + start.before)
        )

    def correction(self, change: Transition, until: int | None) -> int:
        """What an offset change inside a counted span adds to the matched
        wall minutes between the span's ends (``until`` None: the span ends
        more than a day after the change)."""
        low = self.below(change.at + change.before)
        high = self.below(change.at + change.after)
        if change.after > change.before:  # a gap: its minutes do not occur
            bonus = self.shift and high > low and not self._matched(change.at + change.after)
            return low - high + bonus
        if self.both:  # a set-back: its minutes occur again
            return low - high
        if until is None:
            return 0
        # ``first``: repeats are not occurrences; after the change the span
        # counts from the first minute not seen before it.
        return low - self.below(min(change.at + change.before, until + change.after + 1))

    def next_after(self, after: int) -> int | None:
        """Segment by segment from ``after``; the last search for a matched
        wall minute is reused while its answer still holds, so crossing a
        segment without a match costs no search."""
        timeline = self.timeline
        start, end, offset = timeline.around(after)
        searched_from = found = 0
        searched = False

        def next_wall(low: int) -> int:
            """The first matched wall minute (ms) at or after ``low``."""
            nonlocal searched_from, found, searched
            if not (searched and searched_from <= low <= found):
                minute = self.minutes.next_minute(-(-low // _MS_PER_MINUTE))
                searched_from, found, searched = low, minute * _MS_PER_MINUTE, True
            return found

        while True:
            if (
                start is not None
                and start.at > after
                and self.shift
                and start.after > start.before
                and next_wall(start.at + start.before) < start.at + start.after
            ):
                return start.at if start.at <= MAX_INSTANT_MS else None
            low = after + 1 if start is None else max(after + 1, start.at)
            low += offset
            floor = self.floor(start)
            if floor is not None:
                low = max(low, floor)
            instant = next_wall(low) - offset
            if end is None or instant < end.at:
                return instant if instant <= MAX_INSTANT_MS else None
            if end.at > MAX_INSTANT_MS:
                return None
            start, offset = end, end.after
            end = timeline.next_change(end.at)

    def latest_at_or_before(self, at: int, not_before: int) -> int | None:
        timeline = self.timeline
        start, end, offset = timeline.around(at)
        while True:
            high = (at if end is None else min(at, end.at - 1)) + offset
            wall = self.minutes.previous_minute(high // _MS_PER_MINUTE) * _MS_PER_MINUTE
            floor = self.floor(start)
            if floor is None or wall >= floor:
                instant = wall - offset
                return instant if instant >= not_before else None
            assert start is not None  # a floor needs a start
            if self.shifted(start):
                return start.at if start.at >= not_before else None
            if start.at <= not_before:
                return None
            end, offset = start, start.before
            start = timeline.previous_change(start.at - 1)

    def count(self, after: int, until: int) -> int:
        """Occurrences in ``(after, until]``."""
        if until <= after:
            return 0
        timeline = self.timeline
        previous, following, offset = timeline.around(after)
        low = after + offset + 1
        floor = self.floor(previous)
        if floor is not None:
            low = max(low, floor)
        total = self.below(until + timeline.around(until)[2] + 1) - self.below(low)
        if following is None or following.at > until:
            return max(0, total)
        total += self._corrections(after, until)
        for change in timeline.changes(max(after, until - _EDGE_MS), until):
            total += self.correction(change, until) - self.correction(change, None)
        return total

    def _sum(self, after: int, until: int) -> int:
        return sum(self.correction(c, None) for c in self.timeline.changes(after, until))

    def _corrections(self, after: int, until: int) -> int:
        """``correction(change, None)`` summed over the changes in
        ``(after, until]``: one by one for the listed changes and the
        footer's first and last years, per 400-year cycle in between."""
        timeline = self.timeline
        if timeline.footer is None:
            return self._sum(after, until)
        head_year = _utc_year(after) + 1
        if timeline.tail_from is not None:
            head_year = max(head_year, _utc_year(timeline.tail_from) + 1)
        last_year = _utc_year(until)
        if last_year - head_year < _DIRECT_YEARS:
            return self._sum(after, until)
        head_end, last_start = _year_start(head_year), _year_start(last_year)
        total = self._sum(after, head_end - 1) + self._sum(last_start - 1, until)
        return total + self._years(last_year) - self._years(head_year)

    def _years(self, year: int) -> int:
        """The footer's corrections summed over UTC years 0 to ``year - 1``
        (negative before year 0), from one 400-year table."""
        if self._cycle is None:
            footer = self.timeline.footer
            assert footer is not None
            table = [0]
            for y in range(400):
                changes = footer_year(footer, y)
                table.append(table[-1] + sum(self.correction(c, None) for c in changes))
            self._cycle = tuple(table)
        cycles, rest = divmod(year, 400)
        return cycles * self._cycle[400] + self._cycle[rest]


def _year_start(year: int) -> int:
    return days_from_civil(year, 1, 1) * MS_PER_DAY


def _utc_year(ms: int) -> int:
    return civil_from_days(ms // MS_PER_DAY)[0]


@lru_cache(maxsize=512)
def _engine(rule: CalendarRule) -> _Engine:
    return _Engine(rule)


def next_occurrence(rule: CalendarRule, after_ms: int) -> int | None:
    """The first occurrence strictly after ``after_ms``; None when there is
    none up to 9999-12-31T23:59:59.999Z.

    Work: one step per offset change crossed before the occurrence (for a
    rule that matches every year, a few steps).
    """
    return _engine(rule).next_after(after_ms)


def next_occurrences(rule: CalendarRule, after_ms: int, count: int) -> tuple[int, ...]:
    """Up to ``count`` occurrences after ``after_ms``, in order (previews)."""
    out: list[int] = []
    engine = _engine(rule)
    while len(out) < count:
        found = engine.next_after(out[-1] if out else after_ms)
        if found is None:
            break
        out.append(found)
    return tuple(out)


def count_occurrences(rule: CalendarRule, after_ms: int, until_ms: int) -> int:
    """The number of occurrences in ``(after_ms, until_ms]``, without
    enumerating them.

    Work: O(1) matched-minute counts plus one correction per offset change
    of the zone's explicit list inside the span (at most a few hundred, data
    bound) and per change in the first and last few years of the footer;
    the whole years between come from a 400-year table built once per rule
    (800 corrections). A span of a day or of eight thousand years costs about
    the same.
    """
    return _engine(rule).count(after_ms, until_ms)


def latest_occurrence_at_or_before(
    rule: CalendarRule, at_ms: int, not_before_ms: int
) -> int | None:
    """The latest occurrence in ``[not_before_ms, at_ms]``, or None.

    Work: one count, then one step per offset change crossed back from
    ``at_ms`` to the occurrence: bounded by the rule's sparsity, not by the
    span.
    """
    engine = _engine(rule)
    if at_ms < not_before_ms or engine.count(not_before_ms - 1, at_ms) == 0:
        return None
    return engine.latest_at_or_before(at_ms, not_before_ms)


def catch_up(rule: CalendarRule, target_ms: int, now_ms: int) -> CatchUp | None:
    """Latest-only catch-up at a wake: ``target_ms`` is the occurrence the
    reminder waited for. None when no occurrence in ``[target_ms, now_ms]``
    is due (then wait for :func:`next_occurrence` of ``now_ms``)."""
    occurrence = latest_occurrence_at_or_before(rule, now_ms, target_ms)
    if occurrence is None:
        return None
    skipped = count_occurrences(rule, target_ms - 1, occurrence - 1)
    return CatchUp(occurrence, skipped, next_occurrence(rule, now_ms))


def local_time_text(time_zone: str, instant_ms: int) -> str:
    """The wall time of an instant in a zone (a canonical key, as in
    :attr:`CalendarRule.time_zone`) with its offset, e.g.
    ``2026-12-07T09:00:00+01:00`` (milliseconds only when not zero; offset
    seconds only for old local mean times)."""
    offset = zone_timeline(time_zone).offset_at(instant_ms)
    wall = civil_time(instant_ms + offset)
    text = (
        f"{wall.year:04d}-{wall.month:02d}-{wall.day:02d}"
        f"T{wall.hour:02d}:{wall.minute:02d}:{wall.second:02d}"
    )
    if wall.millisecond:
        text += f".{wall.millisecond:03d}"
    sign = "-" if offset < 0 else "+"
    hours, rest = divmod(abs(offset) // 1000, 3600)
    minutes, seconds = divmod(rest, 60)
    text += f"{sign}{hours:02d}:{minutes:02d}"
    return text + (f":{seconds:02d}" if seconds else "")
