"""Session files in the reference harness's JSONL layout (``parse_session_jsonl``)."""

from __future__ import annotations

import json

import pytest

from tickler.core import SessionFileError, fold, parse_session_jsonl
from tickler.core.wire._session import BLANK_LINE

HEADER = b'{"type":"session","version":0,"id":"s1","createdAt":1785931200000}'
CREATE = (
    b'{"version":1,"operation":"create","schedule":{"id":"schedule-1","kind":"after",'
    b'"prompt":"check logs","afterSeconds":30,"scheduledAt":"2026-08-05T12:00:30.000Z"}}'
)


def line(seq: int, data: bytes = b'{"turn":1}', type_: str = "turn/start") -> bytes:
    return b'{"type":"%s","seq":%d,"time":%d,"data":%s}' % (
        type_.encode(),
        seq,
        1_785_931_200_000 + seq,
        data,
    )


def lines(*parts: bytes) -> bytes:
    return b"".join(part + b"\n" for part in parts)


def test_header_then_events() -> None:
    parsed = parse_session_jsonl(lines(HEADER, line(0), line(1, CREATE, "schedule/change")))
    header, events = parsed
    assert (header.id, header.created_at, header.version, header.owned_from) == (
        "s1",
        1_785_931_200_000,
        0,
        0,
    )
    assert [(e.type, e.seq, e.time) for e in events] == [
        ("turn/start", 0, 1_785_931_200_000),
        ("schedule/change", 1, 1_785_931_200_001),
    ]
    assert bytes(events[1].data) == CREATE
    assert parsed.lines == (2, 3)
    assert parsed.torn_tail is None
    assert [r.id for r in fold(events, header.owned_from).active] == ["schedule-1"]


def test_fork_header_keeps_the_seed_length() -> None:
    header_line = (
        b'{"type":"session","version":0,"id":"child","createdAt":1,'
        b'"parentSession":"parent","seedLength":1}'
    )
    parsed = parse_session_jsonl(
        lines(header_line, line(0, CREATE, "schedule/change"), line(1, b"{}", "session/end-seed"))
    )
    assert parsed.header.parent_session == "parent"
    assert parsed.header.owned_from == 1
    assert fold(parsed.events, parsed.header.owned_from).active == ()


def test_unknown_header_and_event_keys_from_newer_harnesses_are_tolerated() -> None:
    header_line = b'{"type":"session","version":0,"id":"s1","createdAt":1,"theme":"dark"}'
    event = b'{"type":"message","seq":0,"time":2,"data":{},"ignorable":true,"surfaceOp":"x"}'
    parsed = parse_session_jsonl(lines(header_line, event))
    assert parsed.header.id == "s1"
    assert [e.type for e in parsed.events] == ["message"]


def test_a_torn_final_line_is_dropped_and_reported() -> None:
    torn = b'{"type":"schedule/change","seq":2,"ti'
    parsed = parse_session_jsonl(lines(HEADER, line(0), line(1)) + torn)
    assert [e.seq for e in parsed.events] == [0, 1]
    assert parsed.torn_tail == torn


def test_a_complete_final_line_without_newline_is_dropped_as_the_harness_drops_it() -> None:
    """Issue 25, item 9: the harness commits a line with its newline, and
    drops a final one without it as a torn tail even when it is JSON; so
    does this reader, and it reports it."""
    parsed = parse_session_jsonl(lines(HEADER, line(0)) + line(1))
    assert [e.seq for e in parsed.events] == [0]
    assert parsed.lines == (2,)
    assert parsed.torn_tail == line(1)


def test_blank_space_after_the_last_newline_is_nothing() -> None:
    parsed = parse_session_jsonl(lines(HEADER, line(0)) + b" \t")
    assert [e.seq for e in parsed.events] == [0]
    assert parsed.torn_tail is None


def test_a_bad_line_in_the_middle_names_its_line() -> None:
    data = lines(HEADER, line(0), b'{"type":"turn/start","seq":1', line(1))
    with pytest.raises(SessionFileError) as caught:
        parse_session_jsonl(data)
    assert caught.value.line == 3
    assert str(caught.value).startswith("line 3: ")


def test_a_bad_final_line_that_ends_with_a_newline_is_not_torn() -> None:
    with pytest.raises(SessionFileError) as caught:
        parse_session_jsonl(lines(HEADER, line(0), b'{"type":"turn/st'))
    assert caught.value.line == 3


@pytest.mark.parametrize(
    "bad",
    [
        b'{"type":"x","seq":1,"time":1}',
        b'{"type":"x","seq":1,"data":{}}',
        b'{"seq":1,"time":1,"data":{}}',
        b'{"type":"x","seq":"1","time":1,"data":{}}',
        b'{"type":"x","seq":1,"time":-1,"data":{}}',
        b'["x",1,1,{}]',
        b"null",
    ],
)
def test_an_event_line_of_the_wrong_shape_names_its_line(bad: bytes) -> None:
    with pytest.raises(SessionFileError) as caught:
        parse_session_jsonl(lines(HEADER, line(0), bad, line(2)))
    assert caught.value.line == 3


def test_a_sequence_gap_names_its_line() -> None:
    with pytest.raises(SessionFileError) as caught:
        parse_session_jsonl(lines(HEADER, line(0), line(2)))
    assert caught.value.line == 3
    assert "seq" in caught.value.reason


@pytest.mark.parametrize(
    ("data", "number"),
    [
        (lines(HEADER, b"", line(0)), 2),
        (lines(HEADER, line(0), b"", line(1)), 3),
        (lines(HEADER, line(0), b"  \r"), 3),  # whitespace only, at the end too
        (lines(HEADER, line(0), b""), 3),
    ],
)
def test_a_blank_line_is_a_bad_line_named_by_its_number(data: bytes, number: int) -> None:
    """Issue 25, item 9: the harness cannot read a blank line (it refuses
    the log, or drops every line from it on); it was skipped here, and the
    log called valid."""
    with pytest.raises(SessionFileError) as caught:
        parse_session_jsonl(data)
    assert (caught.value.line, caught.value.reason) == (number, BLANK_LINE)


def test_a_blank_first_line_is_no_header() -> None:
    with pytest.raises(SessionFileError) as caught:
        parse_session_jsonl(lines(b"", HEADER, line(0)))
    assert (caught.value.line, caught.value.reason) == (1, f"invalid session header: {BLANK_LINE}")


@pytest.mark.parametrize("data", [b"", b"\n", b"  \n\n"])
def test_a_file_without_a_header_is_refused(data: bytes) -> None:
    with pytest.raises(SessionFileError) as caught:
        parse_session_jsonl(data)
    assert caught.value.line == 1


@pytest.mark.parametrize(
    "header",
    [
        b'{"type":"message","version":0,"id":"s1","createdAt":1}',
        b'{"type":"session","version":1,"id":"s1","createdAt":1}',
        b'{"type":"session","version":0,"createdAt":1}',
        b'{"type":"session","version":0,"id":"s1","createdAt":1,"seedLength":-1}',
        b"not json",
    ],
)
def test_a_bad_header_is_line_one(header: bytes) -> None:
    with pytest.raises(SessionFileError) as caught:
        parse_session_jsonl(lines(header, line(0)))
    assert caught.value.line == 1


def test_event_data_is_kept_as_written_even_with_lone_surrogates() -> None:
    data = b'{"version":1,"operation":"create","schedule":{"id":"s\\ud800","kind":"at",'
    data += b'"prompt":"p","scheduledAt":"2026-08-06T01:00:00.000Z"}}'
    parsed = parse_session_jsonl(lines(HEADER, line(0, data, "schedule/change")))
    assert json.loads(bytes(parsed.events[0].data)) == json.loads(data)
    assert [r.id for r in fold(parsed.events).active] == ["s\ud800"]
