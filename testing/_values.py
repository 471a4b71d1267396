"""Strategies for the values a log and a tool call carry: instants, text
(ECMAScript whitespace and lone surrogates included), schedule ids, JSON
values and zone names.

Every draw comes from Hypothesis (no clock, no global random), so a seed
or a derandomized profile replays the same values.
"""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime, timedelta
from functools import cache
from importlib import resources
from typing import Any, Final, TypeAlias
from zoneinfo import ZoneInfo

from hypothesis import strategies as st

Json: TypeAlias = Any

# --- instants -----------------------------------------------------------------

EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
MAX_SAFE: Final = 2**53 - 1
MS_PER_DAY: Final = 86_400_000
MS_PER_YEAR: Final = 365 * MS_PER_DAY


def ms_of(moment: datetime) -> int:
    """Epoch milliseconds of an aware ``datetime``."""
    return (moment - EPOCH) // timedelta(milliseconds=1)


MIN_MS: Final = ms_of(datetime(1, 1, 1, tzinfo=UTC))
MAX_MS: Final = ms_of(datetime(9999, 12, 31, 23, 59, 59, 999_000, tzinfo=UTC))
REFERENCE_NOW: Final = ms_of(datetime(2026, 8, 5, 12, tzinfo=UTC))


def iso(ms: int) -> str:
    """``Date.prototype.toISOString`` for years 0001-9999 (the logged form)."""
    t = EPOCH + timedelta(milliseconds=ms)
    return (
        f"{t.year:04d}-{t.month:02d}-{t.day:02d}T"
        f"{t.hour:02d}:{t.minute:02d}:{t.second:02d}.{t.microsecond // 1000:03d}Z"
    )


def ms_from_iso(text: str) -> int:
    return ms_of(datetime.fromisoformat(text))


# In-range epoch milliseconds: anywhere, the range's edges, or around today.
INSTANTS: Final = st.one_of(
    st.integers(MIN_MS, MAX_MS),
    st.sampled_from([MIN_MS, MAX_MS, 0, REFERENCE_NOW]),
    st.integers(REFERENCE_NOW - 10 * MS_PER_YEAR, REFERENCE_NOW + MS_PER_YEAR),
)


def draw_instant(draw: st.DrawFn, lo: int = MIN_MS, hi: int = MAX_MS) -> int:
    """An instant in ``[lo, hi]``, the bounds themselves often."""
    match draw(st.integers(0, 5)):
        case 0:
            return lo
        case 1:
            return hi
        case 2 if lo <= REFERENCE_NOW <= hi:
            near = (max(lo, REFERENCE_NOW - MS_PER_YEAR), min(hi, REFERENCE_NOW + MS_PER_YEAR))
            return draw(st.integers(*near))
        case _:
            return draw(st.integers(lo, hi))


# --- text ---------------------------------------------------------------------

# ECMAScript WhiteSpace + LineTerminator: TAB VT FF ZWNBSP, every Zs, LF CR LS PS.
ES_WHITESPACE: Final = frozenset(
    {"\t", "\v", "\f", "\ufeff", "\n", "\r", "\u2028", "\u2029"}
    | {chr(c) for c in range(0x10000) if unicodedata.category(chr(c)) == "Zs"}
)
# Characters Python's str.strip() removes (or that look blank) but
# String.prototype.trim() keeps.
NOT_ES_WHITESPACE: Final = ("\x1c", "\x1d", "\x1e", "\x1f", "\x85", "\u180e", "\u200b", "\u2060")
LONE_SURROGATES: Final = ("\ud800", "\udbff", "\udc00", "\udfff", "\ud83d", "\ude00")


def _is_high(ch: str) -> bool:
    return 0xD800 <= ord(ch) <= 0xDBFF


def _is_low(ch: str) -> bool:
    return 0xDC00 <= ord(ch) <= 0xDFFF


def unpair_surrogates(text: str) -> str:
    """Break every high+low surrogate sequence, so each surrogate is lone."""
    out: list[str] = []
    for ch in text:
        if out and _is_high(out[-1]) and _is_low(ch):
            out.append("x")
        out.append(ch)
    return "".join(out)


def js_stringify(text: str) -> str:
    """``JSON.stringify`` of a JavaScript string (UTF-16 semantics): how the
    reference quotes an id in a corrupt-log reason and a framing text."""
    escapes = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r"}
    escapes["\t"] = "\\t"
    out = ['"']
    i = 0
    while i < len(text):
        ch = text[i]
        if _is_high(ch) and i + 1 < len(text) and _is_low(text[i + 1]):
            pair = (ord(ch) - 0xD800) * 0x400 + (ord(text[i + 1]) - 0xDC00) + 0x10000
            out.append(chr(pair))
            i += 2
            continue
        if ch in escapes:
            out.append(escapes[ch])
        elif ord(ch) < 0x20 or 0xD800 <= ord(ch) <= 0xDFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
        i += 1
    out.append('"')
    return "".join(out)


_ODD_VISIBLE: Final = (
    *NOT_ES_WHITESPACE,
    *LONE_SURROGATES,
    *("\x00", "\x7f", '"', "\\", "/", "\u2603", "\U0001f600", "é", "\u0301"),
)
_SURROGATES: Final = st.integers(0xD800, 0xDFFF).map(chr)
# Any character but ECMAScript whitespace, the awkward ones likely.
_visible: Final = st.one_of(
    st.characters(codec="utf-8", exclude_characters=ES_WHITESPACE),
    st.sampled_from(_ODD_VISIBLE),
    _SURROGATES,
)
chars: Final = st.one_of(_visible, st.sampled_from(sorted(ES_WHITESPACE)))
# Any text, lone surrogates included (no accidental surrogate pairs).
texts: Final = st.text(chars, max_size=12).map(unpair_surrogates)
# Text padded with ECMAScript whitespace on either side.
_pad: Final = st.text(st.sampled_from(sorted(ES_WHITESPACE)), min_size=1, max_size=3)
padded_texts: Final = st.builds(lambda a, t, b: a + t + b, _pad, texts, _pad).map(unpair_surrogates)
# Non-empty, already trimmed: what the log accepts as a prompt or an id.
trimmed_texts: Final = st.one_of(
    st.sampled_from(["check logs", "x", "\x85a\x85", "\u200b", "a\u3000b", "\ud800", "\x00"]),
    _visible,
    st.builds(lambda a, t, b: a + t + b, _visible, texts, _visible).map(unpair_surrogates),
)
# What a model may send as a prompt: blank, padded or plain.
blank_texts: Final = st.text(st.sampled_from(sorted(ES_WHITESPACE)), max_size=3)
nonblank_prompts: Final = st.one_of(
    trimmed_texts,
    st.builds(lambda a, t, b: a + t + b, blank_texts, trimmed_texts, blank_texts).map(
        unpair_surrogates
    ),
)
tool_prompts: Final = st.one_of(nonblank_prompts, blank_texts, padded_texts)

# --- ids ------------------------------------------------------------------------

# Near misses of the allocated form, which are foreign ids of their own.
FOREIGN_ID_SHAPES: Final = (
    "custom",
    "schedule-0",
    "schedule-01",
    "schedule-+1",
    "schedule-1.0",
    "Schedule-1",
    "schedule-\u0661",
    "schedule-\uff11",
    "schedule-",
    'schedule-"1',
    "schedule-1-1",
    "schedule-99999999999999999999",
)

# Valid ids: allocated-looking, near misses, or any trimmed text.
SCHEDULE_IDS: Final = st.one_of(
    st.integers(1, 40).map(lambda n: f"schedule-{n}"),
    st.sampled_from(FOREIGN_ID_SHAPES),
    trimmed_texts,
)

# --- JSON values ------------------------------------------------------------------

# Numbers JSON can carry: no NaN, no infinity, and no -0.0 (a JSON reader
# gives -0.0 only for "-0.0"-like text, which the tools refuse as lossy).
json_floats: Final = st.floats(allow_nan=False, allow_infinity=False).map(
    lambda number: 0.0 if number == 0 else number
)
json_scalars: Final = st.one_of(st.none(), st.booleans(), st.integers(), json_floats, texts)
json_values: Final = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(texts, children, max_size=4)
    ),
    max_leaves=12,
)
# Smaller values, for where they are only noise.
small_json_values: Final = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=3), st.dictionaries(texts, children, max_size=3)
    ),
    max_leaves=4,
)

# --- zones --------------------------------------------------------------------------


@cache
def zone_names() -> frozenset[str]:
    """Every name the pinned tzdata lists (links included)."""
    listing = resources.files("tzdata").joinpath("zones").read_text(encoding="utf-8")
    return frozenset(listing.split())


@cache
def load_zone(key: str) -> ZoneInfo:
    """A zone from the pinned tzdata, never the host's."""
    path = resources.files("tzdata.zoneinfo").joinpath(*key.split("/"))
    with path.open("rb") as data:
        return ZoneInfo.from_file(data, key=key)


_REAL_ZONES: Final = st.sampled_from(sorted(zone_names()))
# ``time_zone`` values: real names, links, other cases, and invalid ones.
ZONE_INPUTS: Final = st.one_of(
    _REAL_ZONES,
    _REAL_ZONES.map(str.lower),
    _REAL_ZONES.map(str.upper),
    st.sampled_from(
        [
            *("UTC", "Etc/UTC", "Etc/GMT+5", "US/Eastern", "america/new_york", "Asia/Kathmandu"),
            *("Pacific/Apia", "Australia/Lord_Howe", "Antarctica/Troll", "", " UTC", "UTC "),
            *("utc", "GMT", "CST", "EST5EDT", "+08:00", "Not/A_Real_Zone", "America/New_York\n"),
            *("../etc/passwd", "America//New_York"),
        ]
    ),
    texts,
)
