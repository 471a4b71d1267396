"""JSON at any nesting depth, read as JavaScript's ``JSON.parse`` reads it.

The C readers (``json``, msgspec) recurse once per nesting level and raise
``RecursionError`` near a thousand levels; the harness's JavaScript reads any
depth. This reader keeps its own stack instead, so depth costs memory, not
the interpreter's stack. It is the slow path: callers try a C reader first.

JavaScript's rules, not Python's: ``NaN``/``Infinity`` are not JSON, a lone
surrogate escape is a string like any other, a number too large for a double
is infinity (``1e400``), duplicate keys keep the last value.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Final, TypeAlias

_WS: Final = re.compile(r"[ \t\n\r]*")
_NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*+)(\.[0-9]++)?+([eE][+-]?[0-9]++)?+")
_STRING: Final = re.compile(r'"(?:[^"\\\x00-\x1f]++|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*+"')
_LITERALS: Final[dict[str, object]] = {"true": True, "false": False, "null": None}
_LONGEST_INT: Final = 4000  # Python's int() refuses longer digit strings; JS reads a double
_load_string: Final[Callable[[str], object]] = json.loads  # a validated string token


class JsonError(ValueError):
    """Text that is not one JSON value; ``pos`` is where reading stopped."""

    def __init__(self, pos: int, what: str) -> None:
        super().__init__(f"{what} at character {pos}")
        self.pos = pos


def _skip(text: str, pos: int) -> int:
    match = _WS.match(text, pos)
    assert match is not None  # the pattern matches the empty string
    return match.end()


def _string(text: str, pos: int) -> tuple[str, int]:
    match = _STRING.match(text, pos)
    if match is None:
        raise JsonError(pos, "bad string")
    value = _load_string(match.group())
    assert isinstance(value, str)
    return value, match.end()


def _key(text: str, pos: int) -> tuple[str, int]:
    """An object key and its colon; returns where the member's value starts."""
    if text[pos : pos + 1] != '"':
        raise JsonError(pos, "expected a key")
    key, pos = _string(text, pos)
    pos = _skip(text, pos)
    if text[pos : pos + 1] != ":":
        raise JsonError(pos, "expected ':'")
    return key, _skip(text, pos + 1)


def _scalar(text: str, pos: int) -> tuple[object, int]:
    char = text[pos : pos + 1]
    if char == '"':
        return _string(text, pos)
    match = _NUMBER.match(text, pos)
    if match is not None:
        token = match.group()
        if match.group(1) is None and match.group(2) is None and len(token) <= _LONGEST_INT:
            return int(token), match.end()
        return float(token), match.end()  # overflow gives infinity, as in JavaScript
    for word, value in _LITERALS.items():
        if text.startswith(word, pos):
            return value, pos + len(word)
    raise JsonError(pos, "expected a value")


_Frame: TypeAlias = "tuple[list[object], None] | tuple[dict[str, object], str]"
_OPENED: Final = object()  # _start opened a container: read its first value next


def parse_value(text: str, pos: int = 0) -> tuple[object, int]:
    """One JSON value at ``pos`` (after optional whitespace): the value and
    where it ends. Raises :class:`JsonError`."""
    # Open containers, innermost last; an object's frame holds its pending key.
    stack: list[_Frame] = []
    while True:
        value, pos = _start(text, pos, stack)
        if value is not _OPENED:
            value, pos = _complete(text, pos, value, stack)
            if not stack:
                return value, pos


def _start(text: str, pos: int, stack: list[_Frame]) -> tuple[object, int]:
    """Read a value's start: a scalar or an empty container whole, or open a
    container (pushed on ``stack``) and answer ``_OPENED``."""
    pos = _skip(text, pos)
    char = text[pos : pos + 1]
    if char == "{":
        pos = _skip(text, pos + 1)
        if text[pos : pos + 1] == "}":
            return {}, pos + 1
        key, pos = _key(text, pos)
        stack.append(({}, key))
        return _OPENED, pos
    if char == "[":
        pos = _skip(text, pos + 1)
        if text[pos : pos + 1] == "]":
            return [], pos + 1
        stack.append(([], None))
        return _OPENED, pos
    return _scalar(text, pos)


def _complete(text: str, pos: int, value: object, stack: list[_Frame]) -> tuple[object, int]:
    """Store a complete value in its container, closing every container it
    completes; stops after a comma (the stack then holds the container to
    continue) or when the stack is empty (the answer is the outermost value)."""
    while stack:
        frame = stack[-1]
        pos = _skip(text, pos)
        char = text[pos : pos + 1]
        if frame[1] is None:
            frame[0].append(value)
            closing = "]"
        else:
            frame[0][frame[1]] = value
            closing = "}"
        if char == ",":
            pos = _skip(text, pos + 1)
            if frame[1] is not None:
                key, pos = _key(text, pos)
                stack[-1] = (frame[0], key)
            return None, pos
        if char != closing:
            raise JsonError(pos, f"expected ',' or '{closing}'")
        value, pos = frame[0], pos + 1
        stack.pop()
    return value, pos


def loads(text: str) -> object:
    """The one JSON value ``text`` holds (surrounding whitespace allowed)."""
    value, pos = parse_value(text)
    pos = _skip(text, pos)
    if pos != len(text):
        raise JsonError(pos, "extra data")
    return value


def object_members(text: str) -> dict[str, tuple[int, int]]:
    """Where each member's value of the JSON object ``text`` holds starts and
    ends (the last of duplicate keys wins). Raises :class:`JsonError`, and
    ``TypeError`` when the text holds a JSON value that is not an object."""
    pos = _skip(text, 0)
    if text[pos : pos + 1] != "{":
        loads(text)  # JsonError when it is not JSON at all
        raise TypeError("not a JSON object")
    members: dict[str, tuple[int, int]] = {}
    pos = _skip(text, pos + 1)
    if text[pos : pos + 1] == "}":
        pos += 1
    else:
        while True:
            key, start = _key(text, pos)
            _, end = parse_value(text, start)
            members[key] = (start, end)
            pos = _skip(text, end)
            char = text[pos : pos + 1]
            if char == "}":
                pos += 1
                break
            if char != ",":
                raise JsonError(pos, "expected ',' or '}'")
            pos = _skip(text, pos + 1)
    if _skip(text, pos) != len(text):
        raise JsonError(pos, "extra data")
    return members


def loads_any_depth(text: str | bytes) -> object:
    """``json.loads`` (in C) when the nesting allows it, else :func:`loads`.
    Raises ``ValueError`` (``JsonError`` or ``json.JSONDecodeError``,
    ``UnicodeDecodeError``) for text that is not JSON."""
    try:
        return json.loads(text, parse_constant=_not_json, parse_int=_js_int)
    except RecursionError:
        return loads(text.decode("utf-8") if isinstance(text, bytes) else text)


def _js_int(token: str) -> int | float:
    """An integer token as :func:`loads` reads it: a double (infinity past
    its range) when too long for Python's ``int()``."""
    return int(token) if len(token) <= _LONGEST_INT else float(token)


def _not_json(name: str) -> object:
    raise ValueError(f"{name} is not JSON")
