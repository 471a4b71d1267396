# ruff: noqa: F811 - pytest fixtures imported by name are parameters too
"""A callable target that takes ``tools`` resumes the agent's turn with the
session's tools: the turn can set its next reminder while the worker holds
the session, and that reminder is woken in turn."""

from __future__ import annotations

import asyncio
import json

from tickler.adapters.delivery._callable import DeliverCallable
from tickler.adapters.delivery._target import delivery_target
from tickler.adapters.frameworks._tools import ToolCaller
from tickler.adapters.worker._worker import Worker
from tickler.shell._host import FollowUp

from .pgsupport import PgSchema, pg_schema  # noqa: F401 - the fixture
from .worker_support import change_kinds, delivered_keys, running, seed, wait_until


async def test_a_resumed_turn_sets_its_next_reminder_through_the_tools(
    pg_schema: PgSchema,
) -> None:
    pg = pg_schema
    seeder = pg.store()
    await seed(seeder, {"user": [{"prompt": "first", "after_seconds": 1}]})
    await seeder.close()
    turns: list[tuple[str, str]] = []
    answers: list[dict[str, object]] = []

    async def resume_agent(message: FollowUp, session: str, tools: ToolCaller) -> None:
        prompt = message.occurrences[0].prompt
        turns.append((session, prompt))
        if prompt == "first":  # the model, in this turn, asks for a follow-up reminder
            answer = await tools.call_tool(
                "schedule_create", {"prompt": "second", "after_seconds": 1}
            )
            answers.append(json.loads(answer))
            listed = json.loads(await tools.call_tool("schedule_list", {}))
            answers.append({"listed": [item["prompt"] for item in listed]})

    worker = Worker(
        pg.store(),
        delivery_target(function=resume_agent, timeout=10),
        concurrency=2,
        poll_s=0.2,
    )
    async with running(worker):
        await wait_until(lambda: len(turns) == 2, 60, "both turns")
        await wait_until(lambda: len(delivered_keys(pg, "user")) == 2, 30, "both marks")

    assert turns == [("user", "first"), ("user", "second")]
    assert answers[0]["state"] == "scheduled"
    assert answers[0]["id"] == "schedule-2"
    assert answers[1] == {"listed": ["second"]}  # the first is dispatched, the second live
    assert change_kinds(pg, "user") == ["create", "dispatch", "create", "dispatch"]


async def test_a_two_argument_callable_gets_no_tools() -> None:
    seen: list[tuple[object, ...]] = []

    def plain(message: FollowUp, session: str) -> None:
        seen.append((message.key, session))

    never = object()  # never passed to a two-argument callable
    host = DeliverCallable(plain, session="s", timeout=5, tools=never)  # type: ignore[arg-type]
    await host.followup(FollowUp(key="k@1", text="t", occurrences=()))
    await asyncio.sleep(0)
    assert seen == [("k@1", "s")]
