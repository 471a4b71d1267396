"""The JSONL store's length files (``<session>.length``): what they hold,
how a write a power loss cuts reads, and what happens when one cannot be
written (the journal covering the session is then kept, never deleted)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tickler.adapters.stores._jsonl import JsonlStore
from tickler.adapters.stores._lengthfile import read_length, write_length
from tickler.shell._ports import StoreError

from .conftest import FlakyFsync, new_events
from .test_jsonl_store import journals


def test_the_larger_count_of_the_valid_slots_is_the_record(tmp_path: Path) -> None:
    path = tmp_path / "s1.length"
    assert read_length(path) is None
    assert write_length(path, 5, os.fsync) is True  # created: its directory is the caller's
    assert write_length(path, 9, os.fsync) is False
    assert write_length(path, 7, os.fsync) is False  # a smaller count changes nothing
    assert read_length(path) == 9
    raw = path.read_bytes()
    assert len(raw) == 64
    spoiled = bytearray(raw)
    spoiled[40] ^= 1  # the slot holding 9, as a cut write leaves it
    path.write_bytes(bytes(spoiled))
    assert read_length(path) == 5  # the other slot: the previous count
    assert write_length(path, 12, os.fsync) is False  # into the spoiled slot
    assert read_length(path) == 12
    path.write_bytes(b"\0" * 10)  # a first write a power loss cut
    assert read_length(path) is None


async def test_every_close_records_the_length_and_only_when_it_grew(tmp_path: Path) -> None:
    flaky = FlakyFsync()
    store = JsonlStore(tmp_path, fsync=flaky)
    log = await store.open("s1", created_at=5)
    log.append(new_events(3))
    await log.close()
    assert read_length(tmp_path / "s1.length") == 3
    log = await store.open("s1", created_at=5)
    flaky.calls.clear()
    await log.close()  # nothing new: nothing written
    assert "length" not in flaky.calls
    await store.close()
    assert read_length(tmp_path / "s1.length") == 3
    empty = JsonlStore(tmp_path)
    await (await empty.open("s2", created_at=5)).close()  # no event: no length file
    await empty.close()
    assert not (tmp_path / "s2.length").exists()


async def test_a_length_that_cannot_be_recorded_fails_the_close_and_keeps_the_journal(
    tmp_path: Path,
) -> None:
    flaky = FlakyFsync()
    store = JsonlStore(tmp_path, fsync=flaky)
    log = await store.open("s1", created_at=5)
    log.append(new_events(4))
    await log.flush()
    flaky.fail("length")
    with pytest.raises(StoreError, match=r"s1.*injected fsync failure \(length\)"):
        await log.close()
    await store.close()
    assert journals(tmp_path)  # kept: it still covers the session's events
    again = JsonlStore(tmp_path)
    assert journals(tmp_path) == []  # replayed, the length recorded, then removed
    assert read_length(tmp_path / "s1.length") == 4
    assert (await again.open("s1", created_at=5)).length == 4
    await again.close()


async def test_a_checkpoint_that_cannot_record_a_length_keeps_its_journal(
    tmp_path: Path,
) -> None:
    flaky = FlakyFsync()
    store = JsonlStore(tmp_path, fsync=flaky)
    idle = await store.open("idle", created_at=5)
    idle.append(new_events(2))
    await idle.flush()
    flaky.fail("length")
    with pytest.raises(StoreError, match=r"idle.*injected fsync failure \(length\)"):
        await store.checkpoint()
    assert journals(tmp_path)  # kept for replay after this process
    flaky.heal()
    await store.checkpoint()  # nothing new to report
    await idle.close()
    await store.close()
    assert read_length(tmp_path / "idle.length") == 2
