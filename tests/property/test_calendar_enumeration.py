"""The calendar engine against an independent enumeration, near real DST changes.

The oracle shares no code with the engine: it finds each zone's offset
changes by sampling ``zoneinfo`` (on the pinned tzdata) and bisecting, walks
every UTC minute in a window around a change, reads each minute's local wall
time with ``datetime.fromtimestamp``, matches wall minutes against value sets
that the cron strategy built alongside the cron text (and, for ``L``, ``W``
and ``#``, against their definitions read off the dates of the month), and
applies the DST policy from its definition:

* a matched wall minute read at one instant fires there;
* read at several instants: ``first`` fires at the earliest, ``both`` at each;
* read at none (a gap): ``shift`` fires at the first instant whose wall time
  is later than it, ``skip`` nowhere;
* equal instants are one occurrence.

Zones: more than 30, with southern-hemisphere rules, Lord Howe's 30-minute
change, Chatham's 45-minute offsets, changes at midnight and at 24:00, Apia
and Kiritimati skipping a whole day, Casablanca's and Dublin's negative DST,
Troll's two-hour change.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import cache
from typing import Final

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from tickler.core.timing._calendar import (
    CalendarRule,
    catch_up,
    count_occurrences,
    latest_occurrence_at_or_before,
    next_occurrence,
    parse_calendar,
)
from tickler.testing.strategies import load_zone

from .oracles import fewer_examples

MINUTE: Final = 60_000
HOUR: Final = 60 * MINUTE
DAY: Final = 24 * HOUR
NAIVE_EPOCH: Final = datetime(1970, 1, 1)  # noqa: DTZ001 - wall clock readings are naive
EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)

ZONES: Final = (
    "Europe/Berlin",
    "Europe/London",
    "Europe/Dublin",
    "Europe/Moscow",
    "Europe/Chisinau",
    "America/New_York",
    "America/Los_Angeles",
    "America/Havana",
    "America/Santiago",
    "America/Asuncion",
    "America/Sao_Paulo",
    "America/Nuuk",
    "America/Scoresbysund",
    "America/St_Johns",
    "America/Caracas",
    "Atlantic/Azores",
    "Africa/Casablanca",
    "Africa/Cairo",
    "Asia/Beirut",
    "Asia/Tehran",
    "Asia/Jerusalem",
    "Asia/Gaza",
    "Asia/Amman",
    "Asia/Pyongyang",
    "Australia/Sydney",
    "Australia/Adelaide",
    "Australia/Hobart",
    "Australia/Lord_Howe",
    "Antarctica/Troll",
    "Pacific/Auckland",
    "Pacific/Chatham",
    "Pacific/Norfolk",
    "Pacific/Fiji",
    "Pacific/Easter",
    "Pacific/Apia",
    "Pacific/Kiritimati",
    "Pacific/Tongatapu",
)
SCAN_YEARS: Final = ((1994, 1996), (2008, 2031), (2098, 2100))
MARGIN: Final = 3 * HOUR  # more than the largest set-back of the zones (checked)
EXTRA: Final = 12 * HOUR  # also compare the occurrences just after a window


def _offset_ms(zone_key: str, ms: int) -> int:
    moment = datetime.fromtimestamp(ms // 1000, tz=load_zone(zone_key))
    offset = moment.utcoffset()
    assert offset is not None
    return offset // timedelta(milliseconds=1)


def _wall_minute(zone_key: str, ms: int) -> int:
    """The local wall clock at an instant, as minutes since 1970-01-01 00:00."""
    wall = datetime.fromtimestamp(ms // 1000, tz=load_zone(zone_key)).replace(tzinfo=None)
    return (wall - NAIVE_EPOCH) // timedelta(minutes=1)


@cache
def changes(zone_key: str) -> tuple[int, ...]:
    """Instants (ms) where the zone's offset changes, found by sampling every
    other day (no zone changes twice within two days) and bisecting to the
    second."""
    found: list[int] = []
    for first_year, last_year in SCAN_YEARS:
        start = (datetime(first_year, 1, 1, tzinfo=UTC) - EPOCH) // timedelta(milliseconds=1)
        stop = (datetime(last_year, 1, 1, tzinfo=UTC) - EPOCH) // timedelta(milliseconds=1)
        previous = _offset_ms(zone_key, start)
        for sample in range(start + 2 * DAY, stop, 2 * DAY):
            current = _offset_ms(zone_key, sample)
            if current != previous:
                low, high = sample - 2 * DAY, sample  # offset(low) == previous != offset(high)
                while high - low > 1000:
                    middle = (low + high) // 2 // 1000 * 1000
                    if _offset_ms(zone_key, middle) == previous:
                        low = middle
                    else:
                        high = middle
                found.append(high)
            previous = current
    return tuple(found)


def test_every_zone_has_changes_to_test() -> None:
    assert len(ZONES) >= 30
    missing = [zone for zone in ZONES if not changes(zone)]
    assert not missing
    apia = changes("Pacific/Apia")
    skip_day = (datetime(2011, 12, 30, 10, tzinfo=UTC) - EPOCH) // timedelta(milliseconds=1)
    assert skip_day in apia  # 2011-12-29T24:00-10:00 became 2011-12-31T00:00+14:00
    assert _offset_ms("Pacific/Apia", skip_day) - _offset_ms("Pacific/Apia", skip_day - 1) == DAY
    set_backs = [
        _offset_ms(zone, at - 1000) - _offset_ms(zone, at) for zone in ZONES for at in changes(zone)
    ]
    assert max(set_backs) < MARGIN


# --- cron rules, with the value sets each field means --------------------------


Special = tuple[str, int, int]
"""A day field's item that depends on the month: ``("L", 0, 0)``, ``("LW", 0,
0)``, ``("W", n, 0)``, ``("wL", w, 0)`` or ``("#", w, k)`` (w 0-7 as written)."""


@dataclass(frozen=True)
class Field:
    text: str
    values: frozenset[int]
    specials: frozenset[Special] = frozenset()


MONTHS: Final = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
WEEKDAYS: Final = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")


def _name(value: int, low: int, names: tuple[str, ...] | None, style: int) -> str:
    if names is None or style == 0 or value - low >= len(names):
        return str(value)
    name = names[value - low]
    return name.upper() if style == 2 else name


@st.composite
def cron_field(draw: st.DrawFn, low: int, high: int, names: tuple[str, ...] | None = None) -> Field:
    kind = draw(st.sampled_from(("star", "step", "list", "list")))
    if kind == "star":
        return Field("*", frozenset(range(low, high + 1)))
    if kind == "step":
        step = draw(st.integers(1, high - low + 1))
        return Field(f"*/{step}", frozenset(range(low, high + 1, step)))
    texts: list[str] = []
    values: set[int] = set()
    for _ in range(draw(st.integers(1, 3))):
        first = draw(st.integers(low, high))
        style = draw(st.integers(0, 2))
        if draw(st.booleans()):
            texts.append(_name(first, low, names, style))
            values.add(first)
            continue
        last = draw(st.integers(first, min(high, first + 12)))
        every = draw(st.one_of(st.none(), st.integers(1, 5)))
        text = f"{_name(first, low, names, style)}-{_name(last, low, names, style)}"
        texts.append(text if every is None else f"{text}/{every}")
        values.update(range(first, last + 1, every or 1))
    return Field(",".join(texts), frozenset(values))


@cache
def month_of(year: int, month: int) -> tuple[date, ...]:
    """Every date of a month."""
    first = date(year, month, 1)
    return tuple(
        first + timedelta(days=n) for n in range(31) if (first + timedelta(days=n)).month == month
    )


def is_workday(day: date) -> bool:
    return day.isoweekday() <= 5


def same_weekday(day: date, weekday: int) -> bool:
    """``weekday`` as written: 0 and 7 are Sunday."""
    return day.isoweekday() % 7 == weekday % 7


@cache
def special_day(special: Special, year: int, month: int) -> date | None:
    """The one date of a month a special item matches, from its definition
    over the dates of the month; None when the month has none."""
    kind, value, nth = special
    dates = month_of(year, month)
    if kind == "L":  # the last day
        return dates[-1]
    if kind == "LW":  # the last Monday-to-Friday
        return max(d for d in dates if is_workday(d))
    if kind == "W":  # the Monday-to-Friday of the month nearest the nth; none without an nth
        if value > len(dates):
            return None
        return min((d for d in dates if is_workday(d)), key=lambda d: abs(d.day - value))
    same = [d for d in dates if same_weekday(d, value)]
    if kind == "wL":  # the last of that weekday
        return same[-1]
    assert kind == "#"  # the nth of that weekday
    return same[nth - 1] if len(same) >= nth else None


def special_matches(special: Special, day: date) -> bool:
    return special_day(special, day.year, day.month) == day


@dataclass(frozen=True)
class Cron:
    text: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]  # 0-7 as written; 7 is Sunday too
    either_day: bool  # both day fields restricted: Vixie's OR
    day_specials: frozenset[Special] = frozenset()
    weekday_specials: frozenset[Special] = frozenset()

    def matches(self, wall_minute: int) -> bool:
        wall = NAIVE_EPOCH + timedelta(minutes=wall_minute)
        if wall.minute not in self.minutes or wall.hour not in self.hours:
            return False
        return self.matches_day(wall.date())

    def matches_day(self, day: date) -> bool:
        return _matches_day(self, day)


@cache
def _matches_day(cron: Cron, day: date) -> bool:
    if day.month not in cron.months:
        return False
    by_weekday = any(same_weekday(day, w) for w in cron.weekdays) or any(
        special_matches(s, day) for s in cron.weekday_specials
    )
    by_day = day.day in cron.days or any(special_matches(s, day) for s in cron.day_specials)
    return by_day or by_weekday if cron.either_day else by_day and by_weekday


ALL_DAYS: Final = frozenset(range(1, 32))
MACROS: Final = {
    "@hourly": Cron("@hourly", frozenset({0}), frozenset(range(24)), ALL_DAYS,
                    frozenset(range(1, 13)), frozenset(range(8)), either_day=False),
    "@daily": Cron("@daily", frozenset({0}), frozenset({0}), ALL_DAYS,
                   frozenset(range(1, 13)), frozenset(range(8)), either_day=False),
    "@midnight": Cron("@Midnight", frozenset({0}), frozenset({0}), ALL_DAYS,
                      frozenset(range(1, 13)), frozenset(range(8)), either_day=False),
    "@annually": Cron("@annually", frozenset({0}), frozenset({0}), frozenset({1}),
                      frozenset({1}), frozenset(range(8)), either_day=False),
}  # fmt: skip
DAY_SPECIALS: Final = (
    ("L", 0, 0), ("LW", 0, 0), *(("W", n, 0) for n in range(1, 32))
)  # fmt: skip
WEEKDAY_SPECIALS: Final = (
    *(("wL", w, 0) for w in range(8)), *(("#", w, k) for w in range(8) for k in range(1, 6))
)  # fmt: skip


SPECIAL_SPELLINGS: Final = {
    **{s: s[0] for s in DAY_SPECIALS if s[0] in ("L", "LW")},
    **{s: f"{s[1]}W" for s in DAY_SPECIALS if s[0] == "W"},
    **{s: f"{s[1]}L" for s in WEEKDAY_SPECIALS if s[0] == "wL"},
    **{s: f"{s[1]}#{s[2]}" for s in WEEKDAY_SPECIALS if s[0] == "#"},
}


@st.composite
def special_text(draw: st.DrawFn, special: Special) -> str:
    """One of the spellings of a special item."""
    kind, value, nth = special
    if kind in ("L", "LW"):
        return draw(st.sampled_from((kind, kind.lower())))
    if kind == "W":
        return draw(st.sampled_from((f"{value}W", f"W{value}", f"{value}w", f"0{value}W")))
    weekday = _name(value, 0, WEEKDAYS, draw(st.integers(0, 2)))
    if kind == "wL":
        return draw(st.sampled_from((f"{weekday}L", f"L{weekday}", f"{weekday}l")))
    return f"{weekday}#{nth}"


@st.composite
def _with_specials(
    draw: st.DrawFn,
    field: st.SearchStrategy[Field],
    choices: tuple[Special, ...],
    day: date | None,
) -> Field:
    """A field with special items added, often one that matches ``day``:
    alone, or listed with the field's own items."""
    drawn = draw(field)
    matching = [s for s in choices if day is not None and special_matches(s, day)]
    specials = draw(st.lists(st.sampled_from(choices), min_size=0, max_size=2))
    if matching and draw(st.integers(0, 3)) > 0:
        specials.append(draw(st.sampled_from(matching)))
    if not specials:
        specials.append(draw(st.sampled_from(choices)))
    texts = [draw(special_text(s)) for s in specials]
    if drawn.text.startswith("*") or draw(st.booleans()):  # the specials alone
        return Field(",".join(texts), frozenset(), frozenset(specials))
    items = [*drawn.text.split(","), *texts]
    order = draw(st.permutations(range(len(items))))
    text = ",".join(items[i] for i in order)
    return Field(text, drawn.values, frozenset(specials))


@st.composite
def _with(draw: st.DrawFn, field: st.SearchStrategy[Field], value: int | None) -> Field:
    """A random field, or one that also lists ``value``."""
    drawn = draw(field)
    if value is None or draw(st.booleans()):
        return drawn
    return Field(f"{drawn.text},{value}", drawn.values | {value})


@st.composite
def crons(
    draw: st.DrawFn,
    near: tuple[int, ...] = (0, 1, 2, 3, 4),
    day: date | None = None,
    special: bool = False,
) -> Cron:
    """Cron rules that often match ``near`` hours on ``day`` (the wall hours
    a change skips or repeats), where the policies matter; with ``special``,
    always with an ``L``, ``W`` or ``#`` item in a day field."""
    if not special and draw(st.integers(0, 39)) == 0:
        return MACROS[draw(st.sampled_from(sorted(MACROS)))]
    minute = draw(cron_field(0, 59))
    near_hours = st.sets(st.sampled_from(near), min_size=1, max_size=2).map(_hour_list)
    hour = draw(st.one_of(near_hours, near_hours, near_hours, _with(cron_field(0, 23), near[0])))
    star_days = st.just(Field("*", ALL_DAYS))
    plain_days = _with(cron_field(1, 31), None if day is None else day.day)
    special_days = _with_specials(st.one_of(star_days, plain_days), DAY_SPECIALS, day)
    day_field = draw(st.one_of(star_days, star_days, plain_days, special_days))
    star_months = st.just(Field("*", frozenset(range(1, 13))))
    month = draw(
        st.one_of(
            star_months,
            star_months,
            _with(cron_field(1, 12, MONTHS), None if day is None else day.month),
        )
    )
    star_weekdays = st.just(Field("*", frozenset(range(8))))
    weekday_of_day = None if day is None else day.isoweekday() % 7
    plain_weekdays = _with(cron_field(0, 7, WEEKDAYS), weekday_of_day)
    special_weekdays = _with_specials(
        st.one_of(star_weekdays, plain_weekdays), WEEKDAY_SPECIALS, day
    )
    weekday = draw(st.one_of(star_weekdays, star_weekdays, plain_weekdays, special_weekdays))
    if special and not day_field.specials and not weekday.specials:
        if draw(st.booleans()):
            day_field = draw(_with_specials(st.just(day_field), DAY_SPECIALS, day))
        else:
            weekday = draw(_with_specials(st.just(weekday), WEEKDAY_SPECIALS, day))
    spaces = draw(st.sampled_from((" ", "  ", "\t")))
    fields = (minute, hour, day_field, month, weekday)
    either = not day_field.text.startswith("*") and not weekday.text.startswith("*")
    return Cron(
        spaces.join(f.text for f in fields),
        minute.values,
        hour.values,
        day_field.values,
        month.values,
        weekday.values,
        either,
        day_field.specials,
        weekday.specials,
    )


def _hour_list(hours: set[int]) -> Field:
    """Early hours, where most zones change their clocks."""
    return Field(",".join(str(h) for h in sorted(hours)), frozenset(hours))


def could_ever_match(cron: Cron) -> bool:
    """Whether any day of 2000-2027 matches: those years hold every kind of
    month (each month of a leap or common year, starting on each weekday)."""
    first = date(2000, 1, 1)
    return any(cron.matches_day(first + timedelta(days=n)) for n in range(366 * 28 - 7))


# --- the oracle ----------------------------------------------------------------


def enumerate_occurrences(
    cron: Cron, zone_key: str, gap: str, overlap: str, low: int, high: int
) -> list[int]:
    """Every occurrence in ``(low, high]``, walking each UTC minute from a
    margin before to a margin after (every instant of a wall minute read in
    the window is within it)."""
    first = (low - MARGIN) // MINUTE * MINUTE
    instants = list(range(first, high + MARGIN, MINUTE))
    walls = [_wall_minute(zone_key, u) for u in instants]
    read_at: defaultdict[int, list[int]] = defaultdict(list)
    for u, wall in zip(instants, walls, strict=True):
        read_at[wall].append(u)
    highest_so_far: list[int] = []
    for wall in walls:
        highest_so_far.append(max(wall, highest_so_far[-1]) if highest_so_far else wall)
    found: set[int] = set()
    for wall in range(min(walls), max(walls) + 1):
        if not cron.matches(wall):
            continue
        seen = read_at.get(wall)
        if seen:
            found.update(seen if overlap == "both" else [min(seen)])
        elif gap == "shift":
            found.add(instants[bisect_right(highest_so_far, wall)])
    return sorted(u for u in found if low < u <= high)


# --- the properties --------------------------------------------------------------

_ACTIVE = settings.default
assert _ACTIVE is not None
MORE: Final = settings(max_examples=2 * _ACTIVE.max_examples)
POLICIES: Final = st.tuples(st.sampled_from(("shift", "skip")), st.sampled_from(("first", "both")))


@dataclass(frozen=True)
class Case:
    cron: Cron
    zone_key: str
    low: int
    high: int
    gap: str
    overlap: str


@st.composite
def cases(draw: st.DrawFn, special: bool = False) -> Case:
    """A window around a real change, and a rule that often matches the
    wall hours on either side of it (with ``special``, a rule with ``L``,
    ``W`` or ``#``)."""
    zone_key = draw(st.sampled_from(ZONES))
    change = draw(st.sampled_from(changes(zone_key)))
    before, after = _wall_minute(zone_key, change - MINUTE) + 1, _wall_minute(zone_key, change)
    first, last = min(before, after), max(before, after)
    near = tuple(sorted({wall // 60 % 24 for wall in (*range(first, last, 60), last - 1, last)}))
    day = (NAIVE_EPOCH + timedelta(minutes=first)).date()
    low = change - draw(st.integers(0, 16 * HOUR))
    high = change + draw(st.integers(0, 16 * HOUR))
    gap, overlap = draw(POLICIES)
    return Case(draw(crons(near, day, special)), zone_key, low, high, gap, overlap)


def _rule(cron: Cron, zone_key: str, gap: str, overlap: str) -> CalendarRule:
    rule = parse_calendar(
        {"cron": cron.text, "time_zone": zone_key, "dst_gap": gap, "dst_overlap": overlap}
    )
    if not isinstance(rule, CalendarRule):
        assert rule.code == "invalid_rule"
        assert not could_ever_match(cron)
        assume(False)
    assert isinstance(rule, CalendarRule)
    return rule


def check_against_the_enumeration(case: Case) -> None:
    """Next occurrences, the count and the latest occurrence of a window."""
    rule = _rule(case.cron, case.zone_key, case.gap, case.overlap)
    low, high = case.low, case.high
    expected = enumerate_occurrences(
        case.cron, case.zone_key, case.gap, case.overlap, low, high + EXTRA
    )
    found: list[int] = []
    cursor = next_occurrence(rule, low)
    while cursor is not None and cursor <= high + EXTRA:
        found.append(cursor)
        cursor = next_occurrence(rule, cursor)
    assert found == expected
    inside = [u for u in expected if u <= high]
    assert count_occurrences(rule, low, high) == len(inside)
    latest = latest_occurrence_at_or_before(rule, high, low + 1)
    assert latest == (inside[-1] if inside else None)


@MORE
@given(case=cases())
def test_the_engine_finds_exactly_the_enumerated_occurrences(case: Case) -> None:
    check_against_the_enumeration(case)


@MORE
@given(case=cases(special=True))
def test_l_w_and_hash_find_exactly_the_enumerated_occurrences(case: Case) -> None:
    """The month-dependent forms, near real changes: clocks change on the
    last Sunday (``0L``), the second Sunday (``0#2``), ..."""
    check_against_the_enumeration(case)


@MORE
@given(case=cases(), cut=st.integers(0, 32 * HOUR))
def test_counts_and_catch_up_match_the_enumeration(case: Case, cut: int) -> None:
    check_counts_and_catch_up(case, cut)


@given(case=cases(special=True), cut=st.integers(0, 32 * HOUR))
def test_counts_and_catch_up_of_l_w_and_hash_match_the_enumeration(case: Case, cut: int) -> None:
    check_counts_and_catch_up(case, cut)


def check_counts_and_catch_up(case: Case, cut: int) -> None:
    """A window's count split anywhere, and the latest-only catch-up over it."""
    rule = _rule(case.cron, case.zone_key, case.gap, case.overlap)
    low, high = case.low, case.high
    expected = enumerate_occurrences(
        case.cron, case.zone_key, case.gap, case.overlap, low, high + EXTRA
    )
    inside = [u for u in expected if u <= high]
    middle = low + cut % max(1, high - low)
    assert count_occurrences(rule, low, middle) + count_occurrences(rule, middle, high) == len(
        inside
    )
    if not inside:
        assert catch_up(rule, low + 1, high) is None
        return
    after_high = [u for u in expected if u > high]
    result = catch_up(rule, inside[0], high)
    assert result is not None
    assert result.occurrence == inside[-1]
    assert result.skipped == len(inside) - 1
    if after_high:
        assert result.next == after_high[0]


@fewer_examples(4)
@given(
    cron=crons(),
    zone_key=st.sampled_from(ZONES),
    policy=POLICIES,
    start=st.integers(
        (datetime(1990, 1, 1, tzinfo=UTC) - EPOCH) // timedelta(milliseconds=1),
        (datetime(2200, 1, 1, tzinfo=UTC) - EPOCH) // timedelta(milliseconds=1),
    ),
    years=st.integers(4, 1500),
)
def test_a_long_span_counts_what_its_short_pieces_count(
    cron: Cron, zone_key: str, policy: tuple[str, str], start: int, years: int
) -> None:
    """Long spans take the 400-year shortcut; pieces under four years are
    counted change by change, as the enumeration checked above."""
    gap, overlap = policy
    rule = _rule(cron, zone_key, gap, overlap)
    piece = 3 * 365 * DAY + 7 * HOUR + 13 * MINUTE + 17
    end = start + years * 365 * DAY
    pieces = range(start, end, piece)
    total = sum(count_occurrences(rule, a, min(a + piece, end)) for a in pieces)
    assert count_occurrences(rule, start, end) == total


def _utc_next(cron: Cron, after: int) -> int:
    """The first matched minute after ``after`` in UTC: the rest of its day
    minute by minute, then day by day."""
    minute = after // MINUTE + 1
    day_end = (minute // 1440 + 1) * 1440
    for candidate in range(minute, day_end):
        if cron.matches(candidate):
            return candidate * MINUTE
    day = (NAIVE_EPOCH + timedelta(minutes=day_end)).date()
    while not cron.matches_day(day):
        day += timedelta(days=1)
    first = datetime.combine(day, datetime.min.time()) - NAIVE_EPOCH
    return first // timedelta(milliseconds=1) + (min(cron.hours) * 60 + min(cron.minutes)) * MINUTE


def _utc_latest(cron: Cron, at: int) -> int:
    """The last matched minute at or before ``at`` in UTC."""
    minute = at // MINUTE
    day_start = minute // 1440 * 1440
    for candidate in range(minute, day_start - 1, -1):
        if cron.matches(candidate):
            return candidate * MINUTE
    day = (NAIVE_EPOCH + timedelta(minutes=day_start)).date() - timedelta(days=1)
    while not cron.matches_day(day):
        day -= timedelta(days=1)
    first = datetime.combine(day, datetime.min.time()) - NAIVE_EPOCH
    return first // timedelta(milliseconds=1) + (max(cron.hours) * 60 + max(cron.minutes)) * MINUTE


YEAR_1900: Final = (datetime(1900, 1, 1, tzinfo=UTC) - EPOCH) // timedelta(milliseconds=1)
YEAR_2200: Final = (datetime(2200, 1, 1, tzinfo=UTC) - EPOCH) // timedelta(milliseconds=1)


@given(cron=crons(), instant=st.integers(YEAR_1900, YEAR_2200))
def test_in_utc_the_nearest_matched_minutes_however_far(cron: Cron, instant: int) -> None:
    """Rare rules (29 February, a weekday on a given day) search months and
    years ahead and back; checked day by day."""
    rule = _rule(cron, "UTC", "shift", "first")
    assert next_occurrence(rule, instant) == _utc_next(cron, instant)
    latest = latest_occurrence_at_or_before(rule, instant, instant - 500 * 365 * DAY)
    assert latest == _utc_latest(cron, instant)


def matched_days(rule: CalendarRule, first: int, last: int) -> list[int]:
    """The days (numbers since 1970-01-01) in ``[first, last)`` on which a
    UTC rule fires: one search per matched day."""
    days: list[int] = []
    cursor = next_occurrence(rule, first * DAY - 1)
    while cursor is not None and cursor < last * DAY:
        days.append(cursor // DAY)
        cursor = next_occurrence(rule, (cursor // DAY + 1) * DAY - 1)
    return days


@MORE
@given(cron=crons(special=True), instant=st.integers(YEAR_1900, YEAR_2200))
def test_in_utc_l_w_and_hash_are_found_however_far(cron: Cron, instant: int) -> None:
    """Months of every length starting on every weekday, leap Februaries
    included: the month-dependent forms checked day by day over two years."""
    rule = _rule(cron, "UTC", "shift", "first")
    assert next_occurrence(rule, instant) == _utc_next(cron, instant)
    latest = latest_occurrence_at_or_before(rule, instant, instant - 500 * 365 * DAY)
    assert latest == _utc_latest(cron, instant)
    first, last = instant // DAY + 1, instant // DAY + 731
    days = matched_days(rule, first, last)
    assert days == [
        day for day in range(first, last) if cron.matches_day(EPOCH.date() + timedelta(days=day))
    ]
    per_day = len(cron.minutes) * len(cron.hours)
    assert count_occurrences(rule, first * DAY - 1, last * DAY - 1) == per_day * len(days)


@pytest.mark.parametrize(
    ("field", "special"),
    [*(("day", s) for s in DAY_SPECIALS), *(("weekday", s) for s in WEEKDAY_SPECIALS)],
)
def test_each_month_form_alone_on_every_kind_of_month(field: str, special: Special) -> None:
    """2000-2027 hold every kind of month (each length, starting on each
    weekday): each form alone matches the days its definition picks."""
    text = SPECIAL_SPELLINGS[special]
    cron = f"0 0 {text} * *" if field == "day" else f"0 0 * * {text}"
    rule = parse_calendar({"cron": cron, "time_zone": "UTC"})
    assert isinstance(rule, CalendarRule)
    expected = [
        day
        for year in range(2000, 2028)
        for month in range(1, 13)
        if (day := special_day(special, year, month)) is not None
    ]
    first, last = (date(year, 1, 1) - EPOCH.date() for year in (2000, 2028))
    found = [EPOCH.date() + timedelta(days=d) for d in matched_days(rule, first.days, last.days)]
    assert found == expected
