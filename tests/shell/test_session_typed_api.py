"""The typed API (``session.schedule``, ``reminders``, ``cancel``): Python
values in, a frozen ``Reminder`` or a raised ``ScheduleError`` out, through
the same pipeline as the model's tools - the same rules, codes and messages
(in the typed API's words where the tool's name its JSON fields), the same
events in the log, byte for byte, and the same durability barrier."""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, date, datetime, time, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

import tickler
from tickler.adapters.stores._jsonl import JsonlStore
from tickler.adapters.stores._memory import MemoryStore
from tickler.core import Profile
from tickler.shell._clock import VirtualClock
from tickler.shell._host import FollowUp, IdleClaim
from tickler.shell._ports import SessionStore
from tickler.shell._reminders import LocalTime, Reminder, ScheduleError
from tickler.shell._session import Session, open_log_session, open_session
from tickler.shell._timers import TimerHeap

from .support import (
    HOUR,
    MINUTE,
    SECOND,
    T0,
    RecordingLog,
    async_test,
    has,
    new_memory_log,
)

NOW = datetime(2026, 8, 5, 12, 0, tzinfo=UTC)  # T0
assert NOW.timestamp() * 1000 == T0


class Quiet:
    """A host that never takes a turn: due reminders stay overdue."""

    def claim_idle(self) -> IdleClaim | None:
        return None

    async def when_idle(self) -> None:
        await asyncio.Event().wait()

    async def followup(self, message: FollowUp) -> None:
        raise AssertionError(f"never idle, yet {message.key} came")


@asynccontextmanager
async def running(
    store: SessionStore | None = None,
    clock: VirtualClock | None = None,
    profile: Profile = "extended",
) -> AsyncIterator[Session]:
    clock = clock if clock is not None else VirtualClock(T0)
    store = store if store is not None else MemoryStore()
    timers = TimerHeap(clock)
    try:
        async with open_session(
            store, "s1", host=lambda _session: Quiet(), clock=clock, timers=timers, profile=profile
        ) as session:
            yield session
    finally:
        await timers.close()
        await store.close()


def test_the_typed_names_are_public() -> None:
    assert tickler.ScheduleError is ScheduleError
    assert tickler.Reminder is Reminder
    assert tickler.LocalTime is LocalTime
    assert tickler.Session is Session
    assert tickler.open_session is open_session


@async_test
async def test_each_selector_as_a_python_value() -> None:
    async with running() as session:
        after = await session.schedule("stretch", after=timedelta(minutes=20))
        assert after == Reminder(
            id="schedule-1",
            kind="after",
            prompt="stretch",
            due=NOW + timedelta(minutes=20),
            overdue=False,
            after=timedelta(minutes=20),
        )
        berlin = LocalTime(date(2026, 8, 6), time(9, 0), "Europe/Berlin")
        local = await session.schedule("standup", at=berlin)
        assert (local.id, local.kind, local.due) == (
            "schedule-2",
            "at",
            datetime(2026, 8, 6, 7, 0, tzinfo=UTC),  # CEST is UTC+2
        )
        assert (local.after, local.every) == (None, None)
        plus_two = timezone(timedelta(hours=2))
        aware = await session.schedule("lunch", at=datetime(2026, 8, 5, 14, 30, tzinfo=plus_two))
        assert aware.due == datetime(2026, 8, 5, 12, 30, tzinfo=UTC)
        assert aware.due.tzinfo is UTC
        fraction = await session.schedule("tick", at=NOW + timedelta(seconds=5, microseconds=7891))
        assert fraction.due == NOW + timedelta(seconds=5, milliseconds=7)  # milliseconds kept
        every = await session.schedule("water", every=timedelta(hours=1))
        assert (every.kind, every.due, every.every, every.after) == (
            "every",
            NOW + timedelta(hours=1),
            timedelta(hours=1),
            None,
        )
        assert await session.reminders() == (after, local, aware, fraction, every)


@async_test
async def test_a_reminder_is_frozen_and_overdue_shows() -> None:
    clock = VirtualClock(T0)
    async with running(clock=clock) as session:
        reminder = await session.schedule("stretch", after=timedelta(seconds=10))
        with pytest.raises(AttributeError):
            reminder.prompt = "changed"  # type: ignore[misc]
        await clock.advance(11 * SECOND)  # due; the host never takes it
        [overdue] = await session.reminders()
        assert overdue.overdue
        assert overdue.due == reminder.due


@async_test
async def test_cancel_says_whether_it_deleted() -> None:
    async with running() as session:
        first = await session.schedule("a", after=timedelta(minutes=5))
        second = await session.schedule("b", every=timedelta(minutes=5))
        assert await session.cancel(first.id) is True
        assert await session.cancel(first.id) is False  # gone already
        assert await session.cancel("schedule-9") is False  # never was
        assert await session.reminders() == (second,)


# A typed call, and the tool call it stands for (written out by hand).
REFUSED: list[tuple[str, dict[str, Any], dict[str, Any]]] = [
    ("zero delay", {"after": timedelta(0)}, {"after_seconds": 0}),
    ("negative delay", {"after": timedelta(seconds=-5)}, {"after_seconds": -5}),
    ("fractional delay", {"after": timedelta(seconds=1.5)}, {"after_seconds": 1.5}),
    ("too frequent", {"every": timedelta(seconds=10)}, {"every_seconds": 10}),
    (
        "naive datetime",
        {"at": datetime(2026, 8, 5, 14, 0)},  # noqa: DTZ001 - refused, as meant
        {"at": "2026-08-05T14:00:00.000"},
    ),
    (
        "past instant",
        {"at": datetime(2026, 8, 5, 11, 0, tzinfo=UTC)},
        {"at": "2026-08-05T11:00:00.000Z"},
    ),
    (
        "DST gap",
        {"at": LocalTime(date(2027, 3, 28), time(2, 30), "Europe/Berlin")},
        {"at": {"date": "2027-03-28", "time": "02:30:00.000", "time_zone": "Europe/Berlin"}},
    ),
    (
        "unknown zone",
        {"at": LocalTime(date(2027, 1, 1), time(9, 0), "Mars/Base")},
        {"at": {"date": "2027-01-01", "time": "09:00:00.000", "time_zone": "Mars/Base"}},
    ),
    ("no selector", {}, {}),
    (
        "two selectors",
        {"after": timedelta(minutes=5), "every": timedelta(minutes=5)},
        {"after_seconds": 300, "every_seconds": 300},
    ),
]
AT_TYPED = (
    "at must be an aware datetime or a LocalTime, e.g. at=datetime(2031, 3, 7, 8, 0, tzinfo=UTC) "
    'or at=LocalTime(date(2031, 3, 7), time(9, 0), "Europe/Berlin").'
)
SELECTOR_TYPED = (
    "schedule() takes exactly one of after=, at=, every= or calendar=, e.g. "
    'schedule("tea", after=timedelta(minutes=5)) or schedule("stand-up", '
    'calendar=Calendar("0 9 * * 1-5", "Europe/Berlin")).'
)
# Issue 25, item 8: where the tool's message names its JSON fields, the
# typed API's names its own keywords (the code stays the tool's).
TYPED_MESSAGES: dict[str, str] = {
    "zero delay": "after must be a positive timedelta of whole seconds, "
    "e.g. after=timedelta(minutes=20).",
    "negative delay": "after must be a positive timedelta of whole seconds, "
    "e.g. after=timedelta(minutes=20).",
    "fractional delay": "after must be a positive timedelta of whole seconds, "
    "e.g. after=timedelta(minutes=20).",
    "too frequent": "every must be at least 300 seconds, e.g. every=timedelta(minutes=5).",
    "naive datetime": AT_TYPED,
    "no selector": SELECTOR_TYPED,
    "two selectors": SELECTOR_TYPED,
}
JSON_FIELDS = ("after_seconds", "every_seconds", "snooze_seconds", "schedule_create")


@pytest.mark.parametrize(("case", "typed", "tool"), REFUSED, ids=[c[0] for c in REFUSED])
def test_a_refused_call_raises_the_tools_code_in_the_typed_apis_words(
    case: str, typed: dict[str, Any], tool: dict[str, Any]
) -> None:
    async def scenario() -> None:
        async with running() as session:
            answer = json.loads(
                await session.tools.call_tool("schedule_create", {"prompt": "p", **tool})
            )
            with pytest.raises(ScheduleError) as refused:
                await session.schedule("p", **typed)
            message = TYPED_MESSAGES.get(case, answer["message"])
            assert (refused.value.code, refused.value.message) == (answer["code"], message)
            assert str(refused.value) == f"{answer['code']}: {message}"
            assert not any(field in message for field in JSON_FIELDS), message
            assert await session.reminders() == ()  # nothing was created either way

    asyncio.run(scenario())


@async_test
async def test_the_reference_profile_names_its_own_keywords_too() -> None:
    async with running(profile="reference") as session:
        with pytest.raises(ScheduleError) as refused:
            await session.schedule("p")
    assert refused.value.code == "invalid_selector"
    assert refused.value.message == (
        "schedule() takes exactly one of after=, at= or every= in the reference profile "
        '(calendar= and request_id= need the extended profile), e.g. schedule("tea", '
        "after=timedelta(minutes=5))."
    )


@async_test
async def test_update_errors_name_its_keywords() -> None:
    async with running() as session:
        await session.schedule("tea", after=timedelta(minutes=5))
        with pytest.raises(ScheduleError) as nothing:
            await session.update("schedule-1")
        assert (nothing.value.code, nothing.value.message) == (
            "invalid_selector",
            "update() takes at least one of prompt=, paused=, snooze=, until=, count= or one new "
            "selector "
            "(after=, at=, every= or calendar=, not with snooze=), "
            'e.g. update("schedule-3", snooze=timedelta(minutes=10)) or '
            'update("schedule-3", every=timedelta(hours=2)).',
        )
        with pytest.raises(ScheduleError) as zero:
            await session.update("schedule-1", snooze=timedelta(0))
        assert (zero.value.code, zero.value.message) == (
            "invalid_rule",
            "snooze must be a timedelta of whole seconds, at least 1 second, "
            "e.g. snooze=timedelta(minutes=10).",
        )


@async_test
async def test_blank_prompts_and_ids_are_refused_as_the_tools_refuse_them() -> None:
    async with running() as session:
        answer = json.loads(
            await session.tools.call_tool("schedule_create", {"prompt": " ", "after_seconds": 60})
        )
        with pytest.raises(ScheduleError) as blank:
            await session.schedule(" ", after=timedelta(minutes=1))
        assert (blank.value.code, blank.value.message) == (answer["code"], answer["message"])
        assert blank.value.code == "invalid_prompt"
        deleting = json.loads(await session.tools.call_tool("schedule_delete", {"id": " x"}))
        with pytest.raises(ScheduleError) as bad_id:
            await session.cancel(" x")
        assert (bad_id.value.code, bad_id.value.message) == (
            deleting["code"],
            'the reminder id must be non-empty without surrounding whitespace, e.g. "schedule-3" '
            "as schedule() or reminders() returned it.",
        )


async def drive_typed(session: Session, clock: VirtualClock) -> None:
    await session.schedule("stretch", after=timedelta(minutes=20))
    await session.schedule("standup", at=LocalTime(date(2026, 8, 6), time(9, 0), "Europe/Berlin"))
    await clock.advance(MINUTE)
    await session.schedule("lunch", at=datetime(2026, 8, 5, 12, 30, tzinfo=UTC))
    await session.schedule("water", every=timedelta(hours=1))
    with pytest.raises(ScheduleError):
        await session.schedule("blink", every=timedelta(seconds=10))
    await session.reminders()
    assert await session.cancel("schedule-1")
    assert not await session.cancel("schedule-1")
    await clock.advance(HOUR)


async def drive_tools(session: Session, clock: VirtualClock) -> None:
    call = session.tools.call_tool
    await call("schedule_create", {"prompt": "stretch", "after_seconds": 1200})
    local = {"date": "2026-08-06", "time": "09:00:00", "time_zone": "Europe/Berlin"}
    assert '"state":"scheduled"' in await call(
        "schedule_create", {"prompt": "standup", "at": local}
    )
    await clock.advance(MINUTE)
    await call("schedule_create", {"prompt": "lunch", "at": "2026-08-05T12:30:00Z"})
    await call("schedule_create", {"prompt": "water", "every_seconds": 3600})
    await call("schedule_create", {"prompt": "blink", "every_seconds": 10})
    await call("schedule_list", {})
    await call("schedule_delete", {"id": "schedule-1"})
    await call("schedule_delete", {"id": "schedule-1"})
    await clock.advance(HOUR)


@async_test
async def test_the_typed_api_writes_the_same_log_bytes_as_the_tools(tmp_path: Path) -> None:
    logs = []
    for name, drive in (("typed", drive_typed), ("tools", drive_tools)):
        clock = VirtualClock(T0)
        async with running(JsonlStore(tmp_path / name), clock) as session:
            await drive(session, clock)
        logs.append((tmp_path / name / "s1.jsonl").read_bytes())
    typed, tools = logs
    assert typed == tools
    # 4 creates and a delete; the lunch reminder is due, but the host is never idle.
    assert typed.count(b'"type":"schedule/change"') == 5


@async_test
async def test_a_change_not_made_durable_raises_as_the_tool_answers() -> None:
    typed: dict[str, object] = {}
    answer: dict[str, object] = {}
    for path in ("typed", "tools"):
        log = RecordingLog(new_memory_log())
        # The barrier after the append fails (the flush before it works).
        log.hook("append", functools.partial(log.fail, "flush"), when=has("create"))
        clock = VirtualClock(T0)
        timers = TimerHeap(clock)
        async with open_log_session(
            log, host=lambda _session: Quiet(), clock=clock, timers=timers
        ) as session:
            if path == "tools":
                answer = json.loads(
                    await session.tools.call_tool(
                        "schedule_create", {"prompt": "p", "after_seconds": 60}
                    )
                )
            else:
                with pytest.raises(ScheduleError) as uncertain:
                    await session.schedule("p", after=timedelta(minutes=1))
                error = uncertain.value
                typed = {"code": error.code, "message": error.message}
                typed |= {"operation": error.operation, "id": error.id}
        await timers.close()
        assert log.labels() == ["create"]  # the change is kept; only its barrier failed
    assert typed == answer
    assert (typed["code"], typed["operation"], typed["id"]) == (
        "persistence_uncertain",
        "create",
        "schedule-1",
    )
