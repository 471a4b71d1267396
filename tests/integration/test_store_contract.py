"""The SessionStore / SessionLog contract, once, for every store."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tickler.shell.ports import (
    InvalidSessionId,
    NewEvent,
    SessionLocked,
    SessionLog,
    SessionStore,
    Snapshot,
    StoreError,
)

from .conftest import Stores, new_events, run_child, tree

BAD_IDS: list[object] = [
    "",
    ".",
    "..",
    "../x",
    "a/b",
    "/abs",
    ".hidden",
    "a" * 201,
    "a\x00b",
    7,
    None,
]


def summary(log: SessionLog, start: int = 0) -> list[tuple[int, str, int, bytes]]:
    return [(item.seq, item.type, item.time, bytes(item.data)) for item in log.events(start)]


def expected(events: list[NewEvent], start: int = 0) -> list[tuple[int, str, int, bytes]]:
    return [(seq, item.type, item.time, item.data) for seq, item in enumerate(events)][start:]


async def test_append_is_ordered_with_contiguous_seq(stores: Stores) -> None:
    store = stores.open()
    log = await store.open("s1", created_at=5)
    first = await log.append(new_events(3))
    empty = await log.append([])
    second = await log.append(new_events(1, start=3))
    assert [item.seq for item in first] == [0, 1, 2]
    assert empty == ()
    assert [item.seq for item in second] == [3]
    assert bytes(second[0].data) == new_events(1, start=3)[0].data
    assert log.length == 4
    assert summary(log) == expected(new_events(4))
    await store.close()


async def test_events_from_a_start(stores: Stores) -> None:
    store = stores.open()
    log = await store.open("s1", created_at=5)
    await log.append(new_events(700))
    for start in (0, 1, 255, 256, 257, 511, 699):
        assert summary(log, start) == expected(new_events(700), start)
    assert summary(log, 700) == []
    assert summary(log, 10_000) == []
    await store.close()


async def test_header(stores: Stores) -> None:
    store = stores.open()
    log = await store.open("s-1_a.b", created_at=1_700_000_000_000)
    assert isinstance(store, SessionStore)
    assert isinstance(log, SessionLog)
    assert log.header.id == "s-1_a.b"
    assert log.header.created_at == 1_700_000_000_000
    assert log.header.owned_from == 0
    assert "s-1_a.b" in store.session_ids()
    await store.close()


async def test_reopen_keeps_everything(stores: Stores) -> None:
    store = stores.open()
    log = await store.open("s1", created_at=5)
    await log.append(new_events(10))
    await log.flush()
    await log.save_snapshot(Snapshot(8, b"state through 8"))
    await log.append(new_events(2, start=10))
    await log.flush()
    await store.close()

    again = stores.open()
    if stores.durable:
        assert again is not store
    log = await again.open("s1", created_at=99)
    assert log.header.created_at == 5  # the stored header wins
    assert log.length == 12
    assert summary(log) == expected(new_events(12))
    assert log.load_snapshot() == Snapshot(8, b"state through 8")
    assert (await log.append(new_events(1, start=12)))[0].seq == 12
    await again.close()


async def test_one_writer_per_session(stores: Stores) -> None:
    store = stores.open()
    log = await store.open("s1", created_at=5)
    with pytest.raises(SessionLocked, match="s1"):
        await store.open("s1", created_at=5)
    other = await store.open("s2", created_at=5)  # other sessions are free
    await log.close()
    reopened = await store.open("s1", created_at=5)  # close released the lock
    await reopened.close()
    await other.close()
    await store.close()


async def test_a_second_store_on_the_same_storage_is_locked_out(durable: Stores) -> None:
    first = durable.open()
    log = await first.open("s1", created_at=5)
    second = durable.open()
    with pytest.raises(SessionLocked):
        await second.open("s1", created_at=5)
    await log.close()
    await (await second.open("s1", created_at=5)).close()
    await second.close()
    await first.close()


async def test_a_writer_in_another_process_is_locked_out(durable: Stores) -> None:
    store = durable.open()
    log = await store.open("s1", created_at=5)
    assert run_child("try-open", durable.kind, str(durable.path), "s1").split() == ["locked"]
    await log.close()
    assert run_child("try-open", durable.kind, str(durable.path), "s1").split() == ["opened"]
    await store.close()


@pytest.mark.parametrize("bad", BAD_IDS, ids=repr)
async def test_bad_session_ids_are_refused(stores: Stores, tmp_path: Path, bad: object) -> None:
    store = stores.open()
    before = tree(tmp_path)
    with pytest.raises(InvalidSessionId):
        await store.open(bad, created_at=5)  # type: ignore[arg-type]
    assert tree(tmp_path) == before
    assert store.session_ids() == []
    await store.close()


async def test_snapshots_round_trip(stores: Stores) -> None:
    store = stores.open()
    log = await store.open("s1", created_at=5)
    assert log.load_snapshot() is None
    await log.append(new_events(5))
    await log.save_snapshot(Snapshot(3, b"\x00binary\xff"))
    assert log.load_snapshot() == Snapshot(3, b"\x00binary\xff")
    await log.save_snapshot(Snapshot(5, b"newer"))
    assert log.load_snapshot() == Snapshot(5, b"newer")
    await store.close()


async def test_close_is_idempotent_and_releases_the_lock(stores: Stores) -> None:
    store = stores.open()
    log = await store.open("s1", created_at=5)
    await log.append(new_events(2))
    await log.close()
    await log.close()
    await store.close()
    await store.close()
    again = stores.open()
    log = await again.open("s1", created_at=5)
    assert log.length == 2
    await again.close()


async def test_concurrent_appends_and_flushes_stay_contiguous(stores: Stores) -> None:
    store = stores.open()
    logs = [await store.open(f"s{index}", created_at=5) for index in range(8)]

    async def drive(log: SessionLog) -> None:
        for round_ in range(20):
            await log.append(new_events(1 + round_ % 3, start=log.length))
            await log.flush()

    await asyncio.gather(*(drive(log) for log in logs))
    for log in logs:
        assert [item.seq for item in log.events()] == list(range(log.length))
        assert summary(log) == expected(new_events(log.length))
    await store.close()


async def test_flush_with_nothing_appended_returns(stores: Stores) -> None:
    store = stores.open()
    log = await store.open("s1", created_at=5)
    await log.flush()
    await log.append(new_events(1))
    await log.flush()
    await log.flush()
    await store.close()


# -- what every store refuses ---------------------------------------------


async def test_a_snapshot_beyond_the_log_is_refused(stores: Stores) -> None:
    store = stores.open()
    log = await store.open("s1", created_at=5)
    await log.append(new_events(2))
    with pytest.raises(StoreError, match="beyond"):
        await log.save_snapshot(Snapshot(3, b"too far"))
    assert log.load_snapshot() is None
    await store.close()


async def test_appending_to_a_closed_log_raises(stores: Stores) -> None:
    store = stores.open()
    log = await store.open("s1", created_at=5)
    await log.close()
    with pytest.raises(StoreError, match="closed"):
        await log.append(new_events(1))
    await store.close()


@pytest.mark.parametrize(
    "data", [b"{bad", b'{"a":\n1}', b"", b"1 2"], ids=["not-json", "newline", "empty", "two"]
)
async def test_events_that_would_not_read_back_are_refused(stores: Stores, data: bytes) -> None:
    store = stores.open()
    log = await store.open("s1", created_at=5)
    await log.append(new_events(1))
    with pytest.raises(ValueError, match=r"read back|one line"):
        await log.append([*new_events(1, start=1), NewEvent("bad", data, 1)])
    assert log.length == 1  # nothing of the batch was appended
    await log.flush()
    await store.close()
    again = stores.open()
    log = await again.open("s1", created_at=5)
    assert summary(log) == expected(new_events(1))
    await again.close()


async def test_a_negative_time_is_refused(stores: Stores) -> None:
    store = stores.open()
    log = await store.open("s1", created_at=5)
    with pytest.raises(ValueError, match="read back"):
        await log.append([NewEvent("note", b"{}", -1)])
    assert log.length == 0
    await store.close()
