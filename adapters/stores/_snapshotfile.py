"""The JSONL store's ``<session>.snapshot`` file: a magic line, a fixed head,
then the opaque data. A damaged file reads as no snapshot.

Version 2 (written now) records, besides ``through`` and the data's
checksum, where event ``through`` starts in the session file (``offset``)
and a checksum of the ``window`` bytes just before it. That *anchor* lets a
reopen skip the ``through`` events it covers without reading them: the
events before ``offset`` were validated when this store wrote them (or when
an earlier open read them), and the window check tells that the file still
holds those same bytes at that place. Version 1 files (no anchor) still load.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path
from typing import Final, NamedTuple

from tickler.adapters.stores._files import reader
from tickler.shell import Snapshot

_MAGIC_1: Final = b"tickler-snapshot-1\n"
_HEAD_1: Final = struct.Struct("<QI")  # through, crc32(data)
_MAGIC_2: Final = b"tickler-snapshot-2\n"
_HEAD_2: Final = struct.Struct("<QQIII")  # through, offset, window, crc32(window), crc32(data)
WINDOW: Final = 4096
"""Bytes before the anchor's offset that its checksum covers (fewer near the
top of the file)."""


class Anchor(NamedTuple):
    """Event ``through`` starts at byte ``offset``; the ``window`` bytes
    before it have checksum ``crc``."""

    through: int
    offset: int
    window: int
    crc: int

    def matches(self, before: bytes) -> bool:
        """``before``: the file's ``window`` bytes ending at ``offset``."""
        return (
            len(before) == self.window and before.endswith(b"\n") and zlib.crc32(before) == self.crc
        )


def anchor_for(through: int, offset: int, before: bytes) -> Anchor:
    """The anchor of event ``through`` at ``offset``; ``before`` is the
    file's bytes just before ``offset`` (at most :data:`WINDOW`)."""
    return Anchor(through, offset, len(before), zlib.crc32(before))


def encode_snapshot(snapshot: Snapshot, anchor: Anchor) -> bytes:
    assert anchor.through == snapshot.through
    head = _HEAD_2.pack(
        snapshot.through, anchor.offset, anchor.window, anchor.crc, zlib.crc32(snapshot.data)
    )
    return _MAGIC_2 + head + snapshot.data


def decode_snapshot(raw: bytes) -> Snapshot | None:
    if raw.startswith(_MAGIC_2) and len(raw) >= len(_MAGIC_2) + _HEAD_2.size:
        through, _, _, _, crc = _HEAD_2.unpack_from(raw, len(_MAGIC_2))
        data = raw[len(_MAGIC_2) + _HEAD_2.size :]
    elif raw.startswith(_MAGIC_1) and len(raw) >= len(_MAGIC_1) + _HEAD_1.size:
        through, crc = _HEAD_1.unpack_from(raw, len(_MAGIC_1))
        data = raw[len(_MAGIC_1) + _HEAD_1.size :]
    else:
        return None
    return Snapshot(through, data) if zlib.crc32(data) == crc else None


def read_head(path: Path) -> bytes | None:
    """The first bytes of a snapshot file (enough for either version's
    head), or None when there is none; refuses a symbolic link
    (SymlinkRefused)."""
    try:
        file = reader(path)
    except FileNotFoundError:
        return None
    with file:
        return file.read(len(_MAGIC_2) + _HEAD_2.size)


def through_of(raw: bytes) -> int | None:
    """The ``through`` a snapshot's head records (the data not checked),
    or None when ``raw`` starts no snapshot."""
    for magic, head in ((_MAGIC_2, _HEAD_2), (_MAGIC_1, _HEAD_1)):
        if raw.startswith(magic) and len(raw) >= len(magic) + head.size:
            through: int = head.unpack_from(raw, len(magic))[0]
            return through
    return None


def anchor_of(raw: bytes | None) -> Anchor | None:
    """The anchor in a snapshot's head (see :func:`read_head`), or None."""
    if raw is None or not raw.startswith(_MAGIC_2) or len(raw) < len(_MAGIC_2) + _HEAD_2.size:
        return None
    through, offset, window, crc, _ = _HEAD_2.unpack_from(raw, len(_MAGIC_2))
    if through <= 0 or not 0 < window <= min(WINDOW, offset):
        return None
    return Anchor(through, offset, window, crc)
