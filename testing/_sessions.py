"""Valid session logs as tickler writes them: tool calls (one-shots,
fixed-rate and calendar reminders, updates, deletes, request ids) and
deliveries, at instants that advance across daylight-saving changes, each
decided by the core at its instant; other events in between and a seed
prefix (the parent's events, never read) in front.

The schedule changes come from the core's own ``handle`` and ``decide``
(what a session would hold); a property then checks what reads them:
``fold``, ``check_log``, :func:`tickler.testing.replay`, a store, a view.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any, Final

import msgspec
from hypothesis import strategies as st

from tickler.core import (
    EMPTY_STATE,
    SCHEDULE_CHANGE,
    DeleteSchedule,
    DeliverDue,
    Profile,
    ScheduleChange,
    SessionEvent,
    State,
    UpdateSchedule,
    decide,
    encode_change,
    evolve,
    format_instant,
    handle,
    parse_instant,
)
from tickler.testing._changes import GARBAGE_SCHEDULE_CHANGES, OTHER_EVENTS, EventLog

MINUTE: Final = 60_000
# Starts hours before a daylight-saving change, so a session of a few steps
# crosses one: Europe (29 March, 25 October 2026), the United States
# (8 March, 1 November 2026), Lord Howe's half hour (5 April, 4 October 2026).
STARTS: Final = tuple(
    parse_instant(text)
    for text in (
        "2026-03-28T12:00:00.000Z",
        "2026-10-24T18:30:00.000Z",
        "2026-03-07T20:00:00.000Z",
        "2026-10-31T21:00:00.000Z",
        "2026-04-04T04:45:00.000Z",
        "2026-10-03T05:30:00.000Z",
    )
)
_CRONS: Final = st.sampled_from(
    [
        *("0 9 * * 1-5", "30 2 * * *", "*/20 * * * *", "@daily", "0 1 * * 0"),
        # in the hour a change skips or repeats, and the month-dependent forms
        *("30 2 * * 0L", "30 2 L,15W * sun#5", "0 9 LW * *", "@midnight", "0 2 * 3,4 Lsun"),
    ]
)
_ZONES: Final = st.sampled_from(
    ["Europe/Berlin", "America/New_York", "Australia/Lord_Howe", "UTC", "Asia/Kathmandu"]
)
_IDS: Final = st.sampled_from([f"schedule-{n}" for n in range(1, 7)])
_REQUESTS: Final = st.none() | st.sampled_from(["r1", "r2", "call-7f3a"])
_PROMPTS: Final = st.sampled_from(["tea", "stand-up", "stretch", "check the build", "écrire"])


@dataclass(frozen=True)
class ValidLog:
    """A valid session's events, the seed length before which they are the
    parent's, the schedule changes the session made (in order) and the
    session's clock at its last step (epoch milliseconds)."""

    events: tuple[SessionEvent, ...]
    seed_length: int
    changes: tuple[ScheduleChange, ...]
    now: int

    def state(self) -> State:
        """The state the changes leave, evolved one change at a time."""
        state = EMPTY_STATE
        for change in self.changes:
            state = evolve(state, change)
        return state

    def append(self, changes: Iterable[ScheduleChange], now: int) -> ValidLog:
        """This log with ``changes`` (what ``decide`` or ``handle`` returned
        at ``now``) appended as ``schedule/change`` events at ``now``."""
        added = tuple(changes)
        events = [*self.events]
        for change in added:
            data = msgspec.Raw(encode_change(change))
            events.append(SessionEvent(type=SCHEDULE_CHANGE, seq=len(events), time=now, data=data))
        return replace(self, events=tuple(events), changes=self.changes + added, now=now)


def _calendar() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"cron": _CRONS, "time_zone": _ZONES},
        optional={
            "dst_gap": st.sampled_from(["shift", "skip"]),
            "dst_overlap": st.sampled_from(["first", "both"]),
        },
    )


def _local_at(now: int) -> st.SearchStrategy[dict[str, Any]]:
    """A local ``at`` in a zone, days after ``now`` (hours a change skips too)."""

    def value(days: int, hour: int, zone: str) -> dict[str, Any]:
        date = _date(now + days * 86_400_000)
        return {"date": date, "time": f"{hour:02d}:30:00", "time_zone": zone}

    return st.builds(value, st.integers(1, 20), st.integers(0, 23), _ZONES)


def _date(ms: int) -> str:
    return format_instant(ms)[:10]


def _create(profile: Profile, now: int) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    selectors: list[st.SearchStrategy[dict[str, Any]]] = [
        st.integers(1, 3 * 86_400).map(lambda s: {"after_seconds": s}),
        st.integers(300, 86_400).map(lambda s: {"every_seconds": s}),
        _local_at(now).map(lambda at: {"at": at}),
    ]
    requests: st.SearchStrategy[str | None] = st.none()
    if profile == "extended":
        selectors.append(_calendar().map(lambda c: {"calendar": c}))
        requests = _REQUESTS
    chosen = st.one_of(selectors)
    if profile == "extended":  # a series' end too; the flat selector, or the same in ``when``
        chosen = st.tuples(chosen, _ends(now)).map(lambda t: {**t[0], **t[1]})
        chosen = st.one_of(chosen, chosen.map(_in_when))
    return st.tuples(chosen, _PROMPTS, requests).map(
        lambda t: (
            "schedule_create",
            {"prompt": t[1], **t[0], **({} if t[2] is None else {"request_id": t[2]})},
        )
    )


def _ends(now: int) -> st.SearchStrategy[dict[str, Any]]:
    """A series' end (refused beside a one-shot, as a model may send it):
    none, an ``until`` a few days on, a ``count``, or both."""
    until = st.integers(1, 10 * 86_400).map(lambda s: format_instant(now + s * 1000))
    return st.fixed_dictionaries({}, optional={"until": until, "count": st.integers(1, 6)})


def _in_when(arguments: dict[str, Any]) -> dict[str, Any]:
    """The schedule (and its end) of flat arguments moved into ``when``."""
    schedule = {k: v for k, v in arguments.items() if k not in ("prompt", "request_id")}
    rest = {k: v for k, v in arguments.items() if k in ("prompt", "request_id")}
    return {**rest, "when": schedule}


def _update(now: int) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    """A change in place: prompt, paused, snooze, a series' new end (or
    ``"none"``), or a new schedule (a reschedule, not with a snooze)."""
    reschedule = st.one_of(
        st.integers(1, 3 * 86_400).map(lambda s: {"after_seconds": s}),
        st.integers(300, 86_400).map(lambda s: {"every_seconds": s}),
        _calendar().map(lambda c: {"calendar": c}),
    )
    until = st.integers(1, 10 * 86_400).map(lambda s: format_instant(now + s * 1000))
    members = st.fixed_dictionaries(
        {},
        optional={
            "prompt": _PROMPTS,
            "paused": st.booleans(),
            "snooze_seconds": st.integers(1, 2 * 86_400),
            "until": st.one_of(until, st.just("none")),
            "count": st.one_of(st.integers(1, 6), st.just("none")),
        },
    ).filter(bool)
    recurring = st.one_of(
        st.integers(300, 86_400).map(lambda s: {"every_seconds": s}),
        _calendar().map(lambda c: {"calendar": c}),
    )
    moved = st.one_of(  # a new schedule; a recurring one may bring its end
        reschedule.map(lambda w: {"when": w}),
        st.tuples(recurring, _ends(now)).map(lambda t: {"when": t[0], **t[1]}),
    )
    return st.tuples(_IDS, st.one_of(members, moved, moved)).map(
        lambda t: ("schedule_update", {"id": t[0], **t[1]})
    )


def _operator() -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    """An operator's action (``tickler pause ...``, the dashboard): pause,
    resume, deliver now or cancel, naming the operator."""
    names = st.sampled_from(["ana", "bo", "ops team"])
    return st.tuples(_IDS, names, st.sampled_from(["pause", "resume", "now", "cancel"])).map(
        lambda t: ("operate", {"id": t[0], "by": t[1], "action": t[2]})
    )


def _operated(arguments: dict[str, Any]) -> UpdateSchedule | DeleteSchedule:
    """The command an operator's action is (as tickler's own actions make it)."""
    schedule_id, by, action = arguments["id"], arguments["by"], arguments["action"]
    if action == "cancel":
        return DeleteSchedule(schedule_id, by=by)
    if action == "now":
        return UpdateSchedule(id=schedule_id, by=by, due_now=True)
    return UpdateSchedule(id=schedule_id, paused=action == "pause", by=by)


def _step(profile: Profile, now: int) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    steps = [
        _create(profile, now),
        _IDS.map(lambda i: ("schedule_delete", {"id": i})),
        st.just(("schedule_list", {})),
        st.just(("deliver", {})),
        st.just(("deliver", {})),
    ]
    if profile == "extended":
        steps += [_update(now), _operator()]
    return st.one_of(steps)


@st.composite
def session_logs(
    draw: st.DrawFn,
    profile: Profile = "extended",
    max_steps: int = 30,
    starts: tuple[int, ...] = STARTS,
) -> ValidLog:
    """A valid session log of up to ``max_steps`` tool calls (in the
    extended profile: series' ends, reschedules, the ``when`` form) and
    operators' actions, and deliveries, in ``profile`` (``reference``: the
    v1 tools and events only), starting at one of ``starts`` and moving on
    by up to two days a step (off whole minutes too), behind a seed prefix
    of up to three events."""
    log = EventLog()
    for type_, data in draw(
        st.lists(st.one_of(OTHER_EVENTS, GARBAGE_SCHEDULE_CHANGES), max_size=3)
    ):
        log.append(type_, data)
    seed_length = len(log.events)
    state, now = EMPTY_STATE, draw(st.sampled_from(starts))
    made: list[ScheduleChange] = []
    for _ in range(draw(st.integers(0, max_steps))):
        now += draw(st.integers(0, 2 * 86_400_000)) // MINUTE * MINUTE + 17
        tool, arguments = draw(_step(profile, now))
        if tool == "deliver":
            changes, _ = decide(state, DeliverDue(), now, profile=profile)
        elif tool == "operate":
            changes, _ = decide(state, _operated(arguments), now, profile=profile)
        else:
            changes, _ = handle(state, tool, arguments, now, profile=profile)
        for change in changes:
            state = evolve(state, change)
            log.append(SCHEDULE_CHANGE, encode_change(change), now)
            made.append(change)
        for type_, data in draw(st.lists(OTHER_EVENTS, max_size=1)):
            log.append(type_, data, now)
    return ValidLog(tuple(log.events), seed_length, tuple(made), now)
