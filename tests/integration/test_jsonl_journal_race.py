"""A journal's liveness is its lock, so another process's recovery must never
take a live journal for dead: not while its owner creates it (created, not
yet locked), nor when its owner checkpoints, deletes and lets go of it just
as recovery locks it.

Two stores on one directory in one process stand for two processes (a
``flock`` belongs to the open file description, so they conflict as two
processes would). The races are driven step by step: ``fcntl.flock`` is
wrapped so that one store stops at the exact call where the race opens, and
the other does its part there; the steps wait for each other on a condition
variable, never on time."""

from __future__ import annotations

import asyncio
import fcntl
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Final

import pytest

from tickler.adapters.stores._jsonl import JsonlStore
from tickler.adapters.stores._locks import try_lock
from tickler.adapters.stores._wal import MAGIC, read_records
from tickler.shell._ports import StoreError

from .conftest import new_events

REAL_FLOCK: Final = fcntl.flock
BOUND: Final = 120.0  # seconds: only a hung test ever waits this long


def open_file(fd: int) -> Path:
    """The path ``fd`` was opened at (Linux)."""
    return Path(f"/proc/self/fd/{fd}").readlink()


def journal_entry(fd: int) -> str | None:
    """The name of the journal-directory file ``fd`` is open on, or None
    (another file, or the journal directory itself)."""
    target = Path(str(open_file(fd)).removesuffix(" (deleted)"))
    return target.name if target.parent.name == ".journal" else None


def journals(directory: Path) -> list[Path]:
    return sorted((directory / ".journal").glob("*.wal"))


class Steps:
    """Named steps reached by one party and waited for by the other."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._reached: set[str] = set()

    def reach(self, step: str) -> None:
        with self._cond:
            self._reached.add(step)
            self._cond.notify_all()

    def wait(self, *steps: str) -> None:
        """Until one of ``steps`` is reached."""
        with self._cond:
            reached = self._cond.wait_for(lambda: self._reached.intersection(steps), BOUND)
        assert reached, f"none of {steps} was reached"


class Opener(threading.Thread):
    """Opens a second store on the directory (running its recovery) on its
    own thread, as a second process would."""

    def __init__(self, directory: Path, steps: Steps) -> None:
        super().__init__(name="second-store")
        self.directory = directory
        self.steps = steps
        self.store: JsonlStore | None = None
        self.error: StoreError | None = None

    def run(self) -> None:
        try:
            self.store = JsonlStore(self.directory)
        except StoreError as exc:  # reported by the test, not lost in the thread
            self.error = exc
        finally:
            self.steps.reach("second store opened")


def wrap_flock(
    monkeypatch: pytest.MonkeyPatch, hook: Callable[[int, int], bool]
) -> Callable[[int, int], None]:
    """Route every ``fcntl.flock`` through ``hook`` (it returns True when it
    took the lock itself)."""

    def flock(fd: int, operation: int) -> None:
        if not hook(fd, operation):
            REAL_FLOCK(fd, operation)

    monkeypatch.setattr(fcntl, "flock", flock)
    return flock


def locked_records(directory: Path, session_id: str) -> set[int]:
    """The seqs of ``session_id`` held by journal files on disk that a
    recovery would see as live (their lock cannot be taken)."""
    seqs: set[int] = set()
    for path in journals(directory):
        fd = try_lock(path, create=False)
        if fd is not None:
            os.close(fd)
            continue
        for record in read_records(path.read_bytes()):
            if record.session_id == session_id:
                seqs.update(seq for seq, _ in record.numbered())
    return seqs


async def events_once(directory: Path, session_id: str, count: int) -> None:
    """Reopened, the session holds exactly ``count`` events, in order."""
    store = JsonlStore(directory)
    log = await store.open(session_id, created_at=1)
    assert [item.seq for item in log.events()] == list(range(count))
    await store.close()
    assert journals(directory) == []


async def test_a_recovery_run_while_a_journal_is_created_leaves_it_to_its_owner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The second store opens (and recovers) in the gap between the first
    # one's creating its journal file and locking it.
    owner = JsonlStore(tmp_path)
    log = await owner.open("s1", created_at=1)
    log.append(new_events(3))
    others: list[JsonlStore] = []
    stopped: list[str] = []

    def hook(fd: int, operation: int) -> bool:
        if stopped or threading.current_thread() is not threading.main_thread():
            return False
        name = journal_entry(fd)
        if name is None:
            return False
        stopped.append(name)  # once: the second store's own flock calls pass
        others.append(JsonlStore(tmp_path))
        return False

    wrap_flock(monkeypatch, hook)
    await log.flush()
    monkeypatch.undo()
    assert len(others) == 1, f"the race was not driven: {stopped}"
    # The flushed batch is in a journal on disk that every recovery sees as
    # live: not in an unlinked file that a power cut would lose.
    assert locked_records(tmp_path, "s1") == {0, 1, 2}
    log.append(new_events(2, start=3))
    await log.flush()
    await others[0].close()
    await owner.close()
    await events_once(tmp_path, "s1", 5)


async def test_a_recovery_holding_a_journal_being_created_neither_fails_nor_fails_its_owner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The race seen in the two-process crash test: the second store's
    # recovery locks the file the first one has just created, before the
    # first one locks it; the first one then cannot lock it.
    owner = JsonlStore(tmp_path)
    log = await owner.open("s1", created_at=1)
    log.append(new_events(3))
    steps = Steps()
    second = Opener(tmp_path, steps)
    paused: list[str] = []

    def hook(fd: int, operation: int) -> bool:
        if paused and threading.current_thread() is not second:
            return False
        name = journal_entry(fd)
        if name is None:
            return False
        if threading.current_thread() is second:
            REAL_FLOCK(fd, operation)  # the second store holds it...
            paused.append(name)
            steps.reach("second holds a journal file")
            steps.wait("owner tried to lock")  # ...while the owner tries
            return True
        if threading.current_thread() is threading.main_thread():
            paused.append(name)
            second.start()
            steps.wait("second holds a journal file", "second store opened")
            try:
                REAL_FLOCK(fd, operation)
            finally:
                steps.reach("owner tried to lock")
            return True
        return False

    wrap_flock(monkeypatch, hook)
    flush_error: StoreError | None = None
    try:
        await log.flush()
    except StoreError as exc:
        flush_error = exc
    finally:
        steps.reach("owner tried to lock")  # never leave the second one waiting
        await asyncio.to_thread(second.join)
        monkeypatch.undo()
    assert second.error is None, f"the second store failed to open: {second.error!r}"
    assert second.store is not None
    assert flush_error is None, f"the owner's flush failed: {flush_error!r}"
    assert len(paused) == 2, f"the race was not driven: {paused}"
    assert locked_records(tmp_path, "s1") == {0, 1, 2}
    log.append(new_events(2, start=3))
    await log.flush()
    await second.store.close()
    await owner.close()
    await events_once(tmp_path, "s1", 5)


async def test_a_journal_its_owner_deletes_while_recovery_waits_for_its_lock_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The second store's recovery opens the owner's journal, and locks it
    # only after the owner checkpointed it, deleted it and let go of it.
    owner = JsonlStore(tmp_path)
    log = await owner.open("s1", created_at=1)
    log.append(new_events(3))
    await log.flush()
    assert len(journals(tmp_path)) == 1
    steps = Steps()
    second = Opener(tmp_path, steps)
    paused: list[str] = []

    def hook(fd: int, operation: int) -> bool:
        if paused or threading.current_thread() is not second:
            return False
        name = journal_entry(fd)
        if name is None or not name.endswith(".wal"):
            return False
        paused.append(name)
        steps.reach("second opened the journal")
        steps.wait("owner deleted it")
        return False  # and now it locks it

    wrap_flock(monkeypatch, hook)
    second.start()
    try:
        await asyncio.to_thread(steps.wait, "second opened the journal", "second store opened")
        assert paused, "the second store never tried the owner's journal"
        await owner.checkpoint()  # syncs s1, deletes the journal, closes it
        assert journals(tmp_path) == []
    finally:
        steps.reach("owner deleted it")
        await asyncio.to_thread(second.join)
        monkeypatch.undo()
    assert second.error is None, f"the second store failed to open: {second.error!r}"
    assert second.store is not None
    assert second.store.recovered == ()  # nothing of the owner's was replayed
    log.append(new_events(2, start=3))
    await log.flush()
    await second.store.close()
    await owner.close()
    await events_once(tmp_path, "s1", 5)


async def test_a_staging_journal_a_crash_left_is_removed_and_a_live_one_kept(
    tmp_path: Path,
) -> None:
    journal_dir = tmp_path / ".journal"
    journal_dir.mkdir()
    dead = journal_dir / "1-dead-1.new"  # a crash between its creation and its rename
    dead.write_bytes(MAGIC)
    live = journal_dir / "2-live-1.new"  # its creator holds it, about to rename it
    live.write_bytes(MAGIC)
    fd = try_lock(live, create=False)
    assert fd is not None
    try:
        store = JsonlStore(tmp_path)
        assert not dead.exists()
        assert live.exists()
        await store.close()
    finally:
        os.close(fd)
    store = JsonlStore(tmp_path)
    assert not live.exists()
    await store.close()


async def test_a_journal_cannot_be_created_when_recovery_takes_every_try(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A recovery taking each new journal file before its owner locks it
    # makes the flush fail after a few tries (never a journal left unlocked),
    # and the next flush succeeds.
    store = JsonlStore(tmp_path)
    log = await store.open("s1", created_at=1)
    log.append(new_events(3))
    taken: list[int] = []
    stealing: list[bool] = [True]  # off while the thief itself locks, and at the end

    def hook(fd: int, operation: int) -> bool:
        if not stealing[-1] or journal_entry(fd) is None:
            return False
        stealing.append(False)
        try:
            thief = try_lock(open_file(fd), create=False)
        finally:
            stealing.pop()
        assert thief is not None
        taken.append(thief)
        return False

    wrap_flock(monkeypatch, hook)
    try:
        with pytest.raises(StoreError, match="cannot create a journal"):
            await log.flush()
        assert journals(tmp_path) == []
        stealing[:] = [False]
        await log.flush()
    finally:
        monkeypatch.undo()
        for fd in taken:
            os.close(fd)
    assert locked_records(tmp_path, "s1") == {0, 1, 2}
    await store.close()
    await events_once(tmp_path, "s1", 3)
