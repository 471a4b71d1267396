"""Names in the reference harness's session layout.

``ROOT/<project>/<segment>/session.jsonl`` (or ``session.jsonl.zstd``), read
from the harness's JSONL persistence (``format.ts`` of its
``session-persistence-jsonl`` package):

* ``<segment>`` is the session id escaped per UTF-16 code unit: a unit in
  ``[A-Za-z0-9._-]`` stays, any other (``~`` included) becomes ``~XXXX``, four
  upper-case hex digits; a non-BMP character is two escapes (its surrogates).
  The whole ids ``.`` and ``..`` are written ``~002E`` and ``~002E~002E``.
  The escape is injective, so a segment decodes back to exactly one id.
* ``<project>`` is ``_no-cwd`` for a header without ``cwd``; otherwise each
  run of ``/``, ``\\`` and ``:`` becomes one ``-``, other units are kept or
  escaped as above, leading ``-`` are dropped (nothing left: ``root``), the
  result is cut to 251 characters and framed as ``--<slug>--``. That key is
  lossy by design, so it is compared, never decoded.
"""

from __future__ import annotations

import re
from typing import Final

LOG_NAMES: Final = ("session.jsonl", "session.jsonl.zstd")
NO_CWD: Final = "_no-cwd"
_SAFE: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
_SEPARATORS: Final = frozenset("/\\:")
_ESCAPE: Final = re.compile(r"~([0-9A-F]{4})")
_SEGMENT: Final = re.compile(r"(?:[A-Za-z0-9._-]|~[0-9A-F]{4})+")
_MAX_SLUG: Final = 251


def _units(text: str) -> list[str]:
    """``text`` as UTF-16 code units, each a one-character string (a
    surrogate for half of a non-BMP character)."""
    data = text.encode("utf-16-le", "surrogatepass")
    return [chr(int.from_bytes(data[i : i + 2], "little")) for i in range(0, len(data), 2)]


def _escape(unit: str) -> str:
    return unit if unit in _SAFE else f"~{ord(unit):04X}"


def encode_segment(raw: str) -> str:
    """The directory name the harness gives session id ``raw``."""
    if not raw:
        raise ValueError("cannot encode an empty path segment")
    if raw == ".":
        return "~002E"
    if raw == "..":
        return "~002E~002E"
    return "".join(_escape(unit) for unit in _units(raw))


def decode_segment(name: str) -> str | None:
    """The session id a harness directory name stands for, or None when the
    harness could not have written ``name`` (not its escape, or not the one
    spelling it would choose). A lone surrogate in an id stays one."""
    if not _SEGMENT.fullmatch(name):
        return None
    units = bytearray()
    for piece in re.split(r"(~[0-9A-F]{4})", name):
        if match := _ESCAPE.fullmatch(piece):
            units += int(match.group(1), 16).to_bytes(2, "little")
        else:
            units += piece.encode("utf-16-le")
    decoded = units.decode("utf-16-le", "surrogatepass")
    return decoded if decoded and encode_segment(decoded) == name else None


def project_key(cwd: str) -> str:
    """The project directory name for a header's ``cwd``."""
    if not cwd:
        raise ValueError("cannot encode an empty project path")
    readable: list[str] = []
    in_separators = False
    for unit in _units(cwd):
        if unit in _SEPARATORS:
            if not in_separators:
                readable.append("-")
            in_separators = True
        else:
            readable.append(_escape(unit))
            in_separators = False
    slug = "".join(readable).lstrip("-") or "root"
    return f"--{slug[:_MAX_SLUG]}--"


def project_dir(cwd: str | None) -> str:
    return NO_CWD if cwd is None else project_key(cwd)


def expected_place(session_id: str, cwd: str | None) -> str:
    """``<project>/<segment>``: where the harness keeps this session's log;
    raises ValueError for an id or cwd the harness cannot place (empty)."""
    return f"{project_dir(cwd)}/{encode_segment(session_id)}"
