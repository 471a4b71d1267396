"""Keeping a PostgreSQL password out of every message: ours and psycopg's.

libpq quotes a URI it cannot parse whole (``... in URI:
"postgresql://user:SECRET@[::1"``) and a token of it (``invalid
percent-encoded token: "SECRET%zz"``); a URI it parses otherwise than its
writer meant (a ``/`` in the password) puts pieces of the password in the
host, port or database name that later messages quote. So a message that
may hold a DSN is passed through :func:`redact` with the DSNs it may hold:
each is shown as :func:`mask_dsn` shows it, its password and the pieces of
it are masked wherever they appear, and so is anything that reads as a
URI's ``user:password@`` or a ``password=`` word. ``PGPASSWORD`` and the
password file are never read here, and libpq never quotes them.

Pure text functions that never raise, for any string (a malformed DSN
included).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final
from urllib.parse import unquote

MASK: Final = "***"
# Free text: the userinfo of any URI, scheme://user:password@ (to the last
# @ of the word), and a libpq ``password`` word, quoted (backslash escapes)
# or not.
_URI_PASSWORD: Final = re.compile(r"([a-z][a-z0-9+.-]*://[^\s:/@\"']*:)[^\s\"']*@", re.IGNORECASE)
_WORD_PASSWORD: Final = re.compile(
    r"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*(?:'|$)|[^\s'\"]+)", re.IGNORECASE
)
_URI: Final = re.compile(r"[a-z][a-z0-9+.-]*://", re.IGNORECASE)
# How libpq and urllib split a URI: a piece of a password may land in any part.
_DELIMITERS: Final = re.compile(r"[/?#@:&=,\[\]\s\"']+")
_SHORT: Final = 3  # a shorter piece is masked only where it stands alone


def passwords(dsn: str) -> frozenset[str]:
    """Every password ``dsn`` may be read to give, as written and
    percent-decoded, and the pieces of each between URI delimiters: a
    URI's userinfo as libpq reads it (up to the first ``@`` before any
    ``/``) and as its writer may have meant it (up to the last ``@``), and
    each ``password`` word's value. Empty when it gives none."""
    found: set[str] = set()
    uri = _URI.match(dsn)
    if uri is not None:
        rest = dsn[uri.end() :]
        at, slash = rest.find("@"), rest.find("/")
        if at >= 0 and (slash < 0 or at < slash):
            found.add(rest[:at].partition(":")[2])
        if "@" in rest:
            found.add(rest.rpartition("@")[0].partition(":")[2])
    for word in _WORD_PASSWORD.finditer(dsn):
        value = word.group(2)
        if value.startswith("'"):
            value = re.sub(r"\\(.)", r"\1", value[1:].removesuffix("'"))
        found.add(value)
    found |= {unquote(secret) for secret in found}
    found |= {piece for secret in found for piece in _DELIMITERS.split(secret)}
    return frozenset(secret for secret in found if secret)


def mask_dsn(dsn: str) -> str:
    """``dsn`` with its password shown as ``***``: in a URI, all between
    the user and the last ``@``; a ``password`` word's value."""
    uri = _URI.match(dsn)
    if uri is not None and "@" in dsn[uri.end() :]:
        userinfo, _, where = dsn[uri.end() :].rpartition("@")
        user, colon, _ = userinfo.partition(":")
        if colon:
            dsn = f"{dsn[: uri.end()]}{user}:{MASK}@{where}"
    return _WORD_PASSWORD.sub(rf"\g<1>{MASK}", dsn)


def redact(text: str, dsns: Iterable[str] = ()) -> str:
    """``text`` with no password of ``dsns`` in it (nor any piece of one),
    nor any a URI's userinfo or a ``password`` word holds."""
    return Redaction(dsns)(text)


class Redaction:
    """:func:`redact` for the same DSNs, worked out once (every line of a
    log)."""

    def __init__(self, dsns: Iterable[str]) -> None:
        given = [dsn for dsn in dict.fromkeys(dsns) if dsn]
        self._masked = [(dsn, mask_dsn(dsn)) for dsn in given]
        secrets = {secret for dsn in given for secret in passwords(dsn)}
        self._long = sorted((s for s in secrets if len(s) >= _SHORT), key=len, reverse=True)
        short = sorted((s for s in secrets if len(s) < _SHORT), key=len, reverse=True)
        alone = "|".join(re.escape(secret) for secret in short)
        self._short = re.compile(rf"(?<![A-Za-z0-9])(?:{alone})(?![A-Za-z0-9])") if short else None

    def __call__(self, text: str) -> str:
        for dsn, masked in self._masked:
            text = text.replace(dsn, masked)
        text = _WORD_PASSWORD.sub(rf"\g<1>{MASK}", _URI_PASSWORD.sub(rf"\g<1>{MASK}@", text))
        for secret in self._long:
            text = text.replace(secret, MASK)
        return text if self._short is None else self._short.sub(MASK, text)
