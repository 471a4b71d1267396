"""Packed chunk rows: one harness log line standing for a run of
``assistant/chunk`` events.

The harness may store consecutive streaming deltas of one content block as a
single line (its "chunk rows")::

    {"type":"text-chunks","seq0":N,"time0":T,
     "data":{"turn":..,"step":..,"index":..,"dt":[..],"texts":[..]}}

``reasoning-chunks`` has the same shape; ``tool-call-chunks`` holds ``args``
instead of ``texts`` and adds the call's ``id`` (a string) and an optional
``name``. Member ``k`` is the event ``seq0 + k``; its time is ``time0`` plus
the first ``k`` gaps of ``dt`` (one gap per member after the first, each a
safe integer, negative after a clock step back). Each member expands to::

    {"type":"assistant/chunk","seq":seq0+k,"time":..,
     "data":{"turn":..,"step":..,"chunk":{"type":"text-delta","index":..,"text":member}}}

with ``reasoning-delta`` for reasoning rows and, for tool-call rows,
``{"type":"tool-call-delta","index":..,"id":..,["name":..,]"argumentsDelta":member}``.
The keys are checked exactly, as the harness's decoder does; such rows never
hold schedule events, but their members count in ``seq``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Final

from tickler.core.wire._deepjson import loads_any_depth
from tickler.core.wire._jsnum import MAX_SAFE_INTEGER, is_number, safe_integer
from tickler.core.wire._jstext import js_string

TEXT: Final = "text-chunks"
REASONING: Final = "reasoning-chunks"
TOOL_CALL: Final = "tool-call-chunks"
PACKED_TYPES: Final = frozenset({TEXT, REASONING, TOOL_CALL})
CHUNK_EVENT: Final = "assistant/chunk"

_ENVELOPE: Final = frozenset({"type", "seq0", "time0", "data"})
_TEXT_KEYS: Final = frozenset({"turn", "step", "index", "dt", "texts"})
_TOOL_KEYS: Final = frozenset({"turn", "step", "index", "id", "dt", "args"})
_DELTA: Final = {TEXT: "text-delta", REASONING: "reasoning-delta"}


class BadRow(ValueError):
    """A packed row the harness would refuse; the message names why."""


def expand_row(kind: str, fields: Mapping[str, bytes]) -> list[tuple[int, int, bytes]]:
    """``(seq, time, data)`` of each member of the ``kind`` row whose
    top-level members' raw JSON texts are ``fields``. Raises :class:`BadRow`."""
    seq0, time0, data = _envelope(fields)
    payload, steps = _run(kind, data)
    if seq0 + len(payload) - 1 > MAX_SAFE_INTEGER:
        raise BadRow("member seqs must stay safe integers")
    prefix = _member_prefix(kind, data)
    members: list[tuple[int, int, bytes]] = []
    time = time0
    for k, member in enumerate(payload):
        if k:
            time += steps[k - 1]
        if not 0 <= time <= MAX_SAFE_INTEGER:
            raise BadRow("member times must be non-negative safe integers")
        members.append((seq0 + k, time, f"{prefix}{js_string(member)}}}}}".encode()))
    return members


def _envelope(fields: Mapping[str, bytes]) -> tuple[int, int, dict[str, object]]:
    if fields.keys() != _ENVELOPE:
        raise BadRow("a packed row must hold exactly type, seq0, time0 and data")
    seq0 = _number(fields["seq0"])
    if seq0 is None or seq0 < 0:
        raise BadRow("seq0 must be a non-negative safe integer")
    time0 = _number(fields["time0"])
    if time0 is None:
        raise BadRow("time0 must be a safe integer")
    try:
        data = loads_any_depth(fields["data"])
    except ValueError as exc:  # the line parsed, so this cannot happen; be exact anyway
        raise BadRow(f"data is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise BadRow("data must be an object")
    return seq0, time0, data


def _run(kind: str, data: dict[str, object]) -> tuple[list[str], list[int]]:
    """The members and the gaps between their times, checked."""
    keys = data.keys()
    if kind == TOOL_CALL:
        if keys != _TOOL_KEYS and keys != _TOOL_KEYS | {"name"}:
            raise BadRow("data must hold exactly turn, step, index, id, dt, args and maybe name")
        if not isinstance(data["id"], str) or not isinstance(data.get("name", ""), str):
            raise BadRow("id and name must be strings")
    elif keys != _TEXT_KEYS:
        raise BadRow("data must hold exactly turn, step, index, dt and texts")
    if not all(is_number(data[key]) for key in ("turn", "step", "index")):
        raise BadRow("turn, step and index must be numbers")
    payload_key = "args" if kind == TOOL_CALL else "texts"
    payload = data[payload_key]
    if not isinstance(payload, list) or not payload or not all(isinstance(m, str) for m in payload):
        raise BadRow(f"{payload_key} must be a non-empty array of strings")
    gaps = data["dt"]
    if not isinstance(gaps, list) or len(gaps) != len(payload) - 1:
        raise BadRow("dt must hold one gap per member after the first")
    steps = [safe_integer(gap) for gap in gaps]
    if None in steps:
        raise BadRow("dt must hold safe integers")
    return payload, [step for step in steps if step is not None]


def _member_prefix(kind: str, data: dict[str, object]) -> str:
    """A member's data text up to its text (or arguments delta) string."""
    head = f'{{"turn":{js_number(data["turn"])},"step":{js_number(data["step"])},"chunk":'
    index = js_number(data["index"])
    if kind != TOOL_CALL:
        return f'{head}{{"type":"{_DELTA[kind]}","index":{index},"text":'
    call_id = data["id"]
    assert isinstance(call_id, str)
    name = data.get("name")
    named = "" if name is None else f',"name":{js_string(str(name))}'
    return (
        f'{head}{{"type":"tool-call-delta","index":{index},"id":{js_string(call_id)}{named}'
        ',"argumentsDelta":'
    )


def _number(raw: bytes) -> int | None:
    if raw[:1] in (b"[", b"{"):
        return None
    try:
        return safe_integer(loads_any_depth(raw))
    except ValueError:  # a string that is not valid UTF-8: not a number either
        return None


def js_number(value: object) -> str:
    """``JSON.stringify`` of a JSON number, for the integers a chunk row
    holds (other numbers keep Python's shortest form; none is ever read)."""
    assert isinstance(value, int | float)
    if isinstance(value, float):
        if not math.isfinite(value):
            return "null"
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
    return repr(value)
