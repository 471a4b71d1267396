"""Reading a harness's ``session.jsonl.zstd``: frames found by their
structure, decoded a piece at a time within a bound, a cut final frame's
decodable start kept (as the harness keeps it)."""

from __future__ import annotations

import pytest
import zstandard

from tickler.adapters.cli._zstdlog import (
    ZstdLogError,
    ZstdTooLarge,
    frame_ends,
    read_zstd_log,
)

HEADER = b'{"type":"session","version":0,"id":"z","createdAt":1}\n'


def event(seq: int) -> bytes:
    return b'{"type":"note","seq":%d,"time":1,"data":{"n":"%d"}}\n' % (seq, seq * 7919 % 10007)


def frames(*batches: bytes) -> bytes:
    compressor = zstandard.ZstdCompressor(write_checksum=True)
    return b"".join(compressor.compress(batch) for batch in batches)


def test_frame_ends_are_read_from_the_headers() -> None:
    parts = [frames(HEADER), frames(event(0)), frames(b"".join(map(event, range(1, 5000))))]
    data = b"".join(parts)
    ends = [len(parts[0]), len(parts[0]) + len(parts[1]), len(data)]
    assert frame_ends(data) == (ends, None)
    for cut in (1, 4, 5, 7, len(parts[2]) // 2, len(parts[2]) - 1):
        assert frame_ends(data[:-cut]) == (ends[:2], ends[1])


def test_the_text_is_bounded_and_the_bound_is_exact() -> None:
    batches = [HEADER, *(b"".join(map(event, range(k * 100, k * 100 + 100))) for k in range(5))]
    data = frames(*batches)
    size = sum(map(len, batches))
    assert read_zstd_log(data, limit=size).text == b"".join(batches)
    with pytest.raises(ZstdTooLarge, match=f"inflates to more than {size - 1:,} bytes"):
        read_zstd_log(data, limit=size - 1)


def test_a_cut_frame_keeps_what_zstd_streams_out_of_it() -> None:
    body = b"".join(map(event, range(4000)))
    last = frames(body)
    for cut in (1, 4, len(last) // 3, len(last) // 2):
        data = frames(HEADER) + last[:-cut]
        expected = zstandard.ZstdDecompressor().decompressobj().decompress(last[:-cut])
        log = read_zstd_log(data)
        assert log.torn_at == len(frames(HEADER))
        assert log.text == HEADER + expected


def test_a_cut_frame_that_does_not_decode_gives_nothing() -> None:
    last = bytearray(frames(b"".join(map(event, range(4000)))))
    last[20:40] = b"\xff" * 20  # inside the first block's compressed data
    data = frames(HEADER, event(0)) + bytes(last[:-10])
    log = read_zstd_log(data)
    assert log.text == HEADER + event(0)
    assert log.torn_at is not None


def test_a_bad_checksum_names_its_frame_and_line() -> None:
    data = bytearray(frames(HEADER, event(0) + event(1), event(2)))
    data[-1] ^= 0xFF
    third = len(frames(HEADER, event(0) + event(1)))
    with pytest.raises(ZstdLogError) as caught:
        read_zstd_log(bytes(data))
    assert caught.value.line == 4
    assert caught.value.reason.startswith(f"zstd frame at byte {third} does not decode")


def test_a_reserved_header_bit_is_refused() -> None:
    data = bytearray(frames(HEADER, event(0)))
    data[len(frames(HEADER)) + 4] |= 0x08
    with pytest.raises(ZstdLogError, match="a reserved header bit is set"):
        read_zstd_log(bytes(data))


def test_lines_may_cross_frames_but_complete_frames_end_a_line() -> None:
    line = event(0)
    log = read_zstd_log(frames(HEADER, line[:10], line[10:], b""))
    assert log.text == HEADER + line
    with pytest.raises(ZstdLogError, match="ends inside a line") as caught:
        read_zstd_log(frames(HEADER, line, line[:10]))
    assert caught.value.line == 3
