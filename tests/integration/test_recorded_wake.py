"""A reopened JSONL session is armed from the wake its last close wrote to
the wake index, before its log is replayed, and only when that wake is
still the session's: its last holder released it, and the file is the size
it was then. A session changed behind the index, or left by a holder that
died, is armed only once it has loaded (or from its snapshot's hint)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tickler.adapters.stores import _wakes as wakes
from tickler.adapters.stores._jsonl import JsonlStore
from tickler.adapters.stores._wake_file import FILE_NAME, WakeFile
from tickler.shell import _unit_of_work
from tickler.shell._clock import VirtualClock
from tickler.shell._loading import Loaded, load_session
from tickler.shell._ports import RecordedWake, SessionLog, Snapshot
from tickler.shell._runtime import ScheduleRuntime
from tickler.shell._timers import TimerHeap

from .conftest import CHILD
from .worker_support import NeverIdle

T0 = 1_786_000_000_000  # 2026-08-06
TARGET = T0 + 600_000  # the reminder's target: ten minutes on


async def one_reminder(directory: Path, *, snapshot: bool = False) -> None:
    """A session with one reminder due at TARGET, closed cleanly."""
    store = JsonlStore(directory)
    log = await store.open("s1", created_at=T0)
    runtime = ScheduleRuntime(log, NeverIdle(), VirtualClock(T0))
    try:
        await runtime.start()
        answer = await runtime.call_tool("schedule_create", {"prompt": "p", "after_seconds": 600})
        assert '"state":"scheduled"' in answer, answer
        if snapshot:
            assert await runtime.save_snapshot()
    finally:
        await runtime.dispose()
        await store.close()


def killed_holding(directory: Path) -> None:
    """A process opens the session, appends and flushes two batches, then
    kill -9s itself: its row still names it, and the file has grown."""
    done = subprocess.run(
        [sys.executable, str(CHILD), "die-after", "jsonl", str(directory), "s1", "2"],
        capture_output=True,
        check=False,
    )
    assert done.returncode == -9, done.stderr


async def recorded(directory: Path) -> tuple[bool, int | None]:
    store = JsonlStore(directory)
    try:
        log = await store.open("s1", created_at=T0)
        assert isinstance(log, RecordedWake)
        return log.recorded_wake()
    finally:
        await store.close()


async def test_a_clean_close_leaves_the_wake_the_next_open_finds(tmp_path: Path) -> None:
    await one_reminder(tmp_path)
    assert await recorded(tmp_path) == (True, TARGET)
    # Opened and closed again without a change: still exact.
    assert await recorded(tmp_path) == (True, TARGET)


async def test_a_new_session_has_no_recorded_wake(tmp_path: Path) -> None:
    assert await recorded(tmp_path) == (False, None)


async def test_a_file_changed_behind_the_index_has_none(tmp_path: Path) -> None:
    await one_reminder(tmp_path)
    path = tmp_path / "s1.jsonl"
    seq = path.read_bytes().count(b"\n") - 1  # lines after the header
    with path.open("ab") as file:  # a writer that keeps no index (a harness)
        file.write(b'{"type":"turn/start","seq":%d,"time":1,"data":{}}\n' % seq)
    assert await recorded(tmp_path) == (False, None)


async def test_a_holder_that_died_leaves_no_recorded_wake(tmp_path: Path) -> None:
    await one_reminder(tmp_path)
    # As kill -9 leaves it: the row still names its holder.
    index = WakeFile(tmp_path)
    try:
        index.run(wakes.hold, "s1", "live:elsewhere:1:dead0000")
    finally:
        index.close()
    assert await recorded(tmp_path) == (False, None)


async def test_a_holder_killed_with_sigkill_leaves_no_recorded_wake(tmp_path: Path) -> None:
    await one_reminder(tmp_path)
    killed_holding(tmp_path)
    assert await recorded(tmp_path) == (False, None)


async def test_a_session_set_aside_has_no_recorded_wake(tmp_path: Path) -> None:
    await one_reminder(tmp_path)
    index = WakeFile(tmp_path)
    try:
        index.run(wakes.set_aside, "s1", "", "unreadable")
    finally:
        index.close()
    assert await recorded(tmp_path) == (False, None)


@pytest.fixture
def slow_load(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], threading.Event]]:
    """Once called: the replay waits until the test lets it go (it runs in
    a thread)."""
    go = threading.Event()
    load: Callable[[SessionLog, Snapshot | None], Loaded] = load_session

    def waiting(log: SessionLog, snapshot: Snapshot | None) -> Loaded:
        assert go.wait(30), "the test never let the load go"
        return load(log, snapshot)

    def block() -> threading.Event:
        monkeypatch.setattr(_unit_of_work, "load_session", waiting)
        return go

    yield block
    go.set()


async def start_while_loading(directory: Path, go: threading.Event) -> int | None:
    """Start a runtime on the reopened session; what it is armed for while
    the replay has not finished, then let the replay go."""
    store = JsonlStore(directory)
    clock = VirtualClock(T0 + 1_000)
    timers = TimerHeap(clock)
    log = await store.open("s1", created_at=T0)
    runtime = ScheduleRuntime(log, NeverIdle(), clock, timers=timers)
    try:
        starting = asyncio.ensure_future(runtime.start())
        for _ in range(50):  # until start() waits for the replay
            await asyncio.sleep(0)
        assert not starting.done()
        armed = runtime.next_wake
        go.set()
        await starting
        assert runtime.next_wake == TARGET  # the loaded state agrees
        return armed
    finally:
        go.set()
        await runtime.dispose()
        await store.close()
        await timers.close()


async def test_the_runtime_is_armed_before_the_replay(
    tmp_path: Path, slow_load: Callable[[], threading.Event]
) -> None:
    await one_reminder(tmp_path)
    assert await start_while_loading(tmp_path, slow_load()) == TARGET


async def test_no_arming_before_the_replay_when_the_wake_is_not_known(
    tmp_path: Path, slow_load: Callable[[], threading.Event]
) -> None:
    await one_reminder(tmp_path)
    index = WakeFile(tmp_path)
    try:
        index.run(wakes.hold, "s1", "live:elsewhere:1:dead0000")  # its holder died
    finally:
        index.close()
    assert await start_while_loading(tmp_path, slow_load()) is None


async def test_the_snapshot_hint_still_arms_when_the_index_does_not_know(
    tmp_path: Path, slow_load: Callable[[], threading.Event]
) -> None:
    await one_reminder(tmp_path, snapshot=True)
    (tmp_path / FILE_NAME).unlink()  # the index is gone: built again, empty
    assert await start_while_loading(tmp_path, slow_load()) == TARGET


async def test_a_known_wake_still_loads_from_the_snapshot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await one_reminder(tmp_path, snapshot=True)
    assert await recorded(tmp_path) == (True, TARGET)
    given: list[Snapshot | None] = []

    def noting(log: SessionLog, snapshot: Snapshot | None) -> Loaded:
        given.append(snapshot)
        return load_session(log, snapshot)

    monkeypatch.setattr(_unit_of_work, "load_session", noting)
    store = JsonlStore(tmp_path)
    log = await store.open("s1", created_at=T0)
    runtime = ScheduleRuntime(log, NeverIdle(), VirtualClock(T0 + 1_000))
    try:
        await runtime.start()
        assert runtime.next_wake == TARGET
    finally:
        await runtime.dispose()
        await store.close()
    assert len(given) == 1
    assert given[0] is not None  # read off the loop, and used


async def test_what_is_ready_runs_before_the_load_takes_the_interpreter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Armed, the runtime lets the tasks that are ready run before its load
    starts (the load's thread holds the interpreter through each long decode,
    so they would wait for it)."""
    await one_reminder(tmp_path, snapshot=True)
    order: list[str] = []
    to_thread = asyncio.to_thread

    async def noting(*args: object, **kwargs: object) -> object:
        order.append("load")
        return await to_thread(*args, **kwargs)  # type: ignore[arg-type]

    async def ready() -> None:
        order.append("ready")

    store = JsonlStore(tmp_path)
    log = await store.open("s1", created_at=T0)
    monkeypatch.setattr(asyncio, "to_thread", noting)  # as the unit of work reads it
    runtime = ScheduleRuntime(log, NeverIdle(), VirtualClock(T0 + 1_000))
    try:
        starting = asyncio.ensure_future(runtime.start())
        await asyncio.gather(starting, ready())
        assert runtime.next_wake == TARGET
    finally:
        await runtime.dispose()
        await store.close()
    assert order[:2] == ["ready", "load"]
