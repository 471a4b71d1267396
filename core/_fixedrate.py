"""Fixed-rate arithmetic: the creation-anchored lattice, latest-only catch-up.

Occurrences are ``C + k*I`` (k >= 1) for the creation sample C and interval
I; the stored target only moves by whole intervals, so alignment survives
without storing C. Missed intervals are never enumerated. The rule itself is
:func:`tickler.core._rules.lattice_rule`.
"""

from __future__ import annotations

from typing import NamedTuple

from tickler.core._errors import CorruptScheduleLog
from tickler.core._model import EverySchedule
from tickler.core._rules import Breach, lattice_rule, log_reason
from tickler.core.timing import format_instant, parse_instant


class EveryOccurrence(NamedTuple):
    """The latest occurrence due at a decision, and the first target after it
    (None when the series runs past 9999-12-31T23:59:59.999Z and ends)."""

    occurrence_at: str
    next_scheduled_at: str | None


def resolve_every_occurrence(record: EverySchedule, accepted_ms: int) -> EveryOccurrence:
    """The reference's ``resolveEveryOccurrence``; raises
    :class:`CorruptScheduleLog` with its reasons."""
    step = lattice_rule(parse_instant(record.scheduled_at), record.every_seconds, accepted_ms)
    if isinstance(step, Breach):
        raise CorruptScheduleLog(log_reason(step))
    following = step.next
    return EveryOccurrence(
        format_instant(step.occurrence), None if following is None else format_instant(following)
    )
