"""``pending_work``: what a session still owes, from its events alone, and
the runtime's live ``pending_deliveries``."""

from __future__ import annotations

import pytest

from tickler.core import CorruptScheduleLog, Occurrence
from tickler.shell._host import FollowUp
from tickler.shell._pending import PendingDelivery, PendingTurn, pending_work
from tickler.shell._records import encode_followup, error_text

from .support import SECOND, T0, append_raw, async_test, new_memory_log, rig

KEY = "schedule-1@2026-08-05T12:00:10.000Z"
MESSAGE = FollowUp(KEY, "text", (Occurrence("schedule-1", "2026-08-05T12:00:10.000Z", "p"),))


@async_test
async def test_a_followup_is_pending_until_marked_or_taken_as_input() -> None:
    log = new_memory_log()
    await append_raw(log, "tickler/followup", encode_followup(MESSAGE), T0 + 10 * SECOND)
    assert pending_work(log.events()).deliveries == (
        PendingDelivery(KEY, ("schedule-1",), 0, None, T0 + 10 * SECOND),
    )
    await append_raw(
        log, "tickler/turn-input", {"n": 0, "source": "reminder", "text": "t", "key": KEY}
    )
    pending = pending_work(log.events())
    assert pending.deliveries == ()  # the host took it: the mark may be missing
    assert pending.turns == (PendingTurn(0, "reminder", KEY),)
    await append_raw(log, "tickler/delivered", {"key": KEY})
    await append_raw(log, "tickler/turn-start", {"input": 0})
    await append_raw(log, "tickler/turn", {"input": 0, "reply": "ok"})
    assert pending_work(log.events()) == pending_work([])
    assert not pending_work(log.events()).stuck


@async_test
async def test_hand_over_failures_add_up_across_runtimes() -> None:
    log = new_memory_log()
    await append_raw(log, "tickler/followup", encode_followup(MESSAGE))
    for attempt in (1, 2, 4):  # one runtime's records: at least 4 failures
        await append_raw(
            log, "tickler/followup-failed", {"key": KEY, "attempt": attempt, "error": "E: a"}
        )
    for attempt in (1, 2):  # the next runtime's: at least 2 more
        await append_raw(
            log, "tickler/followup-failed", {"key": KEY, "attempt": attempt, "error": "E: b"}
        )
    [row] = pending_work(log.events()).deliveries
    assert (row.failures, row.last_error) == (6, "E: b")
    assert pending_work(log.events()).stuck


@async_test
async def test_turn_failures_and_abandonment() -> None:
    log = new_memory_log()
    await append_raw(log, "tickler/turn-input", {"n": 0, "source": "user", "text": "bad"})
    await append_raw(log, "tickler/turn-input", {"n": 1, "source": "user", "text": "next"})
    for attempt in (1, 2):
        await append_raw(log, "tickler/turn-start", {"input": 0})
        await append_raw(
            log, "tickler/turn-failed", {"input": 0, "attempt": attempt, "error": f"E: {attempt}"}
        )
    await append_raw(log, "tickler/turn-start", {"input": 0})  # cut by a crash
    pending = pending_work(log.events())
    assert pending.turns == (
        PendingTurn(0, "user", None, 3, 2, "E: 2"),
        PendingTurn(1, "user", None),
    )
    await append_raw(log, "tickler/turn-abandoned", {"input": 0, "attempts": 3})
    pending = pending_work(log.events())
    assert pending.turns == (PendingTurn(1, "user", None),)
    assert pending.abandoned == (PendingTurn(0, "user", None, 3, 2, "E: 2"),)


@async_test
async def test_a_turn_cut_by_a_closing_session_is_owed_not_stuck() -> None:
    log = new_memory_log()
    await append_raw(log, "tickler/turn-input", {"n": 0, "source": "user", "text": "slow"})
    await append_raw(log, "tickler/turn-start", {"input": 0})
    await append_raw(log, "tickler/turn-cut", {"input": 0, "attempt": 1, "reason": "timeout"})
    pending = pending_work(log.events())
    assert pending.turns == (PendingTurn(0, "user", None, starts=1, cuts=1),)
    assert not pending.stuck  # it runs again when the session next runs
    await append_raw(log, "tickler/turn-start", {"input": 0})  # then cut off by a crash
    pending = pending_work(log.events())
    assert pending.turns == (PendingTurn(0, "user", None, starts=2, cuts=1),)
    assert pending.stuck


@async_test
async def test_a_malformed_record_is_a_corrupt_log_naming_its_seq() -> None:
    log = new_memory_log()
    await append_raw(log, "tickler/turn-input", {"n": 0, "source": "user", "text": "a"})
    await append_raw(log, "tickler/turn-failed", {"input": "zero"})
    with pytest.raises(CorruptScheduleLog) as caught:
        pending_work(log.events())
    assert caught.value.index == 1


@async_test
async def test_the_runtime_records_failed_hand_overs_sparsely_and_shows_them_live() -> None:
    async with rig() as r:
        await r.create(prompt="stretch", after_seconds=10)
        r.host.followup_errors = 1_000
        await r.advance(10 * SECOND)
        for _ in range(600):
            if len(r.host.offered) >= 9:
                break
            await r.advance(SECOND)
        failures = len(r.host.offered)
        assert failures >= 9
        [live] = r.runtime.pending_deliveries
        assert (live.key, live.failures, live.last_error) == (KEY, failures, "HostFault: followup")
        # The log holds the 1st, 2nd, 4th, 8th... failure, not every retry.
        recorded = [e for e in r.log.all_events() if e.type == "tickler/followup-failed"]
        assert len(recorded) == failures.bit_length()
        [row] = pending_work(r.log.all_events()).deliveries
        assert row.key == KEY
        assert row.failures == 1 << (failures.bit_length() - 1)
        assert row.last_error == "HostFault: followup"
        r.host.followup_errors = 0
        for _ in range(600):
            if r.host.taken:
                break
            await r.advance(SECOND)
        assert r.runtime.pending_deliveries == ()
        assert pending_work(r.log.all_events()).deliveries == ()


def test_error_text_is_one_bounded_line_with_the_type() -> None:
    assert error_text(ValueError("bad\nvalue")) == "ValueError: bad value"
    assert error_text(KeyError()) == "KeyError"
    long = error_text(RuntimeError("x" * 5_000))
    assert long.startswith("RuntimeError: xxx")
    assert len(long) == 500
