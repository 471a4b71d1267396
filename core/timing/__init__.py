"""tickler.core.timing: the time engine, pure and with no rule of its own.

Instants (``int`` epoch milliseconds, UTC, and their canonical ISO text),
IANA zones from the pinned tzdata, the offsets of a zone's transitions, the
cron dialect, the calendar occurrence engine (next, latest, count, catch-up)
and the ``at`` field's parser. The domain above (``tickler.core``) decides
what a reminder does with these answers; nothing here knows a reminder.

It imports no domain module but the vocabulary every room speaks
(``tickler.core._errors``, ``tickler.core._profile``), and the JavaScript
text rules from :mod:`tickler.core.wire` (a zone name is trimmed as
``String.prototype.trim`` trims it). Named ``timing``, not ``time``, so that
nobody reads it as the standard library's clock (which the core bans).
"""

from tickler.core.timing._at import parse_at
from tickler.core.timing._calendar import (
    CalendarMsg,
    CalendarRule,
    CatchUp,
    catch_up,
    count_occurrences,
    latest_occurrence_at_or_before,
    local_time_text,
    next_occurrence,
    next_occurrences,
    parse_calendar,
)
from tickler.core.timing._instant import (
    CANONICAL_INSTANT_PATTERN,
    MAX_INSTANT_MS,
    MIN_INSTANT_MS,
    format_instant,
    in_range,
    is_real_canonical,
    matches_canonical_pattern,
    parse_instant,
)
from tickler.core.timing._zones import TZDATA_VERSION, resolve_zone, zone_by_key

__all__ = [
    "CANONICAL_INSTANT_PATTERN",
    "MAX_INSTANT_MS",
    "MIN_INSTANT_MS",
    "TZDATA_VERSION",
    "CalendarMsg",
    "CalendarRule",
    "CatchUp",
    "catch_up",
    "count_occurrences",
    "format_instant",
    "in_range",
    "is_real_canonical",
    "latest_occurrence_at_or_before",
    "local_time_text",
    "matches_canonical_pattern",
    "next_occurrence",
    "next_occurrences",
    "parse_at",
    "parse_calendar",
    "parse_instant",
    "resolve_zone",
    "zone_by_key",
]
