"""Session files the reference harness wrote, in a JSONL store directory:
packed chunk rows, JavaScript's numbers (``"seq":1.0``), any nesting depth.

The store must give exactly what :func:`tickler.core.parse_session_jsonl`
gives for the same bytes, continue ``seq`` after them, and never raise
RecursionError. Appends refuse the packed rows' types and take data nested
at any depth (or refuse it before anything is written), in every store.
"""

from __future__ import annotations

import json
from itertools import islice
from pathlib import Path

import pytest

from tickler.adapters.stores._files import CorruptStore
from tickler.adapters.stores._jsonl import JsonlStore
from tickler.adapters.stores._scan import STRIDE
from tickler.core import SessionEvent, SessionFileError, parse_session_jsonl
from tickler.shell._ports import NewEvent, SessionLog, Snapshot, StoreError

from .conftest import Stores

HARNESS = Path(__file__).resolve().parents[2] / "specs" / "vectors" / "harness"
READABLE = sorted(
    path.name[: -len(".jsonl")]
    for path in HARNESS.glob("*.jsonl")
    if "error" not in json.loads(path.with_suffix(".expected.json").read_text())
)
PACKED = ("text-chunks", "reasoning-chunks", "tool-call-chunks")
Row = tuple[int, str, int, bytes, object]


def rows(events: object) -> list[Row]:
    assert isinstance(events, (list, tuple))
    out: list[Row] = []
    for item in events:
        assert isinstance(item, SessionEvent)
        out.append((item.seq, item.type, item.time, bytes(item.data), item.ignorable))
    return out


def header(session_id: str) -> bytes:
    return (
        b'{"type":"session","version":0,"id":"%s","createdAt":1785931200000,'
        b'"delegationDepth":0}\n' % session_id.encode()
    )


def harness_file(session_id: str) -> bytes:
    """About 3 * STRIDE events, mostly in packed rows of varied sizes, so
    that several index blocks start inside a row; plain lines between them,
    some with ``seq``/``time`` written as JavaScript numbers (``7.0``)."""
    lines = [header(session_id)]
    seq, size = 0, 1
    while seq < 3 * STRIDE:
        if seq % 3 == 0:
            lines.append(
                b'{"type":"turn/start","seq":%d.0,"time":%de0,"data":{"turn":1}}\n'
                % (seq, 1000 + seq)
            )
            seq += 1
            continue
        kind = PACKED[seq % 3 - 1 + (seq // 7) % 2]
        count = size % 37 + 1
        size += 5
        members = json.dumps([f"d{seq + k}\u00e9" for k in range(count)]).encode()
        dt = json.dumps([1] * (count - 1)).encode()
        body = b'"texts":%s' % members
        if kind == "tool-call-chunks":
            body = b'"id":"call-%d","args":%s' % (seq, members)
        lines.append(
            b'{"type":"%s","seq0":%d,"time0":%d,"data":{"turn":1,"step":1,"index":0,'
            b'"dt":%s,%s}}\n' % (kind.encode(), seq, 2000 + seq, dt, body)
        )
        seq += count
    return b"".join(lines)


def mostly_plain_file(session_id: str) -> bytes:
    """Plain lines, one packed row across an index block's start (the
    blocks around it hold only plain lines)."""
    row_at = 2 * STRIDE - 2
    lines = [header(session_id)]
    lines += [b'{"type":"turn/start","seq":%d,"time":7,"data":{}}\n' % seq for seq in range(row_at)]
    lines.append(
        b'{"data":{"turn":1,"step":1,"index":0,"dt":[1,2,3,4],"texts":["a","b","c","d","e"]},'
        b'"seq0":%d,"time0":9,"type":"text-\\u0063hunks"}\n' % row_at
    )
    lines += [
        b'{"type":"turn/end","seq":%d,"time":8,"data":{}}\n' % seq
        for seq in range(row_at + 5, 4 * STRIDE)
    ]
    return b"".join(lines)


def deep(depth: int, inner: bytes = b"1") -> bytes:
    return b"[" * depth + inner + b"]" * depth


def deep_file(session_id: str, depth: int) -> bytes:
    return header(session_id) + (
        b'{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}\n'
        b'{"type":"tool/result","seq":1,"time":2,"data":%s}\n'
        b'{"type":"turn/end","seq":2,"time":3,"data":{}}\n' % deep(depth)
    )


async def open_placed(root: Path, session_id: str, data: bytes) -> tuple[JsonlStore, SessionLog]:
    """The file placed in a store directory as the harness left it, then
    opened by the store."""
    directory = root / "sessions"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{session_id}.jsonl").write_bytes(data)
    store = JsonlStore(directory)
    return store, await store.open(session_id, created_at=1)


async def check_reads_and_continues(
    root: Path, session_id: str, data: bytes, placed: bytes | None = None
) -> None:
    """The store reads ``placed`` (default ``data``) as parse_session_jsonl
    reads ``data``, and appends after it."""
    parsed = parse_session_jsonl(data)
    expected = rows(parsed.events)
    store, log = await open_placed(root, session_id, data if placed is None else placed)
    try:
        assert log.header == parsed.header
        assert log.length == len(expected)
        assert rows(list(log.events())) == expected
        for start in {1, 2, STRIDE - 1, STRIDE, STRIDE + 1, 2 * STRIDE + 3, len(expected) - 1}:
            assert rows(list(log.events(start))) == expected[start:], start
        for start in range(len(expected)):
            assert rows(list(islice(log.events(start), 2))) == expected[start : start + 2], start
        added = log.append(
            [NewEvent("turn/start", b'{"turn":9}', 5000), NewEvent("turn/end", b"{}", 5001)]
        )
        assert [item.seq for item in added] == [len(expected), len(expected) + 1]
        await log.flush()
        assert rows(list(log.events(len(expected) - 1))) == expected[-1:] + rows(added)
    finally:
        await store.close()
    after = (root / "sessions" / f"{session_id}.jsonl").read_bytes()
    assert after.startswith(data if data.endswith(b"\n") else data + b"\n")
    reparsed = parse_session_jsonl(after)
    assert rows(reparsed.events) == expected + rows(added)
    store = JsonlStore(root / "sessions")
    try:
        log = await store.open(session_id, created_at=1)
        assert rows(list(log.events())) == expected + rows(added)
    finally:
        await store.close()


@pytest.mark.parametrize("name", READABLE)
async def test_a_golden_harness_file_opens_as_the_core_reads_it(name: str, tmp_path: Path) -> None:
    data = (HARNESS / f"{name}.jsonl").read_bytes()
    session_id = parse_session_jsonl(data).header.id
    await check_reads_and_continues(tmp_path, session_id, data)


async def test_packed_rows_across_index_blocks(tmp_path: Path) -> None:
    data = harness_file("packed")
    assert len(parse_session_jsonl(data).events) > 3 * STRIDE
    await check_reads_and_continues(tmp_path, "packed", data)


async def test_one_packed_row_among_plain_lines(tmp_path: Path) -> None:
    data = mostly_plain_file("plain")
    events = parse_session_jsonl(data).events
    assert [item.type for item in events[2 * STRIDE - 2 : 2 * STRIDE + 3]] == [
        "assistant/chunk"
    ] * 5
    await check_reads_and_continues(tmp_path, "plain", data)


@pytest.mark.parametrize("depth", [1_100, 5_000, 50_000])
async def test_a_deeply_nested_event_in_the_file(depth: int, tmp_path: Path) -> None:
    await check_reads_and_continues(tmp_path, "deep", deep_file("deep", depth))


async def test_a_deep_final_line_missing_only_its_newline(tmp_path: Path) -> None:
    """The harness (and parse_session_jsonl) drops such a line as a torn
    tail; the store, opening a file in its directory, completes it with its
    newline (its own writes are covered by its journal) and reads it as
    the harness reads the completed file."""
    whole = deep_file("deep", 5_000)
    assert parse_session_jsonl(whole[:-1]).torn_tail == whole[whole.rindex(b"\n", 0, -1) + 1 : -1]
    await check_reads_and_continues(tmp_path, "deep", whole, placed=whole[:-1])


async def test_a_deep_torn_final_line_is_corruption_not_a_crash(tmp_path: Path) -> None:
    data = deep_file("deep", 10) + b'{"type":"x","seq":3,"time":4,"data":' + b"[" * 5_000
    with pytest.raises(StoreError, match=r"deep\.jsonl: line 5: torn final line"):
        await open_placed(tmp_path, "deep", data)
    assert (tmp_path / "sessions" / "deep.jsonl").read_bytes() == data


async def test_snapshots_inside_and_at_the_start_of_a_packed_row(tmp_path: Path) -> None:
    data = harness_file("packed")
    parsed = parse_session_jsonl(data)
    expected = rows(parsed.events)
    starts = sorted({parsed.lines.index(line) for line in set(parsed.lines)})
    inside = next(seq for seq in range(STRIDE + 1, len(expected)) if seq not in starts)
    at_row = next(seq for seq in starts if seq > 2 * STRIDE and seq not in (inside,))
    assert parsed.events[at_row - 1].type == "assistant/chunk"
    for through in (inside, at_row):
        store, log = await open_placed(tmp_path / str(through), "packed", data)
        try:
            await log.save_snapshot(Snapshot(through, b"state %d" % through))
        finally:
            await store.close()
        store = JsonlStore(tmp_path / str(through) / "sessions")
        try:
            log = await store.open("packed", created_at=1)
            assert log.load_snapshot() == Snapshot(through, b"state %d" % through)
            assert rows(list(log.events(through))) == expected[through:]
            for start in (0, 1, STRIDE, STRIDE + 1, inside):
                assert rows(list(log.events(start))) == expected[start:], (through, start)
        finally:
            await store.close()


async def test_deep_event_data_appends_in_every_store(stores: Stores) -> None:
    store = stores.open()
    log = await store.open("s1", created_at=1)
    datas = [deep(2_000), deep(100_000, b'{"a":[1,2]}'), b'{"k":%s}' % deep(3_000)]
    added = log.append([NewEvent("tool/result", data, 10) for data in datas])
    assert [bytes(item.data) for item in added] == datas
    assert [bytes(item.data) for item in log.events()] == datas
    await log.flush()
    await log.close()
    if stores.durable:
        await store.close()
        store = stores.open()
        log = await store.open("s1", created_at=1)
        assert [bytes(item.data) for item in log.events()] == datas
    if stores.kind == "jsonl":
        parsed = parse_session_jsonl((stores.path / "s1.jsonl").read_bytes())
        assert [bytes(item.data) for item in parsed.events] == datas
    await store.close()


@pytest.mark.parametrize(
    "data", [b"[" * 5_000, deep(5_000) + b"]", deep(5_000) + b",1", b"[" * 3_000 + b"NaN"]
)
async def test_deep_data_that_is_not_json_is_refused_before_anything_is_written(
    stores: Stores, data: bytes
) -> None:
    store = stores.open()
    log = await store.open("s1", created_at=1)
    log.append([NewEvent("turn/start", b"{}", 1)])
    with pytest.raises(ValueError, match="read back"):
        log.append([NewEvent("turn/end", b"{}", 2), NewEvent("tool/result", data, 3)])
    assert log.length == 1
    await log.flush()
    assert [item.type for item in log.events()] == ["turn/start"]
    await store.close()


@pytest.mark.parametrize("kind", PACKED)
async def test_packed_row_types_are_refused_at_append(stores: Stores, kind: str) -> None:
    store = stores.open()
    log = await store.open("s1", created_at=1)
    log.append([NewEvent("turn/start", b"{}", 1)])
    data = b'{"turn":1,"step":1,"index":0,"dt":[],"texts":["x"]}'
    for batch in (
        [NewEvent(kind, data, 2)],
        [NewEvent("turn/end", b"{}", 2), NewEvent(kind, data, 3)],
    ):
        with pytest.raises(ValueError, match="packed chunk rows"):
            log.append(batch)
        assert log.length == 1
    assert [item.type for item in log.append([NewEvent("turn/end", b"{}", 4)])] == ["turn/end"]
    await log.flush()
    await log.close()
    if stores.durable:
        await store.close()
        store = stores.open()
        log = await store.open("s1", created_at=1)
    assert [(item.seq, item.type) for item in log.events()] == [(0, "turn/start"), (1, "turn/end")]
    if stores.kind == "jsonl":
        parsed = parse_session_jsonl((stores.path / "s1.jsonl").read_bytes())
        assert [item.type for item in parsed.events] == ["turn/start", "turn/end"]
    await store.close()


@pytest.mark.parametrize("kind", PACKED)
async def test_a_packed_type_written_as_one_event_is_refused_as_the_core_does(
    kind: str, tmp_path: Path
) -> None:
    data = header("s1") + (
        b'{"type":"turn/start","seq":0,"time":1,"data":{}}\n'
        b'{"type":"%s","seq":1,"time":2,"data":{}}\n' % kind.encode()
    )
    with pytest.raises(SessionFileError) as caught:
        parse_session_jsonl(data)
    assert caught.value.line == 3
    with pytest.raises(StoreError, match=r"s1\.jsonl: line 3: invalid event"):
        await open_placed(tmp_path, "s1", data)


async def test_a_header_with_a_deeply_nested_unknown_key(tmp_path: Path) -> None:
    data = (
        b'{"type":"session","version":0,"id":"h","createdAt":1.0,"x":%s,"delegationDepth":0}\n'
        % deep(5_000)
    ) + b'{"type":"turn/start","seq":0,"time":1,"data":{}}\n'
    assert parse_session_jsonl(data).header.created_at == 1
    await check_reads_and_continues(tmp_path, "h", data)


LONG = b"1" * 5_000  # longer than Python's int() takes; JavaScript reads a double


@pytest.mark.parametrize(
    "bad",
    [
        b'{"type":"turn/\xffstart","seq":1,"time":1,"data":{}}',
        b'{"type":"turn/start","seq":%s,"time":1,"data":{}}' % LONG,
        b'{"type":"turn/start","seq":1,"time":%s,"data":{}}' % LONG,
        b'{"type":"text-chunks","seq0":%s,"time0":1,"data":{"turn":1,"step":1,"index":0,'
        b'"dt":[],"texts":["a"]}}' % LONG,
    ],
    ids=["type-utf8", "seq-digits", "time-digits", "seq0-digits"],
)
@pytest.mark.parametrize("last", [True, False], ids=["last", "middle"])
async def test_a_hostile_line_is_corruption_with_its_line(
    bad: bytes, last: bool, tmp_path: Path
) -> None:
    """Invalid UTF-8 where the reader looks, or a number too long for
    Python's int(): CorruptStore naming the file and line (what ``tickler
    mcp`` serves as a corrupt session), not a UnicodeDecodeError or a
    ValueError; nothing is changed."""
    rest = b"" if last else b'{"type":"turn/end","seq":2,"time":3,"data":{}}\n'
    data = header("s1") + b'{"type":"turn/start","seq":0,"time":1,"data":{}}\n' + bad + b"\n"
    data += rest
    with pytest.raises(CorruptStore) as caught:
        await open_placed(tmp_path, "s1", data)
    assert caught.value.line == 3
    assert "invalid event" in caught.value.reason
    assert (tmp_path / "sessions" / "s1.jsonl").read_bytes() == data


async def test_a_hostile_header_is_corruption_with_its_line(tmp_path: Path) -> None:
    data = b'{"type":"session","version":0,"id":"s1","createdAt":%s,"delegationDepth":0}\n' % LONG
    with pytest.raises(CorruptStore, match=r"s1\.jsonl: line 1: invalid session header"):
        await open_placed(tmp_path, "s1", data)


async def test_a_null_seed_length_opens_as_no_fork_boundary(tmp_path: Path) -> None:
    data = (
        b'{"type":"session","version":0,"id":"s1","createdAt":1,"seedLength":null,'
        b'"delegationDepth":0}\n{"type":"turn/start","seq":0,"time":1,"data":{}}\n'
    )
    assert parse_session_jsonl(data).header.owned_from == 0
    store, log = await open_placed(tmp_path, "s1", data)
    try:
        assert log.header.owned_from == 0
        assert log.length == 1
    finally:
        await store.close()
