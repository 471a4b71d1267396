"""The cron dialect against croniter 7, where croniter reads a form the same.

croniter works on naive wall times, so the comparison runs in zones with no
offset change in 2000-2100 (``UTC``, ``Asia/Kolkata``, ``Etc/GMT-14``,
``America/Panama``): the engine's instants, read on the zone's wall clock,
must be croniter's next times. Where the two differ by design the forms are
left out (and docs/calendar.md says so):

* ``nW`` for n above 28: croniter moves it to the month's last day when the
  month is shorter; here such a month has no occurrence, as ``31`` has none
  (Quartz's reading);
* ``nW``, ``w#k`` or ``Lw`` together with the other day field restricted:
  croniter then requires both fields (or ignores one); here, as for every
  other form, a day matches if either matches (Vixie cron);
* ``#`` or ``L`` items listed with plain weekdays, ``W`` in a list, ``LW``,
  ``5L``: croniter refuses them.

And croniter 7 reads a range of one value (``1-1``) as ``*``: the plain
fields here have ranges of two values or more.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Final

from croniter import croniter  # type: ignore[import-untyped]
from hypothesis import given
from hypothesis import strategies as st

from tickler.core.timing._calendar import CalendarRule, next_occurrences, parse_calendar
from tickler.core.timing._cron import CronMsg
from tickler.testing.strategies import load_zone

from .test_calendar_enumeration import MONTHS, WEEKDAYS

ZONES: Final = ("UTC", "Asia/Kolkata", "Etc/GMT-14", "America/Panama")
START: Final = datetime(2000, 1, 1)  # noqa: DTZ001 - croniter takes naive wall times
SPAN_MINUTES: Final = 100 * 365 * 1440
AHEAD: Final = 6


def _name(value: int, low: int, names: tuple[str, ...] | None, style: int) -> str:
    if names is None or style == 0 or value - low >= len(names):
        return str(value)
    return names[value - low] if style == 1 else names[value - low].upper()


@st.composite
def cron_field(draw: st.DrawFn, low: int, high: int, names: tuple[str, ...] | None = None) -> str:
    """``*``, ``*/n``, or a list of values and ranges (of two values or
    more), with names in any case where the field has them."""
    kind = draw(st.sampled_from(("star", "step", "list", "list")))
    if kind == "star":
        return "*"
    if kind == "step":
        return f"*/{draw(st.integers(1, high - low + 1))}"
    items: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        first = draw(st.integers(low, high - 1))
        style = draw(st.integers(0, 2))
        if draw(st.booleans()):
            items.append(_name(first, low, names, style))
            continue
        last = draw(st.integers(first + 1, min(high, first + 12)))
        text = f"{_name(first, low, names, style)}-{_name(last, low, names, style)}"
        every = draw(st.one_of(st.none(), st.integers(1, 5)))
        items.append(text if every is None else f"{text}/{every}")
    return ",".join(items)


@st.composite
def nth_weekdays(draw: st.DrawFn) -> str:
    """``w#k`` and croniter's ``Lw`` (the last w), listed together."""
    items: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        weekday = draw(st.integers(0, 7))
        if draw(st.booleans()):
            name = _name(weekday, 0, WEEKDAYS, draw(st.integers(0, 2)))
            items.append(f"{name}#{draw(st.integers(1, 5))}")
        else:
            items.append(f"L{weekday}")
    return ",".join(items)


@st.composite
def day_fields(draw: st.DrawFn) -> tuple[str, str]:
    """The two day fields, in the combinations croniter reads as we do."""
    plain_days = cron_field(1, 31)
    plain_weekdays = cron_field(0, 7, WEEKDAYS)
    kind = draw(st.sampled_from(("L", "L list", "W", "#", "plain")))
    if kind == "L":  # alone, or with plain weekdays (either matches)
        return "L", draw(st.one_of(st.just("*"), plain_weekdays))
    if kind == "L list":
        days = draw(st.lists(st.integers(1, 31).map(str), min_size=1, max_size=3))
        return ",".join(draw(st.permutations([*days, "L"]))), "*"
    if kind == "W":
        day = draw(st.integers(1, 28))
        return draw(st.sampled_from((f"{day}W", f"W{day}", f"{day}w"))), "*"
    if kind == "#":
        return "*", draw(nth_weekdays())
    return draw(st.one_of(st.just("*"), plain_days)), draw(st.one_of(st.just("*"), plain_weekdays))


@st.composite
def cron_texts(draw: st.DrawFn) -> str:
    if draw(st.integers(0, 9)) == 0:
        return draw(
            st.sampled_from(
                ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly")
            )
        )
    minute = draw(cron_field(0, 59))
    hour = draw(cron_field(0, 23))
    month = draw(st.one_of(st.just("*"), cron_field(1, 12, MONTHS)))
    day, weekday = draw(day_fields())
    return f"{minute} {hour} {day} {month} {weekday}"


@given(
    cron=cron_texts(),
    zone=st.sampled_from(ZONES),
    offset=st.integers(0, SPAN_MINUTES),
    seconds=st.integers(0, 59),
)
def test_the_next_occurrences_are_croniters(
    cron: str, zone: str, offset: int, seconds: int
) -> None:
    rule = parse_calendar({"cron": cron, "time_zone": zone})
    if not isinstance(rule, CalendarRule):  # a date that never occurs (30 February)
        assert rule.message == CronMsg.never(cron)
        return
    start = START + timedelta(minutes=offset, seconds=seconds)
    tz = load_zone(zone)
    after_ms = int(start.replace(tzinfo=tz).timestamp() * 1000)
    ours = [
        datetime.fromtimestamp(at / 1000, tz).replace(tzinfo=None)
        for at in next_occurrences(rule, after_ms, AHEAD)
    ]
    theirs = croniter(cron, start, implement_cron_bug=True)  # Vixie: a "*/n" day field ANDs
    assert ours == [theirs.get_next(datetime) for _ in range(len(ours))]
    assert len(ours) == AHEAD
