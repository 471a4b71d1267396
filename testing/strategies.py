"""Hypothesis strategies for property tests of your own: tool calls, valid
session logs and damaged ones, the values they carry. tickler's own
property tests draw from these.

- :func:`tool_calls`: any call a model may send, inside each tool's schema
  and beyond it; :func:`schema_arguments` only what a schema allows.
- :func:`session_logs`: a valid session (:class:`ValidLog`: its events,
  its seed length, the schedule changes it made), made by the core's own
  ``handle`` and ``decide`` across daylight-saving changes.
- :func:`valid_logs`: v1 change sequences over the whole range of ids,
  prompts and instants, with an independent model of their replay.
- :func:`damaged_logs`: a log with one wrong field (:class:`DamagedLog`),
  paired with the index and the reference's exact reason a checker must
  report.

Every draw comes from Hypothesis (no clock, no global random): a seed, or
``derandomize=True``, replays the same examples. Needs Hypothesis:
``pip install 'tickler-agents[testing]'``.
"""

from __future__ import annotations

try:
    import hypothesis  # noqa: F401 - only to name the extra when it is missing
except ImportError as error:  # hypothesis is no dependency of tickler itself
    raise ImportError(
        "tickler.testing.strategies needs hypothesis: pip install 'tickler-agents[testing]'"
    ) from error

from tickler.testing._changes import (
    CHANGES,
    GARBAGE_SCHEDULE_CHANGES,
    MAX_EVERY_SECONDS,
    OTHER_EVENT_TYPES,
    OTHER_EVENTS,
    Book,
    EventLog,
    Step,
    after_seconds_values,
    draw_fresh_id,
    draw_record,
    every_seconds_values,
    following_target,
    valid_logs,
)
from tickler.testing._damage import DamagedLog, damaged_logs
from tickler.testing._sessions import STARTS, ValidLog, session_logs
from tickler.testing._tool_calls import (
    PROMPT_INPUTS,
    SECONDS_EDGES,
    SECONDS_INPUTS,
    ToolCall,
    create_arguments,
    draw_at,
    from_schema,
    local_at_objects,
    offset_at_strings,
    schema_arguments,
    tool_calls,
    valid_create_arguments,
)
from tickler.testing._values import (
    EPOCH,
    ES_WHITESPACE,
    FOREIGN_ID_SHAPES,
    INSTANTS,
    LONE_SURROGATES,
    MAX_MS,
    MAX_SAFE,
    MIN_MS,
    MS_PER_DAY,
    MS_PER_YEAR,
    NOT_ES_WHITESPACE,
    REFERENCE_NOW,
    SCHEDULE_IDS,
    ZONE_INPUTS,
    Json,
    blank_texts,
    chars,
    draw_instant,
    iso,
    js_stringify,
    json_scalars,
    json_values,
    load_zone,
    ms_from_iso,
    ms_of,
    nonblank_prompts,
    padded_texts,
    small_json_values,
    texts,
    tool_prompts,
    trimmed_texts,
    unpair_surrogates,
    zone_names,
)

__all__ = [
    "CHANGES",
    "EPOCH",
    "ES_WHITESPACE",
    "FOREIGN_ID_SHAPES",
    "GARBAGE_SCHEDULE_CHANGES",
    "INSTANTS",
    "LONE_SURROGATES",
    "MAX_EVERY_SECONDS",
    "MAX_MS",
    "MAX_SAFE",
    "MIN_MS",
    "MS_PER_DAY",
    "MS_PER_YEAR",
    "NOT_ES_WHITESPACE",
    "OTHER_EVENTS",
    "OTHER_EVENT_TYPES",
    "PROMPT_INPUTS",
    "REFERENCE_NOW",
    "SCHEDULE_IDS",
    "SECONDS_EDGES",
    "SECONDS_INPUTS",
    "STARTS",
    "ZONE_INPUTS",
    "Book",
    "DamagedLog",
    "EventLog",
    "Json",
    "Step",
    "ToolCall",
    "ValidLog",
    "after_seconds_values",
    "blank_texts",
    "chars",
    "create_arguments",
    "damaged_logs",
    "draw_at",
    "draw_fresh_id",
    "draw_instant",
    "draw_record",
    "every_seconds_values",
    "following_target",
    "from_schema",
    "iso",
    "js_stringify",
    "json_scalars",
    "json_values",
    "load_zone",
    "local_at_objects",
    "ms_from_iso",
    "ms_of",
    "nonblank_prompts",
    "offset_at_strings",
    "padded_texts",
    "schema_arguments",
    "session_logs",
    "small_json_values",
    "texts",
    "tool_calls",
    "tool_prompts",
    "trimmed_texts",
    "unpair_surrogates",
    "valid_create_arguments",
    "valid_logs",
    "zone_names",
]
