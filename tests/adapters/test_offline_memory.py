"""The offline model (``tickler demo``, ``tickler chat``) remembers what the
user told it, from the session log's own turns: a model built after a
restart, or by a worker, greets the user by name in a reminder turn."""

from __future__ import annotations

import asyncio

import msgspec

from tickler.adapters.offline._model import OfflineModel, earlier_turns
from tickler.adapters.stores._memory import MemoryStore
from tickler.shell._ports import NewEvent
from tickler.shell._reference_host import TURN, TURN_INPUT, TurnInput, TurnRecord

REMINDER = TurnInput(
    n=5,
    source="reminder",
    text='[SCHEDULE REMINDER]\nschedule_id_json: "schedule-1"\nreminder_prompt_json: "stretch"',
    key="schedule-1@2026-12-07T09:00:00.000Z",
)


async def no_tools(name: str, args: dict[str, object]) -> str:
    raise AssertionError(f"no tool call expected: {name}")


def test_a_name_said_earlier_is_used_when_a_reminder_is_presented() -> None:
    model = OfflineModel(no_tools, lambda: 0)
    assert asyncio.run(model(REMINDER)) == "Reminder: stretch"
    said = asyncio.run(model(TurnInput(n=0, source="user", text="My name is Ada.")))
    assert said == "Nice to meet you, Ada."
    assert asyncio.run(model(REMINDER)) == "Reminder for Ada: stretch"


def test_the_conversation_is_read_back_from_the_log() -> None:
    async def run() -> list[tuple[TurnInput, str]]:
        log = await MemoryStore().open("s", created_at=0)
        said = TurnInput(n=0, source="user", text="my name is Grace")
        unanswered = TurnInput(n=1, source="user", text="list")
        log.append(
            [
                NewEvent(TURN_INPUT, msgspec.json.encode(said), 1),
                NewEvent(TURN, msgspec.json.encode(TurnRecord(0, "Nice to meet you, Grace.")), 2),
                NewEvent(TURN_INPUT, msgspec.json.encode(unanswered), 3),
            ]
        )
        return earlier_turns(log)

    turns = asyncio.run(run())
    assert [(turn.text, reply) for turn, reply in turns] == [
        ("my name is Grace", "Nice to meet you, Grace.")
    ]  # an input without its turn is not part of the conversation yet
    model = OfflineModel(no_tools, lambda: 0, history=turns)
    assert model.name == "Grace"
    assert asyncio.run(model(REMINDER)) == "Reminder for Grace: stretch"
