"""Session files in the reference harness's JSONL layout.

Line 1 is the header ``{"type":"session","version":0,"id",...}``; then one
event per line, ``{"type","seq","time","data"}``, ``seq`` counting from 0.
``data`` stays raw JSON bytes: only ``schedule/change`` payloads are ours to
decode, and they are decoded by the fold.
"""

from __future__ import annotations

import json
from typing import Annotated, Final, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

from tickler.core.jsnum import MAX_SAFE_INTEGER

SafeInt = Annotated[int, Meta(ge=0, le=MAX_SAFE_INTEGER)]


class SessionHeader(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The session file's first line. Unknown keys from newer harnesses are
    tolerated and not kept."""

    type: Literal["session"] = "session"
    version: Literal[0] = 0
    id: str
    created_at: SafeInt
    cwd: str | UnsetType = UNSET
    parent_session: str | UnsetType = UNSET
    seed_length: SafeInt | UnsetType = UNSET
    origin: str | UnsetType = UNSET
    delegation_depth: SafeInt | UnsetType = UNSET
    agent_preset: str | UnsetType = UNSET

    @property
    def owned_from(self) -> int:
        """Where the session's own events begin (the fork boundary)."""
        return 0 if isinstance(self.seed_length, UnsetType) else self.seed_length


class SessionEvent(msgspec.Struct, frozen=True, gc=False, kw_only=True, omit_defaults=True):
    """One logged event; ``data`` is its raw JSON."""

    type: str
    seq: SafeInt
    time: SafeInt
    data: msgspec.Raw
    ignorable: bool | UnsetType = UNSET


def event(type_: str, seq: int, time: int, data: bytes) -> SessionEvent:
    return SessionEvent(type=type_, seq=seq, time=time, data=msgspec.Raw(data))


class SessionFileError(ValueError):
    """An unreadable session file, located by its 1-based ``line``."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason


class ParsedSession(tuple[SessionHeader, tuple[SessionEvent, ...]]):
    """``(header, events)``, plus where each event stood in the file and the
    torn final fragment that was dropped, if any."""

    header: SessionHeader
    events: tuple[SessionEvent, ...]
    lines: tuple[int, ...]
    torn_tail: bytes | None

    def __new__(
        cls,
        header: SessionHeader,
        events: tuple[SessionEvent, ...],
        lines: tuple[int, ...],
        torn_tail: bytes | None,
    ) -> ParsedSession:
        self = super().__new__(cls, (header, events))
        self.header, self.events, self.lines, self.torn_tail = header, events, lines, torn_tail
        return self


_HEADER: Final = msgspec.json.Decoder(SessionHeader)
_EVENT: Final = msgspec.json.Decoder(SessionEvent)


def _is_json(line: bytes) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


def decode_event_line(line: bytes) -> SessionEvent:
    """One event line of a session file (without its newline); raises
    msgspec.DecodeError / ValidationError for a line that is not an event."""
    try:
        return _EVENT.decode(line)
    except msgspec.DecodeError:
        # JSON that msgspec refuses but JavaScript reads (a lone surrogate
        # escape): re-read it exactly, keeping ``data`` as written.
        return _decode_event_slowly(line)


def _decode_event_slowly(line: bytes) -> SessionEvent:
    try:
        value = json.loads(line)
    except ValueError as exc:
        raise msgspec.DecodeError(f"not JSON: {exc}") from exc
    if not isinstance(value, dict) or "data" not in value:
        raise msgspec.ValidationError("an event must be an object with type, seq, time, data")
    # ASCII escapes keep a lone surrogate representable in UTF-8 bytes.
    data = json.dumps(value.pop("data"), separators=(",", ":"))
    value["data"] = None
    shell = _EVENT.decode(json.dumps(value).encode())
    return msgspec.structs.replace(shell, data=msgspec.Raw(data.encode()))


def parse_session_jsonl(data: bytes) -> ParsedSession:
    """Parse a whole session file.

    A final line with no newline that is not valid JSON (a crash mid-write) is
    dropped and reported as ``torn_tail``; any other bad line raises
    :class:`SessionFileError` naming it. Blank lines are skipped.
    """
    raw_lines = data.split(b"\n")
    torn_tail: bytes | None = None
    last = raw_lines[-1]
    if last.strip() and not _is_json(last):
        torn_tail = last
        raw_lines[-1] = b""
    header: SessionHeader | None = None
    events: list[SessionEvent] = []
    lines: list[int] = []
    for number, line in enumerate(raw_lines, start=1):
        if not line.strip():
            continue
        if header is None:
            header = _parse_header(number, line)
            continue
        try:
            decoded = decode_event_line(line)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise SessionFileError(number, f"invalid event: {exc}") from None
        if decoded.seq != len(events):
            raise SessionFileError(number, f"event seq {decoded.seq} should be {len(events)}")
        events.append(decoded)
        lines.append(number)
    if header is None:
        raise SessionFileError(1, "missing session header")
    return ParsedSession(header, tuple(events), tuple(lines), torn_tail)


def _parse_header(number: int, line: bytes) -> SessionHeader:
    try:
        return _HEADER.decode(line)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise SessionFileError(number, f"invalid session header: {exc}") from None
