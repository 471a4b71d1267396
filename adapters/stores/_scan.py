"""Reading a session file: header, event count, and where a crash left it.

Nothing is kept but a sparse offset index (one offset per ``STRIDE``
events), so a session of a million events opens in bounded memory and
``events(start)`` seeks close to ``start`` instead of re-reading from the top.

Lines are read as :func:`tickler.core.parse_session_jsonl` reads them (a
blank line is a bad line, as for the harness): the
store's own lines take msgspec's fast decoder; any line it cannot read (a
harness's packed chunk row, ``seq`` written ``1.0``, nesting deeper than the
C reader's recursion) takes the core's general reader, which never raises
RecursionError. A packed row stands for several events: when the event an
index entry points at is not its line's first, ``row_starts`` records the
seq of the line's first event, and ``packed_blocks`` names the index blocks
where a line may not be one event (reading skips lines by counting them
everywhere else, as for the store's own lines).

A scan validates every line it reads (exactly as
:func:`tickler.core.parse_session_jsonl` does) and may start at an *anchor*
(a snapshot's: event ``through`` starts at byte ``offset``) to read only the
lines after it; the lines before it are then validated on demand, by
:func:`scan_prefix`, if ever read.
"""

from __future__ import annotations

import os
from array import array
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from typing import Final

import msgspec

from tickler.adapters.stores._files import CorruptStore, reader
from tickler.core import (
    BLANK_LINE,
    PACKED_TYPES,
    SessionEvent,
    SessionHeader,
    decode_header_line,
    decode_record_line,
    is_json,
)

STRIDE: Final = 256
_CHUNK: Final = 1 << 20
_EVENT: Final = msgspec.json.Decoder(SessionEvent)
_MSGSPEC_ERRORS: Final = (msgspec.DecodeError, msgspec.ValidationError)
_FAST_FAILS: Final = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)

__all__ = ["STRIDE", "Scanned", "is_json", "line_number", "scan_file", "scan_prefix"]


@dataclass
class Scanned:
    path: Path
    header: SessionHeader | None = None
    first: int = 0  # seq of the first event the scan read (an anchor's through, or 0)
    start: int = 0  # where event ``first`` starts (bytes; the scan's start when known)
    length: int = 0  # events
    end: int = 0  # bytes of intact content (a torn tail starts here)
    index: array[int] = field(default_factory=lambda: array("q"))
    """Offsets of the events whose seq is a multiple of STRIDE, from the
    first such seq at or after ``first`` on: the start of the line holding
    that event."""
    row_starts: dict[int, int] = field(default_factory=dict)
    """block (seq // STRIDE) -> the seq of the first event of the line the
    block's index entry points at, when that is not the block's own event
    (the event is inside a packed chunk row)."""
    packed_blocks: set[int] = field(default_factory=set)
    """The blocks (seq // STRIDE) holding an event of a line that is not
    exactly one event (a packed chunk row)."""
    torn: bytes | None = None  # a final fragment with no newline that is not JSON
    missing_newline: bool = False  # the final line is whole JSON but lacks its newline

    @property
    def index_from(self) -> int:
        """The block (seq // STRIDE) of ``index[0]``."""
        return -(-self.first // STRIDE)


class _BadLine(Exception):
    def __init__(self, offset: int, reason: str) -> None:
        super().__init__(reason)
        self.offset = offset
        self.reason = reason


def scan_file(fd: int, path: Path, anchor: tuple[int, int] | None = None) -> Scanned:
    """Validate the file's lines — all of them, or with ``anchor = (through,
    offset)`` the header and the lines from ``offset`` on, taking the
    ``through`` events before it as counted — and find a torn tail. Raises
    CorruptStore naming the first bad line; the file is not changed."""
    scanned = Scanned(path)
    size = os.fstat(fd).st_size
    try:
        if anchor is not None:
            scanned.header, _ = _read_header(fd, size)
            scanned.first = scanned.length = anchor[0]
            scanned.start = anchor[1]
        _scan(fd, scanned, scanned.start, size)
    except _BadLine as bad:
        raise CorruptStore(path, line_number(fd, bad.offset), bad.reason) from None
    return scanned


def scan_prefix(path: Path, through: int, offset: int) -> Scanned:
    """Validate the events before an anchor (event ``through`` starts at
    ``offset``) and index them: the scan's ``index`` holds the entries for
    seq 0 to ``through`` (exclusive). Raises CorruptStore."""
    with reader(path) as file:
        fd = file.fileno()
        scanned = Scanned(path)
        try:
            _scan(fd, scanned, 0, offset)
            if scanned.torn is not None or scanned.missing_newline:
                raise _BadLine(scanned.end, "the snapshot's offset is not at a line's end")
            if scanned.length != through:
                raise _BadLine(
                    offset, f"{scanned.length} events before the snapshot's offset, not {through}"
                )
        except _BadLine as bad:
            raise CorruptStore(path, line_number(fd, bad.offset), bad.reason) from None
    return scanned


def _scan(fd: int, scanned: Scanned, begin: int, size: int) -> None:
    carry, carry_at, offset = b"", begin, begin
    while offset < size:
        chunk = os.pread(fd, min(_CHUNK, size - offset), offset)
        if not chunk:
            break
        offset += len(chunk)
        buffer = carry + chunk
        start = _take_lines(scanned, buffer, carry_at)
        carry, carry_at = buffer[start:], carry_at + start
    scanned.end = carry_at + len(carry)
    if carry.strip():
        if is_json(carry):
            _take_lines(scanned, carry + b"\n", carry_at)
            scanned.missing_newline = True
        else:
            scanned.torn, scanned.end = carry, carry_at


def _take_lines(scanned: Scanned, buffer: bytes, at: int) -> int:
    """Account for every complete line of ``buffer`` (which starts at file
    offset ``at``); where the incomplete rest starts."""
    start = 0
    find = buffer.find
    while scanned.header is None and (newline := find(b"\n", start)) >= 0:
        scanned.header = _decode_header(buffer[start:newline], at + start)
        start = newline + 1
    end = buffer.rfind(b"\n") + 1
    if scanned.header is not None and start < end and _take_all(scanned, buffer, start, end, at):
        return end
    length = scanned.length
    index = scanned.index
    decode = _EVENT.decode
    packed = PACKED_TYPES
    try:
        while (newline := find(b"\n", start)) >= 0:
            line = buffer[start:newline]
            try:
                decoded = decode(line)
            except _FAST_FAILS:
                decoded = None
            if decoded is None or decoded.type in packed:
                # A packed row, JavaScript's numbers, deep nesting: the
                # core's reader. A blank line never decodes: it is refused.
                if not line.strip():
                    raise _BadLine(at + start, BLANK_LINE)
                scanned.length = length
                _take_record(scanned, line, at + start)
                length = scanned.length
            else:
                if decoded.seq != length:
                    raise _BadLine(at + start, f"event seq {decoded.seq} should be {length}")
                if not length % STRIDE:
                    index.append(at + start)
                length += 1
            start = newline + 1
    finally:
        scanned.length = length
    return start


def _take_all(scanned: Scanned, buffer: bytes, start: int, end: int, at: int) -> bool:
    """The whole lines of ``buffer[start:end]`` decoded by one ``map`` (each
    line on its own, by the same decoder, without a Python step per line),
    taken when each is an event of the next seq and none a packed row.
    False, having taken nothing, otherwise: the caller reads them one by
    one, for the exact outcome and the bad line."""
    lines = buffer[start : end - 1].split(b"\n")
    try:
        events = list(map(_EVENT.decode, lines))
    except _FAST_FAILS:
        return False
    length = scanned.length
    count = len(events)
    if [e.seq for e in events] != list(range(length, length + count)):
        return False
    if not PACKED_TYPES.isdisjoint([e.type for e in events]):
        return False
    first = -(-length // STRIDE) * STRIDE  # the first seq the index keeps
    if first < length + count:
        starts = list(accumulate([len(line) + 1 for line in lines], initial=at + start))
        scanned.index.extend(starts[seq - length] for seq in range(first, length + count, STRIDE))
    scanned.length = length + count
    return True


def _take_record(scanned: Scanned, line: bytes, offset: int) -> None:
    """Account for a line the fast decoder could not read, with the core's
    general reader: its events (several for a packed row)."""
    try:
        events = decode_record_line(line)
    except _MSGSPEC_ERRORS as exc:
        raise _BadLine(offset, f"invalid event: {exc}") from None
    length = first = scanned.length
    if len(events) != 1:
        last = max(first, first + len(events) - 1)
        scanned.packed_blocks.update(range(first // STRIDE, last // STRIDE + 1))
    for position, item in enumerate(events):
        if item.seq != length:
            raise _BadLine(offset, f"event seq {item.seq} should be {length}")
        if not length % STRIDE:
            scanned.index.append(offset)
            if position:
                scanned.row_starts[length // STRIDE] = length - position
        length += 1
    scanned.length = length


def _decode_header(line: bytes, offset: int) -> SessionHeader:
    if not line.strip():
        raise _BadLine(offset, f"invalid session header: {BLANK_LINE}")
    try:
        return decode_header_line(line)
    except _MSGSPEC_ERRORS as exc:
        raise _BadLine(offset, f"invalid session header: {exc}") from None


def _read_header(fd: int, size: int) -> tuple[SessionHeader, int]:
    """The header (the first line) and where the line after it starts."""
    offset, carry = 0, b""
    while offset < size:
        chunk = os.pread(fd, min(1 << 16, size - offset), offset)
        if not chunk:
            break
        offset += len(chunk)
        carry += chunk
        if (newline := carry.find(b"\n")) >= 0:
            return _decode_header(carry[:newline], 0), newline + 1
    raise _BadLine(0, "missing session header")


def line_number(fd: int, offset: int) -> int:
    """The 1-based number of the line starting at ``offset`` (for messages)."""
    newlines, at = 0, 0
    while at < offset:
        chunk = os.pread(fd, min(_CHUNK, offset - at), at)
        if not chunk:
            break
        newlines += chunk.count(b"\n")
        at += len(chunk)
    return newlines + 1
