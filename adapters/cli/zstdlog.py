"""Reading a zstd-compressed harness log (``session.jsonl.zstd``).

The harness writes the header line as one checksummed zstd frame, then one
frame per appended batch of whole lines. Reading it: every complete frame is
decoded (the zstandard library checks each checksum); a final frame that
stops before its end is a torn tail, kept apart. What the harness refuses is
refused here too: bytes that are not a zstd frame, a first frame that is not
exactly the header line, complete frames that end inside a line.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import zstandard

MAGIC: Final = b"\x28\xb5\x2f\xfd"
_FIRST_FEED: Final = 512  # bytes fed to a frame's decoder, doubled while it wants more


class ZstdLogError(ValueError):
    """A zstd log the harness would refuse; ``line`` (1-based) when known."""

    def __init__(self, reason: str, line: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line


@dataclass(frozen=True)
class ZstdLog:
    text: bytes  # the JSONL text of every complete frame
    torn_at: int | None = None  # byte offset of an incomplete final frame


def _frame(decoder: zstandard.ZstdDecompressor, data: memoryview, start: int) -> tuple[bytes, int]:
    """Decode the frame at ``start``: its text and where it ends, or
    ``(partial text, -1)`` when the data stops inside it."""
    obj = decoder.decompressobj()
    out: list[bytes] = []
    at, feed = start, _FIRST_FEED
    # Feeding growing slices keeps the copy of the unused rest (after the
    # frame ends) small: a log of many small frames is read in linear time.
    while at < len(data):
        piece = data[at : at + feed]
        out.append(obj.decompress(piece))
        if obj.eof:
            return b"".join(out), at + len(piece) - len(obj.unused_data)
        at += len(piece)
        feed *= 2
    return b"".join(out), -1


def read_zstd_log(data: bytes) -> ZstdLog:
    """Raises ZstdLogError for a log the harness would refuse."""
    decoder = zstandard.ZstdDecompressor()
    view = memoryview(data)
    texts: list[bytes] = []
    lines = 0  # newlines in the complete frames so far
    at = 0
    while at < len(data):
        if len(data) - at < len(MAGIC):
            return _torn(texts, at)
        if bytes(view[at : at + len(MAGIC)]) != MAGIC:
            raise ZstdLogError(f"not a zstd frame at byte {at} (the harness refuses the file)")
        try:
            text, end = _frame(decoder, view, at)
        except zstandard.ZstdError as exc:
            reason = f"zstd frame at byte {at} does not decode: {exc}"
            raise ZstdLogError(reason, lines + 1) from None
        if end < 0:
            return _torn(texts, at)
        if not texts and (not text.endswith(b"\n") or text.count(b"\n") != 1):
            raise ZstdLogError("the first zstd frame must hold exactly the header line", 1)
        texts.append(text)
        lines += text.count(b"\n")
        at = end
    _check_whole_lines(texts)
    return ZstdLog(b"".join(texts))


def _torn(texts: list[bytes], at: int) -> ZstdLog:
    _check_whole_lines(texts)
    return ZstdLog(b"".join(texts), torn_at=at)


def _check_whole_lines(texts: list[bytes]) -> None:
    if texts and not texts[-1].endswith(b"\n"):
        line = sum(text.count(b"\n") for text in texts) + 1
        raise ZstdLogError("a complete zstd frame ends inside a line (a torn record)", line)
