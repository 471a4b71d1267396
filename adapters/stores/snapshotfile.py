"""The JSONL store's ``<session>.snapshot`` file: a magic line, ``through``,
a checksum, then the opaque data. A damaged file reads as no snapshot."""

from __future__ import annotations

import struct
import zlib
from typing import Final

from tickler.shell.ports import Snapshot

_MAGIC: Final = b"tickler-snapshot-1\n"
_HEAD: Final = struct.Struct("<QI")


def encode_snapshot(snapshot: Snapshot) -> bytes:
    return _MAGIC + _HEAD.pack(snapshot.through, zlib.crc32(snapshot.data)) + snapshot.data


def decode_snapshot(raw: bytes) -> Snapshot | None:
    if not raw.startswith(_MAGIC) or len(raw) < len(_MAGIC) + _HEAD.size:
        return None
    through, crc = _HEAD.unpack_from(raw, len(_MAGIC))
    data = raw[len(_MAGIC) + _HEAD.size :]
    return Snapshot(through, data) if zlib.crc32(data) == crc else None
