"""The reference's ordered runtime cases (section (g)), adapted to the outbox.

The reference's observed order for one overdue one-shot is ``flush,
maintenance, followup, dispatch(append), release, flush``. tickler's is:
preflight flush, claim, ONE append of the dispatch change and the
``tickler/followup`` record, barrier flush, ``host.followup``, release, and
then the ``tickler/delivered`` mark. The recording log and the scripted host
write into one call list, so these tests see the exact interleaving.
"""

from __future__ import annotations

import asyncio
import json

from tickler.core import format_instant
from tickler.shell._clock import settle

from .support import (
    MINUTE,
    SECOND,
    T0,
    Gate,
    async_test,
    batch_items,
    new_memory_log,
    rig,
    seed,
)

ONE_SHOT_KEY = "schedule-1@2026-08-05T12:00:10.000Z"


def delivery(key: str, dispatches: int = 1) -> list[str]:
    """The calls of one delivery, from the preflight flush to the mark."""
    return [
        "flush",
        "claim",
        f"append({'dispatch,' * dispatches}followup)",
        "flush",
        f"followup:{key}",
        "release",
        "append(delivered)",
    ]


@async_test
async def test_one_overdue_one_shot_at_start_runs_in_the_outbox_order() -> None:
    log = new_memory_log()
    await seed(log, (T0, {"prompt": "stretch", "after_seconds": 10}))
    async with rig(wall=T0 + 60 * SECOND, log=log) as r:
        # ... then the drive the delivery requests looks again: one flush,
        # nothing due, no claim.
        assert r.calls == [*delivery(ONE_SHOT_KEY), "flush"]
        assert r.log.labels() == ["create", "dispatch", "followup", "delivered"]
        assert r.host.keys == [ONE_SHOT_KEY]
        assert r.host.durable_when_offered == [True]
        assert r.runtime.pending_followups == ()
        assert r.runtime.next_wake is None
        await r.advance(10 * MINUTE, step_ms=SECOND)
        assert r.calls == [*delivery(ONE_SHOT_KEY), "flush"]


@async_test
async def test_one_shot_woken_by_its_timer_runs_in_the_outbox_order() -> None:
    async with rig() as r:
        assert r.calls == ["flush"]  # start: one preflight, nothing due
        created = await r.create(prompt="stretch", after_seconds=10)
        assert created["state"] == "scheduled"
        assert r.runtime.next_wake == T0 + 10 * SECOND
        mark = len(r.calls)
        await r.advance(10 * SECOND)
        assert r.since(mark) == [*delivery(ONE_SHOT_KEY), "flush"]
        assert r.host.taken_wall == [T0 + 10 * SECOND]


@async_test
async def test_busy_agent_is_waited_for_once_then_delivered_in_order() -> None:
    async with rig() as r:
        await r.create(after_seconds=10)
        r.host.set_busy(True)
        mark = len(r.calls)
        await r.advance(10 * SECOND)
        assert r.since(mark) == ["flush", "claim-refused", "when_idle"]
        mark = len(r.calls)
        r.host.end_turn()
        await settle()
        assert r.since(mark) == [*delivery(ONE_SHOT_KEY), "flush"]


@async_test
async def test_checkpoints_per_tool_call_match_the_reference() -> None:
    # Section (f): create 2, list 1, delete 2, delete not found 1,
    # pre-queue rejection 0, validation error after the preflight 1.
    async with rig() as r:
        cases: list[tuple[str, object, list[str]]] = [
            (
                "schedule_create",
                {"prompt": "a", "after_seconds": 60},
                ["flush", "append(create)", "flush"],
            ),
            ("schedule_list", {}, ["flush"]),
            ("schedule_delete", {"id": "schedule-1"}, ["flush", "append(delete)", "flush"]),
            ("schedule_delete", {"id": "schedule-1"}, ["flush"]),
            ("schedule_delete", {"id": " schedule-1"}, []),
            ("schedule_create", {"prompt": "a"}, []),
            ("schedule_create", {"prompt": "  ", "after_seconds": 5}, []),
            ("schedule_create", {"prompt": "a", "at": "2020-01-01T00:00:00Z"}, ["flush"]),
        ]
        for name, args, expected in cases:
            mark = len(r.calls)
            await r.runtime.call_tool(name, args)
            await settle()
            assert r.since(mark) == expected, (name, args)


@async_test
async def test_fixed_rate_batch_matches_worked_example_4() -> None:
    # (h) example 4: "fast" created 11:30 every 300 s, "slow" created 11:49
    # every 600 s; at 12:00 one batch [fast 12:00, slow 11:59], both
    # dispatched with acceptedAt 12:00:00.000Z; at 12:05 only fast.
    start = T0 - 30 * MINUTE
    async with rig(wall=start) as r:
        r.host.set_busy(True)  # keep the setup from delivering early
        await r.create(prompt="fast", every_seconds=300)
        r.clock.set_wall(T0 - 11 * MINUTE)
        await r.create(prompt="slow", every_seconds=600)
        r.clock.set_wall(T0)
        mark = len(r.calls)
        r.host.end_turn()
        await settle()
        assert r.since(mark) == [*delivery("schedule-1@2026-08-05T12:00:00.000Z", 2), "flush"]
        (message,) = r.host.taken
        assert batch_items(message) == [
            {
                "schedule_id": "schedule-1",
                "occurrence_at": "2026-08-05T12:00:00.000Z",
                "reminder_prompt": "fast",
            },
            {
                "schedule_id": "schedule-2",
                "occurrence_at": "2026-08-05T11:59:00.000Z",
                "reminder_prompt": "slow",
            },
        ]
        dispatches = [c for c in r.log.changes() if c["operation"] == "dispatch"]
        assert dispatches == [
            {"version": 1, "operation": "dispatch", "id": i, "acceptedAt": format_instant(T0)}
            for i in ("schedule-1", "schedule-2")
        ]
        listed = await r.views()
        assert [v["scheduledAt"] for v in listed] == [
            "2026-08-05T12:05:00.000Z",
            "2026-08-05T12:09:00.000Z",
        ]
        r.clock.set_wall(T0 + 5 * MINUTE)
        r.runtime.request_drive()
        await settle()
        assert [m.key for m in r.host.taken] == [
            "schedule-1@2026-08-05T12:00:00.000Z",
            "schedule-1@2026-08-05T12:05:00.000Z",
        ]
        assert [o.id for o in r.host.taken[1].occurrences] == ["schedule-1"]


@async_test
async def test_list_queued_behind_a_create_whose_barrier_failed_lists_it() -> None:
    # Reference [T]: tool calls share one FIFO and observe each other's
    # committed (if unconfirmed) results.
    async with rig() as r:
        r.log.fail("flush", skip=1)  # the create's barrier
        created, listed = await asyncio.gather(
            r.runtime.call_tool("schedule_create", {"prompt": "a", "after_seconds": 60}),
            r.runtime.call_tool("schedule_list", {}),
        )
        assert json.loads(created) == {
            "code": "persistence_uncertain",
            "message": "Schedule persistence is uncertain; retry with schedule_list before "
            "relying on this result.",
            "operation": "create",
            "id": "schedule-1",
        }
        assert [v["id"] for v in json.loads(listed)] == ["schedule-1"]
        assert r.calls[-4:] == ["flush", "append(create)", "flush!", "flush"]


@async_test
async def test_a_tool_call_does_not_wait_for_the_hand_over_in_flight() -> None:
    async with rig() as r:
        await r.create(after_seconds=10)
        gate = r.host.followup_gate = Gate()
        await r.advance(10 * SECOND)
        await gate.entered.wait()
        mark = len(r.calls)
        answer = await asyncio.wait_for(r.create(after_seconds=60), 30)
        assert answer["id"] == "schedule-2"
        assert r.since(mark) == ["flush", "append(create)", "flush"]
        gate.open()
        await settle()
        assert r.since(mark)[3:] == ["release", "append(delivered)", "flush"]
        assert r.host.keys == [ONE_SHOT_KEY]
