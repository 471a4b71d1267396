"""One event per line, in the harness layout, shared by the durable stores.

A line the store could not read back later (bad JSON in ``data``, a raw
newline, a negative time) is refused at ``append`` instead of corrupting the
log. The common case is checked without decoding the line it builds:

* ``type`` is a ``str`` (msgspec writes it as a JSON string), ``time`` an
  ``int`` (not a bool) within ``0 .. 2**53 - 1``, ``seq`` ours;
* ``data`` is ``bytes`` without a newline that msgspec parses as exactly one
  JSON value (its full JSON syntax check, the same one that reads ``data``
  back as ``Raw``), with no whitespace around it.

A line built from those parts reads back as the same event, so only
``data`` is parsed (not the whole line), and only once. Anything else — a
``str`` subclass, an ``int``-like time, data msgspec refuses but JavaScript
reads (a lone surrogate escape), surrounding whitespace — takes the general
path: encode the event, then decode the line exactly as a reader will.
Data nested deeper than msgspec's recursion limit takes the general path too,
whose last resort is the core's reader (any depth, no RecursionError).

The harness's packed chunk row types (``text-chunks``, ``reasoning-chunks``,
``tool-call-chunks``) are refused: such a line is a row, not an event, and
neither the harness nor ``tickler check`` would read it as written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, cast

import msgspec

from tickler.core import (
    MAX_SAFE_INTEGER,
    PACKED_TYPES,
    SessionEvent,
    SessionHeader,
    decode_event_line,
    event,
    is_json,
)
from tickler.shell import NewEvent

_ENCODER: Final = msgspec.json.Encoder()
_EVENT: Final = msgspec.json.Decoder(SessionEvent)
_RAW: Final = msgspec.json.Decoder(msgspec.Raw)
_SPACES: Final = b" \t\r\n"  # JSON's whitespace
_WHITESPACE: Final = frozenset(_SPACES)
_PREFIXES: dict[str, bytes] = {}  # type -> b'{"type":<type>,"seq":'
_MAX_PREFIXES: Final = 1024


def encode_batch(
    first_seq: int, batch: Sequence[NewEvent]
) -> tuple[tuple[SessionEvent, ...], list[bytes]]:
    """The batch's events, numbered from ``first_seq``, and their lines
    (each ending in a newline). Raises ValueError for an event that would not
    read back as written, or whose type is a packed chunk row's; the whole
    batch is checked before the caller writes any of it."""
    added: list[SessionEvent] = []
    lines: list[bytes] = []
    for seq, item in enumerate(batch, first_seq):
        done = _encode_plain(seq, item)
        if done is None:
            done = _encode_checked(seq, item)
        added.append(done[0])
        lines.append(done[1])
    return tuple(added), lines


def _encode_plain(seq: int, item: NewEvent) -> tuple[SessionEvent, bytes] | None:
    """The event and its line when every part is plainly valid (see the
    module docstring), else None."""
    type_, data, time = item.type, item.data, item.time
    if (
        type(type_) is not str
        or type(time) is not int
        or not 0 <= time <= MAX_SAFE_INTEGER
        or type(data) is not bytes
        or not data
        or data[0] in _WHITESPACE
        or data[-1] in _WHITESPACE
        or b"\n" in data
    ):
        return None
    try:
        raw = _RAW.decode(data)
    except (msgspec.DecodeError, RecursionError):  # deep nesting: the general path
        return None
    prefix = _PREFIXES.get(type_)
    if prefix is None:
        if type_ in PACKED_TYPES:  # never cached: refused by the general path
            return None
        try:
            prefix = b'{"type":' + _ENCODER.encode(type_) + b',"seq":'
        except UnicodeEncodeError:  # a lone surrogate: refused by the general path
            return None
        if len(_PREFIXES) < _MAX_PREFIXES:
            _PREFIXES[type_] = prefix
    line = b'%s%d,"time":%d,"data":%s}\n' % (prefix, seq, time, data)
    return SessionEvent(type=type_, seq=seq, time=time, data=raw), line


def _encode_checked(seq: int, item: NewEvent) -> tuple[SessionEvent, bytes]:
    """Encode, then read the line back as a reader will: the event exactly
    as it will be seen."""
    refuse_packed(item.type)
    try:
        line = _ENCODER.encode(event(item.type, seq, item.time, item.data))
    except (TypeError, ValueError) as exc:  # UnicodeEncodeError is a ValueError
        raise ValueError(f"event {item.type!r} cannot be written: {exc}") from None
    if b"\n" in line:
        raise ValueError(f"event data must be one line of JSON: {item.data[:80]!r}")
    data: object = item.data  # bytes, but a str works too
    given = data.encode() if isinstance(data, str) else bytes(cast("bytes", data))
    try:
        read = _EVENT.decode(line)
    except (msgspec.MsgspecError, RecursionError):
        pass
    else:
        if bytes(read.data) != given.strip(_SPACES):
            raise ValueError(f"event {item.type!r} would not read back: data is not one value")
        return read, line + b"\n"
    if not is_json(given):  # one JSON value, as JavaScript reads it, at any depth
        raise ValueError(f"event {item.type!r} would not read back: data is not one JSON value")
    try:
        return decode_line(line), line + b"\n"  # the core's slower path (surrogate, depth)
    except (msgspec.DecodeError, msgspec.ValidationError, ValueError, TypeError) as exc:
        raise ValueError(f"event {item.type!r} would not read back: {exc}") from None


def refuse_packed(type_: object) -> None:
    """Raise ValueError for a packed chunk row's type (see the module
    docstring)."""
    if isinstance(type_, str) and type_ in PACKED_TYPES:
        raise ValueError(
            f"event type {type_!r} is refused: it names the harness's packed chunk rows, "
            "which are not events (write assistant/chunk events instead)"
        )


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
