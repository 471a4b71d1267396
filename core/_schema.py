"""The JSON Schema of one v1 ``schedule/change`` payload, generated from the
model's types with their field rules attached."""

from __future__ import annotations

import types
from typing import Annotated, Any, Union, get_args, get_origin

import msgspec

from tickler.core._model import FIELD_RULES, V1Change


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
