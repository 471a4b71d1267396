"""What only the JSONL store promises: the harness layout, torn-tail and
journal recovery, and honest flushes when writes or syncs fail."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from tickler.adapters.stores._files import CorruptStore
from tickler.adapters.stores._jsonl import JsonlLog, JsonlStore
from tickler.adapters.stores._lines import decode_line, encode_batch, header_line
from tickler.adapters.stores._wal import MAGIC, encode_record, read_records
from tickler.core import SessionHeader, parse_session_jsonl
from tickler.core.wire._session import BLANK_LINE, SessionFileError, event
from tickler.shell._ports import NewEvent, Snapshot, StoreError
from tickler.testing import expected, summary

from .conftest import (
    CHILD,
    DescriptorLimit,
    FileSizeLimit,
    FlakyFsync,
    GatedFsync,
    new_events,
    open_fds,
)

HEADER = header_line(SessionHeader(id="s1", created_at=5))
HARNESS_HEADER = b'{"type":"session","version":0,"id":"s1","createdAt":5,"delegationDepth":0}'
EVENT = b'{"type":"turn/start","seq":%d,"time":1,"data":{}}'


async def write_session(directory: Path, count: int, **options: object) -> Path:
    store = JsonlStore(directory, **options)  # type: ignore[arg-type]
    log = await store.open("s1", created_at=5)
    log.append(new_events(count))
    await store.close()
    return directory / "s1.jsonl"


def journals(directory: Path) -> list[Path]:
    return sorted((directory / ".journal").glob("*.wal"))


def die_after(directory: Path, batches: int) -> None:
    """A child appends and flushes ``batches`` batches of 3, then kill -9s
    itself: its journal stays behind, dead."""
    done = subprocess.run(
        [sys.executable, str(CHILD), "die-after", "jsonl", str(directory), "s1", str(batches)],
        capture_output=True,
        check=False,
    )
    assert done.returncode == -9, done.stderr


async def test_the_file_is_the_harness_layout(tmp_path: Path) -> None:
    store = JsonlStore(tmp_path)
    log = await store.open("s1", created_at=5)
    log.append([NewEvent("schedule/change", b'{"v":1, "op" : "x"}', 7)])
    log.append([NewEvent("note", b'"\\u00e9\xc3\xa9"', 8), NewEvent("n", b"[]", 9)])
    await store.close()
    data = (tmp_path / "s1.jsonl").read_bytes()
    assert data == HEADER + (
        b'{"type":"schedule/change","seq":0,"time":7,"data":{"v":1, "op" : "x"}}\n'
        b'{"type":"note","seq":1,"time":8,"data":"\\u00e9\xc3\xa9"}\n'
        b'{"type":"n","seq":2,"time":9,"data":[]}\n'
    )
    parsed = parse_session_jsonl(data)
    assert parsed.torn_tail is None
    assert parsed.header.id == "s1"
    assert [bytes(item.data) for item in parsed.events] == [
        b'{"v":1, "op" : "x"}',
        b'"\\u00e9\xc3\xa9"',
        b"[]",
    ]


async def test_a_harness_file_opens_and_takes_appends(tmp_path: Path) -> None:
    original = (
        b'{"type":"session","version":0,"id":"s1","createdAt":5,"cwd":"/w","seedLength":1,'
        b'"futureKey":true}\n'
        b'{"type":"message","seq":0,"time":1,"data":{"role":"user"},"surfaceOp":"x",'
        b'"sourceEventSeqs":[]}\n'
        b'{"type":"session/end-seed","seq":1,"time":2,"data":null,"ignorable":true}\n'
    )
    (tmp_path / "s1.jsonl").write_bytes(original)
    store = JsonlStore(tmp_path)
    log = await store.open("s1", created_at=99)
    assert log.header.cwd == "/w"
    assert log.header.owned_from == 1
    assert log.length == 2
    assert [(item.type, item.ignorable) for item in log.events()] == [
        ("message", msgspec.UNSET),
        ("session/end-seed", True),
    ]
    log.append(new_events(1))
    await store.close()
    data = (tmp_path / "s1.jsonl").read_bytes()
    assert data.startswith(original)  # never rewritten, only appended to
    assert [item.seq for item in parse_session_jsonl(data).events] == [0, 1, 2]


@pytest.mark.parametrize(
    ("lines", "number", "reason"),
    [
        ([HARNESS_HEADER, b"", EVENT % 0], 2, BLANK_LINE),
        ([HARNESS_HEADER, EVENT % 0, b"  ", EVENT % 1], 3, BLANK_LINE),
        ([HARNESS_HEADER, EVENT % 0, b""], 3, BLANK_LINE),
        ([b"", HARNESS_HEADER, EVENT % 0], 1, f"invalid session header: {BLANK_LINE}"),
    ],
)
async def test_a_blank_line_is_corruption_named_by_its_line(
    tmp_path: Path, lines: list[bytes], number: int, reason: str
) -> None:
    """Issue 25, item 9: the harness cannot read a blank line; the store
    skipped it, as parse_session_jsonl did. Now both name it, and the file
    is left as it is."""
    data = b"".join(line + b"\n" for line in lines)
    path = tmp_path / "s1.jsonl"
    path.write_bytes(data)
    with pytest.raises(SessionFileError) as parsed:
        parse_session_jsonl(data)
    assert (parsed.value.line, parsed.value.reason) == (number, reason)
    store = JsonlStore(tmp_path)
    with pytest.raises(CorruptStore) as opened:
        await store.open("s1", created_at=1)
    await store.close()
    assert str(opened.value) == f"{path}: line {number}: {reason}"
    assert path.read_bytes() == data


async def test_a_torn_tail_a_journal_covers_is_dropped_reported_and_replayed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    die_after(tmp_path, 2)  # its dead journal holds every batch
    path = tmp_path / "s1.jsonl"
    complete = path.read_bytes()
    path.write_bytes(complete[:-7])  # a crash cut the last line
    with caplog.at_level(logging.WARNING, logger="tickler.store"):
        store = JsonlStore(tmp_path)
    assert any("torn" in note for note in store.recovered)
    assert any("torn" in record.getMessage() for record in caplog.records)
    assert path.read_bytes() == complete  # cut, then written back whole
    log = await store.open("s1", created_at=5)
    assert (log.append(new_events(1, start=6)))[0].seq == 6
    await store.close()
    assert len(parse_session_jsonl(path.read_bytes()).events) == 7


@pytest.mark.parametrize(
    "cut",
    [b"", b'{"type":"note","seq":3,"ti'],
    ids=["last-line-cut", "fragment-after-a-clean-close"],
)
async def test_a_torn_tail_no_journal_covers_is_corruption_and_left_alone(
    tmp_path: Path, cut: bytes
) -> None:
    path = await write_session(tmp_path, 3)  # closed cleanly: no journal is left
    if cut:
        path.write_bytes(path.read_bytes() + cut)
    else:
        path.write_bytes(path.read_bytes()[:-5])  # the confirmed seq 2 loses its end
    damaged = path.read_bytes()
    store = JsonlStore(tmp_path)
    with pytest.raises(StoreError, match=r"s1\.jsonl: line \d+: torn final line .*no journal"):
        await store.open("s1", created_at=5)
    assert path.read_bytes() == damaged  # nothing trimmed, so no seq is ever issued again
    with pytest.raises(CorruptStore):  # every later open says the same
        await store.open("s1", created_at=5)
    await store.close()


async def test_a_whole_final_line_without_its_newline_is_kept(tmp_path: Path) -> None:
    path = await write_session(tmp_path, 3)
    path.write_bytes(path.read_bytes()[:-1])
    store = JsonlStore(tmp_path)
    log = await store.open("s1", created_at=5)
    assert log.length == 3
    assert any("newline" in note for note in log.recovered)
    log.append(new_events(1, start=3))
    await store.close()
    parsed = parse_session_jsonl(path.read_bytes())
    assert [item.seq for item in parsed.events] == [0, 1, 2, 3]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (b'{"type":"note","seq":1,"ti\n', "invalid event"),
        (b'{"type":"n","seq":7,"time":1,"data":1}\n', "seq 7"),
    ],
    ids=["not-json", "seq-gap"],
)
async def test_a_corrupt_line_raises_naming_it(tmp_path: Path, line: bytes, reason: str) -> None:
    path = await write_session(tmp_path, 3)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[2] = line
    damaged = b"".join(lines)
    path.write_bytes(damaged)
    store = JsonlStore(tmp_path)
    with pytest.raises(StoreError, match=rf"s1\.jsonl: line 3: .*{reason}"):
        await store.open("s1", created_at=5)
    assert path.read_bytes() == damaged  # never silently repaired
    await (await store.open("s2", created_at=5)).close()  # the failed open kept no lock
    await store.close()


async def test_a_file_naming_another_session_is_refused(tmp_path: Path) -> None:
    (tmp_path / "s2.jsonl").write_bytes(HEADER)
    store = JsonlStore(tmp_path)
    with pytest.raises(StoreError, match="names session 's1'"):
        await store.open("s2", created_at=5)
    await store.close()


@pytest.mark.parametrize("cut", ["mid-line", "line-boundary-mid-batch"])
async def test_a_dead_journal_restores_lost_writes(tmp_path: Path, cut: str) -> None:
    die_after(tmp_path, 5)
    path = tmp_path / "s1.jsonl"
    complete = path.read_bytes()
    lines = complete.splitlines(keepends=True)
    assert len(lines) == 16  # header + 5 batches of 3
    # As if the page cache never reached the disk: drop the tail of the file,
    # cutting a line in two, or keeping seq 12 of the batch 12-14 only.
    if cut == "mid-line":
        path.write_bytes(b"".join(lines[:12]) + lines[12][:20])
    else:
        path.write_bytes(b"".join(lines[:14]))
    assert journals(tmp_path)
    store = JsonlStore(tmp_path)
    assert any("replayed events" in note for note in store.recovered)
    assert (cut == "mid-line") == any("torn" in note for note in store.recovered)
    assert path.read_bytes() == complete
    assert journals(tmp_path) == []  # replayed and removed; ours is created when first needed
    log = await store.open("s1", created_at=5)
    assert log.length == 15
    await store.close()


async def test_a_journal_that_cannot_be_replayed_raises(tmp_path: Path) -> None:
    await write_session(tmp_path, 3)
    die_after(tmp_path, 3)  # its journal holds seq 3-11 only
    path = tmp_path / "s1.jsonl"
    path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:2]))
    dead = journals(tmp_path)
    store = JsonlStore(tmp_path)  # the other sessions stay usable
    with pytest.raises(StoreError, match="journal holds seq 3 but the file ends at seq 1"):
        await store.open("s1", created_at=5)
    assert journals(tmp_path) == dead  # the dead one is kept for a later try
    await (await store.open("s2", created_at=5)).close()
    await store.close()


async def test_a_failed_journal_sync_is_never_reported_durable(tmp_path: Path) -> None:
    flaky = FlakyFsync()
    store = JsonlStore(tmp_path, fsync=flaky)
    log = await store.open("s1", created_at=5)
    log.append(new_events(2))
    flaky.fail("journal")
    with pytest.raises(StoreError, match="injected"):
        await log.flush()
    with pytest.raises(StoreError, match="injected"):
        await log.flush()  # still not durable: no free pass on a retry
    # The records were rewritten to a fresh journal, never trusted again.
    fresh = journals(tmp_path)[-1]
    assert [record.first_seq for record in read_records(fresh.read_bytes())] == [0]
    flaky.heal()
    before = len(flaky.calls)
    await log.flush()
    # (a checkpoint of the retired journals may sync session files meanwhile)
    assert "journal" in flaky.calls[before:]
    log.append(new_events(1, start=2))
    await log.flush()
    await store.close()
    assert journals(tmp_path) == []
    assert len(parse_session_jsonl((tmp_path / "s1.jsonl").read_bytes()).events) == 3


async def test_a_failed_checkpoint_keeps_the_journal_and_never_fails_a_flush(
    tmp_path: Path,
) -> None:
    flaky = FlakyFsync()
    store = JsonlStore(tmp_path, fsync=flaky, journal_limit=1)  # every round retires one
    log = await store.open("s1", created_at=5)
    log.append(new_events(1))
    await log.flush()
    await store.checkpoint()
    assert journals(tmp_path) == []  # checkpointed (in the background) and deleted
    log.append(new_events(1, start=1))
    flaky.fail("session")
    await log.flush()  # durable in the journal: the checkpoint is not the flush's business
    with pytest.raises(StoreError, match=r"cannot checkpoint.*'s1'.*injected.*kept for replay"):
        await store.checkpoint()
    kept = journals(tmp_path)
    assert len(kept) == 1
    flaky.heal()
    log.append(new_events(1, start=2))
    await log.flush()
    await store.checkpoint()  # the failure was reported once
    assert journals(tmp_path) == kept  # kept, locked, until this process is done with it
    await store.close()
    assert journals(tmp_path) == kept  # left for the next opener to replay
    again = JsonlStore(tmp_path)
    assert journals(tmp_path) == []  # replayed (nothing missing) and removed
    log = await again.open("s1", created_at=5)
    assert log.length == 3
    await again.close()


async def test_a_reopened_file_is_synced_before_a_flush_counts(tmp_path: Path) -> None:
    await write_session(tmp_path, 2)
    flaky = FlakyFsync()
    store = JsonlStore(tmp_path, fsync=flaky)
    log = await store.open("s1", created_at=5)
    assert "session" not in flaky.calls  # opening costs no fsync
    log.append(new_events(1, start=2))
    flaky.fail("session")
    with pytest.raises(StoreError, match="cannot sync a session file"):
        await log.flush()
    flaky.heal()
    await log.flush()
    assert flaky.calls.count("session") == 2  # the failed try, then the retry
    await store.close()


async def test_a_failed_open_keeps_nothing_locked(tmp_path: Path) -> None:
    flaky = FlakyFsync()
    store = JsonlStore(tmp_path, fsync=flaky)
    flaky.fail()
    with pytest.raises(StoreError, match="injected"):
        await store.open("s1", created_at=5)
    flaky.heal()
    log = await store.open("s1", created_at=5)
    assert log.length == 0
    await store.close()


async def test_a_failed_close_leaves_the_journal_for_the_next_opener(tmp_path: Path) -> None:
    flaky = FlakyFsync()
    store = JsonlStore(tmp_path, fsync=flaky)
    log = await store.open("s1", created_at=5)
    log.append(new_events(4))
    await log.flush()
    flaky.fail()
    with pytest.raises(StoreError, match="injected"):
        await store.close()
    assert journals(tmp_path)
    again = JsonlStore(tmp_path)
    assert journals(tmp_path) == []  # replayed and removed
    log = await again.open("s1", created_at=5)
    assert log.length == 4
    await again.close()


async def test_a_failed_snapshot_keeps_the_previous_one(tmp_path: Path) -> None:
    flaky = FlakyFsync()
    store = JsonlStore(tmp_path, fsync=flaky)
    log = await store.open("s1", created_at=5)
    log.append(new_events(4))
    await log.save_snapshot(Snapshot(2, b"two"))
    flaky.fail("other", "dir")
    with pytest.raises(StoreError, match="injected"):
        await log.save_snapshot(Snapshot(4, b"four"))
    assert log.load_snapshot() == Snapshot(2, b"two")
    flaky.heal()
    await store.close()


@pytest.mark.parametrize("events", [4, 800], ids=["small", "anchored"])
async def test_a_snapshot_beyond_a_shortened_log_is_corruption(tmp_path: Path, events: int) -> None:
    store = JsonlStore(tmp_path)
    log = await store.open("s1", created_at=5)
    log.append(new_events(events))
    await log.save_snapshot(Snapshot(events, b"all"))
    await store.close()
    path = tmp_path / "s1.jsonl"
    path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:3]))  # proof of loss
    damaged = path.read_bytes()
    snapshot = path.with_suffix(".snapshot").read_bytes()
    again = JsonlStore(tmp_path)
    with pytest.raises(
        StoreError, match=rf"s1\.snapshot: the snapshot covers {events} events but .* holds 2"
    ):
        await again.open("s1", created_at=5)
    assert path.read_bytes() == damaged
    assert path.with_suffix(".snapshot").read_bytes() == snapshot
    await again.close()


async def test_a_damaged_snapshot_beyond_the_log_is_only_ignored(tmp_path: Path) -> None:
    store = JsonlStore(tmp_path)
    log = await store.open("s1", created_at=5)
    log.append(new_events(4))
    await log.save_snapshot(Snapshot(2, b"two"))
    await store.close()
    snapshot = tmp_path / "s1.snapshot"
    raw = bytearray(snapshot.read_bytes())
    raw[len(b"tickler-snapshot-2\n")] = 99  # its through, no longer matching its checksum
    raw[-1] ^= 1
    snapshot.write_bytes(bytes(raw))
    again = JsonlStore(tmp_path)
    log = await again.open("s1", created_at=5)  # derived data: the log is whole
    assert log.length == 4
    assert log.load_snapshot() is None
    await again.close()


async def test_an_append_reaches_its_file_at_the_next_round(tmp_path: Path) -> None:
    store = JsonlStore(tmp_path)
    log = await store.open("s1", created_at=5)
    path = tmp_path / "s1.jsonl"
    header = path.read_bytes()
    log.append(new_events(2))
    log.append(new_events(1, start=2))
    assert path.read_bytes() == header  # nothing written by an append
    assert [item.seq for item in log.events()] == [0, 1, 2]  # read from memory
    assert [item.seq for item in log.events(1)] == [1, 2]
    await log.flush()
    events = parse_session_jsonl(path.read_bytes()).events
    assert [item.seq for item in events] == [0, 1, 2]  # one round wrote both batches
    log.append(new_events(1, start=3))
    assert [item.seq for item in log.events(2)] == [2, 3]  # the file, then memory
    await store.close()
    assert [item.seq for item in parse_session_jsonl(path.read_bytes()).events] == [0, 1, 2, 3]


async def test_an_append_past_the_queue_limit_is_written_out_with_its_record(
    tmp_path: Path,
) -> None:
    store = JsonlStore(tmp_path)
    small = await store.open("small", created_at=5)
    big = await store.open("big", created_at=5)
    small.append(new_events(1))
    big.append([NewEvent("pad", b'"' + b"x" * (1 << 20) + b'"', 1)])  # past 1 MiB
    for name in ("small", "big"):  # both written out with the queue, no flush asked
        assert len(parse_session_jsonl((tmp_path / f"{name}.jsonl").read_bytes()).events) == 1
    await store.close()  # nothing left pending for the closing logs
    again = JsonlStore(tmp_path)
    assert [(await again.open(n, created_at=5)).length for n in ("small", "big")] == [1, 1]
    await again.close()


async def test_a_session_file_that_cannot_be_written_lags_then_catches_up(
    tmp_path: Path, fsize_limit: FileSizeLimit
) -> None:
    # No zeros ahead in the journal: the file-size cap below must leave
    # room for its records, not for zeros written past them.
    store = JsonlStore(tmp_path, journal_limit=4096, journal_zero_ahead=0)
    log = await store.open("s1", created_at=5)
    log.append([NewEvent("pad", b'"' + b"x" * 60_000 + b'"', 1)])
    await log.flush()
    path = tmp_path / "s1.jsonl"
    size = path.stat().st_size
    fsize_limit.cap(size + 100)  # the journal (small) still fits; the session file does not
    log.append(new_events(3, start=1))
    await log.flush()  # durable all the same: the journal holds the lines
    assert path.stat().st_size == size  # what the failed write left was cut off
    assert [item.seq for item in log.events()] == [0, 1, 2, 3]  # the rest from memory
    assert [item.seq for item in log.events(2)] == [2, 3]
    with pytest.raises(StoreError, match="could not be written"):
        await store.checkpoint()  # the journal covering the lagging file is kept
    assert any(journals(tmp_path))
    fsize_limit.lift()
    assert (log.append(new_events(1, start=4)))[0].seq == 4
    await log.flush()  # the round writes the lagging lines first
    assert [item.seq for item in parse_session_jsonl(path.read_bytes()).events] == [0, 1, 2, 3, 4]
    await store.close()
    events = parse_session_jsonl(path.read_bytes()).events
    assert [item.seq for item in events] == [0, 1, 2, 3, 4]


async def test_a_session_file_still_lagging_at_close_fails_the_close_and_keeps_the_journal(
    tmp_path: Path, fsize_limit: FileSizeLimit
) -> None:
    store = JsonlStore(tmp_path, journal_limit=4096, journal_zero_ahead=0)
    log = await store.open("s1", created_at=5)
    log.append([NewEvent("pad", b'"' + b"x" * 60_000 + b'"', 1)])
    await log.flush()
    path = tmp_path / "s1.jsonl"
    fsize_limit.cap(path.stat().st_size + 100)
    log.append(new_events(3, start=1))
    await log.flush()
    with pytest.raises(StoreError, match="cannot write session 's1' at its close"):
        await log.close()
    await store.close()  # the failure was reported by the log's close
    fsize_limit.lift()
    again = JsonlStore(tmp_path)  # the kept journal is replayed into the file
    reopened = await again.open("s1", created_at=5)
    assert reopened.length == 4
    await again.close()
    assert [item.seq for item in parse_session_jsonl(path.read_bytes()).events] == [0, 1, 2, 3]


async def test_a_failed_journal_write_fails_the_flush_and_keeps_the_batches(
    tmp_path: Path, fsize_limit: FileSizeLimit
) -> None:
    store = JsonlStore(tmp_path, journal_zero_ahead=0)  # the cap is at the records' end
    big = await store.open("big", created_at=5)
    big.append([NewEvent("pad", b'"' + b"x" * 60_000 + b'"', 1)])
    await big.flush()
    small = await store.open("s1", created_at=5)
    journal = journals(tmp_path)[0]
    small.append(new_events(3))  # small batches reach the journal at the flush
    fsize_limit.cap(journal.stat().st_size + 50)
    with pytest.raises(StoreError, match="cannot write the journal"):
        await small.flush()
    fsize_limit.lift()
    assert small.length == 3
    await small.flush()
    records = list(read_records(journal.read_bytes()))  # no torn record left in between
    assert [(record.session_id, record.first_seq) for record in records] == [("big", 0), ("s1", 0)]
    await store.close()


async def test_lines_reach_their_session_file_only_after_their_record(
    tmp_path: Path, fsize_limit: FileSizeLimit
) -> None:
    store = JsonlStore(tmp_path, journal_zero_ahead=0)  # the cap is at the records' end
    log = await store.open("s1", created_at=5)
    path = tmp_path / "s1.jsonl"
    # One event that ends the file 30 bytes before a page boundary.
    overhead = len(b'{"type":"pad","seq":0,"time":1,"data":""}\n')
    pad = 4096 - 30 - path.stat().st_size - overhead
    log.append([NewEvent("pad", b'"' + b"x" * pad + b'"', 1)])
    await log.flush()
    assert path.stat().st_size == 4096 - 30
    journal = journals(tmp_path)[0]
    fsize_limit.cap(journal.stat().st_size + 10)
    log.append(new_events(3, start=1))  # would cross the page boundary
    assert path.stat().st_size == 4096 - 30  # an append writes nothing yet
    with pytest.raises(StoreError, match="cannot write the journal"):
        await log.flush()
    fsize_limit.lift()
    assert log.length == 4
    assert path.stat().st_size == 4096 - 30  # the session file was never touched
    await log.flush()
    await store.close()
    assert [item.seq for item in parse_session_jsonl(path.read_bytes()).events] == [0, 1, 2, 3]


async def test_batches_never_flushed_are_dropped_if_the_journal_refuses_them_at_close(
    tmp_path: Path, fsize_limit: FileSizeLimit, caplog: pytest.LogCaptureFixture
) -> None:
    store = JsonlStore(tmp_path, journal_zero_ahead=0)  # the cap is at the records' end
    log = await store.open("s1", created_at=5)
    log.append(new_events(1))
    await log.flush()
    journal = journals(tmp_path)[0]
    log.append(new_events(2, start=1))  # never flushed
    fsize_limit.cap(journal.stat().st_size + 10)
    with pytest.raises(StoreError, match="cannot write the journal"):
        await store.close()
    fsize_limit.lift()
    assert "session 's1': 1 batches never flushed are lost" in caplog.text
    path = tmp_path / "s1.jsonl"
    assert [item.seq for item in parse_session_jsonl(path.read_bytes()).events] == [0]
    again = JsonlStore(tmp_path)
    assert (await again.open("s1", created_at=5)).length == 1
    await again.close()


async def test_closing_quietly_after_appends_that_were_never_flushed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = JsonlStore(tmp_path, journal_limit=4096)  # the close retires records not synced
    log = await store.open("s1", created_at=5)
    for first in range(0, 40, 4):
        log.append(new_events(4, start=first))
    await store.close()  # writes them out and syncs them: nothing is lost
    assert "lost" not in caplog.text
    events = parse_session_jsonl((tmp_path / "s1.jsonl").read_bytes()).events
    assert [item.seq for item in events] == list(range(40))


def records_end(journal: Path) -> tuple[int, int]:
    """How many intact records the journal holds, and where they end."""
    records = list(read_records(journal.read_bytes()))
    end = len(MAGIC) + sum(len(encode_record(*record)) for record in records)
    return len(records), end


async def test_the_journal_writes_into_zeros_it_wrote_ahead(tmp_path: Path) -> None:
    store = JsonlStore(tmp_path, journal_zero_ahead=4096)
    log = await store.open("s1", created_at=5)
    log.append(new_events(2))
    await log.flush()
    journal = journals(tmp_path)[0]
    data = journal.read_bytes()
    count, end = records_end(journal)
    assert count == 1
    assert len(data) == end + 4096 or len(data) == len(MAGIC) + 4096
    assert data[end:] == bytes(len(data) - end)  # zeros after the records: the end
    for seq in range(2, 200):  # past the first fill: more zeros are written ahead
        log.append(new_events(1, start=seq))
        await log.flush()
    count, end = records_end(journal)
    assert count == 199
    assert journal.stat().st_size - end >= 2048
    await store.close()
    events = parse_session_jsonl((tmp_path / "s1.jsonl").read_bytes()).events
    assert [item.seq for item in events] == list(range(200))


async def test_zeros_that_cannot_be_written_ahead_fail_no_flush(
    tmp_path: Path, fsize_limit: FileSizeLimit
) -> None:
    store = JsonlStore(tmp_path, journal_zero_ahead=4096)
    log = await store.open("s1", created_at=5)
    log.append(new_events(1))
    await log.flush()
    journal = journals(tmp_path)[0]
    zeroed = journal.stat().st_size
    fsize_limit.cap(zeroed + 2000)  # no new fill fits; records still do, for a while
    seq = 1
    while records_end(journal)[1] < zeroed + 200:  # until records run past the zeros
        log.append(new_events(1, start=seq))
        await log.flush()  # never fails: the fill is only an optimisation
        seq += 1
        assert seq < 500
    fsize_limit.lift()
    assert records_end(journal)[0] == seq
    await store.close()
    events = parse_session_jsonl((tmp_path / "s1.jsonl").read_bytes()).events
    assert [item.seq for item in events] == list(range(seq))


# -- descriptors, robustness, fast reopen, prompt rounds ------------------


async def test_an_open_session_holds_one_descriptor(tmp_path: Path) -> None:
    store = JsonlStore(tmp_path)
    before = open_fds()
    await (await store.open("first", created_at=5)).close()
    assert open_fds() == before + 3  # the wake index: its database, WAL and shared memory
    base = open_fds()
    logs = [await store.open(f"s{index}", created_at=5) for index in range(20)]
    assert open_fds() == base + 20  # the file, whose flock is the writer lock
    for log in logs:
        log.append(new_events(2, start=log.length))  # logged, not flushed
    assert open_fds() == base + 20
    await asyncio.gather(*(log.flush() for log in logs))
    assert open_fds() == base + 20 + 1  # and the store's journal file
    await logs[0].close()
    assert open_fds() == base + 20
    reader = logs[1].events(0)
    assert next(reader).seq == 0  # a read opens the file for its duration
    assert open_fds() == base + 20 + 1
    del reader
    await store.close()
    assert open_fds() == before - 2  # the store held its two directories


async def test_running_out_of_descriptors_fails_a_flush_never_the_store(
    tmp_path: Path, fd_limit: DescriptorLimit
) -> None:
    flaky = FlakyFsync()
    store = JsonlStore(tmp_path, fsync=flaky)
    log = await store.open("s1", created_at=5)
    other = await store.open("s2", created_at=5)
    log.append(new_events(2))
    flaky.fail("journal")
    with pytest.raises(StoreError, match="injected"):
        await log.flush()  # the journal file is retired: the next needs a new descriptor
    flaky.heal()
    await store.checkpoint()  # no descriptor gets freed while the limit holds
    fd_limit.exhaust()
    with pytest.raises(StoreError, match="Too many open files"):
        await log.flush()
    with pytest.raises(StoreError, match="Too many open files"):
        await log.flush()  # still failing, still honest
    with pytest.raises(StoreError, match="Too many open files"):
        await store.open("s3", created_at=5)
    big = [NewEvent("pad", b'"' + b"x" * 3000 + b'"', 1) for _ in range(2)]
    other.append(big)  # an append needs no descriptor: its round does
    with pytest.raises(StoreError, match="Too many open files"):
        await other.flush()
    assert (log.length, other.length) == (2, 2)
    fd_limit.lift()
    assert (tmp_path / "s2.jsonl").read_bytes().count(b"\n") == 1  # the header only
    await log.flush()  # the same store recovers by itself
    await other.flush()
    third = await store.open("s3", created_at=5)
    third.append(new_events(1))
    await third.flush()
    await store.close()
    again = JsonlStore(tmp_path)
    assert not again.recovered
    for name, length in (("s1", 2), ("s2", 2), ("s3", 1)):
        assert (await again.open(name, created_at=5)).length == length
    await again.close()


async def test_a_checkpoint_never_holds_up_a_flush(tmp_path: Path) -> None:
    gated = GatedFsync()
    store = JsonlStore(tmp_path, fsync=gated, journal_limit=1)  # every round retires one
    first = await store.open("first", created_at=5)
    second = await store.open("second", created_at=5)
    gated.gate.clear()
    first.append(new_events(1))
    await first.flush()  # the checkpoint this starts waits at first.jsonl's sync
    assert await asyncio.to_thread(gated.held.wait, 60)
    for count in range(3):
        second.append(new_events(1, start=count))
        await asyncio.wait_for(second.flush(), 60)  # a guard against a hang, not a timing
    assert len(journals(tmp_path)) >= 2  # retired, waiting for their checkpoint
    gated.gate.set()
    await store.checkpoint()
    assert journals(tmp_path) == []
    await store.close()


async def test_a_flush_starts_its_round_before_other_ready_tasks_run(tmp_path: Path) -> None:
    first_round: list[int] = []

    def fsync(fd: int) -> None:
        if FlakyFsync.kind(fd) == "journal" and not first_round:
            journal = Path(f"/proc/self/fd/{fd}").read_bytes()
            first_round.append(len(list(read_records(journal))))
        os.fsync(fd)

    store = JsonlStore(tmp_path, fsync=fsync)
    logs = [await store.open(f"s{index}", created_at=5) for index in range(20)]

    async def create(log: JsonlLog) -> None:
        log.append(new_events(1))
        await log.flush()

    await asyncio.gather(*(create(log) for log in logs))
    # The first flush wrote and synced its own record at once; the 19 others,
    # ready meanwhile, shared the next round.
    assert first_round == [1]
    await store.close()


async def test_a_snapshot_lets_a_reopen_skip_the_events_it_covers(tmp_path: Path) -> None:
    store = JsonlStore(tmp_path)
    log = await store.open("s1", created_at=5)
    log.append(new_events(1000))
    await log.save_snapshot(Snapshot(800, b"through 800"))
    await store.close()
    path = tmp_path / "s1.jsonl"
    # Damage event 10 without changing its length: only reading it can tell.
    lines = path.read_bytes().splitlines(keepends=True)
    lines[11] = lines[11].replace(b'"n":10,', b'"n":1x,')
    path.write_bytes(b"".join(lines))

    again = JsonlStore(tmp_path)
    log = await again.open("s1", created_at=5)  # the events before 800 are not read
    assert log.length == 1000
    assert log.load_snapshot() == Snapshot(800, b"through 800")
    for start in (800, 801, 1000):
        assert summary(log, start) == expected(new_events(1000), start)
    with pytest.raises(StoreError, match=r"s1\.jsonl: line 12: invalid event"):
        log.events(5)  # reading before the snapshot validates what it skipped
    log.append(new_events(1, start=1000))
    assert summary(log, 990) == expected(new_events(1001), 990)
    await again.close()
    with pytest.raises(SessionFileError, match="line 12"):
        parse_session_jsonl(path.read_bytes())  # tickler check reads every line

    path.with_suffix(".snapshot").unlink()
    third = JsonlStore(tmp_path)
    with pytest.raises(StoreError, match=r"s1\.jsonl: line 12: invalid event"):
        await third.open("s1", created_at=5)  # no snapshot: every line is validated
    await third.close()


async def test_events_before_and_after_a_snapshot_anchor(tmp_path: Path) -> None:
    store = JsonlStore(tmp_path)
    log = await store.open("s1", created_at=5)
    log.append(new_events(900))
    await log.save_snapshot(Snapshot(600, b"through 600"))  # not at a block boundary
    log.append(new_events(100, start=900))
    await store.close()
    again = JsonlStore(tmp_path)
    log = await again.open("s1", created_at=5)
    assert log.length == 1000
    log.append(new_events(100, start=1000))
    for start in (1099, 1024, 1000, 768, 767, 601, 600, 599, 512, 511, 256, 255, 1, 0):
        assert summary(log, start) == expected(new_events(1100), start)
    await log.save_snapshot(Snapshot(700, b"through 700"))  # before the length: found by reading
    await again.close()
    third = JsonlStore(tmp_path)
    log = await third.open("s1", created_at=5)
    assert log.load_snapshot() == Snapshot(700, b"through 700")
    assert summary(log, 0) == expected(new_events(1100))
    await third.close()


async def test_a_snapshot_of_another_history_is_ignored(tmp_path: Path) -> None:
    store = JsonlStore(tmp_path)
    log = await store.open("s1", created_at=5)
    log.append(new_events(300))
    await log.save_snapshot(Snapshot(300, b"old history"))
    await store.close()
    path = tmp_path / "s1.jsonl"
    # Rewritten behind the store's back: the same count, other events.
    lines = path.read_bytes().splitlines(keepends=True)
    other = [line.replace(b'"text"', b'"txet"') for line in lines[1:]]
    path.write_bytes(lines[0] + b"".join(other))
    again = JsonlStore(tmp_path)
    log = await again.open("s1", created_at=5)
    assert log.length == 300  # counted by reading every line
    assert log.load_snapshot() is None  # it describes events the file no longer holds
    await log.save_snapshot(Snapshot(300, b"new history"))
    assert log.load_snapshot() == Snapshot(300, b"new history")
    await again.close()


@pytest.mark.parametrize("content", [b"", b'{"type":"sess'], ids=["empty", "torn-header"])
async def test_a_file_a_crash_left_without_a_header_starts_afresh(
    tmp_path: Path, content: bytes
) -> None:
    (tmp_path / "s1.jsonl").write_bytes(content)
    store = JsonlStore(tmp_path)
    log = await store.open("s1", created_at=5)
    assert log.length == 0
    assert bool(content) == any("torn header" in note for note in log.recovered)
    log.append(new_events(1))
    await store.close()
    data = (tmp_path / "s1.jsonl").read_bytes()
    assert data.startswith(HEADER)
    assert len(parse_session_jsonl(data).events) == 1


@pytest.mark.parametrize(
    "data",
    [
        b'{"a":1}',
        b'"\\u00e9\xc3\xa9 \\" \\\\"',
        b"[]",
        b"null",
        b"-1.5e3",
        b'{"a" : [1, {"b":null}]}',
        b'"\xff"',  # not UTF-8: read back as written, like any reader does
        b' {"a":1}\t',
        b'"\\ud800"',  # a lone surrogate escape: msgspec refuses, JavaScript reads
    ],
)
def test_lines_read_back_as_the_events_append_returns(data: bytes) -> None:
    added, lines = encode_batch(0, [NewEvent("t/x", data, 3), NewEvent("é", data, 0)])
    for seq, (item, line) in enumerate(zip(added, lines, strict=True)):
        assert line.endswith(b"\n")
        assert line.count(b"\n") == 1
        assert line[:-1] == msgspec.json.encode(event(item.type, seq, item.time, data))
        assert item == decode_line(line[:-1])
    assert parse_session_jsonl(HEADER + b"".join(lines)).events == added


@pytest.mark.parametrize(
    "item",
    [
        NewEvent("t", b"{}", True),
        NewEvent("t", b"{}", 1.5),  # type: ignore[arg-type]
        NewEvent("t", b"{}", 2**53),
        NewEvent("t", b"1,2", 1),
        NewEvent("t", b'1,"x":2', 1),  # would smuggle a key into the line
        NewEvent("\ud800", b"{}", 1),
    ],
    ids=["bool-time", "float-time", "unsafe-time", "two-values", "smuggled-key", "surrogate-type"],
)
def test_events_that_would_not_read_back_as_given_are_refused(item: NewEvent) -> None:
    with pytest.raises(ValueError, match=r"read back|cannot be written"):
        encode_batch(0, [item])
