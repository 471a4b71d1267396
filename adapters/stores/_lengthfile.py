"""The JSONL store's ``<session>.length`` file: how many events the session
file is known to hold durably.

A session file is plain text: whole lines cut from its end leave a shorter
file that reads as valid, and nothing in the file itself can tell. While a
journal holds a session's latest records, the journal tells (a replay
writes cut lines back, or reports the events missing). But a journal is
deleted once the files it covers are synced (a checkpoint, a close) or once
it was replayed. So before the last journal record of a session's events
can go, the store records the number of events its file durably holds
here, at:

* a checkpoint, for each session file the deleted journal covers that has
  no durable record in a later journal;
* the session's close, whatever closes it (``log.close()``, the store's
  ``close()``);
* the replay of a dead process's journal, for each session it replays.

Opening a session (and ``tickler check``) then refuses a file holding fewer
events than its length file records: ``CorruptStore``, the file left as it
is. The count only ever grows, and only after the file's own sync, so a
crash never leaves a length file ahead of its session file.

The file is two 32-byte slots, each a magic, the count and a checksum,
written in place: an update overwrites the slot holding the smaller count
and syncs, so one ``pwrite`` and one fsync, and a write that a power loss
cuts spoils only the slot it wrote (the other holds the previous count).
The record is the larger count of the valid slots. A file with no valid
slot reads as none: only a first write cut by a power loss leaves one, and
the journal that write preceded still covers those events.
"""

from __future__ import annotations

import os
import struct
import zlib
from pathlib import Path
from typing import Final

from tickler.adapters.stores._files import Fsync, open_nofollow, pwrite_all

SUFFIX: Final = ".length"
_MAGIC: Final = b"tkl-len1"
_SLOT: Final = struct.Struct("<8sQI12x")  # magic, count, crc32 of both
_SIZE: Final = 2 * _SLOT.size


def length_path(session_file: Path) -> Path:
    """The length file of a session file (``<session>.length``)."""
    return session_file.with_suffix(SUFFIX)


def read_length(path: Path) -> int | None:
    """The count a length file records; None when there is none (no file,
    or no valid slot). Refuses a symbolic link (SymlinkRefused)."""
    try:
        fd = open_nofollow(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        return _best(os.pread(fd, _SIZE, 0))[0]
    finally:
        os.close(fd)


def write_length(path: Path, count: int, fsync: Fsync) -> bool:
    """Record ``count`` (the session file is synced through it already),
    unless the file records as much; durable on return, but for a new
    file's directory entry: True when the file was created (the caller
    syncs the directory). Raises OSError (SymlinkRefused for a link)."""
    fd = open_nofollow(path, os.O_RDWR | os.O_CREAT)
    try:
        raw = os.pread(fd, _SIZE, 0)
        recorded, spare = _best(raw)
        if recorded is not None and recorded >= count:
            return False
        slot = _MAGIC + count.to_bytes(8, "little")
        pwrite_all(fd, _SLOT.pack(_MAGIC, count, zlib.crc32(slot)), spare * _SLOT.size)
        fsync(fd)
        return not raw
    finally:
        os.close(fd)


def _best(raw: bytes) -> tuple[int | None, int]:
    """The larger count of the valid slots in ``raw`` (None: no valid
    slot), and the slot to overwrite next (the other one)."""
    counts: list[int | None] = []
    for index in range(2):
        chunk = raw[index * _SLOT.size : (index + 1) * _SLOT.size]
        valid = None
        if len(chunk) == _SLOT.size:
            magic, count, crc = _SLOT.unpack(chunk)
            if magic == _MAGIC and crc == zlib.crc32(chunk[:16]):
                valid = count
        counts.append(valid)
    first, second = counts
    if first is None and second is None:
        return None, 0
    if second is None or (first is not None and first >= second):
        return first, 1
    return second, 0
