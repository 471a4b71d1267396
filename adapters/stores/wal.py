"""The journal's on-disk format: a magic line, then framed records.

A record is one appended batch: ``<payload length><crc32>`` then the payload
``<first seq><id length><session id><the batch's lines>``. A reader stops at
the first incomplete or corrupt frame: that is where a crash cut the file,
and nothing after it was ever reported durable.
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


def read_records(data: bytes) -> Iterator[Record]:
    """The intact records of a journal file, in order."""
    if not data.startswith(MAGIC):
        return
    offset = len(MAGIC)
    while offset + _FRAME.size <= len(data):
        length, crc = _FRAME.unpack_from(data, offset)
        payload = data[offset + _FRAME.size : offset + _FRAME.size + length]
        if len(payload) != length or zlib.crc32(payload) != crc or length < _HEAD.size:
            return
        first_seq, name_length = _HEAD.unpack_from(payload)
        name_end = _HEAD.size + name_length
        yield Record(payload[_HEAD.size : name_end].decode(), first_seq, payload[name_end:])
        offset += _FRAME.size + length
