"""Damage the JSONL store reports instead of repairing (a damaged journal),
symbolic links it refuses, the temporary files a crash leaves, and
``verify``: the same facts read for ``tickler check`` without changing a
thing."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from tickler.adapters.delivery._hosts import DeliverCommand
from tickler.adapters.stores._files import CorruptStore
from tickler.adapters.stores._jsonl import JsonlStore
from tickler.adapters.stores._verify import (
    StoreProblem,
    crash_tail_expected,
    is_store_dir,
    verify_store_dir,
)
from tickler.adapters.stores._wal import MAGIC
from tickler.core import parse_session_jsonl
from tickler.shell._clock import VirtualClock
from tickler.shell._ports import Snapshot, StoreError
from tickler.shell._runtime import ScheduleRuntime
from tickler.shell._timers import TimerHeap

from .conftest import CHILD, new_events
from .test_jsonl_store import die_after, journals, write_session

_FRAME = struct.Struct("<II")
NOW = 1_785_931_200_000  # 2026-08-05T12:00:00Z


def record_offsets(journal: Path) -> list[int]:
    """Where each record of a journal starts."""
    data = journal.read_bytes()
    offsets, at = [], len(MAGIC)
    while at + _FRAME.size <= len(data) and (length := _FRAME.unpack_from(data, at)[0]):
        offsets.append(at)
        at += _FRAME.size + length
    return offsets


def everything(root: Path) -> dict[str, tuple[bytes | str, int]]:
    """Every entry under ``root``: content (or link target) and mtime."""
    found: dict[str, tuple[bytes | str, int]] = {}
    for path in sorted(root.rglob("*")):
        info = path.lstat()
        if path.is_symlink():
            found[str(path)] = (str(path.readlink()), info.st_mtime_ns)
        elif path.is_file():
            found[str(path)] = (path.read_bytes(), info.st_mtime_ns)
    return found


def dead_store(tmp_path: Path) -> tuple[Path, Path]:
    """A store whose writer died after three flushed batches of 3 and whose
    file lost the last batch (the page cache never reached the disk): the
    dead journal holds it. The store directory and its journal."""
    die_after(tmp_path, 3)
    (journal,) = journals(tmp_path)
    path = tmp_path / "s1.jsonl"
    path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:7]))
    return path, journal


@pytest.mark.parametrize("where", ["middle-record", "last-record-whole", "header"])
async def test_a_damaged_journal_is_reported_and_kept(tmp_path: Path, where: str) -> None:
    _, journal = dead_store(tmp_path)
    raw = bytearray(journal.read_bytes())
    offsets = record_offsets(journal)
    assert len(offsets) == 3
    if where == "header":
        raw[2] ^= 0xFF
        reason = "damaged journal header"
    else:
        at = offsets[1] if where == "middle-record" else offsets[2]
        raw[at + _FRAME.size + 20] ^= 0x01  # a byte of a complete record's text
        reason = "bad checksum"
    journal.write_bytes(bytes(raw))
    before = everything(tmp_path)
    with pytest.raises(StoreError, match=rf"\.wal: byte \d+: .*{reason}"):
        JsonlStore(tmp_path)
    assert journal.exists()
    assert everything(tmp_path) == before  # nothing replayed, nothing deleted
    problems = verify_store_dir(tmp_path)
    assert [(p.path, p.line) for p in problems] == [(journal, 0)]
    assert reason in problems[0].reason
    assert everything(tmp_path) == before


async def test_a_journal_record_a_crash_cut_is_the_end_of_the_journal(tmp_path: Path) -> None:
    _, journal = dead_store(tmp_path)
    raw = bytearray(journal.read_bytes())
    last = record_offsets(journal)[2]
    cut = last + _FRAME.size + 30
    raw[cut:] = bytes(len(raw) - cut)  # the write stopped there: zeros follow, as written ahead
    journal.write_bytes(bytes(raw))
    assert verify_store_dir(tmp_path) == []
    store = JsonlStore(tmp_path)  # the batch never completed was never reported durable
    assert journals(tmp_path) == []
    log = await store.open("s1", created_at=5)
    assert log.length == 6
    await store.close()


async def test_a_session_file_planted_as_a_link_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    target = await write_session(outside, 2)
    kept = target.read_bytes()
    store_dir = tmp_path / "store"
    store_dir.mkdir()
    (store_dir / "s1.jsonl").symlink_to(target)
    store = JsonlStore(store_dir)
    with pytest.raises(StoreError, match=r"s1\.jsonl is a symbolic link: refused"):
        await store.open("s1", created_at=5)
    await store.close()
    assert target.read_bytes() == kept
    problems = verify_store_dir(store_dir)
    assert [(p.path.name, p.line) for p in problems] == [("s1.jsonl", 0)]
    assert "symbolic link" in problems[0].reason


async def test_a_snapshot_planted_as_a_link_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside.bin"
    outside.write_bytes(b"not yours")
    await write_session(tmp_path / "store", 2)
    (tmp_path / "store" / "s1.snapshot").symlink_to(outside)
    store = JsonlStore(tmp_path / "store")
    with pytest.raises(StoreError, match=r"s1\.snapshot is a symbolic link: refused"):
        await store.open("s1", created_at=5)
    await store.close()
    assert outside.read_bytes() == b"not yours"


@pytest.mark.parametrize("link", ["a-dead-journal", "the-journal-directory"])
async def test_a_journal_planted_as_a_link_is_refused(tmp_path: Path, link: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x-1.wal").write_bytes(MAGIC)
    store_dir = tmp_path / "store"
    await write_session(store_dir, 2)
    if link == "a-dead-journal":
        (store_dir / ".journal" / "x-1.wal").symlink_to(outside / "x-1.wal")
    else:
        (store_dir / ".journal").rmdir()
        (store_dir / ".journal").symlink_to(outside)
    with pytest.raises(StoreError, match="is a symbolic link: refused"):
        JsonlStore(store_dir)
    assert (outside / "x-1.wal").read_bytes() == MAGIC
    assert any("symbolic link" in p.reason for p in verify_store_dir(store_dir))


async def test_a_snapshot_temp_file_a_crash_left_is_removed_at_open(tmp_path: Path) -> None:
    await write_session(tmp_path, 2)
    leftover = tmp_path / ".s1.snapshot.tmp"
    leftover.write_bytes(b"half a snapshot")
    outside = tmp_path / "outside.bin"
    outside.write_bytes(b"not yours")
    other = tmp_path / ".s2.snapshot.tmp"
    other.symlink_to(outside)  # s2 is not opened: left alone
    store = JsonlStore(tmp_path)
    log = await store.open("s1", created_at=5)
    assert not leftover.exists()
    assert any("temporary file" in note for note in log.recovered)
    await log.save_snapshot(Snapshot(2, b"two"))
    assert log.load_snapshot() == Snapshot(2, b"two")
    assert other.is_symlink()
    log2 = await store.open("s2", created_at=5)  # its planted link is removed, not followed
    assert not other.is_symlink()
    await log2.save_snapshot(Snapshot(0, b"zero"))
    await store.close()
    assert outside.read_bytes() == b"not yours"


async def test_verify_reports_store_damage_and_changes_nothing(tmp_path: Path) -> None:
    # s1: a clean close, then its last line cut (no journal covers it).
    cut = await write_session(tmp_path, 3)
    cut.write_bytes(cut.read_bytes()[:-4])
    # s2: a snapshot through 5 of a log cut back to 2 events.
    store = JsonlStore(tmp_path)
    log = await store.open("s2", created_at=5)
    log.append(new_events(5))
    await log.save_snapshot(Snapshot(5, b"five"))
    await store.close()
    s2 = tmp_path / "s2.jsonl"
    s2.write_bytes(b"".join(s2.read_bytes().splitlines(keepends=True)[:3]))
    before = everything(tmp_path)
    assert is_store_dir(tmp_path)
    problems = verify_store_dir(tmp_path)
    assert everything(tmp_path) == before
    assert [(p.path.name, p.line) for p in problems] == [
        ("s1.jsonl", 4),
        ("s2.jsonl", 4),
        ("s2.snapshot", 0),
    ]
    assert "torn final line" in problems[0].reason
    assert "holds 2 events but 5 were confirmed (s2.length records 5)" in problems[1].reason
    assert "covers 5 events but the session file holds 2" in problems[2].reason
    assert all(isinstance(p, StoreProblem) for p in problems)
    assert not crash_tail_expected(cut)
    assert parse_session_jsonl(cut.read_bytes()).torn_tail is not None  # the plain parse drops it


async def test_verify_takes_a_covered_torn_tail_for_a_crash(tmp_path: Path) -> None:
    die_after(tmp_path, 2)
    path = tmp_path / "s1.jsonl"
    path.write_bytes(path.read_bytes()[:-9])
    before = everything(tmp_path)
    assert crash_tail_expected(path)
    assert verify_store_dir(tmp_path) == []
    assert everything(tmp_path) == before
    store = JsonlStore(tmp_path)  # and opening completes it, as verify said
    log = await store.open("s1", created_at=5)
    assert log.length == 6
    await store.close()
    assert not crash_tail_expected(path)


def test_a_directory_without_a_journal_is_no_store(tmp_path: Path) -> None:
    (tmp_path / "session.jsonl").write_bytes(b"")
    assert not is_store_dir(tmp_path)
    assert not is_store_dir(tmp_path / "session.jsonl")
    assert not crash_tail_expected(tmp_path / "session.jsonl")


async def test_a_confirmed_reminder_cut_from_a_closed_log_is_never_reissued(
    tmp_path: Path,
) -> None:
    clock = VirtualClock(NOW)
    store = JsonlStore(tmp_path)
    timers = TimerHeap(clock)
    runtime = ScheduleRuntime(
        await store.open("s1", created_at=NOW),
        DeliverCommand(["true"], session="s1"),
        clock,
        timers=timers,
    )
    await runtime.start()
    created = [
        json.loads(await runtime.call_tool("schedule_create", {"prompt": p, "after_seconds": 600}))
        for p in ("first", "second")
    ]
    await runtime.dispose()
    await timers.close()
    await store.close()
    path = tmp_path / "s1.jsonl"
    assert b'"second"' in path.read_bytes().splitlines()[-1]  # confirmed: in the last line
    path.write_bytes(path.read_bytes()[:-3])
    damaged = path.read_bytes()
    again = JsonlStore(tmp_path)
    with pytest.raises(CorruptStore, match="torn final line"):
        await again.open("s1", created_at=NOW)  # before: trimmed, and its id issued again
    await again.close()
    assert path.read_bytes() == damaged
    assert created[0]["id"] != created[1]["id"]


# -- whole lines cut from the end of a session file -----------------------------

CUTS = {"last-line": 1, "two-lines": 2, "all-but-the-header": None}


def cut_lines(path: Path, cut: int | None) -> bytes:
    """Cut whole lines from the end of ``path`` (None: all but the
    header); the damaged content."""
    lines = path.read_bytes().splitlines(keepends=True)
    kept = lines[:1] if cut is None else lines[:-cut]
    path.write_bytes(b"".join(kept))
    return path.read_bytes()


def die_idle(directory: Path) -> None:
    """A child writes the session ``idle`` (6 events), then ``busy`` until
    the journal holding idle's events is checkpointed away, then kill -9s
    itself (store_child.py die-idle)."""
    done = subprocess.run(
        [sys.executable, str(CHILD), "die-idle", "jsonl", str(directory), "idle", "busy"],
        capture_output=True,
        check=False,
    )
    assert done.returncode == -9, done.stderr


async def refused(directory: Path, session: str, damaged: bytes, confirmed: int) -> None:
    """Opening ``session`` fails naming its file, the line where the cut
    starts and the count, and changes nothing."""
    path = directory / f"{session}.jsonl"
    held = damaged.count(b"\n") - 1
    store = JsonlStore(directory)
    with pytest.raises(CorruptStore) as raised:
        await store.open(session, created_at=5)
    await store.close()
    assert raised.value.path == path
    assert raised.value.line == held + 2  # the first line missing
    assert f"holds {held} events but {confirmed} were confirmed" in str(raised.value)
    assert path.read_bytes() == damaged
    problems = verify_store_dir(directory)  # and tickler check says so
    assert [(p.path, p.line) for p in problems] == [(path, held + 2)]


@pytest.mark.parametrize("cut", list(CUTS.values()), ids=list(CUTS))
@pytest.mark.parametrize("close", ["log", "store"])
async def test_whole_lines_cut_after_a_close_are_refused(
    tmp_path: Path, cut: int | None, close: str
) -> None:
    store = JsonlStore(tmp_path)
    log = await store.open("s1", created_at=5)
    log.append(new_events(3))
    await log.flush()
    log.append(new_events(2, start=3))  # never flushed: the close makes it durable
    if close == "log":
        await log.close()
    await store.close()
    damaged = cut_lines(tmp_path / "s1.jsonl", cut)
    await refused(tmp_path, "s1", damaged, 5)


@pytest.mark.parametrize("cut", list(CUTS.values()), ids=list(CUTS))
async def test_whole_lines_cut_after_a_kill_and_a_checkpoint_are_refused(
    tmp_path: Path, cut: int | None
) -> None:
    """The writer is killed (kill -9) while it holds the session, after the
    journal that held its events was checkpointed away: nothing but the
    session's length file remembers them."""
    die_idle(tmp_path)
    damaged = cut_lines(tmp_path / "idle.jsonl", cut)
    busy = tmp_path / "busy.jsonl"
    busy.write_bytes(b"".join(busy.read_bytes().splitlines(keepends=True)[:-2]))
    store = JsonlStore(tmp_path)  # the dead journal covers what was cut from busy
    assert any("busy.jsonl: replayed events" in note for note in store.recovered)
    log = await store.open("busy", created_at=5)
    assert log.length == busy.read_bytes().count(b"\n") - 1
    await store.close()
    await refused(tmp_path, "idle", damaged, 6)


@pytest.mark.parametrize("cut", list(CUTS.values()), ids=list(CUTS))
async def test_whole_lines_cut_after_a_kill_and_a_replay_are_refused(
    tmp_path: Path, cut: int | None
) -> None:
    """The writer is killed; the next process replays its journal (and
    deletes it), then closes: nothing but the length file remembers."""
    die_after(tmp_path, 2)
    replayer = JsonlStore(tmp_path)
    await replayer.close()
    assert not journals(tmp_path)
    damaged = cut_lines(tmp_path / "s1.jsonl", cut)
    await refused(tmp_path, "s1", damaged, 6)


async def test_a_reminder_cut_with_its_whole_line_is_never_reissued(tmp_path: Path) -> None:
    clock = VirtualClock(NOW)
    store = JsonlStore(tmp_path)
    timers = TimerHeap(clock)
    runtime = ScheduleRuntime(
        await store.open("s1", created_at=NOW),
        DeliverCommand(["true"], session="s1"),
        clock,
        timers=timers,
    )
    await runtime.start()
    for prompt in ("first", "second", "third", "fourth"):
        await runtime.call_tool("schedule_create", {"prompt": prompt, "after_seconds": 600})
    await runtime.dispose()
    await timers.close()
    await store.close()  # through the Python API: no snapshot
    assert not (tmp_path / "s1.snapshot").exists()
    damaged = cut_lines(tmp_path / "s1.jsonl", 1)  # schedule-4's create
    again = JsonlStore(tmp_path)
    with pytest.raises(CorruptStore, match=r"s1\.jsonl: line 5: the file holds 3 events but 4"):
        await again.open("s1", created_at=NOW)  # before: opened, and schedule-4 issued again
    await again.close()
    assert (tmp_path / "s1.jsonl").read_bytes() == damaged
