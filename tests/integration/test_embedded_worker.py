"""``tickler worker --store``: a worker wakes cold sessions of a JSONL
directory or an SQLite file through the store's wake index, exactly once,
and leaves a session a live process holds to that process.

The worker's clock is virtual (a fixed instant past every reminder), so
what is due never depends on how fast this machine is; the waits below
are for observed progress, with generous bounds that are never timing
claims."""

from __future__ import annotations

import asyncio
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from tickler.adapters.stores import JsonlStore, _jsonl
from tickler.adapters.stores._jsonl import JsonlLog
from tickler.adapters.stores._sqlite import SqliteLog
from tickler.adapters.stores._wake_file import changed_behind
from tickler.adapters.worker._worker import Worker
from tickler.shell._clock import VirtualClock
from tickler.shell._host import FollowUp
from tickler.shell._ports import SessionLocked

from .embedded_support import (
    KINDS,
    Kind,
    delivered,
    events_of,
    followups,
    index_db,
    index_rows,
    seed,
    store_at,
    store_path,
)
from .worker_support import Recorder, running, wait_until

T0 = 1_785_931_200_000  # 2026-08-05T12:00:00.000Z
LATER = T0 + 3_600_000  # every reminder below is due by then
STRETCH = {"prompt": "stretch", "after_seconds": 10}
FAR = {"prompt": "far", "after_seconds": 86_400 * 3}

each_kind = pytest.mark.parametrize("kind", KINDS)


def worker_of(kind: Kind, root: Path, recorder: Recorder) -> Worker:
    return Worker(store_at(kind, root), recorder.target("w"), clock=VirtualClock(LATER))


@each_kind
async def test_a_worker_delivers_each_cold_session_once(kind: Kind, tmp_path: Path) -> None:
    seeder = store_at(kind, tmp_path)
    await seed(
        seeder, {f"s{i}": [STRETCH] for i in range(3)} | {"far": [FAR]}, clock=VirtualClock(T0)
    )
    await seeder.close()
    rows = index_rows(kind, tmp_path)
    assert {sid: row.next_due_at for sid, row in rows.items()} == {
        **{f"s{i}": T0 + 10_000 for i in range(3)},
        "far": T0 + 3 * 86_400_000,
    }
    assert all(row.holder is None for row in rows.values())
    recorder = Recorder()
    async with running(worker_of(kind, tmp_path, recorder)):
        await recorder.wait_for(3)
        await wait_until(
            lambda: all(index_rows(kind, tmp_path)[f"s{i}"].next_due_at is None for i in range(3)),
            30,
            "the index to show nothing pending",
        )
    assert sorted(recorder.keys()) == [
        (f"s{i}", "schedule-1@2026-08-05T12:00:10.000Z") for i in range(3)
    ]
    for i in range(3):
        events = await events_of(kind, tmp_path, f"s{i}")
        assert followups(events) == delivered(events) == ["schedule-1@2026-08-05T12:00:10.000Z"]
    rows = index_rows(kind, tmp_path)
    assert rows["far"].next_due_at == T0 + 3 * 86_400_000  # not due: never opened
    assert all(row.holder is None for row in rows.values())


@each_kind
async def test_a_session_a_live_process_holds_is_left_to_it(kind: Kind, tmp_path: Path) -> None:
    seeder = store_at(kind, tmp_path)
    await seed(seeder, {"held": [STRETCH], "cold": [STRETCH]}, clock=VirtualClock(T0))
    live = await seeder.open("held", created_at=T0)  # a live process holds it now
    assert index_rows(kind, tmp_path)["held"].holder == seeder.holder
    recorder = Recorder()
    async with running(worker_of(kind, tmp_path, recorder)) as worker:
        await recorder.wait_for(1)
        # The sweep tried the held session (its holder lives: its lock is taken).
        await wait_until(lambda: worker.stats.sessions >= 1, 30, "a claim")
        await asyncio.sleep(2.5)  # past a sweep: the worker must still leave it alone
        assert [call.session for call in recorder.calls] == ["cold"]
        await live.close()  # let go: the worker takes it at its next look
        await recorder.wait_for(2)
    await seeder.close()
    assert sorted(call.session for call in recorder.calls) == ["cold", "held"]


@each_kind
async def test_a_live_opener_waits_for_the_worker_then_opens(kind: Kind, tmp_path: Path) -> None:
    seeder = store_at(kind, tmp_path)
    await seed(seeder, {"s": [STRETCH]}, clock=VirtualClock(T0))
    await seeder.close()
    started, release = asyncio.Event(), asyncio.Event()

    async def hold_on(message: FollowUp, session: str) -> None:
        started.set()
        await release.wait()

    recorder = Recorder()
    worker = Worker(
        store_at(kind, tmp_path), recorder.target("w", before=hold_on), clock=VirtualClock(LATER)
    )
    live = store_at(kind, tmp_path, lock_wait_s=60)
    async with running(worker):
        await asyncio.wait_for(started.wait(), 30)
        opening = asyncio.ensure_future(live.open("s", created_at=LATER))
        await asyncio.sleep(0.3)
        assert not opening.done(), "the live opener waits while the worker delivers"
        release.set()
        log = await asyncio.wait_for(opening, 30)
        assert isinstance(log, JsonlLog | SqliteLog)
        assert log.length > 0
        await log.close()
    await live.close()
    assert recorder.keys() == [("s", "schedule-1@2026-08-05T12:00:10.000Z")]


@each_kind
async def test_the_wait_is_bounded(kind: Kind, tmp_path: Path) -> None:
    seeder = store_at(kind, tmp_path)
    await seed(seeder, {"s": [STRETCH]}, clock=VirtualClock(T0))
    await seeder.close()
    started, release = asyncio.Event(), asyncio.Event()

    async def hold_on(message: FollowUp, session: str) -> None:
        started.set()
        await release.wait()

    recorder = Recorder()
    worker = Worker(
        store_at(kind, tmp_path), recorder.target("w", before=hold_on), clock=VirtualClock(LATER)
    )
    live = store_at(kind, tmp_path, lock_wait_s=0.2)
    async with running(worker):
        await asyncio.wait_for(started.wait(), 30)
        with pytest.raises(SessionLocked):
            await asyncio.wait_for(live.open("s", created_at=LATER), 30)
        release.set()
    await live.close()


@each_kind
async def test_a_second_live_opener_is_refused_at_once(kind: Kind, tmp_path: Path) -> None:
    first = store_at(kind, tmp_path)
    second = store_at(kind, tmp_path, lock_wait_s=600)
    log = await first.open("s", created_at=T0)
    with pytest.raises(SessionLocked):
        await asyncio.wait_for(second.open("s", created_at=T0), 30)  # not 600 s
    await log.close()
    await first.close()
    await second.close()


_HOLDER = textwrap.dedent(
    """
    import asyncio, sys
    from pathlib import Path
    from tickler.adapters.stores import JsonlStore, SqliteStore
    from tickler.shell._clock import VirtualClock
    from tickler.shell._runtime import ScheduleRuntime

    class NeverIdle:  # a process that only edits schedules
        def claim_idle(self):
            return None

        async def when_idle(self):
            await asyncio.Event().wait()

        async def followup(self, message):
            raise AssertionError(message.key)

    async def main():
        kind, path = sys.argv[1], Path(sys.argv[2])
        store = JsonlStore(path) if kind == "jsonl" else SqliteStore(path)
        log = await store.open("dead", created_at=%(t0)d)
        runtime = ScheduleRuntime(log, NeverIdle(), VirtualClock(%(t0)d))
        await runtime.start()
        print(await runtime.call_tool(
            "schedule_create", {"prompt": "stretch", "after_seconds": 10}), flush=True)
        await asyncio.Event().wait()

    asyncio.run(main())
    """
) % {"t0": T0}


@each_kind
async def test_a_session_whose_holder_was_killed_is_delivered(kind: Kind, tmp_path: Path) -> None:
    if kind == "jsonl":
        store_path(kind, tmp_path).mkdir()
    else:
        await store_at(kind, tmp_path).close()  # the file exists
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _HOLDER,
        kind,
        str(store_path(kind, tmp_path)),
        stdout=subprocess.PIPE,
    )
    assert child.stdout is not None
    answer = await child.stdout.readline()
    assert b'"state":"scheduled"' in answer, answer
    assert index_rows(kind, tmp_path)["dead"].holder is not None  # it was held ...
    child.send_signal(signal.SIGKILL)  # ... by a process that dies without a word
    await child.wait()
    recorder = Recorder()
    async with running(worker_of(kind, tmp_path, recorder)):
        await recorder.wait_for(1)
    assert recorder.keys() == [("dead", "schedule-1@2026-08-05T12:00:10.000Z")]
    assert index_rows(kind, tmp_path)["dead"].holder is None


@each_kind
async def test_a_lost_index_is_rebuilt_from_the_logs(kind: Kind, tmp_path: Path) -> None:
    seeder = store_at(kind, tmp_path)
    await seed(seeder, {"due": [STRETCH], "far": [FAR]}, clock=VirtualClock(T0))
    await seeder.close()
    if kind == "jsonl":
        for path in index_db(kind, tmp_path).parent.glob(".wake.db*"):
            path.unlink()
    else:
        import sqlite3
        from contextlib import closing

        with closing(sqlite3.connect(index_db(kind, tmp_path))) as conn:
            conn.execute("DELETE FROM wakes")  # as a store from before the index left it
            conn.commit()
    recorder = Recorder()
    async with running(worker_of(kind, tmp_path, recorder)):
        await recorder.wait_for(1)
        await wait_until(
            lambda: (
                index_rows(kind, tmp_path).get("far", None) is not None
                and index_rows(kind, tmp_path)["far"].next_due_at == T0 + 3 * 86_400_000
            ),
            30,
            "the far session's exact wake",
        )
    assert recorder.keys() == [("due", "schedule-1@2026-08-05T12:00:10.000Z")]


async def test_a_damaged_index_is_moved_aside_and_rebuilt(tmp_path: Path) -> None:
    kind: Kind = "jsonl"
    seeder = store_at(kind, tmp_path)
    await seed(seeder, {"due": [STRETCH]}, clock=VirtualClock(T0))
    await seeder.close()
    db = index_db(kind, tmp_path)
    for path in db.parent.glob(".wake.db-*"):
        path.unlink()
    db.write_bytes(b"this is no database" * 100)
    recorder = Recorder()
    async with running(worker_of(kind, tmp_path, recorder)):
        await recorder.wait_for(1)
    assert recorder.keys() == [("due", "schedule-1@2026-08-05T12:00:10.000Z")]
    assert [p.name.startswith(".wake.db.damaged-") for p in db.parent.glob(".wake.db.damaged-*")]


async def test_a_log_changed_behind_the_index_is_looked_at(tmp_path: Path) -> None:
    kind: Kind = "jsonl"
    # The same session in two directories: nothing due in one, due in the other.
    seeder = store_at(kind, tmp_path)
    await seed(seeder, {"s": [FAR]}, clock=VirtualClock(T0))
    await seeder.close()
    elsewhere = store_at(kind, tmp_path / "other")
    await seed(elsewhere, {"s": [FAR, STRETCH]}, clock=VirtualClock(T0))
    await elsewhere.close()
    here = store_path(kind, tmp_path)
    # A writer that keeps no index (another program) makes it the longer log.
    shutil.copyfile(store_path(kind, tmp_path / "other") / "s.jsonl", here / "s.jsonl")
    (here / "s.length").unlink(missing_ok=True)
    (here / "s.snapshot").unlink(missing_ok=True)
    assert index_rows(kind, tmp_path)["s"].next_due_at == T0 + 3 * 86_400_000  # stale
    recorder = Recorder()
    async with running(worker_of(kind, tmp_path, recorder)):
        await recorder.wait_for(1)
    assert recorder.keys() == [("s", "schedule-2@2026-08-05T12:00:10.000Z")]


@each_kind
async def test_a_failing_target_is_tried_again_with_backoff(kind: Kind, tmp_path: Path) -> None:
    """Each failed run counts in the index row and moves the session's wake
    later (1, 2, 4 ... s); the log records the failures; a run that
    delivers sets the count back to 0. Nothing is lost meanwhile."""
    seeder = store_at(kind, tmp_path)
    await seed(seeder, {"s": [STRETCH]}, clock=VirtualClock(T0))
    await seeder.close()

    async def refuse(message: FollowUp, session: str) -> None:
        raise RuntimeError("target down")

    clock = VirtualClock(LATER)
    failing = Worker(store_at(kind, tmp_path), Recorder().target("w", before=refuse), clock=clock)
    async with running(failing):
        await wait_until(lambda: index_rows(kind, tmp_path)["s"].failures >= 1, 30, "a failure")
    row = index_rows(kind, tmp_path)["s"]
    assert row.holder is None
    assert row.next_due_at is not None
    assert row.next_due_at >= LATER + 1000 * 2 ** (row.failures - 1)  # backed off
    events = await events_of(kind, tmp_path, "s")
    assert followups(events) == ["schedule-1@2026-08-05T12:00:10.000Z"]  # kept, not lost
    assert delivered(events) == []
    assert any(e.type == "tickler/followup-failed" for e in events)
    recorder = Recorder()
    later = Worker(
        store_at(kind, tmp_path), recorder.target("w"), clock=VirtualClock(LATER + 600_000)
    )
    async with running(later):
        await recorder.wait_for(1)
        await wait_until(lambda: index_rows(kind, tmp_path)["s"].failures == 0, 30, "a reset")
    assert recorder.keys() == [("s", "schedule-1@2026-08-05T12:00:10.000Z")]


async def test_claims_begin_while_the_start_check_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The start check reads every session file (seconds at 100,000
    sessions): claims from the index's rows do not wait for it, and what it
    finds is delivered when it finds it."""
    kind: Kind = "jsonl"
    seeder = store_at(kind, tmp_path)
    await seed(seeder, {"indexed": [STRETCH], "unknown": [STRETCH]}, clock=VirtualClock(T0))
    await seeder.close()
    with closing(sqlite3.connect(index_db(kind, tmp_path))) as conn:
        conn.execute("DELETE FROM wakes WHERE session_id = 'unknown'")  # only the check finds it
        conn.commit()
    checking, release = threading.Event(), threading.Event()
    real_check = changed_behind

    def held_check(*args: Any, **kwargs: Any) -> tuple[int, int]:
        checking.set()
        release.wait(120)  # a hang guard: the test releases it
        return real_check(*args, **kwargs)

    monkeypatch.setattr(_jsonl, "changed_behind", held_check)
    recorder = Recorder()
    async with running(worker_of(kind, tmp_path, recorder)):
        try:
            await recorder.wait_for(1, bound_s=20)
            assert checking.is_set()
            assert recorder.keys() == [("indexed", "schedule-1@2026-08-05T12:00:10.000Z")]
        finally:
            release.set()
        await recorder.wait_for(2)
    assert sorted(recorder.keys()) == [
        ("indexed", "schedule-1@2026-08-05T12:00:10.000Z"),
        ("unknown", "schedule-1@2026-08-05T12:00:10.000Z"),
    ]


async def test_closing_the_store_stops_the_start_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store closed while its start check runs stops the check at its
    next batch: nothing is written to the index after the close."""
    kind: Kind = "jsonl"
    seeder = store_at(kind, tmp_path)
    await seed(seeder, {f"s{i}": [FAR] for i in range(3)}, clock=VirtualClock(T0))
    await seeder.close()
    with closing(sqlite3.connect(index_db(kind, tmp_path))) as conn:
        conn.execute("DELETE FROM wakes")  # every file is unknown to the index
        conn.commit()
    checking, release = threading.Event(), threading.Event()
    real_check = changed_behind

    def held_check(*args: Any, **kwargs: Any) -> tuple[int, int]:
        checking.set()
        release.wait(120)  # a hang guard: the test releases it
        return real_check(*args, **kwargs)

    monkeypatch.setattr(_jsonl, "changed_behind", held_check)
    store = store_at(kind, tmp_path)
    try:
        await asyncio.wait_for(store.prepare_worker(), 20)
        assert await asyncio.to_thread(checking.wait, 20)
        closed = asyncio.get_running_loop().create_task(store.close())
        await asyncio.sleep(0)  # the close has begun: the check is told to stop
    finally:
        release.set()
    await closed
    assert index_rows(kind, tmp_path) == {}
    # Unstopped, the same check finds every file.
    store = store_at(kind, tmp_path)
    assert isinstance(store, JsonlStore)
    assert changed_behind(store.directory, store.wakes) == (3, 3)
    assert sorted(index_rows(kind, tmp_path)) == ["s0", "s1", "s2"]
    await store.close()
