"""The JSONL scan reads a buffer of lines with one ``map`` when every line
is an event of the next seq, and line by line otherwise: both read any file
alike (the same count, offset index, packed blocks and torn tail, or the
same bad line named)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tickler.adapters.stores import _scan
from tickler.adapters.stores._files import CorruptStore

HEADER = b'{"type":"session","version":0,"id":"s1","createdAt":1}\n'


@st.composite
def session_files(draw: st.DrawFn) -> bytes:
    """Runs of the store's own event lines, with now and then a line the
    map path must leave to the exact reader: a packed row (or its type on
    a line shaped as one event), seq written
    ``1.0``, a wrong seq, a blank line, surrounding spaces, a torn tail."""
    out = [HEADER]
    seq = 0
    for _ in range(draw(st.integers(0, 40))):
        kind = draw(
            st.sampled_from(
                ["run"] * 6 + ["packed", "packed-type", "float", "wrong", "blank", "spaces"]
            )
        )
        if kind == "run":
            for _ in range(draw(st.integers(1, 700))):
                out.append(
                    b'{"type":"turn/start","seq":%d,"time":1,"data":{"n":%d}}\n' % (seq, seq)
                )
                seq += 1
        elif kind == "packed":
            out.append(
                b'{"type":"text-chunks","seq0":%d,"time0":1,"data":{"turn":1,"step":1,'
                b'"index":0,"dt":[1],"texts":["a","b"]}}\n' % seq
            )
            seq += 2
        elif kind == "packed-type":  # a packed row's type on a line shaped as one event
            out.append(b'{"type":"text-chunks","seq":%d,"time":1,"data":{}}\n' % seq)
            seq += 1
        elif kind == "float":
            out.append(b'{"type":"turn/end","seq":%d.0,"time":1,"data":{}}\n' % seq)
            seq += 1
        elif kind == "wrong":
            out.append(b'{"type":"turn/end","seq":%d,"time":1,"data":{}}\n' % (seq + 1))
        elif kind == "blank":
            out.append(b"\n")
        else:
            out.append(b'  {"type":"turn/end","seq":%d,"time":1,"data":{}} \n' % seq)
            seq += 1
    if draw(st.booleans()):
        out.append(b'{"type":"turn/st')  # a torn tail
    return b"".join(out)


def scan(data: bytes) -> tuple[object, ...]:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "s1.jsonl"
        path.write_bytes(data)
        fd = os.open(path, os.O_RDONLY)
        try:
            s = _scan.scan_file(fd, path)
        except CorruptStore as exc:
            return ("corrupt", exc.line, str(exc).replace(directory, ""))
        finally:
            os.close(fd)
        return (s.length, s.end, list(s.index), s.row_starts, s.packed_blocks, s.torn)


@settings(max_examples=60, deadline=None)
@given(session_files(), st.sampled_from([1 << 10, 1 << 14, 1 << 20]))
def test_the_map_path_reads_as_the_line_path(data: bytes, chunk: int) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_scan, "_CHUNK", chunk)  # buffers that cut runs anywhere
        fast = scan(data)
        patch.setattr(_scan, "_take_all", lambda *_: False)
        exact = scan(data)
    assert fast == exact


def test_the_map_path_is_taken_for_the_stores_own_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    taken: list[bool] = []
    take = _scan._take_all

    def noting(*args: object) -> bool:
        taken.append(take(*args))  # type: ignore[arg-type]
        return taken[-1]

    monkeypatch.setattr(_scan, "_take_all", noting)
    lines = b"".join(
        b'{"type":"turn/start","seq":%d,"time":1,"data":{}}\n' % n for n in range(1000)
    )
    assert scan(HEADER + lines)[:3] == (
        1000,
        len(HEADER) + len(lines),
        [len(HEADER)]
        + [
            len(HEADER)
            + sum(
                len(b'{"type":"turn/start","seq":%d,"time":1,"data":{}}\n' % n)
                for n in range(k * 256)
            )
            for k in range(1, 4)
        ],
    )
    assert taken == [True]
