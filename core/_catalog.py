"""The tool contract: names, descriptions and JSON Schemas of the three tools.

``specs/tool-catalog.json`` is generated from :func:`tool_catalog`; adapters
hand these schemas to each agent framework unchanged.
"""

from __future__ import annotations

import copy
from typing import Any, Final

from tickler.core import _catalog_extended as extended
from tickler.core._commands import CREATE, DELETE, LIST, UPDATE
from tickler.core._errors import ERROR_CODES, EXTENDED_OPERATIONS, OPERATIONS
from tickler.core._model import MIN_EVERY_INTERVAL_SECONDS
from tickler.core._outcomes import DELIVERY_MODE
from tickler.core._profile import DEFAULT_PROFILE, Profile

JsonSchema = dict[str, Any]

CREATE_DESCRIPTION: Final = (
    "Create one reminder in the current session. Supply a non-empty prompt and exactly one "
    "selector: a positive safe-integer after_seconds delay, at as a strict offset date-time "
    "or local date/time object, or safe-integer every_seconds of at least "
    f"{MIN_EVERY_INTERVAL_SECONDS}. Fixed-rate reminders stay creation-aligned, skip missed "
    "occurrences, and batch one latest occurrence per overdue rule. Delivery is "
    "session-local: the reminder runs on time only while this session is live and otherwise "
    "becomes overdue until the session is resumed."
)
LIST_DESCRIPTION: Final = (
    "List every active reminder in the current session in creation order, including its "
    "exact id, UTC target, scheduled or overdue state, and session-local delivery mode."
)
DELETE_DESCRIPTION: Final = (
    "Delete one active reminder in the current session by the exact id returned by "
    "schedule_create or schedule_list. Unknown or already-finished ids return deleted false."
)


def _closed(properties: JsonSchema, optional: tuple[str, ...] = ()) -> JsonSchema:
    return {
        "type": "object",
        "properties": properties,
        "required": [key for key in properties if key not in optional],
        "additionalProperties": False,
    }


def _const(value: str | bool) -> JsonSchema:
    return {"type": "boolean" if isinstance(value, bool) else "string", "const": value}


def _view(kind: str, seconds_key: str | None) -> JsonSchema:
    props: JsonSchema = {
        "id": {"type": "string"},
        "kind": _const(kind),
        "prompt": {"type": "string"},
    }
    if seconds_key is not None:
        props[seconds_key] = {"type": "integer"}
    props["scheduledAt"] = {"type": "string"}
    props["state"] = {"type": "string", "enum": ["scheduled", "overdue"]}
    props["deliveryMode"] = _const(DELIVERY_MODE)
    return _closed(props)


_VIEW: Final = {
    "oneOf": [_view("after", "afterSeconds"), _view("at", None), _view("every", "everySeconds")]
}


def _errors(operations: tuple[str, ...] = OPERATIONS) -> list[JsonSchema]:
    basic = [
        _closed({"code": _const(code), "message": {"type": "string"}})
        for code in ERROR_CODES
        if code != "persistence_uncertain"
    ]
    uncertain = _closed(
        {
            "code": _const("persistence_uncertain"),
            "message": {"type": "string"},
            "operation": {"type": "string", "enum": list(operations)},
            "id": {"type": "string"},
        },
        optional=("id",),
    )
    return [*basic, uncertain]


def _outputs(*success: JsonSchema, operations: tuple[str, ...] = OPERATIONS) -> JsonSchema:
    return {"oneOf": [*success, *_errors(operations)]}


_LOCAL_AT: Final = _closed(
    {"date": {"type": "string"}, "time": {"type": "string"}, "time_zone": {"type": "string"}}
)

_CATALOG: Final[list[dict[str, Any]]] = [
    {
        "name": CREATE,
        "description": CREATE_DESCRIPTION,
        "input_schema": {
            "type": "object",
            "properties": {
                "prompt": {
                    "type": "string",
                    "description": "Reminder content to present when the target becomes due.",
                },
                "after_seconds": {
                    "type": "number",
                    "description": "Positive safe-integer delay in seconds.",
                },
                "every_seconds": {
                    "type": "number",
                    "description": "Fixed-rate safe-integer interval in seconds, at least "
                    f"{MIN_EVERY_INTERVAL_SECONDS}.",
                },
                "at": {
                    "description": "Absolute target as strict offset RFC 3339 or local "
                    "date/time with an explicit IANA zone.",
                    "oneOf": [{"type": "string"}, _LOCAL_AT],
                },
            },
            "required": ["prompt"],
        },
        "output_schema": _outputs(_VIEW),
    },
    {
        "name": LIST,
        "description": LIST_DESCRIPTION,
        "input_schema": {"type": "object", "properties": {}},
        "output_schema": _outputs({"type": "array", "items": _VIEW}),
    },
    {
        "name": DELETE,
        "description": DELETE_DESCRIPTION,
        "input_schema": {
            "type": "object",
            "properties": {
                "id": {"type": "string", "description": "Exact session-local schedule id."}
            },
            "required": ["id"],
        },
        "output_schema": _outputs(
            _closed({"id": {"type": "string"}, "deleted": _const(True)}),
            _closed(
                {
                    "id": {"type": "string"},
                    "deleted": _const(False),
                    "code": _const("schedule_not_found"),
                }
            ),
        ),
    },
]


def _previews() -> JsonSchema:
    """``nextOccurrences`` (extended views of recurring reminders)."""
    preview = _closed({"utc": {"type": "string"}, "local": {"type": "string"}})
    return {"type": "array", "items": preview, "maxItems": 3}


def _with_previews(view: JsonSchema) -> JsonSchema:
    out = copy.deepcopy(view)
    out["properties"]["nextOccurrences"] = _previews()
    out["required"].append("nextOccurrences")
    return out


def _calendar_view() -> JsonSchema:
    calendar = _closed(
        {
            "cron": {"type": "string"},
            "time_zone": {"type": "string"},
            "dst_gap": {"type": "string", "enum": ["shift", "skip"]},
            "dst_overlap": {"type": "string", "enum": ["first", "both"]},
        }
    )
    return _closed(
        {
            "id": {"type": "string"},
            "kind": _const("calendar"),
            "prompt": {"type": "string"},
            "calendar": calendar,
            "scheduledAt": {"type": "string"},
            "state": {"type": "string", "enum": ["scheduled", "overdue"]},
            "deliveryMode": _const(DELIVERY_MODE),
            "nextOccurrences": _previews(),
        }
    )


def _with_end(view: JsonSchema) -> JsonSchema:
    """A recurring view that may show its series' end (extended profile):
    ``until`` (UTC) and ``remaining``, each only when set."""
    out = copy.deepcopy(view)
    out["properties"]["until"] = {"type": "string"}
    out["properties"]["remaining"] = {"type": "integer", "minimum": 1}
    return out


def _paused(view: JsonSchema) -> JsonSchema:
    """A view whose state may also be ``paused`` (extended profile)."""
    out = copy.deepcopy(view)
    out["properties"]["state"]["enum"] = ["scheduled", "overdue", "paused"]
    return out


def _extended_catalog() -> list[dict[str, Any]]:
    after, at, every = _VIEW["oneOf"]
    views = (after, at, _with_end(_with_previews(every)), _with_end(_calendar_view()))
    view = {"oneOf": [_paused(v) for v in views]}
    ops = EXTENDED_OPERATIONS
    not_found = _closed(
        {"id": {"type": "string"}, "updated": _const(False), "code": _const("schedule_not_found")}
    )
    deleted = _CATALOG[2]["output_schema"]["oneOf"][:2]
    outputs = {
        CREATE: _outputs(view, operations=ops),
        LIST: _outputs({"type": "array", "items": view}, operations=ops),
        DELETE: _outputs(*deleted, operations=ops),
        UPDATE: _outputs(view, not_found, operations=ops),
    }
    return [
        {
            "name": name,
            "description": extended.DESCRIPTIONS[name],
            "input_schema": extended.INPUTS[name],
            "output_schema": outputs[name],
        }
        for name in (CREATE, LIST, DELETE, UPDATE)
    ]


_EXTENDED: Final = _extended_catalog()


def tool_catalog(*, profile: Profile = DEFAULT_PROFILE) -> list[dict[str, Any]]:
    """Per tool: ``name``, ``description``, ``input_schema``, ``output_schema``.

    ``reference``: the v1 contract; input roots are open objects, as in the
    reference (unknown keys reach the tool, which answers
    ``invalid_selector`` for ``schedule_create``). ``extended``: closed,
    strict-mode schemas with the calendar selector.
    A fresh deep copy each call, so callers may adapt it.
    """
    return copy.deepcopy(_CATALOG if profile == "reference" else _EXTENDED)
