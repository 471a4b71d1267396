"""Hypothesis strategies drawn from a JSON Schema: the subset the extended
tool schemas use (object, string with pattern or maxLength, integer with
minimum, boolean, null, enum, anyOf). hypothesis-jsonschema 0.23 does not
run on this Hypothesis (it uses an internal it removed), so this small
reader stands in; it refuses any keyword it does not know, so a schema
change cannot slip past it untested."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

_KNOWN = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "anyOf",
        "enum",
        "pattern",
        "maxLength",
        "minimum",
        "description",
    }
)
_SAFE = 2**53 - 1


def from_schema(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    unknown = schema.keys() - _KNOWN
    if unknown:
        raise ValueError(f"schema keywords this reader does not know: {sorted(unknown)}")
    if "anyOf" in schema:
        return st.one_of([from_schema(branch) for branch in schema["anyOf"]])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    kind = schema.get("type")
    if kind == "null":
        return st.none()
    if kind == "boolean":
        return st.booleans()
    if kind == "integer":
        low = schema.get("minimum", -_SAFE)
        # mostly small values, sometimes the edges of the safe range
        return st.one_of(st.integers(low, low + 100_000), st.integers(low, _SAFE))
    if kind == "string":
        if "pattern" in schema:
            return st.from_regex(schema["pattern"], fullmatch=True)
        return st.text(max_size=min(schema.get("maxLength", 40), 40))
    if kind == "object":
        assert schema.get("additionalProperties") is False
        required = set(schema.get("required", ()))
        properties = schema.get("properties", {})
        assert required == set(properties), "strict: every property required"
        return st.fixed_dictionaries({k: from_schema(v) for k, v in properties.items()})
    raise ValueError(f"schema type this reader does not know: {kind!r}")
