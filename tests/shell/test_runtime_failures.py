"""Failure injection at every step: preflight, append, barrier, the
delivered mark, the snapshot, and the host.

A tool reports success only for what a flush confirmed, and otherwise
``persistence_uncertain`` with its ``operation`` (and ``id`` when known); a
change whose barrier failed stays in the live log and the next successful
flush keeps it. A delivery that failed at any step is retried by the
runtime itself (backoff on the virtual clock) and reaches the host exactly
once, always after its follow-up record is durable.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Final

import pytest

from tickler.core import decide, fold
from tickler.shell import _unit_of_work as unit_of_work

from .support import (
    MINUTE,
    SECOND,
    Rig,
    async_test,
    has,
    rig,
)

UNCERTAIN: Final = (
    "Schedule persistence is uncertain; retry with schedule_list before relying on this result."
)
INTERNAL: Final = {"code": "internal_error", "message": "The schedule operation failed."}
KEY: Final = "schedule-1@2026-08-05T12:00:10.000Z"


def uncertain(operation: str, schedule_id: str | None = None) -> dict[str, str]:
    value = {"code": "persistence_uncertain", "message": UNCERTAIN, "operation": operation}
    if schedule_id is not None:
        value["id"] = schedule_id
    return value


# -- tool calls ----------------------------------------------------------------


@async_test
async def test_create_preflight_failure_is_uncertain_without_an_id() -> None:
    async with rig() as r:
        r.log.fail("flush")
        answer = await r.runtime.call_tool("schedule_create", {"prompt": "a", "after_seconds": 9})
        assert answer == (
            '{"code":"persistence_uncertain","message":"' + UNCERTAIN + '","operation":"create"}'
        )
        assert r.log.length == 0
        assert r.runtime.state.active == ()
        assert (await r.create(after_seconds=9))["id"] == "schedule-1"


@async_test
async def test_create_append_failure_appends_nothing() -> None:
    async with rig() as r:
        r.log.fail("append")
        assert await r.create(after_seconds=9) == INTERNAL
        assert r.log.length == 0
        assert await r.views() == []
        assert r.runtime.next_wake is None
        assert (await r.create(after_seconds=9))["id"] == "schedule-1"


def test_a_fault_in_the_rules_is_the_calls_internal_error(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A tool call never raises (issue 25, item 3: a fault in the rules
    reached the caller as a ValueError): it answers ``internal_error``, as
    ``handle`` does, the fault is logged, and the session goes on."""

    def faulty(state: Any, command: Any, now: int, **options: Any) -> Any:
        if getattr(command, "prompt", None) == "boom":
            raise ValueError("a fault in the rules")
        return decide(state, command, now, **options)

    monkeypatch.setattr(unit_of_work, "decide", faulty)

    async def scenario() -> None:
        async with rig() as r:
            answer = await r.runtime.call_tool("schedule_create", {"prompt": "boom", "at": "x"})
            assert json.loads(answer) == INTERNAL
            assert r.log.length == 0
            assert (await r.create(after_seconds=9))["id"] == "schedule-1"

    with caplog.at_level("ERROR", logger="tickler.runtime"):
        asyncio.run(scenario())
    assert [r.message for r in caplog.records] == ["schedule: the rules failed on a create call"]
    assert caplog.records[0].exc_info is not None


@async_test
async def test_create_barrier_failure_names_the_id_and_the_next_flush_keeps_it() -> None:
    async with rig() as r:
        r.log.fail("flush", skip=1)
        answer = await r.runtime.call_tool("schedule_create", {"prompt": "a", "after_seconds": 60})
        assert answer == (
            '{"code":"persistence_uncertain","message":"'
            + UNCERTAIN
            + '","operation":"create","id":"schedule-1"}'
        )
        assert r.log.labels() == ["create"]
        assert r.log.durable == 0  # not confirmed, but retained
        assert [v["id"] for v in await r.views()] == ["schedule-1"]
        assert r.log.durable == 1
        assert (await r.create(after_seconds=60))["id"] == "schedule-2"


@async_test
async def test_create_whose_barrier_failed_still_fires_at_its_time() -> None:
    # The record is in the live log (the reference: "may still fire"), so
    # with no further tool call it is still delivered, and only once the
    # log holding it is durable.
    async with rig() as r:
        r.log.fail("flush", skip=1)
        assert await r.create(after_seconds=10) == uncertain("create", "schedule-1")
        await r.advance(12 * SECOND, step_ms=100)
        assert r.host.keys == [KEY]
        assert r.host.durable_when_offered == [True]


@async_test
async def test_a_failed_tool_barrier_is_retried_without_further_activity() -> None:
    async with rig() as r:
        r.log.fail("flush", skip=1)
        assert await r.create(after_seconds=3600) == uncertain("create", "schedule-1")
        assert r.log.durable == 0
        await r.advance(MINUTE, step_ms=50)
        assert r.log.durable == r.log.length == 1


@async_test
async def test_list_preflight_failure_is_uncertain() -> None:
    async with rig() as r:
        await r.create(after_seconds=60)
        r.log.fail("flush")
        assert await r.views() == uncertain("list")


@async_test
async def test_delete_preflight_failure_names_the_id_and_deletes_nothing() -> None:
    async with rig() as r:
        await r.create(after_seconds=60)
        r.log.fail("flush")
        assert await r.delete("schedule-1") == uncertain("delete", "schedule-1")
        assert r.log.labels() == ["create"]
        assert [v["id"] for v in await r.views()] == ["schedule-1"]


@async_test
async def test_delete_barrier_failure_names_the_id_and_the_reminder_never_fires() -> None:
    async with rig() as r:
        await r.create(after_seconds=10)
        r.log.fail("flush", skip=1)
        assert await r.delete("schedule-1") == uncertain("delete", "schedule-1")
        assert r.log.labels() == ["create", "delete"]
        assert r.log.durable == 1
        await r.advance(MINUTE, step_ms=SECOND)
        assert r.host.offered == []
        assert await r.views() == []
        assert r.log.durable == 2


@async_test
async def test_delete_append_failure_keeps_the_reminder() -> None:
    async with rig() as r:
        await r.create(after_seconds=10)
        r.log.fail("append")
        assert await r.delete("schedule-1") == INTERNAL
        assert r.log.labels() == ["create"]
        await r.advance(11 * SECOND, step_ms=SECOND)
        assert r.host.keys == [KEY]


SCRIPT: Final[list[tuple[str, dict[str, object]]]] = [
    ("schedule_create", {"prompt": "a", "after_seconds": 600}),
    ("schedule_create", {"prompt": "b", "every_seconds": 900}),
    ("schedule_list", {}),
    ("schedule_delete", {"id": "schedule-1"}),
    ("schedule_create", {"prompt": "c", "at": "2026-08-05T13:00:00Z"}),
    ("schedule_delete", {"id": "schedule-2"}),
    ("schedule_list", {}),
]


async def _play_script(r: Rig) -> list[Any]:
    answers = []
    for name, args in SCRIPT:
        answer = await r.tool(name, args)
        answers.append(answer)
        if not (isinstance(answer, dict) and "code" in answer and "deleted" not in answer):
            # A success is only ever reported for a confirmed log.
            assert r.log.durable == r.log.length, (name, answer)
    return answers


@pytest.mark.parametrize("failing_flush", range(1, 13))
@async_test
async def test_nothing_is_reported_confirmed_unless_flushed(failing_flush: int) -> None:
    async with rig() as r:
        r.log.fail("flush", skip=failing_flush - 1)  # counted from after start()
        answers = await _play_script(r)
        failures = [a for a in answers if isinstance(a, dict) and a.get("code")]
        assert all(a["code"] in {"persistence_uncertain", "schedule_not_found"} for a in failures)
        assert sum(a["code"] == "persistence_uncertain" for a in failures) <= 1
        # The live state is the log's own fold, and one good flush keeps it.
        await r.views()
        assert r.log.durable == r.log.length
        assert fold(r.log.all_events()).active == r.runtime.state.active


# -- deliveries ------------------------------------------------------------------


@async_test
async def test_delivery_preflight_failure_is_retried_by_itself() -> None:
    async with rig() as r:
        await r.create(after_seconds=10)
        r.log.fail("flush", times=3)
        await r.advance(10 * SECOND)
        assert r.calls[-1] == "flush!"
        assert r.host.offered == []
        await r.advance(2 * SECOND, step_ms=10)
        assert r.host.keys == [KEY]
        assert len(r.host.offered) == 1
        assert r.log.count("dispatch") == 1


@async_test
async def test_delivery_append_failure_appends_nothing_and_is_retried() -> None:
    async with rig() as r:
        await r.create(after_seconds=10)
        r.log.fail("append", when=has("followup"), times=2)
        await r.advance(10 * SECOND)
        assert "append(dispatch,followup)!" in r.calls
        assert r.log.labels() == ["create"]
        assert r.runtime.pending_followups == ()
        await r.advance(2 * SECOND, step_ms=10)
        assert r.host.keys == [KEY]
        assert len(r.host.offered) == 1
        assert r.log.labels() == ["create", "dispatch", "followup", "delivered"]


@async_test
async def test_delivery_barrier_failure_hands_over_only_after_a_flush_exactly_once() -> None:
    async with rig() as r:
        await r.create(after_seconds=10)
        r.log.fail("flush", skip=1, times=2)  # the barrier, then the first retry
        await r.advance(10 * SECOND)
        assert r.log.labels() == ["create", "dispatch", "followup"]
        assert r.host.offered == []
        (pending,) = r.runtime.pending_followups
        assert pending.key == KEY
        await r.advance(2 * SECOND, step_ms=10)
        assert r.host.keys == [KEY]
        assert len(r.host.offered) == 1
        assert r.host.durable_when_offered == [True]
        assert r.log.labels() == ["create", "dispatch", "followup", "delivered"]
        assert r.runtime.pending_followups == ()


@async_test
async def test_delivered_mark_failure_neither_repeats_nor_loses_the_delivery() -> None:
    async with rig() as r:
        await r.create(after_seconds=10)
        r.log.fail("append", when=has("delivered"))
        await r.advance(10 * SECOND)
        await r.advance(MINUTE, step_ms=SECOND)
        assert r.host.keys == [KEY]
        assert len(r.host.offered) == 1
        assert r.runtime.pending_followups == ()
        assert r.log.labels() == ["create", "dispatch", "followup"]


@async_test
async def test_host_followup_raising_is_retried_with_the_same_key() -> None:
    async with rig() as r:
        await r.create(after_seconds=10)
        r.host.followup_errors = 2
        await r.advance(10 * SECOND)
        assert [m.key for m in r.host.offered] == [KEY]
        assert r.host.taken == []
        assert [m.key for m in r.runtime.pending_followups] == [KEY]
        await r.advance(2 * SECOND, step_ms=10)
        assert [m.key for m in r.host.offered] == [KEY] * 3
        assert len({m.text for m in r.host.offered}) == 1
        assert r.host.keys == [KEY]
        assert r.log.count("dispatch") == 1
        assert r.log.count("followup") == 1
        assert r.runtime.pending_followups == ()


@async_test
async def test_claim_raising_is_retried() -> None:
    async with rig() as r:
        await r.create(after_seconds=10)
        r.host.claim_errors = 1
        await r.advance(10 * SECOND)
        assert r.calls[-1] == "claim!"
        await r.advance(2 * SECOND, step_ms=10)
        assert r.host.keys == [KEY]
        assert r.log.count("dispatch") == 1


@async_test
async def test_idle_wait_raising_is_retried() -> None:
    async with rig() as r:
        await r.create(after_seconds=10)
        r.host.set_busy(True)
        r.host.idle_errors = 1
        await r.advance(10 * SECOND)
        await r.advance(5 * SECOND, step_ms=10)
        assert r.host.offered == []
        r.host.end_turn()
        await r.advance(5 * SECOND, step_ms=10)
        assert r.host.keys == [KEY]


@async_test
async def test_persistent_preflight_failure_backs_off_then_recovers() -> None:
    async with rig() as r:
        await r.create(after_seconds=10)
        r.log.fail("flush", times=None)
        await r.advance(10 * SECOND)
        await r.advance(10 * SECOND, step_ms=10)
        failed = r.calls.count("flush!")
        assert 3 <= failed <= 10  # a growing backoff, not a poll
        r.log.heal()
        await r.advance(40 * SECOND, step_ms=100)
        assert r.host.keys == [KEY]
        assert r.log.count("dispatch") == 1


# -- snapshots -------------------------------------------------------------------


@async_test
async def test_snapshot_flush_failure_saves_nothing() -> None:
    async with rig() as r:
        await r.create(after_seconds=60)
        r.log.fail("flush")
        assert await r.runtime.save_snapshot() is False
        assert r.log.load_snapshot() is None
        assert "snapshot" not in r.calls
        assert await r.runtime.save_snapshot() is True


@async_test
async def test_snapshot_store_failure_is_reported_and_harmless() -> None:
    async with rig() as r:
        await r.create(after_seconds=10)
        r.log.fail("snapshot")
        assert await r.runtime.save_snapshot() is False
        assert r.log.load_snapshot() is None
        await r.advance(11 * SECOND, step_ms=SECOND)
        assert r.host.keys == [KEY]
        assert json.loads(await r.runtime.call_tool("schedule_list", {})) == []
