"""tickler.core.wire: the reference's bytes and JavaScript's semantics, pure.

The session file's lines (header, events, packed chunk rows) read as the
reference reads them, JSON at any nesting depth, JavaScript's numbers (safe
integers, lossy values) and strings (``JSON.stringify``'s text, ES
whitespace and ``trim``). Nothing here knows a reminder: the domain
(``tickler.core``) decodes its changes from what this reads.

It is a leaf: it imports no other module of ``tickler.core``.
"""

from tickler.core.wire._chunkrows import PACKED_TYPES
from tickler.core.wire._deepjson import loads as deep_json_loads
from tickler.core.wire._deepjson import loads_any_depth
from tickler.core.wire._deepjson import parse_value as deep_json_value
from tickler.core.wire._jsnum import (
    MAX_SAFE_INTEGER,
    holds_lossy_number,
    is_json_number,
    safe_integer,
)
from tickler.core.wire._jstext import ES_WHITESPACE, es_trim, join_surrogate_pairs, js_string
from tickler.core.wire._session import (
    BLANK_LINE,
    ParsedSession,
    SessionEvent,
    SessionFileError,
    SessionHeader,
    decode_event_line,
    decode_header_line,
    decode_record_line,
    event,
    is_json,
    parse_session_jsonl,
)

__all__ = [
    "BLANK_LINE",
    "ES_WHITESPACE",
    "MAX_SAFE_INTEGER",
    "PACKED_TYPES",
    "ParsedSession",
    "SessionEvent",
    "SessionFileError",
    "SessionHeader",
    "decode_event_line",
    "decode_header_line",
    "decode_record_line",
    "deep_json_loads",
    "deep_json_value",
    "es_trim",
    "event",
    "holds_lossy_number",
    "is_json",
    "is_json_number",
    "join_surrogate_pairs",
    "js_string",
    "loads_any_depth",
    "parse_session_jsonl",
    "safe_integer",
]
