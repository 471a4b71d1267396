"""Recurring calendar phrases, for the offline model of ``tickler chat``.

"every weekday at 9", "every day at 9:30", "every Monday and Thursday at
8am", "on weekdays at 17:00", "every weekend at noon": a cron rule (minute
hour * * days) in the user's zone, or in a zone named after the time
("every day at 9 Europe/Berlin"). Pure text to tool arguments: the tool
validates the result like any other call.

"every hour", "every 2 hours", "every 5 minutes" have no clock time: they
stay fixed-rate reminders (``every_seconds``), handled by the model itself.
"""

from __future__ import annotations

import re
from typing import Final

_DAY_NAMES: Final = {
    "sunday": 0,
    "monday": 1,
    "tuesday": 2,
    "wednesday": 3,
    "thursday": 4,
    "friday": 5,
    "saturday": 6,
}
# Three-letter names and the usual short spellings ("tues", "thurs").
_DAY_ALIASES: Final = {name[:3]: day for name, day in _DAY_NAMES.items()} | {
    "tues": 2,
    "weds": 3,
    "thur": 4,
    "thurs": 4,
}
_DAY_WORD: Final = (
    r"(?:sun|mon|tue|tues|wed|weds|thu|thur|thurs|fri|sat)"
    r"|(?:sunday|monday|tuesday|wednesday|thursday|friday|saturday)s?"
)
# "day", "weekday", "Monday and Friday", "Mon, Wed, Fri"...
_DAYS: Final = (
    r"(?P<days>days?|daily|weekdays?|weekends?|weekend days|"
    rf"(?:{_DAY_WORD})(?:\s*(?:,|and|&|,\s*and)\s*(?:{_DAY_WORD}))*)"
)
_TIME: Final = (
    r"(?P<time>noon|midnight|"
    r"(?P<hour>\d{1,2})(?::(?P<minute>\d{2}))?(?:\s*(?P<meridiem>am|pm|a\.m\.|p\.m\.)(?![a-z]))?)"
)
_ZONE: Final = r"(?:\s+(?P<zone>[A-Za-z_]+(?:/[A-Za-z_+\-0-9]+)+|UTC))?"
_PHRASE: Final = re.compile(
    rf"(?:remind me\s+)?(?:(?:every|each|on)\s+)?{_DAYS}\s+at\s+{_TIME}{_ZONE}"
    r"(?:(?:\s+|\s*[,:;-]\s*)(?:to |about |that )?(?P<prompt>.+))?",
    re.IGNORECASE,
)
_DAILY_FIRST: Final = re.compile(r"(?:remind me\s+)?daily\b", re.IGNORECASE)


def _hour(hour: int, meridiem: str | None) -> int | None:
    if meridiem is None:
        return hour if hour < 24 else None
    if not 1 <= hour <= 12:
        return None
    pm = meridiem.lower().startswith("p")
    return (hour % 12) + (12 if pm else 0)


def _clock(match: re.Match[str]) -> tuple[int, int] | None:
    """(hour, minute) of the phrase's time; None when it is no time."""
    word = match["time"].lower()
    if word == "noon":
        return 12, 0
    if word == "midnight":
        return 0, 0
    hour = _hour(int(match["hour"]), match["meridiem"])
    minute = int(match["minute"] or 0)
    if hour is None or minute > 59:
        return None
    return hour, minute


def _day_field(days: str) -> str | None:
    """The cron day-of-week field for the phrase's days (``*`` every day);
    None for a word that names no day."""
    words = days.lower()
    if words in {"day", "days", "daily"}:
        return "*"
    if words in {"weekday", "weekdays"}:
        return "1-5"
    if words in {"weekend", "weekends", "weekend days"}:
        return "0,6"
    found: set[int] = set()
    for word in re.findall(r"[a-z]+", words):
        if word in {"and"}:
            continue
        name = word.removesuffix("s") if word.endswith("days") else word
        day = _DAY_NAMES.get(name, _DAY_ALIASES.get(name))
        if day is None:
            return None
        found.add(day)
    return ",".join(str(day) for day in sorted(found)) if found else None


def calendar_request(text: str, zone_key: str) -> dict[str, object] | None:
    """``schedule_create`` arguments for a recurring calendar phrase, in
    ``zone_key`` unless the phrase names a zone; None when ``text`` is not
    such a phrase. Without a prompt the phrase itself is the prompt:
    "every weekday at 9 to write notes" in Europe/Berlin is
    ``{"prompt": "write notes", "calendar": {"cron": "0 9 * * 1-5",
    "time_zone": "Europe/Berlin"}}``.
    """
    text = text.strip()
    match = _PHRASE.fullmatch(text)
    if match is None:
        return None
    if match["days"].lower() == "daily" and not _DAILY_FIRST.match(text):
        return None  # "every daily at 9" is no phrase of ours
    clock = _clock(match)
    days = _day_field(match["days"])
    if clock is None or days is None:
        return None
    hour, minute = clock
    prompt = (match["prompt"] or "").strip() or text
    cron = f"{minute} {hour} * * {days}"
    return {"prompt": prompt, "calendar": {"cron": cron, "time_zone": match["zone"] or zone_key}}
