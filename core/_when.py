"""The extended profile's ``when`` member: the schedule of a create or an
update as an object holding exactly one selector, so a tool schema can say
"one of four" itself (an ``anyOf`` of four one-member objects, which
OpenAI's strict mode accepts) instead of leaving it to a description.

``lift_when`` turns it into the flat arguments the parsers have always read
(``{"prompt": ..., "after_seconds": 600}``), before any other check: both
forms meet the same rules and give the same command, and the flat form is
still accepted. Pure; never raises.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from returns.result import Failure, Result, Success

from tickler.core._errors import Msg, ScheduleError, error

WHEN: Final = "when"
SELECTORS: Final = ("after_seconds", "at", "every_seconds", "calendar")
# A series' end, beside a recurring selector (the schema offers it there
# only; beside a one-shot the parsers answer as for the flat form).
ENDS: Final = ("until", "count")


def lift_when(arguments: Mapping[str, object]) -> Result[Mapping[str, object], ScheduleError]:
    """``arguments`` with ``when``'s one selector (and a series' end,
    ``until`` and ``count``, beside it) as top-level members (``arguments``
    as given when it has no ``when``). Nulls are absent, as
    everywhere in the extended profile: drop them first. A ``when`` that is
    not an object holding exactly one selector (null members aside), or one
    sent beside a top-level selector, answers ``invalid_selector``."""
    if WHEN not in arguments:
        return Success(arguments)
    when = arguments[WHEN]
    if not isinstance(when, Mapping):
        return Failure(error("invalid_selector", Msg.WHEN))
    given = {key: value for key, value in when.items() if value is not None}
    selectors = [key for key in given if key in SELECTORS]
    if len(selectors) != 1 or not given.keys() <= {*SELECTORS, *ENDS}:
        return Failure(error("invalid_selector", Msg.WHEN))
    if any(key in arguments for key in (*SELECTORS, *given)):
        return Failure(error("invalid_selector", Msg.WHEN_AND_FLAT))
    lifted = {key: value for key, value in arguments.items() if key != WHEN}
    lifted.update(given)
    return Success(lifted)
