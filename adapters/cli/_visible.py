"""Text from a log, made safe to print: control characters shown, not obeyed.

A prompt, a session id or a file name is data; written raw, ESC/OSC/CSI
sequences would clear the screen, retitle the window or plant a hyperlink.
Every such character is shown as a Python-style escape instead.
"""

from __future__ import annotations

import json
import re
from typing import Final

# C0 and C1 controls, DEL, the line/paragraph separators, bidirectional
# overrides and isolates (they reorder what is shown), and lone surrogates
# (a name that is not UTF-8, or a JSON \ud800 escape).
_HIDDEN: Final = re.compile(
    "[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_HIDDEN_KEEP_NEWLINE: Final = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
_NAMED: Final = {"\n": "\\n", "\r": "\\r"}


def _shown(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if char in _NAMED:
        return _NAMED[char]
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable file-name byte (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible(text: str, *, newlines: bool = False) -> str:
    """``text`` with every control character written as an escape; a tab
    stays, and so do newlines when ``newlines`` (a multi-line prompt)."""
    pattern = _HIDDEN_KEEP_NEWLINE if newlines else _HIDDEN
    return pattern.sub(_shown, text)


# json.dumps escapes C0 itself; the raw newlines left are the indentation.
_JSON_HIDDEN: Final = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def json_text(value: object) -> str:
    """``value`` as indented JSON that a terminal cannot obey: non-ASCII text
    stays readable, but C1 controls, separators, bidi controls and lone
    surrogates (which ``json.dumps`` leaves raw) are ``\\uXXXX`` escapes.
    The JSON still decodes to exactly ``value``."""
    text = json.dumps(value, ensure_ascii=False, indent=2)
    return _JSON_HIDDEN.sub(_json_escape, text)
