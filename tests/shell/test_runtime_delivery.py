"""What gets delivered, when, and in which order.

One-shots go one per follow-up turn (earliest target, then creation order),
the next only once the previous turn has finished; overdue fixed-rate
records go together in one batch with one shared ``acceptedAt`` and their
latest occurrence only; a busy agent is waited for once; a clock rolled back
between the wake and the claim delivers nothing early; a delete and a
delivery are ordered by the session's FIFO.
"""

from __future__ import annotations

import asyncio

from tickler.core import format_instant
from tickler.shell._clock import settle

from .support import (
    MINUTE,
    SECOND,
    T0,
    async_test,
    batch_items,
    occurrence_ms,
    rig,
)


@async_test
async def test_due_one_shots_go_one_per_turn_earliest_target_then_creation_order() -> None:
    async with rig(turns=True) as r:
        await r.create(prompt="late", after_seconds=30)  # schedule-1, T0+30s
        await r.create(prompt="early", after_seconds=10)  # schedule-2, T0+10s
        await r.create(prompt="tie", at="2026-08-05T12:00:10Z")  # schedule-3, T0+10s
        await r.create(prompt="rate", every_seconds=300)  # schedule-4, T0+5min
        r.jump(10 * MINUTE)  # everything is overdue at once
        await r.advance(SECOND)
        expected = [
            "schedule-2@2026-08-05T12:00:10.000Z",
            "schedule-3@2026-08-05T12:00:10.000Z",
            "schedule-1@2026-08-05T12:00:30.000Z",
        ]
        for turn in range(1, len(expected) + 1):
            assert r.host.keys == expected[:turn]
            assert r.host.busy  # the reminder's turn runs
            # While it runs the next one waits: its claim is refused, and the
            # runtime waits for idle once, however long the turn takes.
            waits = r.host.idle_waits
            await r.advance(5 * MINUTE, step_ms=SECOND)
            assert r.host.keys == expected[:turn]
            assert r.host.idle_waits == waits == turn
            assert r.calls.count("claim") == turn
            r.host.end_turn()
            await settle()
        # The one-shots are done; now the fixed-rate batch, alone.
        assert len(r.host.taken) == 4
        batch = r.host.taken[3]
        assert [o.id for o in batch.occurrences] == ["schedule-4"]
        assert batch.text.startswith("[SCHEDULE REMINDER BATCH]\n")
        assert [m.text.splitlines()[0] for m in r.host.taken[:3]] == ["[SCHEDULE REMINDER]"] * 3
        assert r.log.count("followup") == 4
        assert r.log.count("dispatch") == 4


@async_test
async def test_overdue_fixed_rate_records_go_in_one_batch_latest_occurrence_only() -> None:
    async with rig() as r:
        await r.create(prompt="a", every_seconds=420)  # schedule-1, target T0+420s
        await r.create(prompt="b", every_seconds=300)  # schedule-2, target T0+300s
        await r.create(prompt="c", every_seconds=300)  # schedule-3, target T0+300s
        await r.create(prompt="d", every_seconds=3600)  # schedule-4, not due below
        decision = T0 + 1207 * SECOND
        r.clock.set_wall(decision)
        r.runtime.request_drive()
        await settle()
        (message,) = r.host.taken
        # Sorted by stored target, then creation order; each record's latest
        # lattice point at or before the decision instant, never a backlog.
        assert batch_items(message) == [
            {
                "schedule_id": "schedule-2",
                "occurrence_at": "2026-08-05T12:20:00.000Z",
                "reminder_prompt": "b",
            },
            {
                "schedule_id": "schedule-3",
                "occurrence_at": "2026-08-05T12:20:00.000Z",
                "reminder_prompt": "c",
            },
            {
                "schedule_id": "schedule-1",
                "occurrence_at": "2026-08-05T12:14:00.000Z",
                "reminder_prompt": "a",
            },
        ]
        assert message.key == "schedule-2@2026-08-05T12:20:00.000Z"
        dispatches = [c for c in r.log.changes() if c["operation"] == "dispatch"]
        assert [d["id"] for d in dispatches] == ["schedule-2", "schedule-3", "schedule-1"]
        assert {d["acceptedAt"] for d in dispatches} == {format_instant(decision)}
        assert r.calls.count("append(dispatch,dispatch,dispatch,followup)") == 1
        listed = await r.views()
        assert [(v["id"], v["scheduledAt"], v["state"]) for v in listed] == [
            ("schedule-1", "2026-08-05T12:21:00.000Z", "scheduled"),
            ("schedule-2", "2026-08-05T12:25:00.000Z", "scheduled"),
            ("schedule-3", "2026-08-05T12:25:00.000Z", "scheduled"),
            ("schedule-4", "2026-08-05T13:00:00.000Z", "scheduled"),
        ]
        assert r.runtime.next_wake == T0 + 21 * MINUTE


@async_test
async def test_busy_agent_claim_refused_one_idle_wait_then_delivered() -> None:
    async with rig() as r:
        await r.create(prompt="first", after_seconds=10)
        await r.create(prompt="second", after_seconds=20)
        r.host.set_busy(True)
        await r.advance(30 * SECOND, step_ms=SECOND)
        for _ in range(3):
            r.runtime.request_drive()
            await settle()
        await r.views()
        assert r.host.offered == []
        assert r.calls.count("when_idle") == 1
        assert r.calls.count("claim") == 0
        assert r.calls.count("claim-refused") >= 1
        r.host.end_turn()
        await settle()
        assert r.host.keys == [
            "schedule-1@2026-08-05T12:00:10.000Z",
            "schedule-2@2026-08-05T12:00:20.000Z",
        ]
        assert r.calls.count("when_idle") == 1


@async_test
async def test_rollback_between_wake_and_claim_delivers_nothing_early() -> None:
    async with rig() as r:
        await r.create(after_seconds=10)
        target = T0 + 10 * SECOND

        def roll_back() -> None:
            r.host.on_claim = None
            r.clock.set_wall(r.clock.now_ms() - 5 * SECOND)

        r.host.on_claim = roll_back
        mark = len(r.calls)
        await r.advance(10 * SECOND)
        # Claimed at the wake, but the decision under the claim reads the
        # rolled-back clock: nothing appended, the claim released, re-armed.
        assert r.since(mark) == ["flush", "claim", "release"]
        assert r.host.offered == []
        assert r.log.labels() == ["create"]
        assert r.runtime.next_wake == target
        await r.advance(4 * SECOND, step_ms=100)
        assert r.host.offered == []
        await r.advance(2 * SECOND, step_ms=100)
        assert r.host.keys == ["schedule-1@2026-08-05T12:00:10.000Z"]
        (taken_at,) = r.host.taken_wall
        assert target <= taken_at <= target + SECOND


@async_test
async def test_rollback_during_the_preflight_rearms_without_claiming() -> None:
    async with rig() as r:
        await r.create(after_seconds=10)
        target = T0 + 10 * SECOND
        r.log.hook("flush", lambda: r.clock.set_wall(r.clock.now_ms() - 10 * MINUTE))
        mark = len(r.calls)
        await r.advance(10 * SECOND)
        assert r.since(mark) == ["flush"]
        assert r.runtime.next_wake == target
        await r.advance(10 * MINUTE - SECOND, step_ms=MINUTE)
        assert r.host.offered == []
        await r.advance(2 * SECOND, step_ms=100)
        (taken_at,) = r.host.taken_wall
        assert target <= taken_at <= target + SECOND


@async_test
async def test_delete_queued_behind_a_pending_delivery_finds_it_dispatched() -> None:
    async with rig() as r:
        await r.create(after_seconds=10)
        gate = r.log.gate("flush")  # the delivery's preflight
        await r.advance(10 * SECOND)
        await gate.entered.wait()
        delete = asyncio.ensure_future(r.delete("schedule-1"))
        await settle()
        assert not delete.done()
        gate.open()
        assert await delete == {"id": "schedule-1", "deleted": False, "code": "schedule_not_found"}
        assert r.host.keys == ["schedule-1@2026-08-05T12:00:10.000Z"]
        assert [c["operation"] for c in r.log.changes()] == ["create", "dispatch"]


@async_test
async def test_delivery_queued_behind_a_delete_delivers_nothing() -> None:
    async with rig() as r:
        await r.create(after_seconds=10)
        gate = r.log.gate("flush")  # the delete's preflight
        delete = asyncio.ensure_future(r.delete("schedule-1"))
        await gate.entered.wait()
        await r.advance(10 * SECOND)  # the timer wakes; the drive queues
        gate.open()
        assert await delete == {"id": "schedule-1", "deleted": True}
        await r.advance(MINUTE, step_ms=SECOND)
        assert r.host.offered == []
        assert "claim" not in r.calls
        assert [c["operation"] for c in r.log.changes()] == ["create", "delete"]
        assert r.runtime.next_wake is None


@async_test
async def test_delete_while_waiting_for_idle_wins() -> None:
    async with rig() as r:
        await r.create(after_seconds=10)
        r.host.set_busy(True)
        await r.advance(10 * SECOND)
        assert r.host.idle_waits == 1
        assert await r.delete("schedule-1") == {"id": "schedule-1", "deleted": True}
        r.host.end_turn()
        await r.advance(MINUTE, step_ms=SECOND)
        assert r.host.offered == []
        assert "claim" not in r.calls


@async_test
async def test_a_committed_followup_survives_a_later_delete_of_its_series() -> None:
    # The batch was appended (and flushed) before the delete in FIFO order,
    # so it is handed over; the deleted series yields nothing more.
    async with rig() as r:
        await r.create(prompt="rate", every_seconds=300)
        r.host.followup_errors = 1
        await r.advance(5 * MINUTE)
        assert len(r.runtime.pending_followups) == 1
        assert await r.delete("schedule-1") == {"id": "schedule-1", "deleted": True}
        await r.advance(2 * SECOND, step_ms=50)
        assert r.host.keys == ["schedule-1@2026-08-05T12:05:00.000Z"]
        await r.advance(30 * MINUTE, step_ms=MINUTE)
        assert r.host.keys == ["schedule-1@2026-08-05T12:05:00.000Z"]
        assert [c["operation"] for c in r.log.changes()] == ["create", "dispatch", "delete"]
        assert occurrence_ms(r.host.taken[0]) == [T0 + 5 * MINUTE]
