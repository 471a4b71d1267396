"""The failed hand-overs of a follow-up are counted per follow-up from the
log, so the count goes on across runtimes and restarts: the log keeps a
``tickler/followup-failed`` record at its 1st, 2nd, 4th, 8th... failure in
all, never again at 1 after a restart (growth stays logarithmic while a
target is down), from the log and from a snapshot alike. A runtime that
stops with failures it did not record records the count it reached (on a
log without a failure index), so a restart does not lose them.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from tickler.shell._clock import VirtualClock
from tickler.shell._pending import pending_work

from .support import SECOND, T0, Rig, async_test, new_memory_log, rig

KEY = "schedule-1@2026-08-05T12:00:10.000Z"


async def until(r: Rig, done: Callable[[], bool]) -> None:
    """Advance in steps shorter than any retry pause (50 ms at least), so
    that it stops right at the failure asked for."""
    for _ in range(10_000):
        if done():
            return
        await r.advance(10)
    assert done(), "no progress"


def attempts(r: Rig) -> list[int]:
    return [
        json.loads(bytes(e.data))["attempt"]
        for e in r.log.all_events()
        if e.type == "tickler/followup-failed"
    ]


@pytest.mark.parametrize("from_snapshot", [False, True], ids=["log", "snapshot"])
@async_test
async def test_the_failure_count_goes_on_across_a_restart(from_snapshot: bool) -> None:
    clock = VirtualClock(T0)
    memory = new_memory_log()
    async with rig(clock=clock, log=memory) as first:
        await first.create(after_seconds=10)
        first.host.followup_errors = 1_000  # the target is down
        await first.advance(10 * SECOND)
        await until(first, lambda: len(first.host.offered) == 4)
        assert attempts(first) == [1, 2, 4]
        [row] = first.runtime.pending_deliveries
        assert row.failures == 4
        if from_snapshot:
            assert await first.runtime.save_snapshot()
    snapshot = memory.load_snapshot()
    assert (snapshot is not None) == from_snapshot
    async with rig(clock=clock, log=memory, start=False) as second:
        second.host.followup_errors = 1_000
        second.host.set_busy(True)  # nothing handed over until the count is read
        await second.runtime.start()
        if snapshot is not None:
            assert second.log.reads == [snapshot.through]  # loaded from the snapshot
        [row] = second.runtime.pending_deliveries
        assert (row.key, row.failures, row.last_error) == (KEY, 4, "HostFault: followup")
        second.host.end_turn()
        await until(second, lambda: len(second.host.offered) == 4)  # failures 5 to 8
        assert attempts(second) == [1, 2, 4, 8]
        [row] = second.runtime.pending_deliveries
        assert row.failures == 8
        [logged] = pending_work(second.log.all_events()).deliveries
        assert logged.failures == 8
        second.host.followup_errors = 0
        await until(second, lambda: bool(second.host.taken))
        assert second.runtime.pending_deliveries == ()
        assert attempts(second) == [1, 2, 4, 8]


@async_test
async def test_records_stay_logarithmic_over_many_short_runtimes() -> None:
    # Each runtime fails a few times and stops, as a process restarted
    # again and again while its target is down.
    clock = VirtualClock(T0)
    memory = new_memory_log()
    offered = 0
    for life in range(8):
        async with rig(clock=clock, log=memory, start=False) as r:
            r.host.followup_errors = 1_000
            await r.runtime.start()
            if life == 0:
                await r.create(after_seconds=10)
                await r.advance(10 * SECOND)
            await until(r, lambda: len(r.host.offered) == 4)
            [row] = r.runtime.pending_deliveries
            assert row.failures == offered + len(r.host.offered)
            offered += len(r.host.offered)
    assert offered == 32
    recorded = [
        json.loads(bytes(e.data))["attempt"]
        for e in memory.events()
        if e.type == "tickler/followup-failed"
    ]
    # 1, 2, 4 ... 32, and one record when a runtime stopped past its last
    # one (12, 20, 24, 28); never 1, 2, 4 again in each runtime.
    assert recorded == [1, 2, 4, 8, 12, 16, 20, 24, 28, 32]
    assert pending_work(memory.events()).deliveries[0].failures == 32
