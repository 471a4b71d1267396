"""Logs the reference harness really writes: its header fields, packed chunk
rows, JSON numbers as JavaScript reads them, and any nesting depth.

The golden files in ``specs/vectors/harness/`` hold one session file each
(``<name>.jsonl``) and what reading it gives (``<name>.expected.json``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from tickler.core import (
    CorruptScheduleLog,
    SessionFileError,
    SessionHeader,
    fold,
    parse_session_jsonl,
)

HARNESS = Path(__file__).resolve().parents[2] / "specs" / "vectors" / "harness"
VECTORS = sorted(path.name[: -len(".jsonl")] for path in HARNESS.glob("*.jsonl"))
HEADER = b'{"type":"session","version":0,"id":"s1","createdAt":1785931200000,"delegationDepth":0}'
CREATE = (
    b'{"version":1,"operation":"create","schedule":{"id":"schedule-1","kind":"after",'
    b'"prompt":"check logs","afterSeconds":30,"scheduledAt":"2026-08-05T12:00:30.000Z"}}'
)


def lines(*parts: bytes) -> bytes:
    return b"".join(part + b"\n" for part in parts)


def line(seq: int, data: bytes = b"{}", type_: str = "turn/start") -> bytes:
    return b'{"type":"%s","seq":%d,"time":%d,"data":%s}' % (type_.encode(), seq, 1000 + seq, data)


def refused(data: bytes) -> SessionFileError:
    with pytest.raises(SessionFileError) as caught:
        parse_session_jsonl(data)
    return caught.value


def test_there_are_golden_files_of_each_shape() -> None:
    assert {"header-all-fields", "packed-chunks", "numbers-as-javascript", "deep-event"} <= set(
        VECTORS
    )


@pytest.mark.parametrize("name", VECTORS)
def test_golden_harness_file(name: str) -> None:
    expected: dict[str, Any] = json.loads((HARNESS / f"{name}.expected.json").read_text())
    data = (HARNESS / f"{name}.jsonl").read_bytes()
    if "error" in expected:
        error = refused(data)
        assert (error.line, error.reason) == (
            expected["error"]["line"],
            expected["error"]["reason"],
        )
        return
    parsed = parse_session_jsonl(data)
    assert json.loads(msgspec.json.encode(parsed.header)) == expected["header"]
    assert parsed.header.owned_from == expected["owned_from"]
    events = [
        {"type": e.type, "seq": e.seq, "time": e.time, "data": bytes(e.data).decode()}
        for e in parsed.events
    ]
    assert events == expected["events"]
    assert list(parsed.lines) == expected["lines"]
    if "reason" in expected["fold"]:
        with pytest.raises(CorruptScheduleLog) as caught:
            fold(parsed.events, parsed.header.owned_from)
        assert (caught.value.reason, caught.value.index) == (
            expected["fold"]["reason"],
            expected["fold"]["index"],
        )
    else:
        active = fold(parsed.events, parsed.header.owned_from).active
        assert [record.id for record in active] == expected["fold"]["active"]


# -- the header ---------------------------------------------------------------


def test_every_header_tickler_builds_carries_delegation_depth_zero() -> None:
    header = SessionHeader(id="s1", created_at=5)
    assert header.delegation_depth == 0
    encoded = json.loads(msgspec.json.encode(header))
    assert encoded["delegationDepth"] == 0


def test_a_header_without_delegation_depth_still_reads_as_zero() -> None:
    parsed = parse_session_jsonl(lines(b'{"type":"session","version":0,"id":"s","createdAt":1}'))
    assert parsed.header.delegation_depth == 0


@pytest.mark.parametrize(
    ("fields", "seed", "depth", "created"),
    [
        (b'"seedLength":2.0,"delegationDepth":1', 2, 1, 1),
        (b'"seedLength":1e0,"delegationDepth":1.0', 1, 1, 1),
        (b'"seedLength":-0,"delegationDepth":0e5', 0, 0, 1),
        (b'"seedLength":0.0,"delegationDepth":-0.0', 0, 0, 1),
    ],
    ids=repr,
)
def test_header_numbers_are_read_as_javascript_reads_them(
    fields: bytes, seed: int, depth: int, created: int
) -> None:
    header = b'{"type":"session","version":0.0,"id":"s","createdAt":1.0,%s}' % fields
    parsed = parse_session_jsonl(lines(header, line(0), line(1), line(2)))
    assert (parsed.header.owned_from, parsed.header.delegation_depth) == (seed, depth)
    assert parsed.header.created_at == created
    assert type(parsed.header.owned_from) is int
    assert type(parsed.header.version) is int


SEED = "header seedLength must be a non-negative safe integer"
DEPTH = "header delegationDepth must be a non-negative safe integer"
CREATED = "header createdAt must be a non-negative safe integer"
SEQ = "event seq must be a non-negative safe integer"
TIME = "event time must be a non-negative safe integer"


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        (b'"createdAt":1,"seedLength":2.5', SEED),
        (b'"createdAt":1,"seedLength":-1', SEED),
        (b'"createdAt":1,"seedLength":"2"', SEED),
        (b'"createdAt":1,"seedLength":1e400', SEED),
        (b'"createdAt":1,"seedLength":true', SEED),
        (b'"createdAt":1,"delegationDepth":0.5', DEPTH),
        (b'"createdAt":1,"delegationDepth":[0]', DEPTH),
        (b'"createdAt":9007199254740992', CREATED),
        (b'"createdAt":1.5', CREATED),
    ],
    ids=repr,
)  # fmt: skip
def test_header_numbers_javascript_does_not_read_as_counts(fields: bytes, reason: str) -> None:
    error = refused(lines(b'{"type":"session","version":0,"id":"s",%s}' % fields))
    assert error.line == 1
    assert error.reason == f"invalid session header: {reason}"


@pytest.mark.parametrize(
    "header",
    [
        b'{"type":"session","version":false,"id":"s","createdAt":1}',
        b'{"type":"session","version":0.5,"id":"s","createdAt":1}',
        b'{"type":"session","version":0,"id":["s"],"createdAt":1}',
    ],
)
def test_other_header_fields_keep_their_types(header: bytes) -> None:
    assert refused(lines(header)).line == 1


# -- event envelopes -----------------------------------------------------------


def test_event_seq_and_time_are_read_as_javascript_reads_them() -> None:
    event = b'{"type":"schedule/change","seq":1.0,"time":1.5e3,"data":%s}' % CREATE
    parsed = parse_session_jsonl(lines(HEADER, line(0), event))
    assert [(e.seq, e.time) for e in parsed.events] == [(0, 1000), (1, 1500)]
    assert bytes(parsed.events[1].data) == CREATE
    assert [r.id for r in fold(parsed.events).active] == ["schedule-1"]


@pytest.mark.parametrize(
    ("event", "reason"),
    [
        (b'{"type":"x","seq":1.5,"time":1,"data":{}}', SEQ),
        (b'{"type":"x","seq":1,"time":1e400,"data":{}}', TIME),
        (b'{"type":"x","seq":1,"time":-1,"data":{}}', TIME),
        (b'{"type":["x"],"seq":1,"time":1,"data":{}}', "event type must be a string"),
        (b'{"type":"x","seq":1,"time":1}', "an event must have data"),
        (b'{"type":"x","seq":1,"time":1,"data":{},"ignorable":1}',
         "event ignorable must be a boolean"),
    ],
    ids=repr,
)  # fmt: skip
def test_event_envelopes_javascript_refuses_are_named(event: bytes, reason: str) -> None:
    error = refused(lines(HEADER, line(0), event))
    assert (error.line, error.reason) == (3, f"invalid event: {reason}")


# -- packed chunk rows -----------------------------------------------------------


def row(kind: str, seq0: int, data: bytes, time0: int = 2000) -> bytes:
    return b'{"type":"%s","seq0":%d,"time0":%d,"data":%s}' % (kind.encode(), seq0, time0, data)


def test_a_text_row_stands_for_its_members() -> None:
    data = b'{"turn":1,"step":2,"index":0,"dt":[3,-1],"texts":["a","b","c"]}'
    packed = row("text-chunks", 1, data)
    parsed = parse_session_jsonl(lines(HEADER, line(0), packed, line(4, CREATE, "schedule/change")))
    assert [(e.type, e.seq, e.time) for e in parsed.events] == [
        ("turn/start", 0, 1000),
        ("assistant/chunk", 1, 2000),
        ("assistant/chunk", 2, 2003),
        ("assistant/chunk", 3, 2002),
        ("schedule/change", 4, 1004),
    ]
    assert bytes(parsed.events[3].data) == (
        b'{"turn":1,"step":2,"chunk":{"type":"text-delta","index":0,"text":"c"}}'
    )
    assert parsed.lines == (2, 3, 3, 3, 4)
    assert [r.id for r in fold(parsed.events).active] == ["schedule-1"]


def test_a_packed_row_as_the_last_line_without_newline_is_a_torn_tail() -> None:
    packed = row("reasoning-chunks", 1, b'{"turn":1,"step":1,"index":0,"dt":[1],"texts":["a","b"]}')
    parsed = parse_session_jsonl(lines(HEADER, line(0)) + packed)
    assert [e.seq for e in parsed.events] == [0]
    assert parsed.torn_tail == packed
    parsed = parse_session_jsonl(lines(HEADER, line(0), packed))
    assert [e.seq for e in parsed.events] == [0, 1, 2]
    assert parsed.torn_tail is None


TOOL = b'"turn":1,"step":1,"index":0,"id":"c1"'


@pytest.mark.parametrize(
    ("packed", "reason"),
    [
        (row("text-chunks", 1, b'{"turn":1,"step":1,"index":0,"dt":[1],"texts":["a","b","c"]}'),
         "text-chunks row: dt must hold one gap per member after the first"),
        (row("text-chunks", 1, b'{"turn":1,"step":1,"index":0,"dt":[],"texts":[]}'),
         "text-chunks row: texts must be a non-empty array of strings"),
        (row("text-chunks", 1, b'{"turn":1,"step":1,"index":0,"dt":[],"texts":[1]}'),
         "text-chunks row: texts must be a non-empty array of strings"),
        (row("text-chunks", 1, b'{"turn":1,"step":1,"index":0,"dt":[0.5],"texts":["a","b"]}'),
         "text-chunks row: dt must hold safe integers"),
        (row("text-chunks", 1, b'{"turn":1,"step":1,"index":0,"dt":[-3000],"texts":["a","b"]}'),
         "text-chunks row: member times must be non-negative safe integers"),
        (row("text-chunks", 1, b'{"turn":1,"step":1,"index":0,"dt":[],"texts":["a"],"x":1}'),
         "text-chunks row: data must hold exactly turn, step, index, dt and texts"),
        (row("text-chunks", 1, b'{"turn":"1","step":1,"index":0,"dt":[],"texts":["a"]}'),
         "text-chunks row: turn, step and index must be numbers"),
        (row("text-chunks", 1, b"[]"), "text-chunks row: data must be an object"),
        (b'{"type":"text-chunks","seq0":-1,"time0":1,"data":{}}',
         "text-chunks row: seq0 must be a non-negative safe integer"),
        (b'{"type":"text-chunks","seq0":1,"time0":0.5,"data":{}}',
         "text-chunks row: time0 must be a safe integer"),
        (b'{"type":"text-chunks","seq0":1,"time0":1,"data":{},"seq":1}',
         "text-chunks row: a packed row must hold exactly type, seq0, time0 and data"),
        (b'{"type":"text-chunks","seq":1,"time":1,"data":{}}',
         "text-chunks row: a packed row must hold exactly type, seq0, time0 and data"),
        (row("tool-call-chunks", 1, b'{%s,"dt":[],"texts":["a"]}' % TOOL),
         "tool-call-chunks row: data must hold exactly turn, step, index, id, dt, args and "
         "maybe name"),
        (row("tool-call-chunks", 1, b'{"turn":1,"step":1,"index":0,"id":7,"dt":[],"args":["a"]}'),
         "tool-call-chunks row: id and name must be strings"),
        (row("tool-call-chunks", 1, b'{%s,"name":null,"dt":[],"args":["a"]}' % TOOL),
         "tool-call-chunks row: id and name must be strings"),
        (row("reasoning-chunks", 1, b'{"turn":1,"step":1,"index":0,"dt":[],"args":["a"]}'),
         "reasoning-chunks row: data must hold exactly turn, step, index, dt and texts"),
    ],
    ids=repr,
)  # fmt: skip
def test_a_bad_packed_row_is_refused_by_line_and_reason(packed: bytes, reason: str) -> None:
    error = refused(lines(HEADER, line(0), packed, line(9)))
    assert (error.line, error.reason) == (3, f"invalid event: {reason}")


def test_packed_members_count_in_seq() -> None:
    data = b'{"turn":1,"step":1,"index":0,"dt":[1,1],"texts":["a","b","c"]}'
    packed = row("text-chunks", 1, data)
    error = refused(lines(HEADER, line(0), packed, line(3)))
    assert (error.line, error.reason) == (4, "event seq 3 should be 4")


# -- nesting depth ---------------------------------------------------------------


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def nested_objects(depth: int) -> bytes:
    return b'{"a":' * depth + b"1" + b"}" * depth


@pytest.mark.parametrize("depth", [1_000, 100_000])
@pytest.mark.parametrize("shape", [nested, nested_objects], ids=["arrays", "objects"])
def test_a_deep_unrelated_event_parses(depth: int, shape: Any) -> None:
    deep = shape(depth)
    data = lines(
        HEADER,
        line(0, b'{"value":%s}' % deep, "tool/result"),
        line(1, CREATE, "schedule/change"),
        line(2, deep, "tool/result"),
    )
    parsed = parse_session_jsonl(data)
    assert [e.seq for e in parsed.events] == [0, 1, 2]
    assert bytes(parsed.events[0].data) == b'{"value":%s}' % deep
    assert bytes(parsed.events[2].data) == deep
    assert [r.id for r in fold(parsed.events).active] == ["schedule-1"]


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_a_deep_final_line_is_read_with_its_newline_and_torn_without(depth: int) -> None:
    parsed = parse_session_jsonl(lines(HEADER, line(0, nested(depth))))
    assert [e.seq for e in parsed.events] == [0]
    assert parsed.torn_tail is None
    parsed = parse_session_jsonl(lines(HEADER) + line(0, nested(depth)))
    assert parsed.events == ()
    assert parsed.torn_tail == line(0, nested(depth))


@pytest.mark.parametrize("depth", [1_000, 100_000])
def test_a_deep_unknown_header_key_is_tolerated(depth: int) -> None:
    header = b'{"type":"session","version":0,"id":"s","createdAt":1,"x":%s}' % nested(depth)
    assert parse_session_jsonl(lines(header, line(0))).header.id == "s"


@pytest.mark.parametrize("depth", [1_000, 100_000])
@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (b'{"version":1,"operation":"create","schedule":%s}', "schedule record must be an object"),
        (b'{"x":%s,"version":1}', "schedule/change operation must be create, delete, or dispatch"),
        (b'{"version":1,"operation":"delete","id":%s}',
         "schedule id must be a non-empty string without surrounding whitespace"),
        (b'{"version":1,"operation":"create","schedule":{"id":"schedule-1","kind":"after",'
         b'"prompt":"p","afterSeconds":30,"scheduledAt":"2026-08-05T12:00:30.000Z","x":%s}}',
         "after schedule must contain exactly id, kind, prompt, afterSeconds, and scheduledAt"),
    ],
    ids=["record", "unknown-key", "id", "record-key"],
)  # fmt: skip
def test_a_deep_schedule_change_is_refused_by_its_shape(
    depth: int, payload: bytes, reason: str
) -> None:
    data = lines(HEADER, line(0, payload % nested(depth), "schedule/change"))
    parsed = parse_session_jsonl(data)
    with pytest.raises(CorruptScheduleLog) as caught:
        fold(parsed.events)
    assert (caught.value.reason, caught.value.index) == (reason, 0)


def test_a_deep_event_that_is_not_json_names_its_line() -> None:
    error = refused(lines(HEADER, line(0, nested(100_000)[:-1], "tool/result"), line(1)))
    assert error.line == 2
    assert error.reason.startswith("invalid event: not JSON")


LONG = b"1" * 5_000  # longer than Python's int() takes; JavaScript reads a double


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (b'{"type":"turn/\xffstart","seq":0,"time":1,"data":{}}', "event type"),
        (b'{"type":"turn/start","seq":%s,"time":1,"data":{}}' % LONG, "event seq"),
        (b'{"type":"turn/start","seq":0,"time":%s,"data":{}}' % LONG, "event time"),
        (b'{"type":"turn/start","seq":0,"time":1e%s,"data":{}}' % LONG, "event time"),
        (b'{"type":"turn/start","seq":"\xff","time":1,"data":{}}', "event seq"),
        (b'{"type":"turn/start","seq":0,"time":1,"data":{},"ignorable":"\xff"}', "ignorable"),
        (b'{"type":"text-chunks","seq0":%s,"time0":1,"data":{"turn":1,"step":1,"index":0,'
         b'"dt":[],"texts":["a"]}}' % LONG, "seq0"),
        (b'{"type":"text-chunks","seq0":"\xff","time0":1,"data":{"turn":1,"step":1,"index":0,'
         b'"dt":[],"texts":["a"]}}', "seq0"),
        (b'{"type":"text-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":1,"index":0,'
         b'"dt":[%s],"texts":["a","b"]}}' % LONG, "dt"),
    ],
    ids=["type-utf8", "seq-digits", "time-digits", "time-exponent", "seq-utf8", "ignorable-utf8",
         "seq0-digits", "seq0-utf8", "dt-digits"],
)  # fmt: skip
def test_a_hostile_event_line_is_refused_with_its_line(bad: bytes, reason: str) -> None:
    """Invalid UTF-8 in a member the reader checks, or a number too long for
    Python's int(), is a bad line (file:line), never a Python error."""
    error = refused(lines(HEADER, line(0), bad, line(2)))
    assert error.line == 3
    assert reason in error.reason


@pytest.mark.parametrize(
    "header",
    [
        b'{"type":"session","version":0,"id":"s\xff1","createdAt":1}',
        b'{"type":"session","version":0,"id":"s1","createdAt":%s}' % LONG,
        b'{"type":"session","version":0,"id":"s1","createdAt":1,"seedLength":%s}' % LONG,
        b'{"type":"\\ud800session","version":0,"id":"s1","createdAt":1}',
    ],
    ids=["id-utf8", "created-digits", "seed-digits", "type-surrogate"],
)
def test_a_hostile_header_is_refused_with_its_line(header: bytes) -> None:
    error = refused(lines(header, line(0)))
    assert error.line == 1
    assert "invalid session header" in error.reason


def test_a_null_seed_length_reads_as_absent_as_in_the_reference() -> None:
    """The harness's header guard does not check ``seedLength``; its fold
    takes ``header.seedLength ?? 0``: null is no fork boundary."""
    header = b'{"type":"session","version":0,"id":"s1","createdAt":1,"seedLength":null}'
    parsed = parse_session_jsonl(lines(header, line(0, CREATE, "schedule/change")))
    assert isinstance(parsed.header.seed_length, msgspec.UnsetType)
    assert parsed.header.owned_from == 0
    assert [r.id for r in fold(parsed.events, parsed.header.owned_from).active] == ["schedule-1"]
