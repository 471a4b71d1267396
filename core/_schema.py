"""The JSON Schemas of one ``schedule/change`` payload, version 1 and
version 2, generated from the model's types with their field rules
attached."""

from __future__ import annotations

import types
from typing import Annotated, Any, Union, get_args, get_origin

import msgspec

from tickler.core._model import FIELD_RULES, TRIMMED_PATTERN, ScheduleRecord, V1Change
from tickler.core._rules import MAX_OPERATOR_LENGTH, MAX_REQUEST_ID_LENGTH
from tickler.core.timing import CANONICAL_INSTANT_PATTERN
from tickler.core.wire import MAX_SAFE_INTEGER


def _ruled(tp: Any, made: dict[type, type]) -> Any:
    """``tp`` with every Struct replaced by its twin carrying FIELD_RULES."""
    if isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        return _twin(tp, made)
    if get_origin(tp) in (Union, types.UnionType):
        ruled = tuple(_ruled(arg, made) for arg in get_args(tp))
        out: Any = ruled[0]
        for arg in ruled[1:]:
            out = out | arg
        return out
    return tp


def _constrained(tp: Any, rule: msgspec.Meta) -> Any:
    """``Annotated[tp, rule]``; in ``X | UnsetType`` the rule goes on X."""
    if get_origin(tp) in (Union, types.UnionType):
        members = [a if a is msgspec.UnsetType else Annotated[a, rule] for a in get_args(tp)]
        out: Any = members[0]
        for member in members[1:]:
            out = out | member
        return out
    return Annotated[tp, rule]


def _twin(cls: type[msgspec.Struct], made: dict[type, type]) -> type:
    if cls in made:
        return made[cls]
    info = msgspec.structs.fields(cls)
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
    for field in info:
        tp = _ruled(field.type, made)
        if field.name in FIELD_RULES:
            tp = _constrained(tp, FIELD_RULES[field.name])
        if field.required:
            fields.append((field.name, tp))
        else:
            fields.append((field.name, tp, field.default))
    config = cls.__struct_config__
    twin = msgspec.defstruct(
        cls.__name__,
        fields,
        rename={f.name: f.encode_name for f in info},
        tag=config.tag,
        tag_field=config.tag_field,
        forbid_unknown_fields=config.forbid_unknown_fields,
        kw_only=True,
    )
    twin.__doc__ = cls.__doc__
    made[cls] = twin
    return twin


def change_schema() -> dict[str, Any]:
    """JSON Schema (2020-12) of one v1 ``schedule/change`` payload."""
    schema: dict[str, Any] = msgspec.json.schema(_ruled(V1Change, {}))
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "tickler schedule/change v1",
        "description": (
            "The data of one schedule/change session event. Beyond this schema, a "
            "scheduledAt or acceptedAt must name a real calendar day, and replay rules "
            "(ids never reused, deletes and dispatches target active ids) apply."
        ),
        **schema,
    }


def change_schema_v2() -> dict[str, Any]:
    """JSON Schema (2020-12) of one version-2 ``schedule/change`` payload
    (extended profile): a create that a v1 create cannot say (a calendar
    record, a request id, a series' end) and an update in place. The
    records are the model's types with their field rules, as in
    :func:`change_schema`; the envelopes follow the exact codec
    (:mod:`tickler.core._codec`), which writes and reads them by hand."""
    (record,), defs = msgspec.json.schema_components(
        [_ruled(ScheduleRecord, {})], ref_template="#/$defs/{name}"
    )
    text = {"type": "string", "pattern": TRIMMED_PATTERN}
    instant = {"type": "string", "pattern": CANONICAL_INSTANT_PATTERN}
    count = {"type": "integer", "minimum": 1, "maximum": MAX_SAFE_INTEGER}
    operator = {**text, "maxLength": MAX_OPERATOR_LENGTH}
    defs["CreateV2"] = {
        "type": "object",
        "properties": {
            "version": {"const": 2},
            "operation": {"const": "create"},
            "schedule": record,
            "requestId": {**text, "maxLength": MAX_REQUEST_ID_LENGTH},
            "argsDigest": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
            "until": instant,
            "count": count,
        },
        "required": ["version", "operation", "schedule"],
        "dependentRequired": {"requestId": ["argsDigest"], "argsDigest": ["requestId"]},
        "additionalProperties": False,
    }
    defs["Update"] = {
        "type": "object",
        "properties": {
            "version": {"const": 2},
            "operation": {"const": "update"},
            "id": text,
            "prompt": text,
            "paused": {"type": "boolean"},
            "scheduledAt": instant,
            "schedule": record,
            "until": {"anyOf": [instant, {"type": "null"}]},
            "count": {"anyOf": [count, {"type": "null"}]},
            "by": operator,
        },
        "required": ["version", "operation", "id"],
        # at least one change; the operator who made it is none of its own
        "anyOf": [
            {"required": [name]}
            for name in ("prompt", "paused", "scheduledAt", "schedule", "until", "count")
        ],
        # a new record holds the prompt and the target itself
        "dependentSchemas": {
            "schedule": {
                "not": {"anyOf": [{"required": ["prompt"]}, {"required": ["scheduledAt"]}]}
            }
        },
        "additionalProperties": False,
    }
    defs["DeleteV2"] = {  # an operator's cancel (a model's delete is version 1)
        "type": "object",
        "properties": {
            "version": {"const": 2},
            "operation": {"const": "delete"},
            "id": text,
            "by": operator,
        },
        "required": ["version", "operation", "id", "by"],
        "additionalProperties": False,
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "tickler schedule/change v2",
        "description": (
            "The data of one version-2 schedule/change session event (the extended "
            "profile; a reader of version 1 refuses it by its version): a create, an "
            "update in place, or an operator's delete naming the operator (by). Beyond this "
            "schema, instants must name a real calendar day, a calendar record's "
            "scheduledAt must be an occurrence of its rule, an update's schedule keeps "
            "its id, until and count end only a recurring record (until not before its "
            "scheduledAt), and the replay rules of version 1 apply."
        ),
        "oneOf": [
            {"$ref": "#/$defs/CreateV2"},
            {"$ref": "#/$defs/Update"},
            {"$ref": "#/$defs/DeleteV2"},
        ],
        "$defs": defs,
    }
