"""Reading a session file once, at open: header, event count, and where a
crash left it.

Nothing is kept but a sparse offset index (one offset per ``STRIDE``
events), so a session of a million events opens in bounded memory and
``events(start)`` seeks close to ``start`` instead of re-reading from the top.
"""

from __future__ import annotations

import json
import os
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import msgspec

from tickler.adapters.stores.lines import decode_line
from tickler.core import SessionHeader
from tickler.shell.ports import StoreError

STRIDE: Final = 256
_CHUNK: Final = 1 << 20
_HEADER: Final = msgspec.json.Decoder(SessionHeader)


@dataclass
class Scanned:
    path: Path
    header: SessionHeader | None = None
    length: int = 0  # events
    end: int = 0  # bytes of intact content (a torn tail starts here)
    index: array[int] = field(default_factory=lambda: array("q"))
    torn: bytes | None = None  # a final fragment with no newline that is not JSON
    missing_newline: bool = False  # the final line is whole JSON but lacks its newline
    _line: int = 0

    def take(self, line: bytes, offset: int) -> None:
        """Account for one line (without its newline) found at ``offset``."""
        self._line += 1
        if not line.strip():
            return
        if self.header is None:
            self.header = self._decode_header(line)
            return
        try:
            seq = decode_line(line).seq
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise self.error(f"invalid event: {exc}") from None
        if seq != self.length:
            raise self.error(f"event seq {seq} should be {self.length}")
        if seq % STRIDE == 0:
            self.index.append(offset)
        self.length += 1

    def error(self, reason: str) -> StoreError:
        return StoreError(f"{self.path}: line {self._line}: {reason}")

    def _decode_header(self, line: bytes) -> SessionHeader:
        try:
            return _HEADER.decode(line)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise self.error(f"invalid session header: {exc}") from None


def scan_file(fd: int, path: Path) -> Scanned:
    """Validate every line (raising StoreError naming the first bad one) and
    find a torn tail; the file is not changed."""
    scanned = Scanned(path)
    size = os.fstat(fd).st_size
    carry, carry_at, offset = b"", 0, 0
    while offset < size:
        chunk = os.pread(fd, _CHUNK, offset)
        if not chunk:
            break
        offset += len(chunk)
        buffer, start = carry + chunk, 0
        while (newline := buffer.find(b"\n", start)) >= 0:
            scanned.take(buffer[start:newline], carry_at + start)
            start = newline + 1
        carry, carry_at = buffer[start:], carry_at + start
    scanned.end = carry_at + len(carry)
    if carry.strip():
        if _is_json(carry):
            scanned.take(carry, carry_at)
            scanned.missing_newline = True
        else:
            scanned.torn, scanned.end = carry, carry_at
    return scanned


def _is_json(fragment: bytes) -> bool:
    try:
        json.loads(fragment)
    except ValueError:
        return False
    return True
