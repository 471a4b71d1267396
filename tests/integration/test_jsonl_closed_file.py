"""A JSONL session file found byte for byte as its last clean close left it
(the same size and digest, kept in the wake index) is opened without reading
its lines: they are read, and checked as ever, when first needed. A file
changed in any byte is read whole at the open, as before, and a damaged line
is reported there with its number."""

from __future__ import annotations

import sqlite3
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest

from tickler.adapters.stores import _journal, _scan
from tickler.adapters.stores._files import CorruptStore
from tickler.adapters.stores._jsonl import JsonlStore
from tickler.adapters.stores._wake_file import FILE_NAME
from tickler.core import SessionEvent
from tickler.shell import StoreError

from .conftest import new_events


async def written(directory: Path, count: int = 600) -> list[SessionEvent]:
    """A session of ``count`` events, closed cleanly; its events."""
    store = JsonlStore(directory)
    try:
        log = await store.open("s1", created_at=5)
        log.append(new_events(count))
        await log.flush()
        return list(log.events(0))
    finally:
        await store.close()


@pytest.fixture
def lines_read(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many buffers of lines the scans read (each call one buffer)."""
    calls: list[int] = []
    take: Callable[..., int] = _scan._take_lines

    def counting(*args: object) -> int:
        calls.append(1)
        return take(*args)

    monkeypatch.setattr(_scan, "_take_lines", counting)
    return calls


async def reopened(directory: Path) -> tuple[list[SessionEvent], int]:
    """The events a new store reads back, and how many there are by its count."""
    store = JsonlStore(directory)
    try:
        log = await store.open("s1", created_at=5)
        return list(log.events(0)), log.length
    finally:
        await store.close()


async def test_an_unchanged_file_opens_without_reading_its_lines(
    tmp_path: Path, lines_read: list[int]
) -> None:
    events = await written(tmp_path)
    lines_read.clear()
    store = JsonlStore(tmp_path)
    try:
        log = await store.open("s1", created_at=5)
        assert log.length == len(events)
        assert lines_read == []  # the open read only the header
        assert list(log.events(0)) == events  # read, and checked, now
        assert lines_read != []
        assert list(log.events(300)) == events[300:]
    finally:
        await store.close()


async def test_a_byte_changed_in_place_is_reported_at_the_open(tmp_path: Path) -> None:
    await written(tmp_path)
    path = tmp_path / "s1.jsonl"
    data = path.read_bytes()
    # Event 5's seq written as 6: the same size, one byte changed.
    changed = data.replace(b'"seq":5,', b'"seq":6,', 1)
    assert len(changed) == len(data)
    assert changed != data
    path.write_bytes(changed)
    with pytest.raises(CorruptStore) as raised:
        await reopened(tmp_path)
    assert raised.value.line == 7  # the header, then events 0 to 5
    assert "seq 6 should be 5" in raised.value.reason


async def test_a_digest_an_earlier_version_wrote_vouches_for_nothing(tmp_path: Path) -> None:
    """A row an earlier version wrote holds the file's CRC-32. Here it is
    the CRC-32 of a file changed in place after that close: the file is
    read whole at the open, and the damage is reported there."""
    await written(tmp_path)
    path = tmp_path / "s1.jsonl"
    changed = path.read_bytes().replace(b'"seq":5,', b'"seq":6,', 1)
    path.write_bytes(changed)
    with sqlite3.connect(tmp_path / FILE_NAME) as db:
        updated = db.execute("UPDATE closed_files SET digest = ?", (zlib.crc32(changed),))
        assert updated.rowcount == 1  # the clean close had written the file's row
    db.close()
    store = JsonlStore(tmp_path)
    try:
        with pytest.raises(CorruptStore) as raised:
            await store.open("s1", created_at=5)  # at the open, not when first read
    finally:
        await store.close()
    assert raised.value.line == 7


async def test_a_file_grown_behind_the_index_is_read_whole(
    tmp_path: Path, lines_read: list[int]
) -> None:
    events = await written(tmp_path)
    with (tmp_path / "s1.jsonl").open("ab") as file:
        file.write(b'{"type":"turn/start","seq":%d,"time":1,"data":{}}\n' % len(events))
    lines_read.clear()
    read, length = await reopened(tmp_path)
    assert length == len(events) + 1
    assert read[: len(events)] == events
    assert lines_read != []


async def test_without_the_index_the_file_is_read_whole(
    tmp_path: Path, lines_read: list[int]
) -> None:
    events = await written(tmp_path)
    (tmp_path / FILE_NAME).unlink()
    lines_read.clear()
    assert await reopened(tmp_path) == (events, len(events))
    assert lines_read != []


async def test_a_file_cut_to_fewer_lines_is_refused_as_ever(tmp_path: Path) -> None:
    await written(tmp_path)
    path = tmp_path / "s1.jsonl"
    data = path.read_bytes()
    path.write_bytes(data[: data.rindex(b"\n", 0, len(data) - 1) + 1])  # the last line cut
    with pytest.raises(CorruptStore, match="were confirmed"):
        await reopened(tmp_path)


async def test_a_session_opened_so_and_appended_to_is_vouched_for_again(
    tmp_path: Path, lines_read: list[int]
) -> None:
    events = await written(tmp_path)
    store = JsonlStore(tmp_path)
    try:
        log = await store.open("s1", created_at=5)  # its lines not read
        log.append(new_events(10, start=len(events)))
        await log.flush()
    finally:
        await store.close()
    lines_read.clear()
    again = JsonlStore(tmp_path)
    try:
        log = await again.open("s1", created_at=5)
        assert lines_read == []  # the close vouched for what the open before it had
        assert log.length == len(events) + 10
        assert list(log.events(0))[: len(events)] == events
    finally:
        await again.close()


async def test_a_close_that_lost_unflushed_batches_vouches_for_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The journal cannot be written at the shutdown (a full disk): the
    batches never flushed are dropped, and the log counts events the file
    never got. No record may say the file holds them."""
    store = JsonlStore(tmp_path)
    log = await store.open("s1", created_at=5)
    log.append(new_events(1))
    await log.flush()
    log.append(new_events(2, start=1))  # never flushed

    def full(*_: object, **__: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_journal, "pwrite_all", full)
    with pytest.raises(StoreError):
        await store.close()
    monkeypatch.undo()
    index = sqlite3.connect(tmp_path / FILE_NAME)
    try:
        assert index.execute("SELECT count(*) FROM closed_files").fetchone() == (0,)
    finally:
        index.close()
    read, length = await reopened(tmp_path)  # the journal replayed, or the one event
    assert length == len(read)
    assert [e.seq for e in read] == list(range(length))


async def test_bytes_another_writer_added_while_held_are_not_vouched_for(
    tmp_path: Path, lines_read: list[int]
) -> None:
    events = await written(tmp_path)
    store = JsonlStore(tmp_path)
    try:
        await store.open("s1", created_at=5)
        with (tmp_path / "s1.jsonl").open("ab") as file:  # a writer that ignores the lock
            file.write(b'{"type":"turn/start","seq":%d,"time":1,"data":{}}\n' % len(events))
    finally:
        await store.close()
    lines_read.clear()
    read, length = await reopened(tmp_path)
    assert lines_read != []  # read whole at the open: the close vouched for nothing new
    assert length == len(events) + 1
    assert read[: len(events)] == events


async def test_an_open_session_keeps_a_small_instance_dict(tmp_path: Path) -> None:
    """Thousands of sessions stay open in one process: a log's attributes
    share their keys with every other log's (CPython keeps at most 30 keys
    shared; past that each instance's dict is a full table, about 1.3 KB
    more a session)."""
    await written(tmp_path, 10)
    store = JsonlStore(tmp_path)
    try:
        log = await store.open("s1", created_at=5)
        assert len(vars(log)) < 30
        assert sys.getsizeof(vars(log)) < 600
    finally:
        await store.close()
