"""The typed Python API: a program (not a model) sets reminders with
``timedelta``, ``datetime`` and ``LocalTime`` values, gets frozen
``Reminder`` values back, and catches ``ScheduleError`` for what the rules
refuse; a due reminder still arrives as a turn of the session's agent.
Runs offline; ``TICKLER_DIR`` keeps the session files. A test type-checks
this file with ``mypy --strict``.

    python examples/typed_api.py
"""

# An example prints what it did.

from __future__ import annotations

import asyncio
import os
import tempfile
from datetime import UTC, date, datetime, time, timedelta

from tickler import (
    JsonlStore,
    LocalTime,
    ReferenceHost,
    Reminder,
    ScheduleError,
    Session,
    TurnInput,
    open_session,
)


def show(reminder: Reminder) -> str:
    due = f"{reminder.due:%Y-%m-%d %H:%M:%S} UTC"  # an aware datetime, in UTC
    every = f", every {reminder.every}" if reminder.every is not None else ""
    state = "overdue" if reminder.overdue else "scheduled"
    return f"{reminder.id} {reminder.kind} {reminder.prompt!r} due {due} ({state}{every})"


async def main(directory: str) -> None:
    reminders: asyncio.Queue[TurnInput] = asyncio.Queue()

    def assistant(session: Session) -> ReferenceHost:
        """The session's agent: here it only notes each turn."""

        async def turn(item: TurnInput) -> str:
            if item.source == "reminder":
                await reminders.put(item)
            return "noted"

        return ReferenceHost(session.log, turn, session.clock)

    store = JsonlStore(directory)
    try:
        async with open_session(store, "typed-demo", host=assistant) as session:
            stretch = await session.schedule("stretch", after=timedelta(seconds=1))
            standup = LocalTime(date(2031, 3, 7), time(9, 0), "Europe/Berlin")
            await session.schedule("join the standup", at=standup)
            await session.schedule("launch", at=datetime(2031, 3, 7, 8, 0, tzinfo=UTC))
            await session.schedule("drink water", every=timedelta(hours=1))
            for reminder in await session.reminders():
                print(show(reminder))
            in_the_gap = LocalTime(date(2031, 3, 30), time(2, 30), "Europe/Berlin")  # DST
            for refused in (
                session.schedule("blink", every=timedelta(seconds=10)),
                session.schedule("lunch", at=datetime(2031, 3, 7, 12, 0)),  # noqa: DTZ001 - naive
                session.schedule("nap", at=in_the_gap),
            ):
                try:
                    await refused
                except ScheduleError as error:
                    print(f"refused: {error.code}: {error.message}")
            await session.host.send("I'm off for a minute.")  # a user turn, as the agent's
            item = await asyncio.wait_for(reminders.get(), timeout=30)
            print(f"[reminder turn] {item.key}")
            assert item.key is not None
            assert item.key.startswith(f"{stretch.id}@")
            fired = await session.cancel(stretch.id)  # False: a one-shot that fired is gone
            water = await session.cancel("schedule-4")
            print(f"cancel {stretch.id}: {fired}; cancel schedule-4: {water}")
            print(f"{len(await session.reminders())} reminders left")
    finally:
        await store.close()


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as scratch:
        asyncio.run(main(os.environ.get("TICKLER_DIR", scratch)))
