"""The journal's on-disk format: a magic line, then framed records.

A record is one appended batch: ``<payload length><crc32>`` then the payload
``<first seq><id length><session id><the batch's lines>``. A reader stops at
the first frame that is not intact. That is where a crash cut the file (and
nothing after it was ever reported durable) only when the frame is the last
thing written: records go into space pre-filled with zeros (or at the end of
the file) in one write, so a cut write leaves a prefix of its bytes followed
by zeros or the end of the file. :func:`scan_journal` tells the two apart:

* the end: only zeros (or nothing) from the frame on; a cut: the frame's
  last byte (always the newline ending its last line) never reached the
  file, only zeros follow, and its text after the head holds no zero byte
  (a later record's binary frame would);
* damage: anything else — a complete record whose checksum fails, bytes
  after a bad frame, a magic line that is neither whole nor a cut prefix.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterator
from typing import Final, NamedTuple

MAGIC: Final = b"tickler-wal-1\n"
_FRAME: Final = struct.Struct("<II")
_HEAD: Final = struct.Struct("<QH")


class Record(NamedTuple):
    session_id: str
    first_seq: int
    lines: bytes  # one or more ``\n``-terminated event lines

    def numbered(self) -> Iterator[tuple[int, bytes]]:
        """``(seq, line)`` for each event line of the batch."""
        for offset, line in enumerate(self.lines.split(b"\n")[:-1]):
            yield self.first_seq + offset, line + b"\n"


def encode_record(session_id: str, first_seq: int, lines: bytes) -> bytes:
    name = session_id.encode()
    payload = b"".join((_HEAD.pack(first_seq, len(name)), name, lines))
    return _FRAME.pack(len(payload), zlib.crc32(payload)) + payload


class Damage(NamedTuple):
    """Where a journal file is damaged (a byte offset) and how."""

    offset: int
    reason: str


class Scan(NamedTuple):
    records: list[Record]  # the intact records before the end, the cut or the damage
    damage: Damage | None  # None: the file ends cleanly or where a crash cut a write


def read_records(data: bytes) -> Iterator[Record]:
    """The intact records of a journal file, in order (up to any damage)."""
    yield from scan_journal(data).records


def scan_journal(data: bytes) -> Scan:
    """The records of a journal file, and the damage found, if any (see the
    module docstring)."""
    if not data.startswith(MAGIC):
        if _zeros_from(data, 0) or MAGIC.startswith(data.rstrip(b"\0")):
            return Scan([], None)  # created, then cut before its magic line was written
        return Scan([], Damage(0, "damaged journal header (not a tickler journal)"))
    records: list[Record] = []
    offset = len(MAGIC)
    while offset < len(data):
        bad = _bad_frame(data, offset)
        if bad is not None:
            if _zeros_from(data, offset) or _cut_short(data, offset):
                return Scan(records, None)
            return Scan(records, Damage(offset, bad))
        length = _FRAME.unpack_from(data, offset)[0]
        payload = data[offset + _FRAME.size : offset + _FRAME.size + length]
        first_seq, name_length = _HEAD.unpack_from(payload)
        name_end = _HEAD.size + name_length
        try:
            name = payload[_HEAD.size : name_end].decode()
        except UnicodeDecodeError:
            return Scan(records, Damage(offset, "a journal record names no session"))
        records.append(Record(name, first_seq, payload[name_end:]))
        offset += _FRAME.size + length
    return Scan(records, None)


def _bad_frame(data: bytes, offset: int) -> str | None:
    """Why the frame at ``offset`` is not an intact record, or None."""
    if offset + _FRAME.size > len(data):
        return "incomplete journal record frame"
    length, crc = _FRAME.unpack_from(data, offset)
    payload = data[offset + _FRAME.size : offset + _FRAME.size + length]
    if len(payload) != length:
        return "incomplete journal record"
    if length < _HEAD.size or zlib.crc32(payload) != crc:
        return "journal record with a bad checksum"
    return None


def _zeros_from(data: bytes, offset: int) -> bool:
    return not data[offset:].strip(b"\0")


def _cut_short(data: bytes, offset: int) -> bool:
    """The frame at ``offset`` is a write a crash cut: its last byte is not
    there, only zeros follow what was written, and that holds no zero byte
    past the binary head (the text of lines has none)."""
    written = len(data[offset:].rstrip(b"\0")) + offset  # the end of the nonzero bytes
    if written <= offset + _FRAME.size:
        return True  # cut inside the frame's own 8 bytes
    length = _FRAME.unpack_from(data, offset)[0]
    if offset + _FRAME.size + length <= written:
        return False  # the whole record reached the file: damaged, not cut
    head_end = offset + _FRAME.size + _HEAD.size
    if written <= head_end:
        return True
    name_length = _HEAD.unpack_from(data, offset + _FRAME.size)[1]
    return b"\0" not in data[head_end + name_length : written]
