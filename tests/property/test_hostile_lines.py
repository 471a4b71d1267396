"""Any bytes in a session file: reading it gives events or names the bad
line (SessionFileError; CorruptStore in the JSONL store's reader), never
another Python error — invalid UTF-8, numbers of thousands of digits, packed
rows, JavaScript's numbers included."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tickler.adapters.stores._files import CorruptStore
from tickler.adapters.stores._scan import scan_file
from tickler.core import SessionFileError, parse_session_jsonl

HEADER = b'{"type":"session","version":0,"id":"s1","createdAt":1,"seedLength":0}'
LINES = (
    b'{"type":"turn/start","seq":0,"time":1,"data":{"turn":1}}',
    b'{"type":"text-chunks","seq0":0,"time0":1,"data":{"turn":1,"step":1,"index":0,'
    b'"dt":[1],"texts":["a","b"]}}',
    b'{"type":"schedule/change","seq":0.0,"time":1e0,"data":{"version":1}}',
)
# Lines whose members the reader checks, each ``%s`` a value to fill.
TEMPLATES = (
    b'{"type":"session","version":%s,"id":%s,"createdAt":%s,"seedLength":%s,"cwd":%s}',
    b'{"type":%s,"seq":%s,"time":%s,"data":%s,"ignorable":%s}',
    b'{"type":%s,"seq0":%s,"time0":%s,"data":{"turn":%s,"step":1,"index":0,"dt":[%s],'
    b'"texts":["a","b"]}}',
)
# What a hostile writer puts in: bytes that are not UTF-8, very long numbers,
# lone surrogates, and pieces that change the structure.
VALUES = st.sampled_from(
    [b"0", b"1", b"1.0", b"-0", b"1e400", b"1" * 5_000, b"1e" + b"9" * 5_000,
     b"0." + b"1" * 5_000, b'"\xff"', b'"a\xffb"', b'"\xed\xa0\x80"', b'"\\ud800"', b'"x"',
     b'"session"', b'"text-chunks"', b'"turn/start"', b"null", b"true", b"[]", b"{}",
     b"[" * 2_000 + b"]" * 2_000, b'"\xc3"']
)  # fmt: skip
PIECES = st.sampled_from(
    [b"\xff", b"\xed\xa0\x80", b"\xc3", b"1" * 5_000, b"e" + b"9" * 5_000, b'"', b"[",
     b"{", b"}", b"]", b",", b":", b"null", b"-", b".", b"\\u", b"\\ud800", b" "]
)  # fmt: skip


@st.composite
def filled(draw: st.DrawFn) -> bytes:
    template = draw(st.sampled_from(TEMPLATES))
    return template % tuple(draw(VALUES) for _ in range(template.count(b"%s")))


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(st.sampled_from(LINES)))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(data)))
        cut = draw(st.integers(0, 3))
        data[at : at + cut] = draw(st.one_of(PIECES, st.binary(min_size=1, max_size=4)))
    return bytes(data).replace(b"\n", b" ")


@given(st.one_of(filled(), mutated()), st.booleans(), st.booleans())
def test_a_hostile_line_reads_or_is_named(line: bytes, in_header: bool, newline: bool) -> None:
    body = [HEADER, LINES[0]]
    if in_header:
        body[0] = line
    else:
        body.insert(1, line)
    data = b"\n".join(body) + (b"\n" if newline else b"")
    named: list[int] = []  # the line each reader names, when it refuses the file
    try:
        parse_session_jsonl(data)
    except SessionFileError as exc:
        named.append(exc.line)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s1.jsonl"
        path.write_bytes(data)
        fd = os.open(path, os.O_RDONLY)
        try:
            scan_file(fd, path)
        except CorruptStore as exc:
            named.append(exc.line)
        finally:
            os.close(fd)
    assert set(named) <= {1, 2, 3}
