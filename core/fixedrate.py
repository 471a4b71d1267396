"""Fixed-rate arithmetic: the creation-anchored lattice, latest-only catch-up.

Occurrences are ``C + k*I`` (k >= 1) for the creation sample C and interval
I; the stored target only moves by whole intervals, so alignment survives
without storing C. Missed intervals are never enumerated.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from tickler.core.errors import CorruptScheduleLog
from tickler.core.instant import MAX_INSTANT_MS, format_instant, in_range, parse_instant
from tickler.core.jsnum import is_safe_integer
from tickler.core.model import EverySchedule


class Reason:
    ACCEPTED_AT: Final = "every acceptedAt must be a representable four-digit-year instant"
    INTERVAL: Final = "every interval milliseconds must be a positive safe integer"
    PRECEDES: Final = "every dispatch cannot precede the active scheduledAt"


class EveryOccurrence(NamedTuple):
    """The latest occurrence due at a decision, and the first target after it
    (None when the series runs past 9999-12-31T23:59:59.999Z and ends)."""

    occurrence_at: str
    next_scheduled_at: str | None


def occurrence_ms(record: EverySchedule, accepted_ms: int) -> tuple[int, int | None]:
    """:func:`resolve_every_occurrence` in epoch milliseconds."""
    return lattice(parse_instant(record.scheduled_at), record.every_seconds, accepted_ms)


def lattice(target: int, every_seconds: int, accepted_ms: int) -> tuple[int, int | None]:
    """The latest occurrence ``<= accepted_ms`` of ``target + k * interval``,
    and the one after it (None past year 9999)."""
    interval = every_seconds * 1000
    if not is_safe_integer(accepted_ms) or not in_range(accepted_ms):
        raise CorruptScheduleLog(Reason.ACCEPTED_AT)
    if not is_safe_integer(interval) or interval <= 0:
        raise CorruptScheduleLog(Reason.INTERVAL)
    if accepted_ms < target:
        raise CorruptScheduleLog(Reason.PRECEDES)
    occurrence = target + (accepted_ms - target) // interval * interval
    following = occurrence + interval
    return occurrence, (following if following <= MAX_INSTANT_MS else None)


def resolve_every_occurrence(record: EverySchedule, accepted_ms: int) -> EveryOccurrence:
    """The reference's ``resolveEveryOccurrence``; raises
    :class:`CorruptScheduleLog` with its reasons."""
    occurrence, following = occurrence_ms(record, accepted_ms)
    return EveryOccurrence(
        format_instant(occurrence), None if following is None else format_instant(following)
    )
