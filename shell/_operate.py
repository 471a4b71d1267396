"""An operator's action on one reminder, on a session log the caller
holds (its lock or lease): the session is read as the runtime reads it
(snapshot and tail), ``decide`` makes the change as it does for a tool
call, and the change is appended, with the session's next wake, and made
durable. Nothing is delivered here: whoever next holds the session (a
worker, a live process) delivers what is due then."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from returns.result import Result

from tickler.core import (
    DEFAULT_PROFILE,
    SCHEDULE_CHANGE,
    Outcome,
    Profile,
    ScheduleChange,
    ScheduleError,
    State,
    ToolCommand,
    decide,
    encode_change,
)
from tickler.shell._loading import load_session, next_wake
from tickler.shell._ports import NewEvent, SessionLog, WakeIndex


@dataclass(frozen=True)
class Operated:
    """What an action did: the changes logged (none when nothing differed
    or it was refused), the decision's outcome, and the schedule state
    before it (to tell an unknown id from one that ended)."""

    changes: tuple[ScheduleChange, ...]
    result: Result[Outcome, ScheduleError]
    before: State


async def operate(
    log: SessionLog, command: ToolCommand, now: int, *, profile: Profile = DEFAULT_PROFILE
) -> Operated:
    """Decide ``command`` at ``now`` on the session ``log`` holds, and
    commit its changes (raises what the log's flush raises, and
    CorruptScheduleLog for a log that does not replay). The caller closes
    the log."""
    loaded = await asyncio.to_thread(load_session, log, log.load_snapshot())
    before = loaded.state
    decision = decide(before, command, now, profile=profile)
    changes, result = decision
    if changes:
        loaded.state = decision.state
        log.append([NewEvent(SCHEDULE_CHANGE, encode_change(c), now) for c in changes])
        if isinstance(log, WakeIndex):  # written with the events, as the runtime does
            log.set_next_wake(next_wake(loaded, now))
        await log.flush()
    return Operated(changes, result, before)
