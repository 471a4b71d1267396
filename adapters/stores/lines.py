"""One event per line, in the harness layout, shared by the durable stores.

Every line a store writes is decoded again before it is written: a line the
store could not read back later (bad JSON in ``data``, a raw newline, a
negative time) is refused at ``append`` instead of corrupting the log.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import msgspec

from tickler.core import SessionEvent, SessionHeader
from tickler.core.session import decode_event_line, event
from tickler.shell.ports import NewEvent

_ENCODER: Final = msgspec.json.Encoder()
_EVENT: Final = msgspec.json.Decoder(SessionEvent)


def encode_batch(
    first_seq: int, batch: Sequence[NewEvent]
) -> tuple[tuple[SessionEvent, ...], list[bytes]]:
    """The batch's events, numbered from ``first_seq``, and their lines
    (each ending in a newline). Raises ValueError for an event that would not
    read back as written."""
    added: list[SessionEvent] = []
    lines: list[bytes] = []
    for seq, item in enumerate(batch, first_seq):
        line = _ENCODER.encode(event(item.type, seq, item.time, item.data))
        added.append(_read_back(line, item))
        lines.append(line + b"\n")
    return tuple(added), lines


def _read_back(line: bytes, item: NewEvent) -> SessionEvent:
    """The event exactly as a reader will see it."""
    if b"\n" in line:
        raise ValueError(f"event data must be one line of JSON: {item.data[:80]!r}")
    try:
        return _EVENT.decode(line)
    except msgspec.MsgspecError:
        pass
    try:
        return decode_line(line)  # the core's slower path (e.g. a lone surrogate escape)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ValueError(f"event {item.type!r} would not read back: {exc}") from None


def decode_line(line: bytes) -> SessionEvent:
    """One event line, exactly as :func:`tickler.core.parse_session_jsonl`
    reads it (raises msgspec errors)."""
    return decode_event_line(line)


def header_line(header: SessionHeader) -> bytes:
    """The header as the harness writes it: ``type`` and ``version`` first
    (msgspec would omit them as defaults), then the other keys."""
    fields = msgspec.to_builtins(header)
    assert isinstance(fields, dict)
    return _ENCODER.encode({"type": "session", "version": 0, **fields}) + b"\n"
