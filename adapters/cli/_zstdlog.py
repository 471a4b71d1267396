"""Reading a zstd-compressed harness log (``session.jsonl.zstd``).

The harness writes the header line as one checksummed zstd frame, then one
frame per appended batch of whole lines. Reading it as the harness does:
the frames are found by their structure (frame headers and block sizes, as
RFC 8878 lays them out; nothing is decompressed to find them); every
complete frame is decoded (the zstandard library checks each checksum); a
final frame the data stops inside is a torn tail, of which what its complete
blocks decode to is kept, as the harness keeps it (its complete lines are
read, the partial last line is the torn part). What the harness refuses is
refused here too: bytes that are not a zstd frame, a first frame that is not
exactly the header line, complete frames that end inside a line.

Decoding is streamed and bounded: at most ``limit`` bytes of text
(:data:`MAX_TEXT` unless told) are kept, and a log that inflates past it
raises :class:`ZstdTooLarge` as soon as it does. So a small file that
inflates to gigabytes (a zstd bomb) costs the bound in memory, not what it
would inflate to.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import zstandard

MAGIC: Final = b"\x28\xb5\x2f\xfd"
MAX_TEXT: Final = 256 << 20  # bytes of text a log may inflate to
_PIECE: Final = 1 << 20  # bytes of text decoded at a time
_FCS_BYTES: Final = (0, 2, 4, 8)  # frame content size field, by its flag (0: see single segment)
_DICT_BYTES: Final = (0, 1, 2, 4)  # dictionary id field, by its flag


class ZstdLogError(ValueError):
    """A zstd log the harness would refuse; ``line`` (1-based) when known."""

    def __init__(self, reason: str, line: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.line = line


class ZstdTooLarge(ValueError):
    """A zstd log that inflates past the bound: not read, not judged."""

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"too large to check: it inflates to more than {limit:,} bytes of text, "
            "the bound for a zstd log"
        )
        self.limit = limit


@dataclass(frozen=True)
class ZstdLog:
    text: bytes  # the JSONL text of every complete frame, then a torn frame's decodable start
    torn_at: int | None = None  # byte offset of an incomplete final frame


def read_zstd_log(data: bytes, limit: int = MAX_TEXT) -> ZstdLog:
    """Raises ZstdLogError for a log the harness would refuse and
    ZstdTooLarge for one that inflates past ``limit`` bytes."""
    ends, torn_at = frame_ends(data)
    if not ends:  # no header frame: nothing to read
        return ZstdLog(b"", torn_at=torn_at)
    decoder = zstandard.ZstdDecompressor()
    view = memoryview(data)
    text = _Text(limit)
    try:
        text.inflate(decoder, view[: ends[0]])
        header = b"".join(text.pieces)
        if not header.endswith(b"\n") or header.count(b"\n") != 1:
            raise ZstdLogError("the first zstd frame must hold exactly the header line", 1)
        text.inflate(decoder, view[ends[0] : ends[-1]])
    except zstandard.ZstdError as exc:
        raise _undecodable(decoder, view, ends, limit, exc) from None
    if not text.at_line_end():
        line = text.lines() + 1
        raise ZstdLogError("a complete zstd frame ends inside a line (a torn record)", line)
    if torn_at is not None:
        # What the cut frame's complete blocks decode to; nothing when they
        # do not decode (the harness's decoder then gives nothing either).
        kept = len(text.pieces)
        try:
            text.inflate(decoder, view[torn_at:])
        except zstandard.ZstdError:
            del text.pieces[kept:]
    return ZstdLog(b"".join(text.pieces), torn_at)


class _Text:
    """Decoded text, kept in pieces, at most ``limit`` bytes of it."""

    def __init__(self, limit: int) -> None:
        self.pieces: list[bytes] = []
        self.limit = self.room = limit

    def inflate(self, decoder: zstandard.ZstdDecompressor, frames: memoryview) -> None:
        """Add the text of ``frames`` (complete frames, or a cut one's start),
        decoded a piece at a time; ZstdTooLarge as soon as the text passes
        the limit."""
        with decoder.stream_reader(frames, read_across_frames=True) as reader:
            while piece := reader.read(_PIECE):
                self.room -= len(piece)
                if self.room < 0:
                    raise ZstdTooLarge(self.limit)
                self.pieces.append(piece)

    def at_line_end(self) -> bool:
        return not self.pieces or self.pieces[-1].endswith(b"\n")

    def lines(self) -> int:
        return sum(piece.count(b"\n") for piece in self.pieces)


def frame_ends(data: bytes) -> tuple[list[int], int | None]:
    """Where each complete zstd frame of ``data`` ends, read from the frame
    and block headers (nothing is decoded), and where an incomplete final
    frame starts. Raises ZstdLogError for bytes that are no zstd frame."""
    ends: list[int] = []
    at, size = 0, len(data)
    while at < size:
        start = at
        if size - at >= len(MAGIC) and data[at : at + len(MAGIC)] != MAGIC:
            raise ZstdLogError(f"not a zstd frame at byte {at} (the harness refuses the file)")
        at += len(MAGIC)
        if at >= size:
            return ends, start
        descriptor = data[at]
        if descriptor & 0x08:
            raise ZstdLogError(f"zstd frame at byte {start}: a reserved header bit is set")
        single_segment = descriptor & 0x20
        content_size = _FCS_BYTES[descriptor >> 6] or (1 if single_segment else 0)
        at += 1 + (0 if single_segment else 1) + _DICT_BYTES[descriptor & 0x03] + content_size
        while True:
            if at + 3 > size:
                return ends, start
            block = data[at] | data[at + 1] << 8 | data[at + 2] << 16
            kind = (block >> 1) & 0x03
            if kind == 3:
                raise ZstdLogError(f"zstd frame at byte {start}: a block of the reserved type")
            at += 4 if kind == 1 else 3 + (block >> 3)  # an RLE block holds one byte
            if block & 1:  # the last block
                break
        at += 4 if descriptor & 0x04 else 0  # the content checksum
        if at > size:
            return ends, start
        ends.append(at)
    return ends, None


def _undecodable(
    decoder: zstandard.ZstdDecompressor,
    view: memoryview,
    ends: list[int],
    limit: int,
    error: Exception,
) -> ZstdLogError:
    """The error naming the first complete frame that does not decode (a
    bad checksum, bad content) and the line it starts at: the slow path,
    taken once decoding failed."""
    lines, start = 0, 0
    for end in ends:
        frame = _Text(limit)
        try:
            frame.inflate(decoder, view[start:end])
        except zstandard.ZstdError as exc:
            return ZstdLogError(f"zstd frame at byte {start} does not decode: {exc}", lines + 1)
        lines += frame.lines()
        start = end
    return ZstdLogError(f"the zstd frames do not decode: {error}")  # though each one does
