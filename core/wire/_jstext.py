"""Text rules of ECMAScript: ``String.prototype.trim`` and ``JSON.stringify``.

Python's ``str.strip`` and ``json.dumps`` differ from both in small ways (the
whitespace set, lone surrogates), and the reference's bytes must be matched.
"""

from __future__ import annotations

import json
import re
from typing import Final

# ECMAScript WhiteSpace and LineTerminator code points (ECMA-262 12.2, 12.3).
ES_WHITESPACE: Final = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)

_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_SURROGATE_PAIR: Final = re.compile("[\ud800-\udbff][\udc00-\udfff]")
_encode_basestring = json.JSONEncoder(ensure_ascii=False).encode


def es_trim(text: str) -> str:
    """``String.prototype.trim``: strip ECMAScript whitespace only."""
    return text.strip(ES_WHITESPACE)


def is_trimmed_nonempty(text: str) -> bool:
    return bool(text) and text.strip(ES_WHITESPACE) == text


def _join_pair(match: re.Match[str]) -> str:
    pair = match.group()
    high, low = pair[0], pair[1]
    return chr(0x10000 + ((ord(high) - 0xD800) << 10) + (ord(low) - 0xDC00))


def _escape_surrogate(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def join_surrogate_pairs(text: str) -> str:
    """The same JavaScript string, with each UTF-16 surrogate pair written as
    the one code point it stands for (a JSON reader gives that form)."""
    if _SURROGATE.search(text) is None:
        return text
    return _SURROGATE_PAIR.sub(_join_pair, text)


def js_string(text: str) -> str:
    """``JSON.stringify(text)``: non-ASCII kept, lone surrogates escaped.

    A JavaScript string is UTF-16, so a surrogate pair is one character and a
    lone surrogate is written as a lower-case ``\\uXXXX`` escape.
    """
    encoded = _encode_basestring(text)
    if _SURROGATE.search(encoded) is None:
        return encoded
    joined = _SURROGATE_PAIR.sub(_join_pair, encoded)
    return _SURROGATE.sub(_escape_surrogate, joined)
