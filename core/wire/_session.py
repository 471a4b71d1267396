"""Session files in the reference harness's JSONL layout.

Line 1 is the header ``{"type":"session","version":0,"id",...}``; then one
event per line, ``{"type","seq","time","data"}``, ``seq`` counting from 0.
``data`` stays raw JSON bytes: only ``schedule/change`` payloads are ours to
decode, and they are decoded by the fold.

The harness may also pack a run of ``assistant/chunk`` events into one line
(see :mod:`tickler.core.wire._chunkrows`); such a line stands for its members, each
with its own ``seq``. Lines are read as JavaScript reads them: any nesting
depth, ``2.0`` for the integer 2, lone surrogate escapes.
"""

from __future__ import annotations

from typing import Annotated, Final, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

from tickler.core.wire._chunkrows import CHUNK_EVENT, PACKED_TYPES, BadRow, expand_row
from tickler.core.wire._deepjson import JsonError, loads_any_depth, object_members
from tickler.core.wire._jsnum import MAX_SAFE_INTEGER, safe_integer

SafeInt = Annotated[int, Meta(ge=0, le=MAX_SAFE_INTEGER)]


class SessionHeader(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The session file's first line. Unknown keys from newer harnesses are
    tolerated and not kept.

    ``delegation_depth`` is written in every header (0 unless set): the
    harness's loader requires it. A header without it reads as 0.
    """

    type: Literal["session"] = "session"
    version: Literal[0] = 0
    id: str
    created_at: SafeInt
    cwd: str | UnsetType = UNSET
    parent_session: str | UnsetType = UNSET
    seed_length: SafeInt | UnsetType = UNSET
    origin: str | UnsetType = UNSET
    delegation_depth: SafeInt = 0
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


BLANK_LINE: Final = "a blank line, which the harness cannot read: each line holds one JSON record"
_HEADER: Final = msgspec.json.Decoder(SessionHeader)
_EVENT: Final = msgspec.json.Decoder(SessionEvent)
_MEMBERS: Final = msgspec.json.Decoder(dict[str, msgspec.Raw])
_DECODE_ERRORS: Final = (msgspec.DecodeError, msgspec.ValidationError, RecursionError)
_COUNTS: Final = ("createdAt", "seedLength", "delegationDepth")
_HEADER_KEYS: Final = (
    "type",
    "version",
    "id",
    "createdAt",
    "cwd",
    "parentSession",
    "seedLength",
    "origin",
    "delegationDepth",
    "agentPreset",
)


def is_json(line: bytes) -> bool:
    """Whether ``line`` is one JSON value, at any nesting depth."""
    try:
        loads_any_depth(line)
    except ValueError:
        return False
    return True


def members(line: bytes) -> dict[str, bytes]:
    """The raw JSON text of each member of the object ``line`` holds, at any
    nesting depth. Raises msgspec.DecodeError when the line is not JSON and
    msgspec.ValidationError when it is JSON but not an object."""
    try:
        return {key: bytes(raw) for key, raw in _MEMBERS.decode(line).items()}
    except (msgspec.DecodeError, RecursionError):
        pass  # deep nesting, or what JavaScript reads and msgspec does not
    except msgspec.ValidationError as exc:
        raise msgspec.ValidationError("not a JSON object") from exc
    try:
        text = line.decode("utf-8")
        spans = object_members(text)
    except (JsonError, UnicodeDecodeError) as exc:
        raise msgspec.DecodeError(f"not JSON: {exc}") from None
    except TypeError:
        raise msgspec.ValidationError("not a JSON object") from None
    return {key: text[start:end].encode("utf-8") for key, (start, end) in spans.items()}


def scalar(raw: bytes, name: str) -> object:
    """Member ``name``'s value when it is a string, number, boolean or null;
    an empty list or dict standing for any array or object (never read: no
    field we check is one, and it may be nested arbitrarily deep). A number
    too long for Python's ``int()`` is a double, as in JavaScript. Raises
    msgspec.ValidationError when the value is not valid UTF-8."""
    if raw[:1] == b"[":
        return []
    if raw[:1] == b"{":
        return {}
    try:
        return loads_any_depth(raw)  # one validated scalar token
    except UnicodeDecodeError:
        raise msgspec.ValidationError(f"{name} is not valid UTF-8") from None


def count(value: object) -> int | None:
    """A JSON number that JavaScript reads as a non-negative safe integer
    (``2.0`` and ``1e0`` included), else None."""
    number = safe_integer(value)
    return None if number is None or number < 0 else number


def decode_header_line(line: bytes) -> SessionHeader:
    """The header line (without its newline); raises msgspec.DecodeError /
    ValidationError for a line that is not a session header. A ``seedLength``
    of null is no fork boundary, as for the reference (it is absent)."""
    try:
        return _HEADER.decode(line)
    except _DECODE_ERRORS:
        pass
    fields = members(line)
    known: dict[str, object] = {}
    for key in _HEADER_KEYS:
        if key in fields:
            known[key] = scalar(fields[key], f"header {key}")
    if "seedLength" in known and known["seedLength"] is None:
        del known["seedLength"]  # the reference folds from ``seedLength ?? 0``
    for key in _COUNTS:
        if key in known:
            number = count(known[key])
            if number is None:
                raise msgspec.ValidationError(f"header {key} must be a non-negative safe integer")
            known[key] = number
    version = known.get("version")
    if isinstance(version, float) and version == 0:
        known["version"] = 0  # 0.0 and -0.0 are the number 0
    if known.get("type", "session") != "session":  # before msgspec, which cannot
        raise msgspec.ValidationError("header type must be 'session'")  # compare a lone surrogate
    return msgspec.convert(known, SessionHeader)


def decode_event_line(line: bytes) -> SessionEvent:
    """One event line of a session file (without its newline); raises
    msgspec.DecodeError / ValidationError for a line that is not one event
    (a packed chunk row included: see :func:`decode_record_line`)."""
    try:
        decoded = _EVENT.decode(line)
    except _DECODE_ERRORS:
        return _event_from(members(line))
    if decoded.type in PACKED_TYPES:
        raise msgspec.ValidationError(f"a {decoded.type} row is not one event")
    return decoded


def decode_record_line(line: bytes) -> tuple[SessionEvent, ...]:
    """The events one line of a session file stands for: one event, or the
    members of a packed chunk row. Raises msgspec.DecodeError /
    ValidationError naming what is wrong."""
    try:
        decoded = _EVENT.decode(line)
    except _DECODE_ERRORS:
        pass
    else:
        if decoded.type not in PACKED_TYPES:
            return (decoded,)
    fields = members(line)
    type_ = fields.get("type")
    if type_ is not None and type_[:1] == b'"':
        kind = scalar(type_, "event type")
        if kind in PACKED_TYPES:
            assert isinstance(kind, str)
            try:
                expanded = expand_row(kind, fields)
            except BadRow as exc:
                raise msgspec.ValidationError(f"{kind} row: {exc}") from None
            return tuple(event(CHUNK_EVENT, seq, time, data) for seq, time, data in expanded)
    return (_event_from(fields),)


def _event_from(fields: dict[str, bytes]) -> SessionEvent:
    """An event from its members' raw texts, with JavaScript's numbers."""
    for key in ("type", "seq", "time", "data"):
        if key not in fields:
            raise msgspec.ValidationError(f"an event must have {key}")
    type_ = scalar(fields["type"], "event type")
    if not isinstance(type_, str):
        raise msgspec.ValidationError("event type must be a string")
    seq = count(scalar(fields["seq"], "event seq"))
    if seq is None:
        raise msgspec.ValidationError("event seq must be a non-negative safe integer")
    time = count(scalar(fields["time"], "event time"))
    if time is None:
        raise msgspec.ValidationError("event time must be a non-negative safe integer")
    ignorable: bool | UnsetType = UNSET
    if "ignorable" in fields:
        flag = scalar(fields["ignorable"], "event ignorable")
        if not isinstance(flag, bool):
            raise msgspec.ValidationError("event ignorable must be a boolean")
        ignorable = flag
    return SessionEvent(
        type=type_, seq=seq, time=time, data=msgspec.Raw(fields["data"]), ignorable=ignorable
    )


def parse_session_jsonl(data: bytes) -> ParsedSession:
    """Parse a whole session file, as the reference harness reads it.

    The harness commits a line with its newline: a final line without one
    (a crash mid-write, or a file cut) is dropped and reported as
    ``torn_tail``, whether it is JSON or not. Any other bad line raises
    :class:`SessionFileError` naming it; a blank line is one (the harness
    cannot read it: it refuses the log, or drops every line from it on).
    Blank space after the last newline is nothing. A packed chunk row gives
    its members, each at the row's line.
    """
    raw_lines = data.split(b"\n")
    last = raw_lines.pop()  # what follows the last newline
    torn_tail = last if last.strip() else None
    header: SessionHeader | None = None
    events: list[SessionEvent] = []
    lines: list[int] = []
    for number, line in enumerate(raw_lines, start=1):
        if not line.strip():
            reason = BLANK_LINE if header is not None else f"invalid session header: {BLANK_LINE}"
            raise SessionFileError(number, reason)
        if header is None:
            header = _parse_header(number, line)
            continue
        try:
            decoded = decode_record_line(line)
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            raise SessionFileError(number, f"invalid event: {exc}") from None
        for item in decoded:
            if item.seq != len(events):
                raise SessionFileError(number, f"event seq {item.seq} should be {len(events)}")
            events.append(item)
            lines.append(number)
    if header is None:
        raise SessionFileError(1, "missing session header")
    return ParsedSession(header, tuple(events), tuple(lines), torn_tail)


def _parse_header(number: int, line: bytes) -> SessionHeader:
    try:
        return decode_header_line(line)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise SessionFileError(number, f"invalid session header: {exc}") from None
